"""The attention family's nodes: shapes on their ports, refusals with reasons, Parameter
shapes, following sizes, and the compiled Cells (MindSpore names, causal option)."""

from __future__ import annotations

import numpy as np
import pytest

from app.catalogue import CATALOGUE
from app.compiler import compile_project, fitting_params, infer_shapes
from app.compiler.kinds import parameter_shapes
from app.document import Graph, Project
from engine import Tensor, nn
from tests.app.compiler.compiler_samples import add, shape_after

TYPES = ("MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
         "TransformerDecoderLayer")


def _graph(type_name: str, sample: tuple, extra: dict | None = None, **params):
    """Input(sample) into every required port (and the ports in `extra`, from Inputs of
    those shapes), the first output into an Output."""
    graph = Graph()
    source = add(graph, "Input", shape=sample)
    node = add(graph, type_name, **params)
    for port in CATALOGUE.get(type_name).inputs:
        if not port.optional:
            graph.connect(source.id, "out", node.id, port.name)
    for port, (shape, dtype) in (extra or {}).items():
        other = add(graph, "Input", shape=shape, dtype=dtype)
        graph.connect(other.id, "out", node.id, port)
    graph.connect(node.id, node.outputs[0], add(graph, "Output", loss="none").id, "in")
    return graph, node


@pytest.mark.parametrize("type_name", TYPES)
def test_sequence_keeps_its_shape(type_name):
    graph, node = _graph(type_name, (5, 8))
    report = infer_shapes(graph)
    assert report.ok, report.errors
    assert report.shape(node.id, node.outputs[0]) == ("N", 5, 8)


@pytest.mark.parametrize("average, weights", [(True, ("N", 5, 5)), (False, ("N", 2, 5, 5))])
def test_attention_ports_each_have_their_shape(average, weights):
    graph, node = _graph("MultiheadAttention", (5, 8), average_attn_weights=average)
    assert node.outputs == ("output", "weights")
    report = infer_shapes(graph)
    assert report.shape(node.id, "output") == ("N", 5, 8)
    assert report.shape(node.id, "weights") == weights


def test_cross_attention_and_masks_are_checked():
    graph, node = _graph("MultiheadAttention", (5, 8), {"key": ((7, 6), "float32")}, kdim=6,
                         vdim=6)
    report = infer_shapes(graph)
    assert report.ok, report.errors
    assert report.shape(node.id, "weights") == ("N", 5, 7)
    graph, node = _graph("MultiheadAttention", (5, 8), {"key_padding_mask": ((4,), "float32")})
    assert "'key_padding_mask' must be (N, 5), gets (N, 4)" in infer_shapes(graph).errors[node.id]


@pytest.mark.parametrize("type_name, sample, params, reason", [
    ("MultiheadAttention", (5, 6), {"embed_dim": 6, "num_heads": 4},
     "embed_dim (6) must be divisible by num_heads (4)"),
    ("TransformerEncoder", (5, 6), {"d_model": 6, "nhead": 4},
     "d_model (6) must be divisible by nhead (4)"),
    ("MultiheadAttention", (5, 8), {"embed_dim": 16},
     "expects 16 features (embed_dim) on 'query', but (N, 5, 8) arrives with 8"),
    ("TransformerEncoderLayer", (40,), {"d_model": 8},
     "needs a sequence (N, L, E) on 'in' with a time axis, gets (N, 40) (a Flatten before "
     "it removes the time axis)"),
    ("TransformerEncoderLayer", (5, 8), {"batch_first": False},
     "batch_first is off, so 'in' must be (L, N, E) with the batch at axis 1"),
])
def test_bad_inputs_are_refused_with_the_reason(type_name, sample, params, reason):
    _, error = shape_after(type_name, sample, **params)
    assert error is not None and reason in error


@pytest.mark.parametrize("type_name", TYPES)
def test_sizes_follow_the_features_arriving(type_name):
    key = "embed_dim" if type_name == "MultiheadAttention" else "d_model"
    assert fitting_params(type_name, ("N", 7, 12)) == {key: 12}
    assert fitting_params(type_name, ("N", 12)) == {}


