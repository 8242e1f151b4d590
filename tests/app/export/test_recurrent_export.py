"""Export of RNN, LSTM and GRU nodes: the PyTorch script (outputs and gradients), the ONNX
model (LSTM/GRU/RNN ops, run by onnxruntime) and the engine script each compute what the
engine does: the output and h_n (and c_n), also with initial states fed by another layer."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import engine
from app.catalogue import CATALOGUE
from app.compiler import compile_project
from app.document import Graph, Project
from app.export.onnx_model import export_onnx
from app.export.python_script import export_python
from app.export.torch_script import export_torch
from tests.app.export.export_samples import engine_outputs, load_script

RTOL, ATOL = 1e-4, 1e-5
SAMPLE = (5, 3)  # T = 5 steps of 3 features


def _node(graph: Graph, kind: str, **params):
    return graph.add_node(CATALOGUE.new_node(kind, params=params))


def _project(name: str, kind: str, feed_states: bool = False, **params) -> Project:
    """Input (N, 5, 3) → [encoder →] layer → every port of the layer, flattened batch first
    and joined (h_n and c_n have the batch second: a Transpose first) → one Output. With
    `feed_states`, an encoder of the same kind gives the layer its initial state(s)."""
    graph = Graph()
    source = _node(graph, "Input", shape=SAMPLE)
    x = (source.id, "out")
    if not params.get("batch_first", True):
        turn = _node(graph, "Transpose", perm=(1, 0, 2))  # (N, T, F) -> (T, N, F)
        graph.connect(source.id, "out", turn.id, "in")
        x = (turn.id, "out")
    layer = _node(graph, kind, input_size=3, hidden_size=4, **params)
    graph.connect(*x, layer.id, "in")
    if feed_states:
        encoder = _node(graph, kind, input_size=3, hidden_size=4, **params)
        graph.connect(*x, encoder.id, "in")
        graph.connect(encoder.id, "h_n", layer.id, "hx")
        if kind == "LSTM":
            graph.connect(encoder.id, "c_n", layer.id, "cx")
    joined = None
    for port in layer.outputs:
        end = (layer.id, port)
        if port != "output" or not params.get("batch_first", True):
            turn = _node(graph, "Transpose", perm=(1, 0, 2))  # the batch first
            graph.connect(*end, turn.id, "in")
            end = (turn.id, "out")
        flat = _node(graph, "Flatten")
        graph.connect(*end, flat.id, "in")
        if joined is None:
            joined = (flat.id, "out")
            continue
        concat = _node(graph, "Concat", axis=1)
        graph.connect(*joined, concat.id, "x")
        graph.connect(flat.id, "out", concat.id, "y")
        joined = (concat.id, "out")
    sink = _node(graph, "Output", loss="none")
    graph.connect(*joined, sink.id, "in")
    project = Project(graph=graph, name=name)
    compile_project(project).store_values(project)
    return project


CASES = {
    "lstm": ("LSTM", False, {}),
    "lstm_deep_bi": ("LSTM", False, {"num_layers": 2, "bidirectional": True}),
    "lstm_states": ("LSTM", True, {"num_layers": 2}),
    "lstm_time_major": ("LSTM", False, {"batch_first": False, "has_bias": False}),
    "gru": ("GRU", False, {}),
    "gru_deep_bi_states": ("GRU", True, {"num_layers": 2, "bidirectional": True}),
    "gru_time_major": ("GRU", True, {"batch_first": False}),
    "rnn": ("RNN", False, {"num_layers": 2}),
    "rnn_relu_bi_states": ("RNN", True, {"nonlinearity": "relu", "bidirectional": True,
                                         "has_bias": False}),
}


def make(name: str) -> Project:
    kind, states, params = CASES[name]
    return _project(name, kind, states, **params)


def _batch(n: int = 4) -> np.ndarray:
    return np.random.default_rng(3).standard_normal((n, *SAMPLE)).astype(np.float32)


def _width(name: str) -> int:
    """How many numbers of each sample come out: output, then h_n (and c_n)."""
    kind, _, params = CASES[name]
    layers = params.get("num_layers", 1) * (2 if params.get("bidirectional") else 1)
    return SAMPLE[0] * 4 * (2 if params.get("bidirectional") else 1) \
        + layers * 4 * (2 if kind == "LSTM" else 1)


@pytest.mark.parametrize("name", CASES)
def test_the_onnx_model_runs_to_the_engines_outputs(tmp_path, name):
    project = make(name)
    path = export_onnx(project, tmp_path / f"{name}.onnx").written[0]
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    kind, _, params = CASES[name]
    ops = [node.op_type for node in model.graph.node]
    layers = params.get("num_layers", 1) * (2 if CASES[name][1] else 1)
    assert ops.count(kind) == layers  # one op per layer, the encoder's too
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for n in (4, 1):  # the batch axis stays free
        x = _batch(n)
        (got,) = session.run(None, {session.get_inputs()[0].name: x})
        want = engine_outputs(project, x)
        assert got.shape == want.shape == (n, _width(name))
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", CASES)
def test_the_torch_script_predicts_and_differentiates_as_the_engine(tmp_path, name):
    project = make(name)
    written = export_torch(project, tmp_path / f"{name}.py").written
    net = load_script(written[0]).load_network()
    kind = CASES[name][0]
    assert f"nn.{kind}(3, 4" in written[0].read_text()
    x = _batch()
    want = engine_outputs(project, x)
    tx = torch.from_numpy(x).requires_grad_()
    out = net(tx)
    cot = np.random.default_rng(4).standard_normal(want.shape).astype(np.float32)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=RTOL, atol=ATOL)
    (out * torch.from_numpy(cot)).sum().backward()
    compiled = compile_project(project)
    params = compiled.trainable_params()
    gx, grads = engine.grad(lambda a: (compiled.network(a) * engine.Tensor(cot)).sum(), 0,
                            params)(engine.Tensor(x))
    np.testing.assert_allclose(tx.grad.numpy(), gx.asnumpy(), rtol=RTOL, atol=ATOL)
    torch_params = dict(net.named_parameters())
    assert sorted(torch_params) == sorted(p.name for p in params)
    for param, grad in zip(params, grads, strict=True):
        np.testing.assert_allclose(torch_params[param.name].grad.numpy(), grad.asnumpy(),
                                   rtol=RTOL, atol=ATOL, err_msg=param.name)


@pytest.mark.parametrize("name", ["lstm_states", "gru_deep_bi_states", "rnn_relu_bi_states",
                                  "lstm_time_major"])
def test_the_engine_script_rebuilds_the_same_network(tmp_path, name):
    project = make(name)
    exported = export_python(project, tmp_path / f"{name}_engine.py")
    kind = CASES[name][0]
    assert f"nn.{kind}(3, 4" in exported.script.read_text()
    x = _batch()
    out = load_script(exported.script).load_network()(engine.Tensor(x)).asnumpy()
    np.testing.assert_allclose(out, engine_outputs(project, x), rtol=0, atol=1e-6)
