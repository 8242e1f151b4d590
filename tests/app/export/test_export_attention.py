"""Export of MultiheadAttention and the Transformer layers: the engine script, the PyTorch
script (outputs) and the ONNX model (run by onnxruntime, attention as MatMul/Softmax) each
compute what the engine does."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from app.catalogue import CATALOGUE
from app.compiler import compile_project
from app.document import Graph, Project
from app.export.kinds.attention import torch_local
from app.export.onnx_model import export_onnx
from app.export.python_script import export_python
from app.export.torch_script import export_torch
from tests.app.export.export_samples import engine_outputs, load_script

RTOL, ATOL = 1e-4, 1e-5
SMALL = {"d_model": 8, "dim_feedforward": 16, "dropout": 0.0}


def _project(name: str, layers: list[tuple[str, dict, str]], sample=(5, 8)) -> Project:
    """Input → layers (each fed on its first port from the one before, by the port given)
    → Output; a TransformerDecoderLayer gets the Input as memory too."""
    graph = Graph()
    source = graph.add_node(CATALOGUE.new_node("Input", params={"shape": sample}))
    previous, port = source, "out"
    for kind, params, out_port in layers:
        node = graph.add_node(CATALOGUE.new_node(kind, params=params))
        graph.connect(previous.id, port, node.id, node.inputs[0])
        if kind == "TransformerDecoderLayer":
            graph.connect(source.id, "out", node.id, "memory")
        previous, port = node, out_port
    output = graph.add_node(CATALOGUE.new_node("Output", params={"loss": "none"}))
    graph.connect(previous.id, port, output.id, "in")
    project = Project(graph=graph, name=name)
    compiled = compile_project(project)
    assert not compiled.report.errors, compiled.report.errors
    rng = np.random.default_rng(5)
    for param in compiled.parameters().values():
        param.set_data(rng.uniform(-0.5, 0.5, param.shape).astype(np.float32))
    compiled.store_values(project)
    return project


PROJECTS = {
    "attention": [("MultiheadAttention", {"num_heads": 4}, "output")],
    "attention_weights": [("MultiheadAttention", {"causal": True,
                                                  "average_attn_weights": False}, "weights")],
    "encoder_layer": [("TransformerEncoderLayer", {**SMALL, "activation": "gelu"}, "out")],
    "encoder_causal": [("TransformerEncoder", {**SMALL, "causal": True, "norm_first": True,
                                               "final_norm": True}, "out")],
    "decoder_layer": [("TransformerDecoderLayer", SMALL, "out")],
}


def _batch(n: int = 3) -> np.ndarray:
    return np.random.default_rng(3).standard_normal((n, 5, 8)).astype(np.float32)


@pytest.mark.parametrize("name", PROJECTS)
def test_the_engine_script_rebuilds_the_same_network(tmp_path, name):
    project = _project(name, PROJECTS[name])
    exported = export_python(project, tmp_path / f"{name}_engine.py")
    x = _batch()
    out = load_script(exported.script).load_network()(__import__("engine").Tensor(x))
    np.testing.assert_allclose(out.asnumpy(), engine_outputs(project, x), rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", PROJECTS)
def test_the_torch_script_predicts_as_the_engine(tmp_path, name):
    project = _project(name, PROJECTS[name])
    module = load_script(export_torch(project, tmp_path / f"{name}_torch.py").written[0]) \
        .load_network()
    module.eval()
    x = _batch()
    with torch.no_grad():
        out = module(torch.tensor(x)).numpy()
    np.testing.assert_allclose(out, engine_outputs(project, x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", PROJECTS)
def test_the_onnx_model_runs_to_the_engines_outputs(tmp_path, name):
    project = _project(name, PROJECTS[name])
    path = export_onnx(project, tmp_path / f"{name}.onnx").written[0]
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for n in (3, 1):  # the batch axis stays free
        x = _batch(n)
        (out,) = session.run(None, {session.get_inputs()[0].name: x})
        np.testing.assert_allclose(out, engine_outputs(project, x), rtol=RTOL, atol=ATOL)
    ops = {node.op_type for node in model.graph.node}
    assert {"MatMul", "Softmax"} <= ops
    if name.startswith(("encoder", "decoder")):
        assert "LayerNormalization" in ops


def test_torch_names_of_transformer_parameters():
    assert torch_local("dense1.weight") == "linear1.weight"
    assert torch_local("layers.1.dense2.bias") == "layers.1.linear2.bias"
    assert torch_local("layers.0.norm1.gamma") == "layers.0.norm1.weight"
    assert torch_local("norm.beta") == "norm.bias"
    assert torch_local("self_attn.out_proj.weight") == "self_attn.out_proj.weight"
