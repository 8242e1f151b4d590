"""The issue-28 examples exported: the engine script, the PyTorch script and the ONNX model
(run by onnxruntime) each predict what the engine does on a batch of the example's own
data. ONNX keeps the recurrent layers as its LSTM/GRU ops and decomposes attention into
MatMul/Softmax with LayerNormalization."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import engine
from app.datasets.loading import read_dataset
from app.export.onnx_model import export_onnx
from app.export.python_script import export_python
from app.export.torch_script import export_torch
from app.io.project_file import load_project
from tests.app.export.export_samples import engine_outputs, load_script

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "resources" / "examples"
RTOL, ATOL = 1e-4, 1e-5
BATCH = 16
# The ops each example's ONNX model must hold: the recurrent layer as one op, attention
# decomposed.
ONNX_OPS = {
    "lstm_forecast": {"LSTM"},
    "gru_sequence": {"GRU"},
    "char_transformer": {"MatMul", "Softmax", "LayerNormalization", "Gather"},
}
# Ops that would mean a recurrent layer was unrolled instead of exported as one op.
UNROLLED = {"Loop", "Scan", "Sigmoid", "Tanh"}


@pytest.fixture(scope="module", params=list(ONNX_OPS))
def example(request):
    """(name, the shipped project, a batch of its data set's samples)."""
    name = request.param
    project = load_project(EXAMPLES / f"{name}.cwproj")
    data = read_dataset(project.training["dataset"])
    picked = np.random.default_rng(7).choice(len(data.x), BATCH, replace=False)
    x = data.x[np.sort(picked)]
    assert x.dtype == (np.int64 if name == "char_transformer" else np.float32)
    return name, project, x


def test_the_engine_script_predicts_as_the_app(tmp_path, example):
    name, project, x = example
    exported = export_python(project, tmp_path / f"{name}_engine.py")
    network = load_script(exported.script).load_network()
    network.set_train(False)
    with engine.no_grad():
        out = network(engine.Tensor(x)).asnumpy()
    np.testing.assert_allclose(out, engine_outputs(project, x), rtol=0, atol=1e-6)


def test_the_torch_script_predicts_as_the_engine(tmp_path, example):
    name, project, x = example
    module = load_script(export_torch(project, tmp_path / f"{name}_torch.py").written[0])
    net = module.load_network()
    net.eval()
    with torch.no_grad():
        out = net(torch.from_numpy(x)).numpy()
    expected = engine_outputs(project, x)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=RTOL, atol=ATOL)


def test_the_onnx_model_runs_to_the_engines_outputs(tmp_path, example):
    name, project, x = example
    path = export_onnx(project, tmp_path / f"{name}.onnx").written[0]
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    ops = {node.op_type for node in model.graph.node}
    assert ONNX_OPS[name] <= ops, sorted(ops)
    if name != "char_transformer":
        assert not ops & UNROLLED, sorted(ops)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for rows in (slice(None), slice(0, 1)):  # the batch axis stays free
        (out,) = session.run(None, {session.get_inputs()[0].name: x[rows]})
        np.testing.assert_allclose(out, engine_outputs(project, x[rows]), rtol=RTOL, atol=ATOL)
