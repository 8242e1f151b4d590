"""Compiler: graph → engine Cell tree that trains, keeps its values with the document, reopens."""

import numpy as np
import pytest

import engine
from app.catalogue import CATALOGUE, build_catalogue, cell_node_type
from app.compiler import CompiledNetwork, CompileError, compile_project, infer_shapes
from app.compiler.shapes import fitting_params
from app.datasets import make_spirals
from app.document import Graph, Project
from app.document.data import graph_from_data, graph_to_data
from app.io.project_file import load_project, save_project
from engine import Tensor, nn
from tests.app.compiler.compiler_samples import (
    Scale,
    add,
    branches,
    chain,
    cnn,
    feed_batch,
    feed_for,
    grouped_mlp,
    input_params,
    mlp,
)


def run(compiled: CompiledNetwork, *arrays) -> np.ndarray:
    compiled.network.set_train(False)
    return compiled.network(*(Tensor(a) for a in arrays)).asnumpy()


def structure(compiled: CompiledNetwork) -> list:
    return [(name, type(cell).__name__) for name, cell in compiled.network.cells_and_names()] + [
        (name, p.shape) for name, p in compiled.parameters().items()
    ]


def test_parameter_names_follow_node_names():
    project = Project(mlp((2, 16, 2)))
    compiled = compile_project(project)
    graph = project.graph
    assert list(compiled.parameters()) == ["dense1.weight", "dense1.bias", "dense2.weight",
                                           "dense2.bias"]
    assert all(p.name == name for name, p in compiled.parameters().items())
    assert compiled.parameter_owner["dense2.bias"] == (graph.node_named("dense2").id, "bias")
    assert isinstance(compiled.network.dense1, nn.Dense)
    assert compiled.cells[graph.node_named("tanh1").id] is compiled.network.tanh1
    assert compiled.input_names == ["input1"] and compiled.input_shapes == [("N", 2)]
    assert compiled.output_shape == ("N", 2)
    assert isinstance(compiled.loss_fn, nn.CrossEntropyLoss)
    assert run(compiled, np.zeros((5, 2), np.float32)).shape == (5, 2)


def test_every_catalogue_type_compiles_in_a_minimal_graph():
    for node_type in CATALOGUE.types():
        if node_type.name in ("Input", "Output"):
            continue
        graph = Graph()
        feed = feed_for(node_type.name)
        source = add(graph, "Input", **input_params(node_type.name))
        # Widths that follow what arrives are filled as connecting in the editor fills them.
        fitted = fitting_params(node_type.name, ("N", *feed))
        node = graph.add_node(CATALOGUE.new_node(node_type.name, params=fitted))
        optional = {p.name for p in node_type.inputs if p.optional}  # an LSTM's hx stays open
        for port in node.inputs:
            if port not in optional:
                graph.connect(source.id, "out", node.id, port)
        chain(graph, node, add(graph, "Output", loss="none"))
        compiled = compile_project(Project(graph))
        out = run(compiled, feed_batch(node_type.name, 2))
        wanted = tuple(2 if d == "N" else d for d in compiled.output_shape)  # Constant: (1, …)
        assert out.shape == wanted, node_type.name
        assert compiled.loss_fn is None


def test_cnn_branches_and_composites_run_with_their_inferred_shapes():
    compiled = compile_project(Project(cnn()))
    assert run(compiled, np.zeros((3, 1, 28, 28), np.float32)).shape == (3, 10)
    graph, n = branches()
    compiled = compile_project(Project(graph))
    x = np.random.default_rng(0).normal(size=(4, 2)).astype(np.float32)
    net = compiled.network
    a, b = net.a(Tensor(x)), net.b(Tensor(x))
    expected = net.head(engine.ops.concat((engine.ops.tanh(a) + a, b), 1)).asnumpy()
    np.testing.assert_allclose(run(compiled, x), expected, rtol=1e-6)
    graph, composite_id = grouped_mlp()
    compiled = compile_project(Project(graph))
    assert "block1.dense1.weight" in compiled.parameters()
    inner = graph.node(composite_id).subgraph.node_named("dense1")
    assert compiled.parameter_owner["block1.dense1.weight"] == (inner.id, "weight")
    assert type(compiled.network.block1).__name__ == "GraphCell"
    assert run(compiled, x).shape == (4, 2)


