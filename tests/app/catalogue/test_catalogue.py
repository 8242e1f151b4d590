"""Node catalogue: every type, palette order and search, schemas read from the engine, parsing."""

import inspect
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.catalogue import (
    CATALOGUE,
    CATEGORIES,
    Catalogue,
    CatalogueError,
    NodeType,
    ParamSpec,
    PortSpec,
    ShapeError,
    cell_node_type,
)
from app.document import Graph
from engine import nn
from engine.nn.layers import __all__ as LAYER_NAMES
from tests.app.compiler.compiler_samples import Scale


def test_every_engine_layer_is_a_node_type_except_containers():
    for name in LAYER_NAMES:
        if name in ("SequentialCell", "CellList"):
            assert name not in CATALOGUE
        else:
            assert CATALOGUE.get(name).cell is getattr(nn, name)
    for name in ("Add", "Mul", "MatMul", "Concat", "Reshape", "Flatten", "HookBackward",
                 "Input", "Output"):
        assert name in CATALOGUE


def test_palette_order_categories_and_descriptions():
    types = CATALOGUE.types()
    assert CATALOGUE.categories() == list(CATEGORIES)
    ranks = [CATEGORIES.index(t.category) for t in types]
    assert ranks == sorted(ranks)
    assert all(t.description and "\n" not in t.description for t in types)
    assert "Composite" not in [t.name for t in types]
    # Every hyper-parameter of every type says what it is (the Inspector's and the
    # palette's help), also for a type added later.
    undocumented = [f"{t.name}.{p.name}" for t in types for p in t.params if not p.description]
    assert undocumented == []


def test_every_type_makes_a_node_with_its_ports_and_defaults():
    graph = Graph()
    for node_type in CATALOGUE.types():
        node = graph.add_node(CATALOGUE.new_node(node_type.name, position=(3, 4)))
        assert node.inputs == tuple(p.name for p in node_type.inputs)
        assert node.outputs == tuple(p.name for p in node_type.outputs)
        assert dict(node.params) == node_type.defaults()
        assert node.position == (3.0, 4.0)
        assert node_type.describe(node.params)
    assert graph.node_named("dense1") is not None


def test_schema_is_read_from_the_engine_signature():
    dense = CATALOGUE.get("Dense")
    names = [p.name for p in dense.params]
    assert names == ["in_channels", "out_channels", "has_bias", "activation"]  # no *_init
    signature = inspect.signature(nn.Conv2d)
    for spec in CATALOGUE.get("Conv2d").params:
        default = signature.parameters[spec.name].default
        if default is not inspect.Parameter.empty:
            assert spec.default == default
    conv = {p.name: p for p in CATALOGUE.get("Conv2d").params}
    assert conv["kernel_size"].kind == "int_or_pair"
    assert conv["padding"].lengths == (4,)
    assert conv["pad_mode"].choices == ("same", "valid", "pad")
    assert conv["has_bias"].kind == "bool" and conv["group"].kind == "int"
    assert CATALOGUE.get("Dropout").param("p").optional
    assert CATALOGUE.get("BatchNorm2d").param("use_batch_statistics").optional


def test_summaries():
    assert CATALOGUE.get("Dense").describe({"in_channels": 784, "out_channels": 256}) \
        == "Dense 784→256"
    conv = {"in_channels": 1, "out_channels": 8, "kernel_size": 3}
    assert CATALOGUE.get("Conv2d").describe(conv) == "Conv2d 1→8 3×3"
    assert CATALOGUE.get("Input").describe({"shape": (1, 28, 28)}) == "Input (N, 1, 28, 28)"
    assert CATALOGUE.get("Conv2d").describe({"kernel_size": object()}) == "Conv2d"


