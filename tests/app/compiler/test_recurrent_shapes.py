"""RNN, LSTM and GRU nodes: the shapes of each output port, what is refused and why, the
Parameter shapes, input_size following what arrives, the compiled Cells and the palette
entries."""

import numpy as np
import pytest

from app.catalogue import CATALOGUE
from app.compiler import check_connection, compile_project, fitting_params, infer_shapes
from app.compiler.kinds import parameter_count
from app.compiler.size_flow import follow, following_keys
from app.document import Graph, Project
from app.io.param_check import ParamLayout, parameter_shapes
from engine import Tensor, nn
from tests.app.compiler.compiler_samples import add, chain

KINDS = ["LSTM", "GRU", "RNN"]


def _fed(kind: str, sample: tuple, transpose: bool = False, **params):
    """Input(sample) [→ Transpose (1, 0, 2)] → node [→ Transpose] → Output; (graph, node,
    report)."""
    graph = Graph()
    turn = [add(graph, "Transpose", perm=(1, 0, 2))] if transpose else []
    node = add(graph, kind, **params)
    back = [add(graph, "Transpose", perm=(1, 0, 2))] if transpose else []
    chain(graph, add(graph, "Input", shape=sample), *turn, node, *back,
          add(graph, "Output", loss="none"))
    return graph, node, infer_shapes(graph)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("params", "transpose", "output", "state"), [
    ({}, False, ("N", 6, 5), (1, "N", 5)),
    ({"num_layers": 3, "bidirectional": True}, False, ("N", 6, 10), (6, "N", 5)),
    ({"batch_first": False}, True, (6, "N", 5), (1, "N", 5)),
    ({"batch_first": False, "bidirectional": True, "num_layers": 2}, True, (6, "N", 10),
     (4, "N", 5)),
])  # fmt: skip
def test_each_port_has_its_shape_as_the_engine_gives(kind, params, transpose, output, state):
    graph, node, report = _fed(kind, (6, 3), transpose, input_size=3, hidden_size=5, **params)
    assert report.ok, report.errors
    ports = ["output", "h_n", "c_n"] if kind == "LSTM" else ["output", "h_n"]
    assert list(node.outputs) == ports
    assert report.shape(node.id, "output") == output
    for port in ports[1:]:
        assert report.shape(node.id, port) == state
    network = compile_project(Project(graph)).network
    cell = network.cells_and_names()
    layer = dict(cell)[node.name]
    x = np.random.default_rng(0).standard_normal((2, 6, 3)).astype(np.float32)
    if transpose:
        x = x.transpose(1, 0, 2).copy()
    got = layer(Tensor(x))
    assert len(got) == len(ports)
    for value, port in zip(got, ports, strict=True):
        wanted = report.shape(node.id, port)
        assert value.shape == tuple(2 if d == "N" else d for d in wanted), port


@pytest.mark.parametrize(("kind", "sample", "params", "transpose", "reason"), [
    ("LSTM", (18,), {"input_size": 3}, False,
     "LSTM needs a time axis: it takes (N, T, 3), but (N, 18) arrives, which has none. A "
     "Flatten before it removes the time axis; feed it the sequence (N, T, features) "
     "instead."),
    ("GRU", (6, 3, 2), {"input_size": 2}, False,
     "GRU expects (N, T, 2) sequences, gets (N, 6, 3, 2)."),
    ("RNN", (6, 3), {"input_size": 4}, False,
     "RNN expects 4 features per step (input_size), but (N, 6, 3) arrives with 3."),
    ("LSTM", (6, 3), {"input_size": 3, "batch_first": False}, False,
     "LSTM: batch_first is off, so it takes (T, N, features) with the batch axis second, but "
     "(N, 6, 3) arrives; turn batch_first on, or put the batch second with a Transpose."),
    ("GRU", (6, 3), {"input_size": 3}, True,
     "GRU: batch_first is on, so the batch axis N comes first (N, T, 3), but (6, N, 3) "
     "arrives; turn batch_first off for (T, N, features), or move the batch axis first."),
])  # fmt: skip
def test_what_does_not_fit_is_refused_with_the_reason(kind, sample, params, transpose, reason):
    _, node, report = _fed(kind, sample, transpose, **params)
    assert report.errors[node.id] == reason


def test_a_flatten_before_an_lstm_is_refused_at_the_connection():
    graph = Graph()
    flatten = add(graph, "Flatten")
    lstm = add(graph, "LSTM", input_size=3)
    chain(graph, add(graph, "Input", shape=(6, 3)), flatten)
    refusal = check_connection(graph, flatten.id, "out", lstm.id, "in")
    assert "needs a time axis" in refusal and "Flatten" in refusal and "(N, 18)" in refusal