def test_the_same_graph_compiles_to_the_same_structure_twice():
    graph, _ = grouped_mlp()
    project = Project(graph)
    assert structure(compile_project(project)) == structure(compile_project(project))
    copy = Project(graph_from_data(graph_to_data(graph)))
    assert structure(compile_project(copy)) == structure(compile_project(project))


def test_compile_errors_name_each_node_and_reason():
    graph = cnn()
    graph.set_param(graph.node_named("conv2d2").id, "in_channels", 3)
    stray = add(graph, "ReLU")
    with pytest.raises(CompileError) as caught:
        compile_project(Project(graph))
    assert caught.value.problems == {
        graph.node_named("conv2d2").id: "Conv2d expects 3 input channels, gets 8.",
        stray.id: "Input 'in' is not connected.",
    }
    assert "- conv2d2: Conv2d expects 3 input channels" in str(caught.value)
    with pytest.raises(CompileError, match="no Input node"):
        compile_project(Project(Graph()))
    graph = Graph()
    add(graph, "Input")
    with pytest.raises(CompileError, match="no Output node"):
        compile_project(Project(graph))
    graph = mlp((2, 3, 2))
    graph.set_param(graph.node_named("dense1").id, "has_bias", "maybe")  # a hand-edited file
    with pytest.raises(CompileError, match="dense1: Has_bias must be true or false"):
        compile_project(Project(graph))


def test_engine_refusals_become_compile_errors():
    graph = mlp((2, 3, 2))
    graph.set_param(graph.node_named("tanh1").id, "x", 1)
    with pytest.raises(CompileError, match="tanh1: Tanh has no hyper-parameter 'x'"):
        compile_project(Project(graph))
    graph = Graph()
    chain(graph, add(graph, "Input", shape=(3,)), add(graph, "BatchNorm1d", num_features=3,
                                                       eps=0.0), add(graph, "Output"))
    with pytest.raises(CompileError, match="batchnorm1d1: BatchNorm1d: eps must be in"):
        compile_project(Project(graph))


def train(compiled: CompiledNetwork, steps: int = 150) -> list[float]:
    data = make_spirals(200, seed=0)
    x, y = Tensor(data.x), Tensor(data.y)
    net, loss_fn = compiled.network, compiled.loss_fn
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.03)

    def forward(inputs, labels):
        return loss_fn(net(inputs), labels)

    grad_fn = engine.value_and_grad(forward, None, optimizer.parameters)
    net.set_train(True)
    losses = []
    for _ in range(steps):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        losses.append(float(loss.asnumpy()))
    return losses


def test_a_graph_built_through_the_document_trains_saves_reopens_and_recompiles(tmp_path):
    engine.set_seed(0)
    graph = mlp((2, 16, 16, 2))
    project = Project(graph, name="Spirals")
    compiled = compile_project(project)
    losses = train(compiled)
    assert losses[-1] < 0.6 * losses[0]
    compiled.store_values(project)
    path = tmp_path / "spirals.cwproj"
    save_project(project, path)
    reopened = load_project(path)
    assert graph_to_data(reopened.graph) == graph_to_data(project.graph)
    for node_id, values in project.param_values.items():
        for name, value in values.items():
            np.testing.assert_array_equal(reopened.param_values[node_id][name], value)
    again = compile_project(reopened)
    assert sorted(again.loaded) == sorted(compiled.parameters())
    x = make_spirals(50, seed=1).x
    np.testing.assert_array_equal(run(again, x), run(compiled, x))


def test_recompiling_after_adding_a_node_keeps_the_other_weights():
    engine.set_seed(1)
    graph = mlp((2, 8, 2))
    project = Project(graph)
    first = compile_project(project)
    train(first, steps=5)
    first.store_values(project)
    dense2 = graph.node_named("dense2")
    graph.disconnect(graph.edge_into(dense2.id, "in").id)
    extra = add(graph, "Dense", "extra", in_channels=8, out_channels=8)
    chain(graph, graph.node_named("tanh1"), extra, add(graph, "ReLU"), dense2)
    second = compile_project(project)
    assert sorted(second.loaded) == ["dense1.bias", "dense1.weight", "dense2.bias",
                                     "dense2.weight"]
    for name in second.loaded:
        np.testing.assert_array_equal(second.parameters()[name].asnumpy(),
                                      first.parameters()[name].asnumpy())
    graph.set_param(dense2.id, "in_channels", 4)  # a shape that no longer fits is not loaded
    graph.set_param(extra.id, "out_channels", 4)
    assert "dense2.weight" not in compile_project(project).loaded