def test_search_is_case_insensitive_over_name_description_and_category():
    assert [t.name for t in CATALOGUE.search("dense")][0] == "Dense"
    assert {t.name for t in CATALOGUE.search("POOL")} >= {"MaxPool2d", "AvgPool2d"}
    assert {t.name for t in CATALOGUE.search("activations")} >= {"ReLU", "Tanh", "GELU"}
    assert CATALOGUE.search("probabilities")[0].name == "Softmax"
    assert CATALOGUE.search("") == CATALOGUE.types()
    assert CATALOGUE.search("no such thing") == []


def test_unknown_type_and_bad_params_raise_catalogue_errors():
    with pytest.raises(CatalogueError, match="unknown node type"):
        CATALOGUE.get("Nope")
    with pytest.raises(CatalogueError, match="no hyper-parameter 'size'"):
        CATALOGUE.new_node("Dense", params={"size": 3})
    with pytest.raises(CatalogueError, match="out_channels must be a whole number ≥ 1"):
        CATALOGUE.new_node("Dense", params={"out_channels": "0"})
    with pytest.raises(CatalogueError):
        CATALOGUE.new_node("Composite")


@pytest.mark.parametrize(
    ("type_name", "param", "text", "value"),
    [
        ("Dense", "out_channels", " 256 ", 256),
        ("Dense", "out_channels", 3.0, 3),
        ("Dense", "has_bias", "no", False),
        ("Dense", "activation", "ReLU", "relu"),
        ("Dense", "activation", "none", None),
        ("Conv2d", "kernel_size", "3", 3),
        ("Conv2d", "kernel_size", "3×5", (3, 5)),
        ("Conv2d", "kernel_size", [2, 2], (2, 2)),
        ("Conv2d", "padding", "(1, 0, 1, 0)", (1, 0, 1, 0)),
        ("Conv2d", "pad_mode", "VALID", "valid"),
        ("Dropout", "p", "0.25", 0.25),
        ("Dropout", "p", "", None),
        ("LeakyReLU", "alpha", "1e-2", 0.01),
        ("Softmax", "axis", "-1", -1),
        ("Input", "shape", "1, 28, 28", (1, 28, 28)),
        ("Input", "shape", "(2,)", (2,)),
        ("Input", "dtype", "Float64", "float64"),
        ("Reshape", "shape", "(-1, 7)", (-1, 7)),
        ("Output", "loss", "mseloss", "MSELoss"),
        ("BatchNorm2d", "use_batch_statistics", "none", None),
    ],
)
def test_params_parse(type_name, param, text, value):
    spec = CATALOGUE.get(type_name).param(param)
    parsed = spec.parse(text)
    assert parsed == value and type(parsed) is type(value)
    assert spec.parse(spec.format(parsed)) == parsed


@pytest.mark.parametrize(
    ("type_name", "param", "text", "message"),
    [
        ("Dense", "out_channels", "1.5", "out_channels must be a whole number ≥ 1"),
        ("Dense", "out_channels", "-3", "whole number ≥ 1"),
        ("Dense", "out_channels", True, "whole number"),
        ("Dense", "has_bias", "maybe", "has_bias must be true or false"),
        ("Dense", "activation", "swish", "activation must be one of none, relu"),
        ("Conv2d", "kernel_size", "1, 2, 3", "kernel_size must be a whole number ≥ 1 or 2"),
        ("Conv2d", "kernel_size", "0", "≥ 1"),
        ("Conv2d", "padding", "1, 1", "or 4 of them"),
        ("Mean", "axis", "1, 2, 3, 4, 5, 6, 7", "or 2 to 6 of them. 7 numbers were given"),
        ("Dropout", "p", "1.5", "p must be a number between 0 and 1"),
        ("LeakyReLU", "alpha", "nan", "alpha must be a number"),
        ("Input", "shape", "", "shape must be a list of sizes"),
        ("Input", "shape", "1, 0", "sizes ≥ 1"),
        ("Input", "shape", "-1", "sizes ≥ 1"),
        ("Reshape", "shape", "-1, -1", "one of them may be -1"),
        ("Input", "dtype", "complex", "dtype must be one of float32"),
        ("Output", "loss", "hinge", "loss must be one of"),
    ],
)
def test_params_refuse_with_a_reason(type_name, param, text, message):
    with pytest.raises(CatalogueError, match=message):
        CATALOGUE.get(type_name).param(param).parse(text)


