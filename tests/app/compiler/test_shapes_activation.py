"""Shape rules of the activation and channel-dropout nodes: what comes out, what is refused and
why, PReLU's Parameter shapes, and that the rules agree with the engine."""

import pytest

from app.catalogue import CATALOGUE
from app.compiler import check_connection, compile_project
from app.compiler.kinds import parameter_count
from app.document import Graph, Project
from app.io.param_check import ParamLayout, parameter_shapes
from tests.app.compiler.compiler_samples import add, chain, engine_shape, shape_after

SAME = ["ELU", "SeLU", "CELU", "PReLU", "Softsign", "SiLU", "Mish", "HSwish", "HSigmoid",
        "ReLU6", "Hardtanh", "LogSigmoid", "Softmin", "Softplus"]


@pytest.mark.parametrize("type_name", SAME)
def test_elementwise_activations_keep_the_shape(type_name):
    for sample in ((5,), (3, 4, 4)):
        shape, error = shape_after(type_name, sample)
        assert error is None and shape == ("N", *sample)
        assert engine_shape(type_name, sample)[1:] == sample


@pytest.mark.parametrize(("axis", "sample", "expected"), [
    (-1, (3, 8), (3, 4)), (1, (6, 5), (3, 5)), (3, (2, 3, 4), (2, 3, 2)),
])  # fmt: skip
def test_glu_halves_the_chosen_axis_as_the_engine_does(axis, sample, expected):
    shape, error = shape_after("GLU", sample, axis=axis)
    assert error is None and shape == ("N", *expected)
    assert engine_shape("GLU", sample, axis=axis) == (2, *expected)


def test_glu_refuses_an_odd_size_the_batch_axis_and_a_bad_axis():
    _, error = shape_after("GLU", (3, 5))
    assert error == "GLU halves axis 2, but its size in (N, 3, 5) is 5, which is odd."
    _, error = shape_after("GLU", (4,), axis=0)
    assert "can't split the batch axis" in error
    _, error = shape_after("GLU", (4,), axis=3)
    assert error == "GLU: axis 3 is out of range for (N, 4)."


def test_prelu_per_channel_needs_matching_channels_naming_both():
    shape, error = shape_after("PReLU", (4, 5, 5), channel=4)
    assert error is None and shape == ("N", 4, 5, 5)
    assert shape_after("PReLU", (6,), channel=6) == (("N", 6), None)
    _, error = shape_after("PReLU", (6, 5, 5), channel=4)
    assert error == ("PReLU has 4 slopes (channel) but its input (N, 6, 5, 5) has 6 channels "
                     "on axis 1; set channel to 6 or 1.")
    graph = Graph()
    source = add(graph, "Input", shape=(3, 2))
    prelu = add(graph, "PReLU", channel=5)
    refusal = check_connection(graph, source.id, "out", prelu.id, "in")
    assert "5 slopes" in refusal and "(N, 3, 2)" in refusal and "3 channels" in refusal


def test_prelu_parameter_shapes_are_the_engines():
    for channel in (1, 7):
        values = CATALOGUE.get("PReLU").values({"channel": channel})
        cell = CATALOGUE.get("PReLU").cell(**values)
        built = {name: tuple(p.shape) for name, p in cell.parameters_and_names()}
        assert parameter_shapes("PReLU", values) == built == {"w": (channel,)}
        assert parameter_count("PReLU", values) == channel
    graph = Graph()
    node = add(graph, "PReLU", channel=3)
    chain(graph, add(graph, "Input", shape=(3, 4)), node, add(graph, "Output", loss="none"))
    assert ParamLayout(graph).shapes[node.id] == {"w": (3,)}
    compiled = compile_project(Project(graph))
    assert tuple(compiled.parameters()[f"{node.name}.w"].shape) == (3,)


@pytest.mark.parametrize(("type_name", "good", "bad", "message"), [
    ("Dropout1d", (4, 10), (4, 3, 3), "Dropout1d expects (N, C, L) input, gets (N, 4, 3, 3)."),
    ("Dropout2d", (4, 5, 5), (4, 10), "Dropout2d expects (N, C, H, W) input, gets (N, 4, 10)."),
    ("Dropout3d", (4, 2, 5, 5), (4, 5, 5),
     "Dropout3d expects (N, C, D, H, W) input, gets (N, 4, 5, 5)."),
])  # fmt: skip
def test_channel_dropout_wants_its_rank_and_names_the_shape_got(type_name, good, bad, message):
    shape, error = shape_after(type_name, good, p=0.3)
    assert error is None and shape == ("N", *good)
    assert engine_shape(type_name, good, p=0.3) == (2, *good)
    assert shape_after(type_name, bad) == (None, message)


def test_dropout1d_explains_why_features_are_refused():
    _, error = shape_after("Dropout1d", (16,))
    assert error.startswith("Dropout1d expects (N, C, L) sequences, gets (N, 16)")
    assert "whole samples" in error


@pytest.mark.parametrize(("type_name", "params", "reason"), [
    ("CELU", {"alpha": 0.0}, "CELU: alpha must not be 0 (it divides x)."),
    ("Hardtanh", {"min_val": 1.0, "max_val": -1.0},
     "Hardtanh: max_val (-1) must not be less than min_val (1)."),
    ("Softplus", {"beta": 0.0}, "Softplus: beta must be more than 0, it is 0."),
    ("Softmin", {"axis": 2}, "Softmin: axis 2 is out of range for (N, 5)."),
])  # fmt: skip
def test_bad_values_are_refused_with_the_reason(type_name, params, reason):
    assert shape_after(type_name, (5,), **params) == (None, reason)


# ----------------------------------------------------------------------------- palette entries

ACTIVATIONS = [*SAME, "GLU"]
CHANNEL_DROPOUT = ["Dropout1d", "Dropout2d", "Dropout3d"]


def test_palette_entries_have_a_category_a_line_and_documented_params():
    for name in ACTIVATIONS + CHANNEL_DROPOUT:
        node_type = CATALOGUE.get(name)
        assert node_type.category == ("Layers" if name in CHANNEL_DROPOUT else "Activations")
        assert node_type.description and "\n" not in node_type.description
        for spec in node_type.params:
            assert spec.description, f"{name}.{spec.name}"
        assert node_type.describe({}).startswith(name)
    assert CATALOGUE.get("Softplus").cell is None  # an op node: MindSpore has no nn.Softplus
    for name in CHANNEL_DROPOUT:
        assert CATALOGUE.get(name).param("p").maximum == 1
    prelu = CATALOGUE.get("PReLU")
    assert [(p.name, p.kind, p.default) for p in prelu.params] == [
        ("channel", "int", 1), ("w", "float", 0.25)]
    assert CATALOGUE.get("PReLU").describe({"channel": 8}) == "PReLU ×8"


@pytest.mark.parametrize(("words", "found"), [
    ("swish", {"SiLU", "HSwish"}), ("hard swish", {"HSwish"}), ("hardswish", {"HSwish"}),
    ("hardsigmoid", {"HSigmoid"}), ("selu", {"SeLU"}), ("spatial dropout", {"Dropout2d"}),
    ("gated linear unit", {"GLU"}), ("parametric relu", {"PReLU"}),
])  # fmt: skip
def test_search_finds_the_usual_names(words, found):
    assert found <= {t.name for t in CATALOGUE.search(words)}
    assert all(words in " ".join(CATALOGUE.get(name).keywords) or
               words in CATALOGUE.get(name).name.lower() for name in found)