def test_batchnorm_moving_statistics_are_stored():
    graph = Graph()
    chain(graph, add(graph, "Input", shape=(3,)), add(graph, "BatchNorm1d", "bn",
                                                       num_features=3), add(graph, "Output",
                                                                             loss="none"))
    project = Project(graph)
    compiled = compile_project(project)
    compiled.network.set_train(True)
    compiled.network(Tensor(np.arange(12, dtype=np.float32).reshape(4, 3)))
    compiled.store_values(project)
    stored = project.param_values[graph.node_named("bn").id]
    assert set(stored) == {"gamma", "beta", "moving_mean", "moving_variance"}
    np.testing.assert_allclose(stored["moving_mean"], 0.1 * np.array([4.5, 5.5, 6.5]),
                               rtol=1e-6)


def test_backward_hooks_on_edges_and_hookbackward_nodes_can_be_set_later():
    graph = Graph()
    source, hook = add(graph, "Input", shape=(3,)), add(graph, "HookBackward")
    dense = add(graph, "Dense", in_channels=3, out_channels=1)
    chain(graph, source, hook, dense, add(graph, "Output", loss="MSELoss"))
    compiled = compile_project(Project(graph))
    net, seen = compiled.network, []
    x = Tensor(np.ones((2, 3), np.float32))
    edge = graph.edge_into(dense.id, "in")

    def total(inputs):
        return net(inputs).sum()

    gradient = engine.grad(total)
    plain = gradient(x).asnumpy()
    compiled.edge_hooks.set(hook.id, lambda g: seen.append(("node", g[0].shape)))
    with compiled.edge_hooks.set(edge.id, lambda g: (g[0] * 2,)):
        doubled = gradient(x).asnumpy()
    np.testing.assert_allclose(doubled, 2 * plain)
    assert seen == [("node", (2, 3))]
    np.testing.assert_allclose(gradient(x).asnumpy(), plain)  # the edge hook is gone


def test_a_registered_user_cell_infers_and_compiles():
    catalogue = build_catalogue()
    catalogue.register(cell_node_type(Scale))
    graph = Graph()
    scale = graph.add_node(catalogue.new_node("Scale", params={"features": 3, "start": 2}))
    chain(graph, add(graph, "Input", shape=(3,)), scale, add(graph, "Output", loss="none"))
    assert infer_shapes(graph, catalogue=catalogue).shape(scale.id) == ("N", 3)
    assert infer_shapes(graph).errors[scale.id] == "Unknown node type 'Scale'"
    compiled = compile_project(Project(graph), catalogue=catalogue)
    assert list(compiled.parameters()) == ["scale1.scale"]
    np.testing.assert_array_equal(run(compiled, np.ones((2, 3), np.float32)), 2.0)
    shift = add(graph, "Input", shape=(3,))  # 'shift' connected, 'bias' left open: by name
    graph.connect(shift.id, "out", scale.id, "shift")
    compiled = compile_project(Project(graph), catalogue=catalogue)
    ones = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(run(compiled, ones, 0.5 * ones), 1.5)


ODD_VALUES = (None, -1, 0, 1, 2.5, True, "", "x", (), (1, 2, 3), (0, 0, 0, 0), ((1,),), 10**9)


def test_odd_hyper_parameters_never_escape_as_anything_but_reasons():
    for node_type in CATALOGUE.types():
        for spec in node_type.params:
            for value in ODD_VALUES:
                graph = Graph()
                source = add(graph, "Input", shape=(2, 4, 4))
                node = graph.add_node(CATALOGUE.new_node(node_type.name))
                graph.set_param(node.id, spec.name, value)
                for port in node.inputs:
                    graph.connect(source.id, "out", node.id, port)
                report = infer_shapes(graph)
                assert isinstance(report.errors, dict)
                try:
                    compile_project(Project(graph))
                except CompileError as exc:
                    assert exc.problems and all(exc.problems.values())