def test_output_loss_params_apply_only_to_their_loss():
    output = CATALOGUE.get("Output")
    shown = {p.name for p in output.visible_params({"loss": "SoftmaxCrossEntropyWithLogits"})}
    assert shown == {"loss", "reduction", "sparse"}
    assert {p.name for p in output.visible_params({"loss": "none"})} == {"loss"}


def test_register_a_user_cell():
    catalogue = Catalogue()
    user = NodeType("Scale", "User Cells", "Multiplies by a factor.", (PortSpec("in"),),
                    (PortSpec("out"),), (ParamSpec("factor", "float", 2.0),),
                    lambda p: f"Scale ×{p['factor']}")
    catalogue.register(user)
    assert catalogue.get("Scale") is user and "User Cells" in catalogue.categories()
    assert catalogue.new_node("Scale", params={"factor": "3"}).params["factor"] == 3.0
    with pytest.raises(CatalogueError, match="already"):
        catalogue.register(user)
    with pytest.raises(CatalogueError, match="kind"):
        ParamSpec("x", "complex", 0)



def test_a_user_cell_becomes_a_node_type_read_from_its_code():
    node_type = cell_node_type(Scale)
    assert (node_type.name, node_type.category) == ("Scale", "User Cells")
    assert node_type.description == "Multiplies each feature by a learned scale."
    assert [p.name for p in node_type.inputs] == ["x", "bias", "shift"]
    assert node_type.inputs[1].optional and not node_type.inputs[0].optional
    assert [(p.name, p.kind, p.default) for p in node_type.params] == [
        ("features", "int", 2), ("start", "float", 1.0)]
    assert node_type.infer({"features": 3, "start": 1.0}, {"x": ("N", 3)}) == {"out": ("N", 3)}
    with pytest.raises(ShapeError, match=r"Scale fails on \(N, 4\)"):
        node_type.infer({"features": 3, "start": 1.0}, {"x": ("N", 4)})
    with pytest.raises(CatalogueError, match="not a Cell class"):
        cell_node_type(int)


# ---- strict parsing of typed values (issue 12) ------------------------------------------------

SHAPE = CATALOGUE.get("Input").param("shape")
RESHAPE = CATALOGUE.get("Reshape").param("shape")
KERNEL = CATALOGUE.get("Conv2d").param("kernel_size")
PADDING = CATALOGUE.get("Conv2d").param("padding")
OUT_CHANNELS = CATALOGUE.get("Dense").param("out_channels")
ALPHA = CATALOGUE.get("LeakyReLU").param("alpha")
STRICT = settings(max_examples=200, deadline=None)

sizes = st.lists(st.integers(1, 10**9), min_size=1, max_size=6).map(tuple)
# What may stand between two numbers, and what may go around them all.
separators = st.sampled_from([",", ", ", " ,  ", " ", "  ", "x", " x ", "×", " × ", "*"])
brackets = st.sampled_from(["{}", "({})", "[{}]", " ( {} ) "])
# Text with at least one character no list of numbers may hold (digits, signs, separators).
junk = st.text(min_size=1, max_size=6).filter(
    lambda text: re.fullmatch(r"[\s0-9+\-,x×*]*", text) is None)


