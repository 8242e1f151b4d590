"""Shape inference: shapes on every edge, a readable reason on every bad node, never a raise."""

import pytest

from app.catalogue import CATALOGUE
from app.compiler import ShapeReport, check_connection, fitting_params, infer_shapes
from app.document import Graph, Node
from tests.app.compiler.compiler_samples import add, branches, chain, cnn, grouped_mlp, mlp


def shapes_by_source(graph: Graph, report: ShapeReport) -> dict[str, str]:
    return {graph.node(e.src_node).name: report.describe(e.id) for e in graph.edges.values()}


def errors_by_name(graph: Graph, report: ShapeReport) -> dict[str, str]:
    return {graph.find(nid)[1].name: reason for nid, reason in report.errors.items()}


def test_mlp_shapes_have_a_symbolic_batch():
    graph = mlp((784, 256, 10))
    report = infer_shapes(graph)
    assert report.ok
    assert shapes_by_source(graph, report) == {
        "input1": "(N, 784)", "dense1": "(N, 256)", "tanh1": "(N, 256)", "dense2": "(N, 10)",
    }
    edge = graph.edge_into(graph.node_named("tanh1").id, "in")
    assert report.edge_shapes[edge.id] == ("N", 256)
    assert report.output_shapes[graph.node_named("dense2").id] == {"out": ("N", 10)}


def test_cnn_shapes_follow_pad_modes():
    graph = cnn()
    report = infer_shapes(graph)
    assert report.ok, report.errors
    assert shapes_by_source(graph, report) == {
        "input1": "(N, 1, 28, 28)", "conv2d1": "(N, 8, 28, 28)", "relu1": "(N, 8, 28, 28)",
        "maxpool2d1": "(N, 8, 14, 14)", "conv2d2": "(N, 16, 12, 12)", "relu2": "(N, 16, 12, 12)",
        "maxpool2d2": "(N, 16, 6, 6)", "flatten1": "(N, 576)", "dense1": "(N, 10)",
    }


@pytest.mark.parametrize(
    ("params", "size", "expected"),
    [
        ({"kernel_size": 3, "stride": 2, "pad_mode": "same"}, (7, 8), (4, 4)),
        ({"kernel_size": 3, "stride": 2, "pad_mode": "valid"}, (7, 8), (3, 3)),
        ({"kernel_size": (3, 5), "pad_mode": "pad", "padding": (1, 1, 2, 0)}, (7, 8), (7, 6)),
        ({"kernel_size": 3, "dilation": 2, "pad_mode": "valid"}, (7, 8), (3, 4)),
        ({"kernel_size": 1, "stride": 3, "pad_mode": "same"}, (7, 8), (3, 3)),
    ],
)
def test_conv_output_sizes_match_the_engine(params, size, expected):
    import numpy as np

    from engine import Tensor, nn

    graph = Graph()
    conv = add(graph, "Conv2d", in_channels=2, out_channels=3, **params)
    chain(graph, add(graph, "Input", shape=(2, *size)), conv, add(graph, "Output", loss="none"))
    shape = infer_shapes(graph).shape(conv.id)
    assert shape == ("N", 3, *expected)
    cell = nn.Conv2d(2, 3, **params)
    assert cell(Tensor(np.zeros((1, 2, *size), np.float32))).shape[2:] == expected


@pytest.mark.parametrize("pool", ["MaxPool2d", "AvgPool2d"])
def test_pool_same_and_valid(pool):
    graph = Graph()
    a = add(graph, pool, kernel_size=3, stride=2, pad_mode="same")
    b = add(graph, pool, kernel_size=3, stride=2)
    chain(graph, add(graph, "Input", shape=(4, 9, 10)), a, b)
    report = infer_shapes(graph)
    assert report.shape(a.id) == ("N", 4, 5, 5)
    assert report.shape(b.id) == ("N", 4, 2, 2)


def test_branches_concat_and_add():
    graph, n = branches()
    report = infer_shapes(graph)
    assert report.ok, report.errors
    assert report.shape(n["add"].id) == ("N", 4)
    assert report.shape(n["concat"].id) == ("N", 7)
    assert report.shape(n["head"].id) == ("N", 2)


