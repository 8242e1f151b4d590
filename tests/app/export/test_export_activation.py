"""Export of the activation and channel-dropout nodes: the PyTorch script, the ONNX model
(run by onnxruntime) and the engine script each give the engine's predict-mode outputs."""

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


def _add(graph: Graph, type_name: str, **params):
    return graph.add_node(CATALOGUE.new_node(type_name, params=params))


def _project(name: str, sample: tuple, *layers: tuple[str, dict]) -> Project:
    graph = Graph()
    nodes = [_add(graph, "Input", shape=sample)]
    nodes += [_add(graph, kind, **params) for kind, params in layers]
    nodes.append(_add(graph, "Output", loss="none"))
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, "out", b.id, "in")
    project = Project(graph=graph, name=name)
    compiled = compile_project(project)
    rng = np.random.default_rng(7)
    for param in compiled.parameters().values():  # slopes of both signs, away from 0.25
        if param.shape and param.name.endswith(".w"):
            param.set_data(rng.uniform(-0.5, 0.8, param.shape).astype(np.float32))
    compiled.store_values(project)
    return project


# One node after a Dense layer, so each export is compared where the node's output varies.
SINGLE = {
    "ELU": {"alpha": 0.7}, "SeLU": {}, "CELU": {"alpha": 1.5}, "PReLU": {"channel": 8},
    "Softsign": {}, "SiLU": {}, "Mish": {}, "HSwish": {}, "HSigmoid": {}, "ReLU6": {},
    "Hardtanh": {"min_val": -0.5, "max_val": 2.0}, "LogSigmoid": {},
    "Softmin": {"axis": 1}, "GLU": {"axis": 1}, "Softplus": {"beta": 2.0, "threshold": 1.5},
}


def single_project(type_name: str) -> Project:
    return _project(type_name.lower(), (8,), ("Dense", {"in_channels": 8, "out_channels": 8}),
                    (type_name, SINGLE[type_name]))


def image_project() -> Project:
    """PReLU per channel and shared, GLU over channels and the three channel dropouts."""
    return _project(
        "channels", (4, 6, 6),
        ("Conv2d", {"in_channels": 4, "out_channels": 4, "kernel_size": 3, "has_bias": True}),
        ("PReLU", {"channel": 4}), ("Dropout2d", {"p": 0.3}), ("Reshape", {"shape": (4, 36)}),
        ("Dropout1d", {"p": 0.2}), ("Reshape", {"shape": (4, 1, 6, 6)}),
        ("Dropout3d", {"p": 0.4}), ("Reshape", {"shape": (4, 6, 6)}), ("GLU", {"axis": 1}),
        ("PReLU", {}), ("Softmin", {"axis": -1}), ("Flatten", {}),
    )


PROJECTS = {"image": (image_project, (4, 6, 6)),
            **{kind: (lambda kind=kind: single_project(kind), (8,)) for kind in SINGLE}}


def _batch(sample: tuple) -> np.ndarray:
    return (np.random.default_rng(3).standard_normal((6, *sample)) * 2).astype(np.float32)




@pytest.mark.parametrize("name", PROJECTS)
def test_the_torch_script_predicts_as_the_engine(tmp_path, name):
    make, sample = PROJECTS[name]
    project = make()
    report = export_torch(project, tmp_path / f"{name}.py")
    net = load_script(report.written[0]).load_network()
    x = _batch(sample)
    with torch.no_grad():
        out = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(out, engine_outputs(project, x), rtol=RTOL, atol=ATOL)


def test_torch_modules_and_the_prelu_weight(tmp_path):
    project = image_project()
    report = export_torch(project, tmp_path / "channels.py")
    text = report.written[0].read_text()
    for module in ("nn.PReLU(4)", "nn.Dropout2d(0.3)", "nn.Dropout1d(0.2)", "nn.Dropout3d(0.4)",
                   "nn.GLU(dim=1)", "nn.Softmin(dim=-1)"):
        assert module in text
    net = load_script(report.written[0]).load_network()
    compiled = compile_project(project)
    np.testing.assert_array_equal(net.prelu1.weight.detach().numpy(),
                                  compiled.parameters()["prelu1.w"].asnumpy())
    assert isinstance(net.dropout2d1, torch.nn.Dropout2d) and net.dropout2d1.p == 0.3
    pieces = {"ELU": "nn.ELU(alpha=0.7)", "SeLU": "nn.SELU()", "CELU": "nn.CELU(alpha=1.5)",
              "PReLU": "nn.PReLU(8)", "Softsign": "nn.Softsign()", "SiLU": "nn.SiLU()",
              "Mish": "nn.Mish()", "HSwish": "nn.Hardswish()", "HSigmoid": "nn.Hardsigmoid()",
              "ReLU6": "nn.ReLU6()", "Hardtanh": "nn.Hardtanh(-0.5, 2.0)",
              "LogSigmoid": "nn.LogSigmoid()", "Softmin": "nn.Softmin(dim=1)",
              "GLU": "nn.GLU(dim=1)", "Softplus": "F.softplus(dense1, beta=2.0, threshold=1.5)"}
    for kind, piece in pieces.items():
        text = export_torch(single_project(kind), tmp_path / f"{kind}.py").written[0].read_text()
        assert piece in text, kind


@pytest.mark.parametrize("name", PROJECTS)
def test_the_onnx_model_runs_to_the_engines_outputs(tmp_path, name):
    make, sample = PROJECTS[name]
    project = make()
    path = export_onnx(project, tmp_path / f"{name}.onnx").written[0]
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    x = _batch(sample)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {session.get_inputs()[0].name: x})
    np.testing.assert_allclose(out, engine_outputs(project, x), rtol=RTOL, atol=ATOL)
    kinds = {n.op_type for n in model.graph.node}
    if name == "image":
        assert "Dropout" not in kinds and "PRelu" in kinds
        slope = next(i for i in model.graph.initializer if i.name == "prelu1.w")
        assert tuple(slope.dims) == (4, 1, 1)  # broadcasts over axis 1 of (N, 4, H, W)


@pytest.mark.parametrize("kind", ["LogSigmoid", "Mish", "SiLU", "Softplus", "SeLU", "ELU"])
def test_onnx_tails_are_finite_for_large_inputs(tmp_path, kind):
    project = _project(kind.lower(), (6,), (kind, {}))
    path = export_onnx(project, tmp_path / f"{kind}.onnx").written[0]
    x = np.array([[-200.0, -30.0, -1.0, 1.0, 30.0, 200.0]], np.float32)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {session.get_inputs()[0].name: x})
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, engine_outputs(project, x), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", PROJECTS)
def test_the_engine_script_rebuilds_the_same_network(tmp_path, name):
    make, sample = PROJECTS[name]
    project = make()
    exported = export_python(project, tmp_path / f"{name}_engine.py")
    text = exported.script.read_text()
    module = load_script(exported.script)
    x = _batch(sample)
    out = module.load_network()(engine.Tensor(x)).asnumpy()
    np.testing.assert_allclose(out, engine_outputs(project, x), rtol=0, atol=1e-6)
    expected = {"image": "nn.Dropout2d(p=0.3)", "ELU": "nn.ELU(alpha=0.7)",
                "PReLU": "nn.PReLU(channel=8)", "Softplus": "ops.softplus(dense1, 2.0, 1.5)",
                "Hardtanh": "nn.Hardtanh(min_val=-0.5, max_val=2.0)", "GLU": "nn.GLU(axis=1)"}
    assert expected.get(name, f"nn.{name}(") in text