@pytest.mark.parametrize(
    ("spec", "text", "value"),
    [
        (SHAPE, "5,", (5,)),
        (SHAPE, "(5,)", (5,)),
        (SHAPE, " [5 ,] ", (5,)),
        (SHAPE, "3×3", (3, 3)),
        (SHAPE, "3x3", (3, 3)),
        (SHAPE, "1 x 28 x 28", (1, 28, 28)),
        (SHAPE, "1, 28×28", (1, 28, 28)),
        (SHAPE, "[1 28 28]", (1, 28, 28)),
        (SHAPE, "+5", (5,)),
        (SHAPE, [5, 7.0], (5, 7)),
        (RESHAPE, "(-1, 7)", (-1, 7)),
        (RESHAPE, "7x-1", (7, -1)),
        (KERNEL, "3,", 3),
        (KERNEL, "(3)", 3),
        (KERNEL, "3×3", (3, 3)),
        (KERNEL, 3.0, 3),
        (OUT_CHANNELS, "+8", 8),
        (ALPHA, ".5", 0.5),
        (ALPHA, "-2.5E-3", -0.0025),
    ],
)
def test_typed_values_in_every_accepted_spelling(spec, text, value):
    parsed = spec.parse(text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize(
    ("spec", "text", "why"),
    [
        (SHAPE, "(5, x)", "'x' is not a whole number."),
        (SHAPE, "(5,x,7)", "'x' is not a whole number."),
        (SHAPE, "x", "'x' is not a whole number."),
        (SHAPE, "5x", "A number is missing after 'x'."),
        (SHAPE, "5 x, 7", "A number is missing before ','."),
        (SHAPE, "(5,,7)", "A number is missing between two commas."),
        (SHAPE, "(,)", "A number is missing before ','."),
        (SHAPE, "5,,", "A number is missing between two commas."),
        (SHAPE, "", "It is empty."),
        (SHAPE, "()", "It is empty."),
        (SHAPE, (), "The list is empty."),
        (SHAPE, "((5))", "Brackets may only go once around the whole list."),
        (SHAPE, "5)", "Brackets may only go once around the whole list."),
        (SHAPE, "(5", "'(' is not closed."),
        (SHAPE, "[5)", "'[' is not closed."),
        (SHAPE, "5.5", "'5.5' is not a whole number."),
        (SHAPE, "1e3", "'1e3' is not a whole number."),
        (SHAPE, "5xy", "'5xy' is not a whole number."),
        (SHAPE, "1_000", "'1_000' is not a whole number."),
        (SHAPE, "٣", "'٣' is not a whole number."),
        (SHAPE, "1, 0", "0 is less than 1."),
        (SHAPE, [2, "x"], "'x' is not a whole number."),
        (SHAPE, [2.5], "2.5 is not a whole number."),
        (SHAPE, None, "None is not a whole number or a list of them."),
        (RESHAPE, "-1, -1", "-1 is given more than once."),
        (RESHAPE, "0, 7", "0 is neither a size ≥ 1 nor -1."),
        (KERNEL, "1, 2, 3", "3 numbers were given."),
        (KERNEL, "3.0", "'3.0' is not a whole number."),
        (PADDING, "1, 1", "2 numbers were given."),
        (OUT_CHANNELS, "2.5", "'2.5' is not a whole number."),
        (OUT_CHANNELS, "abc", "'abc' is not a whole number."),
        (OUT_CHANNELS, "3.0", "'3.0' is not a whole number."),
        (OUT_CHANNELS, "1_000", "'1_000' is not a whole number."),
        (OUT_CHANNELS, "", "It is empty."),
        (OUT_CHANNELS, "-3", "-3 is less than 1."),
        (OUT_CHANNELS, "9" * 5000, "'99999999999999999999999…' is not a whole number."),
        (ALPHA, "inf", "'inf' is not a finite number."),
        (ALPHA, "1e999", "'1e999' is not a finite number."),
        (ALPHA, "1_0", "'1_0' is not a number."),
        (ALPHA, "0x1", "'0x1' is not a number."),
        (ALPHA, "0,5", "'0,5' is not a number."),
        (CATALOGUE.get("Dropout").param("p"), "1.5", "1.5 is more than 1."),
        (CATALOGUE.get("Dense").param("has_bias"), "maybe", "'maybe' is neither."),
        (CATALOGUE.get("Dense").param("activation"), "swish", "'swish' is not one of them."),
    ],
)
def test_typed_values_are_refused_with_what_is_wrong(spec, text, why):
    with pytest.raises(CatalogueError) as refused:
        spec.parse(text)
    message = str(refused.value)
    assert message.startswith(f"{spec.name} must be ") and message.endswith(f". {why}")


def test_the_refusal_says_what_a_shape_must_be_and_what_is_wrong():
    with pytest.raises(CatalogueError) as refused:
        SHAPE.parse("(5, x)")
    assert str(refused.value) == ("shape must be a list of sizes ≥ 1 such as (1, 28, 28). "
                                  "'x' is not a whole number.")


@STRICT
@given(sizes)
def test_a_shape_reads_back_what_it_formats(shape):
    assert SHAPE.parse(SHAPE.format(shape)) == shape
    assert SHAPE.parse(list(shape)) == shape


@STRICT
@given(sizes, st.data())
def test_a_shape_reads_any_spelling_of_its_numbers(shape, data):
    text = str(shape[0])
    for size in shape[1:]:
        text += data.draw(separators) + str(size)
    if data.draw(st.booleans()):
        text += data.draw(st.sampled_from([",", " ,", ", "]))
    text = data.draw(brackets).format(text)
    assert SHAPE.parse(text) == shape


@STRICT
@given(st.lists(st.integers(1, 99), min_size=1, max_size=5), st.data())
def test_a_reshape_with_one_wildcard_reads_back(shape, data):
    shape[data.draw(st.integers(0, len(shape) - 1))] = -1
    assert RESHAPE.parse(RESHAPE.format(tuple(shape))) == tuple(shape)


@STRICT
@given(st.integers(1, 10**6) | st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)))
def test_an_int_or_pair_reads_back_what_it_formats(value):
    parsed = KERNEL.parse(KERNEL.format(value))
    assert parsed == value and type(parsed) is type(value)


