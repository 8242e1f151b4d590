"""The op nodes in the catalogue: categories, docs, summaries, typed values, and Split's output
ports following its `output_num`."""

from __future__ import annotations

import pytest

from app.catalogue import CATALOGUE, CatalogueError, NodeType, ParamSpec, PortSpec
from app.catalogue.kinds import ops
from app.compiler import kinds as compiler_kinds
from app.export import kinds as export_kinds

MATH = {"Sub", "Div", "Neg", "Abs", "Exp", "Log", "Sqrt", "Pow", "Clip", "Rescale", "Mean",
        "Sum", "Max", "Constant"}
RESHAPING = {"Transpose", "Squeeze", "Unsqueeze", "Slice", "Split", "Stack", "Cast"}


def test_every_op_node_is_in_its_category_with_docs_and_every_table():
    assert {t.name for t in ops.TYPES} == MATH | RESHAPING
    for name in MATH | RESHAPING:
        node_type = CATALOGUE.get(name)
        assert node_type.category == ("Math" if name in MATH else "Reshaping"), name
        assert node_type.description.endswith(".") and "\n" not in node_type.description
        assert all(spec.description for spec in node_type.params), name
        assert node_type.describe({}).startswith(name), name
        assert name in compiler_kinds.RULES and name in compiler_kinds.OP_CELLS, name
        for table in ("PYTHON_OPS", "TORCH_OPS", "ONNX"):
            assert name in getattr(export_kinds, table), (name, table)


@pytest.mark.parametrize(("name", "params", "summary"), [
    ("Mean", {"axis": (1, 2), "keep_dims": True}, "Mean axis (1, 2) keep"),
    ("Max", {}, "Max axis -1"),
    ("Clip", {"min": None, "max": 6.0}, "Clip [-∞, 6]"),
    ("Pow", {"exponent": 0.5}, "Pow x^0.5"),
    ("Rescale", {"scale": 0.1}, "Rescale ×0.1"),
    ("Transpose", {}, "Transpose (N, 2, 1)"),
    ("Transpose", {"perm": (0, 3, 1, 2)}, "Transpose (N, 3, 1, 2)"),
    ("Slice", {"start": -1}, "Slice axis 1 [-1:]"),
    ("Slice", {"axis": -1, "start": 0, "end": 4, "step": 2}, "Slice axis -1 [0:4:2]"),
    ("Split", {"output_num": 3}, "Split axis -1 ÷3"),
    ("Squeeze", {}, "Squeeze"),
    ("Cast", {"dtype": "int64"}, "Cast int64"),
    ("Constant", {"shape": (4, 8)}, "Constant 4×8"),
])  # fmt: skip
def test_summaries_say_what_the_node_does(name, params, summary):
    node_type = CATALOGUE.get(name)
    assert node_type.describe(node_type.values(params)) == summary


@pytest.mark.parametrize(("name", "key", "text", "value"), [
    ("Mean", "axis", "1, 2", (1, 2)),
    ("Mean", "axis", "-1", -1),
    ("Transpose", "perm", "(3, 1, 2)", (3, 1, 2)),
    ("Clip", "min", "none", None),
    ("Slice", "end", "none", None),
    ("Slice", "start", "-1", -1),
    ("Squeeze", "axis", "2", 2),
    ("Split", "output_num", "4", 4),
    ("Cast", "dtype", "float64", "float64"),
    ("Constant", "shape", "4x8", (4, 8)),
    ("Constant", "init", "normal", "normal"),
])  # fmt: skip
def test_typed_values_parse(name, key, text, value):
    assert CATALOGUE.get(name).param(key).parse(text) == value


@pytest.mark.parametrize(("name", "key", "text", "message"), [
    ("Split", "output_num", "1", "output_num must be a whole number between 2 and 32. "
                                 "1 is less than 2."),
    ("Split", "output_num", "33", "33 is more than 32"),
    ("Slice", "step", "0", "step must be a whole number ≥ 1. 0 is less than 1."),
    ("Transpose", "perm", "(2, -1)", "-1 is less than 0"),
    ("Constant", "shape", "(0, 3)", "0 is less than 1"),
    ("Pow", "exponent", "nan", "not a finite number"),
    ("Cast", "dtype", "complex64", "is not one of them"),
])  # fmt: skip
def test_bad_values_are_refused_with_the_reason(name, key, text, message):
    with pytest.raises(CatalogueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        CATALOGUE.get(name).param(key).parse(text)


def test_the_constant_shows_its_fill_value_only_when_it_fills():
    constant = CATALOGUE.get("Constant")
    assert [s.name for s in constant.visible_params({})] == ["shape", "init", "fill_value"]
    assert [s.name for s in constant.visible_params({"init": "ones"})] == ["shape", "init"]


def test_split_has_one_output_port_per_part():
    split = CATALOGUE.get("Split")
    assert CATALOGUE.new_node("Split").outputs == ("out0", "out1")
    node = CATALOGUE.new_node("Split", params={"output_num": "4"})
    assert node.outputs == ("out0", "out1", "out2", "out3")
    assert node.inputs == ("in",)
    assert split.output_ports({"output_num": 3}) == ("out0", "out1", "out2")
    with pytest.raises(CatalogueError, match="output_num"):
        split.output_ports({"output_num": 0})
    # A type without `ports` keeps its declared outputs whatever its values.
    assert CATALOGUE.get("Slice").output_ports({"start": 3}) == ("out",)
    assert CATALOGUE.new_node("Constant").inputs == ()


def test_ports_of_any_node_type_follow_its_values():
    """NodeType.ports works for any type, not Split only (e.g. a user's type)."""
    heads = NodeType("Heads", "User Cells", "Splits into heads.", (PortSpec("in"),),
                     (PortSpec("h0"),), (ParamSpec("heads", "int", 1, minimum=1),),
                     lambda p: "Heads", ports=lambda v: tuple(f"h{i}" for i in range(v["heads"])))
    assert heads.new_node(params={"heads": 3}).outputs == ("h0", "h1", "h2")
    assert heads.new_node().outputs == ("h0",)


def test_the_palette_finds_op_nodes_by_their_other_names():
    for text, name in [("clamp", "Clip"), ("permute", "Transpose"), ("expand_dims", "Unsqueeze"),
                       ("ReduceMean", "Mean"), ("subtract", "Sub"), ("chunk", "Split")]:
        assert name in [t.name for t in CATALOGUE.search(text)], text


def test_the_last_time_step_preset_selects_the_last_entry_dropping_the_axis():
    (preset,) = [p for p in CATALOGUE.presets() if p.label == "Last time step"]
    node = CATALOGUE.new_node(preset.type_name, params=preset.params)
    assert node.type == "Select" and (node.params["axis"], node.params["index"]) == (1, -1)
