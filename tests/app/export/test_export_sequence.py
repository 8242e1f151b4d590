"""Export of Embedding, the positional encodings and Select: the PyTorch script (outputs and
gradients), the ONNX model (run by onnxruntime) and the engine script each compute what the
engine does, from integer token ids or float sequences."""

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
VOCAB = 11


def _project(name: str, sample: tuple, dtype: str, *layers: tuple[str, dict]) -> Project:
    """Input(sample, dtype) → layers → Output, the Parameters random."""
    graph = Graph()
    nodes = [graph.add_node(CATALOGUE.new_node("Input", params={"shape": sample,
                                                                "dtype": dtype}))]
    nodes += [graph.add_node(CATALOGUE.new_node(kind, params=params)) for kind, params in layers]
    nodes.append(graph.add_node(CATALOGUE.new_node("Output", params={"loss": "none"})))
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, "out", b.id, "in")
    project = Project(graph=graph, name=name)
    compiled = compile_project(project)
    rng = np.random.default_rng(11)
    for name_, param in compiled.parameters().items():
        value = rng.uniform(-1.0, 1.0, param.shape).astype(np.float32)
        if name_ == "embedding1.embedding_table":
            value[0] = 0  # its padding row
        param.set_data(value)
    compiled.store_values(project)
    return project


EMBED = ("Embedding", {"vocab_size": VOCAB, "embedding_size": 6, "padding_idx": 0})
PROJECTS = {
    "tokens": ((7,), "int64", [EMBED, ("PositionalEncoding", {}),
                               ("Select", {"axis": 1, "index": -1})]),
    "tokens32": ((7,), "int32", [EMBED, ("LearnedPositionalEncoding",
                                         {"max_len": 9, "embedding_size": 6}),
                                 ("Dense", {"in_channels": 6, "out_channels": 3}),
                                 ("Select", {"axis": -2, "index": 2})]),
    "series": ((5, 4), "float32", [("PositionalEncoding", {}),
                                   ("LearnedPositionalEncoding", {"max_len": 5,
                                                                  "embedding_size": 4}),
                                   ("Select", {"axis": 2, "index": 0})]),
    "odd_width": ((4, 5), "float32", [("PositionalEncoding", {})]),
}


def make(name: str) -> tuple[Project, tuple, str]:
    sample, dtype, layers = PROJECTS[name]
    return _project(name, sample, dtype, *layers), sample, dtype


def _batch(sample: tuple, dtype: str, n: int = 6) -> np.ndarray:
    rng = np.random.default_rng(3)
    if dtype.startswith("int"):
        return rng.integers(0, VOCAB, (n, *sample)).astype(dtype)
    return (rng.standard_normal((n, *sample)) * 2 + 1).astype(np.float32)


@pytest.mark.parametrize("name", PROJECTS)
def test_the_torch_script_predicts_and_differentiates_as_the_engine(tmp_path, name):
    project, sample, dtype = make(name)
    net = load_script(export_torch(project, tmp_path / f"{name}.py").written[0]).load_network()
    x = _batch(sample, dtype)
    expected = engine_outputs(project, x)
    cot = np.random.default_rng(4).standard_normal(expected.shape).astype(np.float32)
    tx = torch.from_numpy(x)
    if not dtype.startswith("int"):
        tx.requires_grad_()
    out = net(tx)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=RTOL, atol=ATOL)
    (out * torch.from_numpy(cot)).sum().backward()
    compiled = compile_project(project)
    params = compiled.trainable_params()
    grads = engine.grad(lambda a: (compiled.network(a) * engine.Tensor(cot)).sum(), None,
                        params)(engine.Tensor(x))
    if tx.requires_grad:
        gx = engine.grad(lambda a: (compiled.network(a) * engine.Tensor(cot)).sum())(
            engine.Tensor(x))
        np.testing.assert_allclose(tx.grad.numpy(), gx.asnumpy(), rtol=RTOL, atol=ATOL)
    torch_params = dict(net.named_parameters())
    for param, grad in zip(params, grads, strict=True):
        head, _, local = param.name.rpartition(".")
        torch_name = f"{head}.{'weight' if local == 'embedding_table' else local}"
        np.testing.assert_allclose(torch_params[torch_name].grad.numpy(), grad.asnumpy(),
                                   rtol=RTOL, atol=ATOL, err_msg=param.name)


def test_torch_modules_and_weights(tmp_path):
    project, _, _ = make("tokens32")
    written = export_torch(project, tmp_path / "tokens32.py").written
    text = written[0].read_text()
    for piece in (f"nn.Embedding({VOCAB}, 6, padding_idx=0)", "nn.Embedding(9, 6)",
                  "learnedpositionalencoding1.weight[:", "[..., 2, :]"):
        assert piece in text, piece
    compiled = compile_project(project)
    with np.load(written[1]) as arrays:
        for param_name, param in compiled.parameters().items():
            head, _, local = param_name.rpartition(".")
            torch_name = f"{head}.{'weight' if local == 'embedding_table' else local}"
            np.testing.assert_array_equal(arrays[torch_name], param.asnumpy())


@pytest.mark.parametrize("name", PROJECTS)
def test_the_onnx_model_runs_to_the_engines_outputs(tmp_path, name):
    project, sample, dtype = make(name)
    path = export_onnx(project, tmp_path / f"{name}.onnx").written[0]
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for n in (6, 1):  # the batch axis stays free
        x = _batch(sample, dtype, n)
        (out,) = session.run(None, {session.get_inputs()[0].name: x})
        np.testing.assert_allclose(out, engine_outputs(project, x), rtol=RTOL, atol=ATOL)
    ops = {node.op_type for node in model.graph.node}
    if name.startswith("tokens"):
        assert "Gather" in ops
    if name == "series":
        assert {"Add", "Slice", "Gather"} <= ops


@pytest.mark.parametrize("name", PROJECTS)
def test_the_engine_script_rebuilds_the_same_network(tmp_path, name):
    project, sample, dtype = make(name)
    exported = export_python(project, tmp_path / f"{name}_engine.py")
    text = exported.script.read_text()
    x = _batch(sample, dtype)
    out = load_script(exported.script).load_network()(engine.Tensor(x)).asnumpy()
    np.testing.assert_array_equal(out, engine_outputs(project, x))
    if name.startswith("tokens"):
        assert f"nn.Embedding({VOCAB}, 6, padding_idx=0)" in text