@STRICT
@given(sizes, junk, st.data())
def test_junk_anywhere_in_a_shape_is_refused(shape, word, data):
    text = SHAPE.format(shape)
    at = data.draw(st.integers(0, len(text)))
    for spec in (SHAPE, RESHAPE, KERNEL):
        with pytest.raises(CatalogueError, match=f"^{spec.name} must be "):
            spec.parse(text[:at] + word + text[at:])


@STRICT
@given(sizes, junk, st.data())
def test_a_junk_entry_between_sizes_is_named(shape, word, data):
    word = word.strip(" \t\n\r\f\v,")  # one entry: no spaces, commas, brackets or 'x'
    assume(word and word == word.split()[0] and not any(c in word for c in ",()[]x×*"))
    at = data.draw(st.integers(0, len(shape)))
    entries = [str(size) for size in shape]
    entries.insert(at, word)
    with pytest.raises(CatalogueError) as refused:
        SHAPE.parse("(" + ", ".join(entries) + ")")
    assert str(refused.value).endswith(f"{word!r} is not a whole number.")


@STRICT
@given(st.integers(1, 10**30))
def test_an_int_reads_back_and_junk_is_refused(number):
    assert OUT_CHANNELS.parse(OUT_CHANNELS.format(number)) == number
    assert OUT_CHANNELS.parse(f" {number} ") == number


@STRICT
@given(st.text(max_size=8).filter(lambda t: re.fullmatch(r"\s*\+?[0-9]+\s*", t) is None))
def test_text_that_is_not_a_whole_number_is_refused(text):
    with pytest.raises(CatalogueError, match="^out_channels must be a whole number ≥ 1. "):
        OUT_CHANNELS.parse(text)


@STRICT
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_float_reads_back_what_it_formats(number):
    assert ALPHA.parse(ALPHA.format(number)) == number