def test_reshape_matmul_and_broadcasting():
    graph = Graph()
    source = add(graph, "Input", shape=(12,))
    reshape = add(graph, "Reshape", shape=(3, -1))
    matmul, mul = add(graph, "MatMul"), add(graph, "Mul")
    other = add(graph, "Input", shape=(4, 5))
    chain(graph, source, reshape)
    graph.connect(reshape.id, "out", matmul.id, "x")
    graph.connect(other.id, "out", matmul.id, "y")
    graph.connect(matmul.id, "out", mul.id, "x")
    graph.connect(source.id, "out", mul.id, "y")
    report = infer_shapes(graph)
    assert report.shape(reshape.id) == ("N", 3, 4)
    assert report.shape(matmul.id) == ("N", 3, 5)
    assert errors_by_name(graph, report) == {"mul1": "Mul can't combine (N, 3, 5) with (N, 12)."}


def test_composites_are_inferred_inside():
    graph, composite_id = grouped_mlp()
    report = infer_shapes(graph)
    assert report.ok, report.errors
    composite = graph.node(composite_id)
    inner = composite.subgraph.node_named("dense1")
    assert report.shape(inner.id) == ("N", 8)
    assert report.output_shapes[composite_id] == {composite.outputs[0]: ("N", 8)}
    for edge in composite.subgraph.edges.values():
        assert report.describe(edge.id) == ("(N, 2)" if edge.dst_node == inner.id else "(N, 8)")


def test_an_error_inside_a_composite_marks_both():
    graph, composite_id = grouped_mlp()
    inside = graph.node(composite_id).subgraph
    inside.set_param(inside.node_named("dense1").id, "in_channels", 3)
    report = infer_shapes(graph)
    reason = "Dense expects 3 input features, gets 2."
    assert report.errors[inside.node_named("dense1").id] == reason
    assert report.errors[composite_id].startswith("Inside, 'dense1': Dense expects 3")
    assert report.error_kinds[composite_id] == "inside"


@pytest.mark.parametrize(
    ("edit", "name", "reason"),
    [
        (lambda g: g.set_param(g.node_named("conv2d2").id, "in_channels", 3),
         "conv2d2", "Conv2d expects 3 input channels, gets 8."),
        (lambda g: g.set_param(g.node_named("dense1").id, "in_channels", 100),
         "dense1", "Dense expects 100 input features, gets 576."),
        (lambda g: g.remove_node(g.node_named("flatten1").id),
         "dense1", "Input 'in' is not connected."),
        (lambda g: g.set_param(g.node_named("conv2d1").id, "out_channels", 0),
         "conv2d1", "Out_channels must be a whole number ≥ 1."),
        (lambda g: g.set_param(g.node_named("conv2d1").id, "group", 3),
         "conv2d1", "Conv2d: in_channels (1) and out_channels (8) must both be divisible by "
         "group (3)."),
        (lambda g: g.set_param(g.node_named("conv2d1").id, "padding", 1),
         "conv2d1", "Conv2d: padding must be 0 unless pad_mode is 'pad' (it is 'same')."),
        (lambda g: g.set_param(g.node_named("input1").id, "shape", (784,)),
         "conv2d1", "Conv2d expects (N, 1, H, W) images, gets (N, 784)."),
        (lambda g: g.set_param(g.node_named("maxpool2d2").id, "kernel_size", 20),
         "maxpool2d2", "MaxPool2d: the window of 20 doesn't fit (N, 16, 12, 12), whose H is 12."),
        (lambda g: g.set_param(g.node_named("input1").id, "shape", "bad"),
         "input1", "Shape must be a list of sizes"),
        (lambda g: g.add_node(Node("Mystery", "thing")), "thing", "Unknown node type 'Mystery'"),
        (lambda g: add(g, "Output", loss="MSELoss"), "output2",  # a second output: fine, once fed
         "Input 'in' is not connected."),
        (lambda g: g.set_params(g.node_named("dense1").id, {"out_channels": 10**6}),
         "dense1", "Dense would hold 576,000,000 weights; at most 100,000,000 per node."),
        (lambda g: g.rename_node(g.node_named("relu1").id, "training"), "training",
         "'training' is a name the engine uses; rename the node."),
    ],
)
def test_each_error_has_its_reason_and_does_not_raise(edit, name, reason):
    graph = cnn()
    edit(graph)
    report = infer_shapes(graph)
    assert errors_by_name(graph, report)[name].startswith(reason)
    assert len(report.errors) == 1  # nodes after a bad one have unknown shapes, not errors


