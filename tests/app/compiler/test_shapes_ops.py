"""Shape rules of the op nodes: the shapes they give (those the compiled Cells make) and the
reason each refusal gives."""

from __future__ import annotations

import numpy as np
import pytest

from app.compiler import compile_project, infer_shapes
from app.compiler.kinds import PARAM_SHAPES, RULES, parameter_count
from app.document import Graph, Project
from app.io.param_check import ParamLayout
from engine import Tensor
from tests.app.compiler.compiler_samples import add


def wire(node_type: str, feeds: dict[str, tuple], **params):
    """Input nodes of these sample shapes → one `node_type` node → an Output on its first
    output; returns (graph, node)."""
    graph = Graph()
    node = add(graph, node_type, **params)
    for port, shape in feeds.items():
        source = add(graph, "Input", shape=shape)
        graph.connect(source.id, "out", node.id, port)
    sink = add(graph, "Output", loss="none")
    graph.connect(node.id, node.outputs[0], sink.id, "in")
    return graph, node


def outcome(node_type: str, feeds: dict[str, tuple], **params):
    """The node's output shapes, or its error."""
    graph, node = wire(node_type, feeds, **params)
    report = infer_shapes(graph)
    return report.errors.get(node.id) or report.output_shapes[node.id]


X = {"in": (4, 6)}
SEQ = {"in": (5, 3, 8)}

SHAPES = [
    ("Sub", {"x": (4, 6), "y": (1, 6)}, {}, {"out": ("N", 4, 6)}),
    ("Div", {"x": (4, 1), "y": (4, 6)}, {}, {"out": ("N", 4, 6)}),
    ("Neg", X, {}, {"out": ("N", 4, 6)}),
    ("Log", X, {}, {"out": ("N", 4, 6)}),
    ("Sqrt", X, {}, {"out": ("N", 4, 6)}),
    ("Pow", X, {"exponent": 0.5}, {"out": ("N", 4, 6)}),
    ("Clip", X, {"min": None, "max": 0.0}, {"out": ("N", 4, 6)}),
    ("Rescale", X, {"scale": 0.1}, {"out": ("N", 4, 6)}),
    ("Cast", X, {"dtype": "float64"}, {"out": ("N", 4, 6)}),
    ("Mean", SEQ, {"axis": -1}, {"out": ("N", 5, 3)}),
    ("Sum", SEQ, {"axis": (1, 2)}, {"out": ("N", 8)}),
    ("Max", SEQ, {"axis": (1, -1), "keep_dims": True}, {"out": ("N", 1, 3, 1)}),
    ("Transpose", SEQ, {"perm": (3, 1, 2)}, {"out": ("N", 8, 5, 3)}),
    ("Transpose", SEQ, {"perm": (0, 2, 1, 3)}, {"out": ("N", 3, 5, 8)}),
    ("Transpose", X, {"perm": (2, 1)}, {"out": ("N", 6, 4)}),
    ("Squeeze", {"in": (1, 4, 1)}, {}, {"out": ("N", 4)}),
    ("Squeeze", {"in": (1, 4, 1)}, {"axis": -1}, {"out": ("N", 1, 4)}),
    ("Squeeze", X, {}, {"out": ("N", 4, 6)}),
    ("Unsqueeze", X, {"axis": 1}, {"out": ("N", 1, 4, 6)}),
    ("Unsqueeze", X, {"axis": -1}, {"out": ("N", 4, 6, 1)}),
    ("Slice", SEQ, {"axis": 1, "start": -1}, {"out": ("N", 1, 3, 8)}),
    ("Slice", SEQ, {"axis": -1, "start": 1, "end": -1, "step": 3}, {"out": ("N", 5, 3, 2)}),
    ("Slice", SEQ, {"axis": 2, "start": 0, "end": 2}, {"out": ("N", 5, 2, 8)}),
    ("Split", SEQ, {"axis": -1, "output_num": 4},
     {f"out{i}": ("N", 5, 3, 2) for i in range(4)}),
    ("Stack", {"x": (4, 6), "y": (4, 6)}, {"axis": -1}, {"out": ("N", 4, 6, 2)}),
    ("Stack", {"x": (4, 6), "y": (4, 6)}, {"axis": 1}, {"out": ("N", 2, 4, 6)}),
    ("Constant", {}, {"shape": (4, 6)}, {"out": (1, 4, 6)}),
]