def test_initial_states_come_from_another_layer_with_the_right_shape():
    graph = Graph()
    source = add(graph, "Input", shape=(6, 3))
    encoder = add(graph, "LSTM", input_size=3, hidden_size=4, num_layers=2)
    decoder = add(graph, "LSTM", input_size=3, hidden_size=4, num_layers=2)
    chain(graph, source, encoder)
    graph.connect(source.id, "out", decoder.id, "in")
    graph.connect(encoder.id, "h_n", decoder.id, "hx")
    assert infer_shapes(graph).errors[decoder.id] == (
        "LSTM: connect both hx and cx, or neither: its initial state is the pair (h_0, c_0).")
    graph.connect(encoder.id, "c_n", decoder.id, "cx")
    assert decoder.id not in infer_shapes(graph).errors
    wide = add(graph, "GRU", input_size=3, hidden_size=8)
    graph.connect(source.id, "out", wide.id, "in")
    refusal = check_connection(graph, encoder.id, "h_n", wide.id, "hx")
    assert refusal is not None and "(1, N, 8)" in refusal and "(2, N, 4)" in refusal
    sink = add(graph, "Output", loss="none")
    graph.connect(decoder.id, "output", sink.id, "in")
    compiled = compile_project(Project(graph))
    x = np.random.default_rng(1).standard_normal((2, 6, 3)).astype(np.float32)
    net = compiled.network
    _, h, c = net.lstm1(Tensor(x))
    expected = net.lstm2(Tensor(x), h, c)[0].asnumpy()
    np.testing.assert_allclose(net(Tensor(x)).asnumpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("params", [{}, {"num_layers": 2, "bidirectional": True},
                                    {"has_bias": False, "num_layers": 2}])
def test_parameter_shapes_are_the_engines(kind, params):
    values = CATALOGUE.get(kind).values({"input_size": 3, "hidden_size": 4, **params})
    graph, node, _ = _fed(kind, (6, 3), input_size=3, hidden_size=4, **params)
    compiled = compile_project(Project(graph))
    built = {name.split(".", 1)[1]: tuple(p.shape)
             for name, p in compiled.parameters().items()}
    assert parameter_shapes(kind, values) == built
    assert list(parameter_shapes(kind, values)) == list(built)  # MindSpore's order too
    assert parameter_count(kind, values) == sum(int(np.prod(s)) for s in built.values())
    assert ParamLayout(graph).shapes[node.id] == built
    cell = compiled.cells[node.id]
    assert isinstance(cell, getattr(nn, kind))
    assert "weight_hh_l0" in dict(cell.parameters_and_names())


@pytest.mark.parametrize("kind", KINDS)
def test_input_size_fits_and_follows_what_arrives(kind):
    assert fitting_params(kind, ("N", 20, 7)) == {"input_size": 7}
    assert fitting_params(kind, ("N", 7)) == {}
    assert set(following_keys(kind)) == {"input_size"}
    graph = Graph()
    dense = add(graph, "Dense", in_channels=3, out_channels=8)
    layer = add(graph, kind, input_size=8)
    chain(graph, add(graph, "Input", shape=(6, 3)), dense, layer)
    before = infer_shapes(graph)
    assert before.ok
    graph.set_params(dense.id, {"out_channels": 5})
    assert [(c.node_id, dict(c.new)) for c in follow(graph, before)] == [
        (layer.id, {"input_size": 5})]


def test_palette_entries():
    for kind in KINDS:
        node_type = CATALOGUE.get(kind)
        assert node_type.category == "Sequences" and node_type.cell is getattr(nn, kind)
        assert node_type.description and "\n" not in node_type.description
        for spec in node_type.params:
            assert spec.description, f"{kind}.{spec.name}"
        assert [p.name for p in node_type.inputs] == (
            ["in", "hx", "cx"] if kind == "LSTM" else ["in", "hx"])
        assert [p.optional for p in node_type.inputs][1:] == [True] * (len(node_type.inputs) - 1)
        assert node_type.defaults()["batch_first"] is True
        assert getattr(nn, kind)(3, 4).batch_first is False  # the engine keeps MindSpore's
    lstm = CATALOGUE.get("LSTM")
    assert lstm.describe({"input_size": 8, "hidden_size": 64}) == "LSTM 8→64"
    assert lstm.describe({"input_size": 8, "hidden_size": 64, "num_layers": 2,
                          "bidirectional": True}) == "BiLSTM 8→64 ×2"
    assert CATALOGUE.get("RNN").describe({"input_size": 2, "nonlinearity": "relu"}) == \
        "RNN 2→32 relu"
    assert [p.name for p in CATALOGUE.get("RNN").params][3] == "nonlinearity"
    assert {"LSTM", "GRU", "RNN"} <= {t.name for t in CATALOGUE.search("recurrent")}
    assert "LSTM" in {t.name for t in CATALOGUE.search("BiLSTM")}