@pytest.mark.parametrize("type_name, params", [
    ("MultiheadAttention", {"embed_dim": 8}),
    ("MultiheadAttention", {"embed_dim": 8, "kdim": 6, "vdim": 3, "has_bias": False}),
    ("TransformerEncoderLayer", {"d_model": 8, "dim_feedforward": 16}),
    ("TransformerEncoder", {"d_model": 8, "dim_feedforward": 16, "num_layers": 3,
                            "final_norm": True}),
    ("TransformerDecoderLayer", {"d_model": 8, "dim_feedforward": 16}),
])
def test_parameter_shapes_match_the_compiled_cell(type_name, params):
    values = CATALOGUE.get(type_name).values(params)
    cell = _graph_cell(type_name, values)
    assert parameter_shapes(type_name, values) == {n: p.shape
                                                   for n, p in cell.parameters_and_names()}


def _graph_cell(type_name, values):
    from app.compiler.kinds import OP_CELLS
    return OP_CELLS[type_name](**values)


def test_compiled_attention_returns_output_and_weights_and_self_attends():
    graph, node = _graph("MultiheadAttention", (5, 8), average_attn_weights=False)
    compiled = compile_project(Project(graph))
    cell = compiled.cells[node.id]
    assert isinstance(cell, nn.MultiheadAttention)
    x = Tensor(np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32))
    out, weights = cell(x)
    expected = nn.MultiheadAttention.construct(cell, x, x, x, average_attn_weights=False)
    np.testing.assert_array_equal(out.asnumpy(), expected[0].asnumpy())
    assert weights.shape == (2, 2, 5, 5)
    names = sorted(compiled.parameters())
    assert names == sorted(f"{node.name}.{n}" for n in ("in_proj_weight", "in_proj_bias",
                                                         "out_proj.weight", "out_proj.bias"))


@pytest.mark.parametrize("type_name", ["MultiheadAttention", "TransformerEncoder"])
def test_causal_nodes_never_look_ahead(type_name):
    rng = np.random.default_rng(1)
    params = {"causal": True}
    if type_name == "TransformerEncoder":
        params.update(d_model=8, dim_feedforward=16, dropout=0.0)
    cell = _graph_cell(type_name, CATALOGUE.get(type_name).values(params))
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    changed = x.copy()
    changed[:, 3:] += 1.0  # only the last two steps change
    a, b = cell(Tensor(x)), cell(Tensor(changed))
    a, b = (a[0], b[0]) if isinstance(a, tuple) else (a, b)
    np.testing.assert_allclose(a.asnumpy()[:, :3], b.asnumpy()[:, :3], rtol=1e-5, atol=1e-6)
    assert not np.allclose(a.asnumpy()[:, 3:], b.asnumpy()[:, 3:])


def test_per_sample_attn_mask_port_applies_to_every_head():
    cell = _graph_cell("MultiheadAttention", CATALOGUE.get("MultiheadAttention").values(
        {"average_attn_weights": False}))
    x = Tensor(np.random.default_rng(2).standard_normal((2, 4, 8)).astype(np.float32))
    mask = np.zeros((2, 4, 4), bool)
    mask[0, :, 1] = True
    _, w = cell(x, attn_mask=Tensor(mask))
    assert np.all(w.asnumpy()[0, :, :, 1] == 0) and np.all(w.asnumpy()[1, :, :, 1] > 0)


def test_encoder_node_builds_its_layers_with_mindspore_names():
    values = CATALOGUE.get("TransformerEncoder").values({"d_model": 8, "num_layers": 2,
                                                         "dim_feedforward": 16})
    cell = _graph_cell("TransformerEncoder", values)
    assert len(cell.layers) == 2 and cell.norm is None
    names = [n for n, _ in cell.parameters_and_names()]
    assert names[0] == "layers.0.self_attn.in_proj_weight"
    assert names[-1] == "layers.1.norm2.beta"


def test_category_and_ports():
    for name in TYPES:
        assert CATALOGUE.get(name).category == "Sequences"
    ports = CATALOGUE.get("MultiheadAttention").inputs
    assert [p.name for p in ports] == ["query", "key", "value", "key_padding_mask",
                                       "attn_mask"]
    assert [p.optional for p in ports] == [False, True, True, True, True]