@pytest.mark.parametrize(("node_type", "feeds", "params", "expected"), SHAPES)
def test_each_op_gives_the_shape_its_cell_makes(node_type, feeds, params, expected):
    assert outcome(node_type, feeds, **params) == expected
    graph, node = wire(node_type, feeds, **params)
    if not feeds:
        add(graph, "Input", shape=(1,))  # a network has an Input, even one nothing reads
    compiled = compile_project(Project(graph))
    rng = np.random.default_rng(0)
    arrays = [np.abs(rng.standard_normal((3, *shape))).astype(np.float32) + 0.1
              for shape in feeds.values()]  # positive: Log and Sqrt stay finite
    compiled.network.set_train(False)
    cell = compiled.cells[node.id]
    out = cell(*(Tensor(a) for a in arrays))
    outs = out if isinstance(out, tuple) else (out,)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected.values(), strict=True):
        assert got.shape == tuple(3 if d == "N" else d for d in want)


REFUSALS = [
    ("Sub", {"x": (4, 6), "y": (5,)}, {}, "Sub can't combine (N, 4, 6) with (N, 5)."),
    ("Clip", X, {"min": None, "max": None}, "Clip: give min, max or both"),
    ("Clip", X, {"min": 2.0, "max": 1.0}, "Clip: min (2) is more than max (1)."),
    ("Mean", SEQ, {"axis": 0}, "Mean can't reduce over the batch axis (0); use a sample axis "
                              "(1 or more, or -1 for the last)."),
    ("Sum", SEQ, {"axis": (1, -4)}, "Sum can't reduce over the batch axis (0)"),
    ("Max", SEQ, {"axis": 4}, "Max: axis 4 is out of range for (N, 5, 3, 8)."),
    ("Mean", SEQ, {"axis": (2, -2)}, "Mean: axis 2 is given twice for (N, 5, 3, 8)"),
    ("Transpose", SEQ, {"perm": (2, 1)}, "Transpose: perm (2, 1) is not an order of the sample "
                                         "axes of (N, 5, 3, 8): give each of 1, 2, 3 once, "
                                         "e.g. (3, 2, 1)."),
    ("Transpose", X, {"perm": (1, 1)}, "Transpose: perm (1, 1) is not an order of the sample "
                                       "axes of (N, 4, 6): give each of 1, 2 once, e.g. (2, 1)."),
    ("Squeeze", X, {"axis": 1}, "Squeeze: axis 1 of (N, 4, 6) has size 4, not 1."),
    ("Squeeze", X, {"axis": 0}, "Squeeze can't remove the batch axis (0)"),
    ("Squeeze", X, {"axis": 3}, "Squeeze: axis 3 is out of range for (N, 4, 6)."),
    ("Unsqueeze", X, {"axis": 0}, "Unsqueeze can't put a new axis before the batch (axis 0)"),
    ("Unsqueeze", X, {"axis": -4}, "Unsqueeze can't put a new axis before the batch"),
    ("Unsqueeze", X, {"axis": 4}, "Unsqueeze: axis 4 is out of range for a new axis of "
                                  "(N, 4, 6) (from -4 to 3)."),
    ("Slice", SEQ, {"axis": 1, "start": 3, "end": 2},
     "Slice [3:2] keeps nothing of the 5 entries along axis 1 of (N, 5, 3, 8)."),
    ("Slice", SEQ, {"axis": 2, "start": 7}, "Slice [7:] keeps nothing of the 3 entries"),
    ("Slice", SEQ, {"axis": 0}, "Slice can't cut the batch axis (0)"),
    ("Slice", SEQ, {"axis": -5}, "Slice: axis -5 is out of range for (N, 5, 3, 8)."),
    ("Split", SEQ, {"axis": 2, "output_num": 2},
     "Split: the size 3 along axis 2 of (N, 5, 3, 8) doesn't divide into 2 equal parts."),
    ("Split", SEQ, {"axis": 0}, "Split can't split the batch axis (0)"),
    ("Stack", {"x": (4, 6), "y": (4, 5)}, {},
     "Stack needs x and y of the same shape, gets (N, 4, 6) and (N, 4, 5)."),
    ("Stack", {"x": (4, 6), "y": (4, 6)}, {"axis": 0}, "Stack can't put a new axis before"),
    ("Constant", {}, {"shape": (100_000, 10_000)}, "Constant would hold 1,000,000,000 weights"),
]


