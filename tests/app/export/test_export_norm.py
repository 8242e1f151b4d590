"""Export of LayerNorm, GroupNorm, InstanceNorm2d and LRN: the PyTorch script (outputs and
gradients), the ONNX model (run by onnxruntime) and the engine script each compute what the
engine does."""

from __future__ import annotations

import runpy

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
_TORCH = {"gamma": "weight", "beta": "bias"}


def _project(name: str, sample: tuple, *layers: tuple[str, dict]) -> Project:
    """Input(sample) → layers → Output, gamma and beta away from 1 and 0 (and InstanceNorm2d's
    moving statistics away from theirs, which nothing may use)."""
    graph = Graph()
    nodes = [graph.add_node(CATALOGUE.new_node("Input", params={"shape": sample}))]
    nodes += [graph.add_node(CATALOGUE.new_node(kind, params=params)) for kind, params in layers]
    nodes.append(graph.add_node(CATALOGUE.new_node("Output", params={"loss": "none"})))
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, "out", b.id, "in")
    project = Project(graph=graph, name=name)
    compiled = compile_project(project)
    rng = np.random.default_rng(11)
    for name_, param in compiled.parameters().items():
        low = 0.5 if name_.endswith(("gamma", "variance")) else -1.0
        param.set_data(rng.uniform(low, 1.5, param.shape).astype(np.float32))
    compiled.store_values(project)
    return project


PROJECTS = {
    "layer_last": ((6, 16), [("LayerNorm", {"normalized_shape": (16,)})]),
    "layer_sample": ((3, 4, 5), [("LayerNorm", {"normalized_shape": (3, 4, 5),
                                                "begin_norm_axis": 1, "begin_params_axis": 1})]),
    "layer_wider_stats": ((3, 4, 5), [("LayerNorm", {"normalized_shape": (5,),
                                                     "begin_norm_axis": 1})]),
    "layer_wider_params": ((3, 4, 5), [("LayerNorm", {"normalized_shape": (4, 5),
                                                      "begin_norm_axis": 3,
                                                      "begin_params_axis": 2})]),
    # Features (N, C): GroupNorm's smallest rank; LayerNorm with statistics across the batch.
    "features": ((8,), [("GroupNorm", {"num_groups": 2, "num_channels": 8}),
                        ("LayerNorm", {"normalized_shape": (8,), "begin_norm_axis": 0})]),
    "group": ((8, 5, 5), [("GroupNorm", {"num_groups": 4, "num_channels": 8, "eps": 1e-3}),
                          ("Reshape", {"shape": (8, 25)}),
                          ("GroupNorm", {"num_groups": 2, "num_channels": 8, "affine": False})]),
    "instance": ((3, 5, 5), [("InstanceNorm2d", {"num_features": 3, "momentum": 0.3}),
                             ("InstanceNorm2d", {"num_features": 3, "affine": False})]),
    "lrn": ((7, 4, 4), [("LRN", {"depth_radius": 2, "bias": 1.5, "alpha": 0.3, "beta": 0.75}),
                        ("LRN", {})]),
}


def make(name: str) -> tuple[Project, tuple]:
    sample, layers = PROJECTS[name]
    return _project(name, sample, *layers), sample


def _batch(sample: tuple, n: int = 6) -> np.ndarray:
    return (np.random.default_rng(3).standard_normal((n, *sample)) * 2 + 1).astype(np.float32)




@pytest.mark.parametrize("name", PROJECTS)
def test_the_torch_script_predicts_and_differentiates_as_the_engine(tmp_path, name):
    project, sample = make(name)
    net = load_script(export_torch(project, tmp_path / f"{name}.py").written[0]).load_network()
    x = _batch(sample)
    cot = np.random.default_rng(4).standard_normal(engine_outputs(project, x).shape)
    cot = cot.astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_()
    out = net(tx)
    np.testing.assert_allclose(out.detach().numpy(), engine_outputs(project, x), rtol=RTOL,
                               atol=ATOL)
    (out * torch.from_numpy(cot)).sum().backward()
    compiled = compile_project(project)
    params = compiled.trainable_params()
    gx, grads = engine.grad(lambda a: (compiled.network(a) * engine.Tensor(cot)).sum(), 0,
                            params)(engine.Tensor(x))
    np.testing.assert_allclose(tx.grad.numpy(), gx.asnumpy(), rtol=RTOL, atol=ATOL)
    torch_params = dict(net.named_parameters())
    for param, grad in zip(params, grads, strict=True):
        head, _, local = param.name.rpartition(".")
        got = torch_params[f"{head}.{_TORCH[local]}"].grad
        np.testing.assert_allclose(got.numpy(), grad.asnumpy(), rtol=RTOL, atol=ATOL,
                                   err_msg=param.name)


