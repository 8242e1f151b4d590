"""Inputs after an open optional port go by name in every export, as in the compiled graph:
a MultiheadAttention fed its query and a mask only (no key, no value) gets the mask as a
mask, not as its key. The engine script, the PyTorch script and the ONNX model each give
the engine's output and weights."""

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
from tests.app.export.export_samples import load_script

RTOL, ATOL = 1e-4, 1e-5
L, S, E = 5, 7, 8

# name: (the MultiheadAttention's params, {port: sample shape} of the Inputs it is fed)
CASES = {
    "attn_mask": ({"num_heads": 2}, {"query": (L, E), "attn_mask": (L, L)}),
    "key_padding_mask": ({"num_heads": 4}, {"query": (L, E), "key_padding_mask": (L,)}),
    "causal_attn_mask_per_head": ({"num_heads": 2, "causal": True,
                                   "average_attn_weights": False},
                                  {"query": (L, E), "attn_mask": (L, L)}),
    "causal_key_padding_mask": ({"num_heads": 2, "causal": True},
                                {"query": (L, E), "key_padding_mask": (L,)}),
    "key_and_both_masks": ({"num_heads": 2},
                           {"query": (L, E), "key": (S, E), "key_padding_mask": (S,),
                            "attn_mask": (L, S)}),
}


def _project(name: str, out: str = "output") -> Project:
    """One Input per port fed, in the order given → MultiheadAttention → the Output, fed
    from its port `out` (output or weights)."""
    params, ports = CASES[name]
    graph = Graph()
    attention = CATALOGUE.new_node("MultiheadAttention", params={"embed_dim": E, **params})
    sources = {port: graph.add_node(CATALOGUE.new_node("Input", name=port,
                                                       params={"shape": shape}))
               for port, shape in ports.items()}  # fmt: skip
    graph.add_node(attention)
    for port, source in sources.items():
        graph.connect(source.id, "out", attention.id, port)
    sink = graph.add_node(CATALOGUE.new_node("Output", params={"loss": "none"}))
    graph.connect(attention.id, out, sink.id, "in")
    project = Project(graph=graph, name=name)
    compiled = compile_project(project)
    assert not compiled.report.errors, compiled.report.errors
    rng = np.random.default_rng(7)
    for param in compiled.parameters().values():
        param.set_data(rng.uniform(-0.5, 0.5, param.shape).astype(np.float32))
    compiled.store_values(project)
    return project


def _feeds(name: str, n: int = 3) -> list[np.ndarray]:
    """Samples per port: sequences, and float masks (-inf where not allowed, small values
    elsewhere) that leave every query at least one key (its own position, and key 0)."""
    rng = np.random.default_rng(11)
    feeds = []
    for port, shape in CASES[name][1].items():
        if port == "attn_mask":
            mask = rng.uniform(-1, 1, (n, *shape)).astype(np.float32)
            mask[rng.random(mask.shape) < 0.4] = -np.inf
            mask[:, np.arange(shape[0]), np.arange(shape[0])] = 0.0
            mask[:, :, 0] = 0.0
            feeds.append(mask)
        elif port == "key_padding_mask":
            mask = np.zeros((n, *shape), np.float32)
            for i in range(n):  # the last i + 1 keys are padding
                mask[i, shape[0] - i - 1:] = -np.inf
            feeds.append(mask)
        else:
            feeds.append(rng.standard_normal((n, *shape)).astype(np.float32))
    return feeds


def _engine(project: Project, feeds: list[np.ndarray]) -> np.ndarray:
    network = compile_project(project).network
    network.set_train(False)
    with engine.no_grad():
        return network(*(engine.Tensor(x) for x in feeds)).asnumpy()


def _close(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


CASES_AND_PORTS = pytest.mark.parametrize(
    "name, out", [(name, out) for name in CASES for out in ("output", "weights")])


def test_the_cases_mask_something_the_key_would_not():
    # A mask read as the key would not compile (its shape) or attend differently: the
    # masks here do change the result against no mask at all.
    project = _project("attn_mask")
    feeds = _feeds("attn_mask")
    masked = _engine(project, feeds)
    unmasked = _engine(project, [feeds[0], np.zeros_like(feeds[1])])
    assert not np.allclose(masked, unmasked, atol=1e-3)


@CASES_AND_PORTS
def test_the_engine_script_passes_masks_by_name(tmp_path, name, out):
    project = _project(name, out)
    exported = export_python(project, tmp_path / f"{name}_engine.py")
    text = exported.script.read_text()
    if "key" not in CASES[name][1]:
        mask = next(p for p in CASES[name][1] if p.endswith("mask"))
        assert f"{mask}=" in text
    feeds = _feeds(name)
    net = load_script(exported.script).load_network()
    with engine.no_grad():
        got = net(*(engine.Tensor(x) for x in feeds)).asnumpy()
    _close(got, _engine(project, feeds))


@CASES_AND_PORTS
def test_the_torch_script_passes_masks_by_name(tmp_path, name, out):
    project = _project(name, out)
    module = load_script(export_torch(project, tmp_path / f"{name}_torch.py").written[0])
    net = module.load_network().eval()
    feeds = _feeds(name)
    with torch.no_grad():
        got = net(*(torch.tensor(x) for x in feeds)).numpy()
    _close(got, _engine(project, feeds))


@CASES_AND_PORTS
def test_the_onnx_model_adds_the_masks_by_port(tmp_path, name, out):
    project = _project(name, out)
    path = export_onnx(project, tmp_path / f"{name}.onnx").written[0]
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    assert names == list(CASES[name][1])
    for n in (3, 1):  # the batch axis stays free
        feeds = _feeds(name, n)
        (got,) = session.run(None, dict(zip(names, feeds, strict=True)))
        _close(got, _engine(project, feeds))