@pytest.mark.parametrize(("node_type", "feeds", "params", "reason"), REFUSALS)
def test_each_refusal_names_the_reason(node_type, feeds, params, reason):
    found = outcome(node_type, feeds, **params)
    assert isinstance(found, str) and found.startswith(reason), found


def test_a_transpose_may_put_time_first_and_back_for_a_time_major_layer():
    assert outcome("Transpose", X, perm=(1, 0, 2)) == {"out": (4, "N", 6)}
    graph = Graph()
    source, first, back, sink = (add(graph, "Input", shape=X["in"]),
                                 add(graph, "Transpose", perm=(1, 0, 2)),
                                 add(graph, "Transpose", perm=(1, 0, 2)),
                                 add(graph, "Output", loss="none"))
    for a, b in ((source, first), (first, back), (back, sink)):
        graph.connect(a.id, "out", b.id, "in")
    compiled = compile_project(Project(graph))
    x = np.arange(3 * 4 * 6, dtype=np.float32).reshape(3, 4, 6)
    np.testing.assert_array_equal(compiled.cells[first.id](Tensor(x)).asnumpy(),
                                  x.transpose(1, 0, 2))


def test_log_and_sqrt_take_any_shape():
    for node_type in ("Log", "Sqrt", "Exp", "Abs"):
        for shape in [(1,), (2, 3, 4, 5)]:
            assert outcome(node_type, {"in": shape}) == {"out": ("N", *shape)}


def test_a_split_that_does_not_divide_is_refused_when_connecting():
    from app.compiler import check_connection

    graph, split = wire("Split", {}, axis=1, output_num=3)
    source = add(graph, "Input", shape=(4, 2))
    reason = check_connection(graph, source.id, "out", split.id, "in")
    assert reason == ("Split: the size 4 along axis 1 of (N, 4, 2) doesn't divide into 3 equal "
                      "parts.")


def test_every_split_port_carries_its_own_shape_to_its_edge():
    graph, split = wire("Split", {"in": (6, 4)}, axis=1, output_num=3)
    tails = [add(graph, "Rescale") for _ in range(2)]
    graph.connect(split.id, "out1", tails[0].id, "in")
    graph.connect(split.id, "out2", tails[1].id, "in")
    report = infer_shapes(graph)
    assert report.ok, report.errors
    assert [report.shape(split.id, f"out{i}") for i in range(3)] == [("N", 2, 4)] * 3
    assert {report.describe(e.id) for e in graph.edges_from(split.id)} == {"(N, 2, 4)"}


def test_the_constant_holds_one_untrainable_parameter_of_its_shape():
    assert set(RULES) >= {"Constant", "Split"} and "Constant" in PARAM_SHAPES
    values = {"shape": (3, 5), "init": "fill", "fill_value": 0.0}
    assert PARAM_SHAPES["Constant"](values) == {"value": (3, 5)}
    assert parameter_count("Constant", values) == 15
    graph, node = wire("Constant", {}, shape=(3, 5), init="fill", fill_value=2.5)
    add(graph, "Input", shape=(1,))  # a network has an Input, even one the Constant ignores
    compiled = compile_project(Project(graph))
    (name, param), = compiled.parameters().items()
    assert name == f"{node.name}.value" and param.shape == (3, 5)
    assert not param.requires_grad and name not in compiled.trainable
    np.testing.assert_array_equal(param.asnumpy(), 2.5)
    assert compiled.cells[node.id]().shape == (1, 3, 5)
    assert ParamLayout(graph).shapes[node.id] == {"value": (3, 5)}  # saved arrays are checked