def test_torch_modules_and_weights(tmp_path):
    pieces = {
        "layer_last": ["nn.LayerNorm((16,), eps=1e-07)"],
        "layer_wider_stats": ["nn.LayerNorm((5,), eps=1e-07)",
                              "F.layer_norm(input1, input1.shape[1:], eps=1e-07) * "
                              "self.layernorm1.weight + self.layernorm1.bias"],
        "features": ["F.layer_norm(groupnorm1, groupnorm1.shape[0:], eps=1e-07)"],
        "group": ["nn.GroupNorm(4, 8, eps=0.001)", "nn.GroupNorm(2, 8, eps=1e-05)"],
        "instance": ["nn.InstanceNorm2d(3, eps=1e-05, momentum=0.3, affine=True)"],
        "lrn": ["nn.LocalResponseNorm(5, alpha=1.5, beta=0.75, k=1.5)",
                "nn.LocalResponseNorm(11, alpha=11.0, beta=0.5, k=1.0)"],
    }
    for name, expected in pieces.items():
        project, _ = make(name)
        written = export_torch(project, tmp_path / f"{name}.py").written
        text = written[0].read_text()
        for piece in expected:
            assert piece in text, (name, piece)
        with np.load(written[1]) as arrays:
            names = set(arrays.files)
        compiled = compile_project(project)
        for param_name, param in compiled.parameters().items():
            head, _, local = param_name.rpartition(".")
            if local.startswith("moving"):  # never used by MindSpore: torch tracks none
                assert not any(n.startswith(head) and "running" in n for n in names)
                continue
            torch_name = f"{head}.{_TORCH[local]}"
            with np.load(written[1]) as arrays:
                np.testing.assert_array_equal(arrays[torch_name], param.asnumpy())


@pytest.mark.parametrize("name", PROJECTS)
def test_the_onnx_model_runs_to_the_engines_outputs(tmp_path, name):
    project, sample = make(name)
    path = export_onnx(project, tmp_path / f"{name}.onnx").written[0]
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for n in (6, 1):  # the batch axis stays free
        x = _batch(sample, n)
        (out,) = session.run(None, {session.get_inputs()[0].name: x})
        np.testing.assert_allclose(out, engine_outputs(project, x), rtol=RTOL, atol=ATOL)
    ops = {node.op_type for node in model.graph.node}
    expected = {"layer_last": "LayerNormalization", "layer_sample": "LayerNormalization",
                "layer_wider_stats": "ReduceMean", "layer_wider_params": "ReduceMean",
                "features": "ReduceMean",
                "group": "InstanceNormalization", "instance": "InstanceNormalization",
                "lrn": "LRN"}[name]
    assert expected in ops


@pytest.mark.parametrize("name", PROJECTS)
def test_the_engine_script_rebuilds_the_same_network(tmp_path, name):
    project, sample = make(name)
    exported = export_python(project, tmp_path / f"{name}_engine.py")
    text = exported.script.read_text()
    x = _batch(sample)
    out = load_script(exported.script).load_network()(engine.Tensor(x)).asnumpy()
    np.testing.assert_allclose(out, engine_outputs(project, x), rtol=0, atol=1e-6)
    expected = {
        "layer_last": "nn.LayerNorm((16,))",
        "layer_wider_params": "nn.LayerNorm((4, 5), begin_norm_axis=3, begin_params_axis=2)",
        "group": "nn.GroupNorm(2, 8, affine=False)",
        "instance": "nn.InstanceNorm2d(3, momentum=0.3)",
        "lrn": "nn.LRN(depth_radius=2, bias=1.5, alpha=0.3, beta=0.75)",
    }
    assert expected.get(name, "nn.") in text


def test_gamma_and_beta_that_never_train_stay_frozen_in_the_torch_script(tmp_path):
    project, _ = make("group")  # its second GroupNorm has affine off
    script = export_torch(project, tmp_path / "group.py").written[0]
    namespace = runpy.run_path(str(script))
    net = namespace["load_network"]()
    frozen = {name for name, param in net.named_parameters() if not param.requires_grad}
    assert frozen == {"groupnorm2.weight", "groupnorm2.bias"}