def test_cycles_and_duplicate_names_in_restored_data_are_reported():
    # The document refuses both, so build a graph around its checks, as a broken file might.
    graph = mlp((2, 3, 2))
    dense1, dense2 = graph.node_named("dense1"), graph.node_named("dense2")
    graph._nodes[dense2.id] = dense2.replace(name="dense1")
    report = infer_shapes(graph)
    assert report.errors[dense1.id] == "Another node is also named 'dense1'; names must differ."
    graph = mlp((2, 3, 2))
    loop = graph._edges[graph.edge_into(graph.node_named("dense1").id, "in").id]
    graph._drop_edge(loop)
    graph._store_edge(loop.__class__(graph.node_named("dense2").id, "out",
                                     graph.node_named("dense1").id, "in"))
    errors = errors_by_name(graph, infer_shapes(graph))
    assert errors["dense1"] == "'dense1' is part of a loop."
    assert errors["tanh1"] == "'tanh1' is part of a loop."


def test_losses_want_class_scores():
    graph = Graph()
    chain(graph, add(graph, "Input", shape=(3, 4)), add(graph, "Flatten", start_dim=0,
                                                          end_dim=-1), add(graph, "Output"))
    errors = errors_by_name(graph, infer_shapes(graph))
    assert errors == {"output1": "CrossEntropyLoss needs class scores (N, classes), gets (N×3×4)."}
    graph.set_param(graph.node_named("output1").id, "loss", "NLLLoss")
    errors = errors_by_name(graph, infer_shapes(graph))
    assert errors == {"output1": "NLLLoss needs class scores (N, classes), gets (N×3×4)."}


def test_check_connection_gives_reasons():
    graph = cnn()
    conv1, dense = graph.node_named("conv2d1"), graph.node_named("dense1")
    source, extra = graph.node_named("input1"), add(graph, "Dense", in_channels=5)
    assert check_connection(graph, source.id, "out", conv1.id, "in") == (
        "Input 'in' of 'conv2d1' is already connected; disconnect it first.")
    assert check_connection(graph, dense.id, "out", extra.id, "in") == (
        "Dense expects 5 input features, gets 10.")
    assert check_connection(graph, source.id, "nope", extra.id, "in") == (
        "'input1' has no output 'nope'.")
    assert check_connection(graph, extra.id, "out", extra.id, "in").endswith("to itself.")
    graph.set_param(extra.id, "in_channels", 10)
    assert check_connection(graph, dense.id, "out", extra.id, "in") is None
    assert infer_shapes(graph).errors[extra.id] == "Input 'in' is not connected."


def test_check_connection_refuses_loops_and_works_inside_composites():
    graph = mlp((2, 3, 2))
    d1, d2 = graph.node_named("dense1"), graph.node_named("dense2")
    relu = add(graph, "ReLU")
    graph.connect(d2.id, "out", relu.id, "in")
    graph.disconnect(graph.edge_into(d1.id, "in").id)
    assert "would make a loop" in check_connection(graph, relu.id, "out", d1.id, "in")
    graph, composite_id = grouped_mlp()
    inside = graph.node(composite_id).subgraph
    dense = inside.node_named("dense1")
    graph_edge = inside.edge_into(dense.id, "in")
    inside.disconnect(graph_edge.id)
    wrong = add(inside, "Dense", in_channels=5)
    port = inside.node(graph_edge.src_node)
    assert check_connection(inside, port.id, "out", dense.id, "in", root=graph) is None
    assert check_connection(inside, port.id, "out", wrong.id, "in", root=graph) == (
        "Dense expects 5 input features, gets 2.")


def test_fitting_params_for_auto_fill():
    assert fitting_params("Dense", ("N", 784)) == {"in_channels": 784}
    assert fitting_params("Conv2d", ("N", 3, 8, 8)) == {"in_channels": 3}
    assert fitting_params("BatchNorm1d", ("N", 5)) == {"num_features": 5}
    assert fitting_params("ReLU", ("N", 5)) == {}


def test_every_catalogue_type_gets_a_shape_or_a_reason():
    for node_type in CATALOGUE.types():
        graph = Graph()
        node = graph.add_node(CATALOGUE.new_node(node_type.name))
        report = infer_shapes(graph)
        if node.inputs:
            assert report.errors[node.id].endswith("is not connected.")
        else:
            assert report.ok
