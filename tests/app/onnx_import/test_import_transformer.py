"""A two-layer nn.TransformerEncoder (batch first, ReLU or GELU) and a bare self-attention,
exported by torch's legacy exporter (opsets 14 and 17: before 14 torch can't export its
scaled dot-product attention) and its dynamo exporter (opset 18). The attention the
exporters spell out in Reshapes that merge batch and heads is recognised: the encoder
imports as one TransformerEncoder node, self-attention as one MultiheadAttention node
with its head count read back; both compute what torch computes and train."""

from __future__ import annotations

import numpy as np
import pytest

from app.onnx_import import import_onnx
from tests.app.onnx_import.support import (
    assert_close,
    export,
    run_project,
    torch_outputs,
    train_a_few_steps,
    variants,
)

VARIANTS = variants(14)  # torch exports attention from opset 14
WIDTH, STEPS = 16, 5
KINDS = {  # kind: (activation, nhead, norm_first)
    "encoder_relu": ("relu", 2, False),
    "encoder_gelu": ("gelu", 4, False),
    "encoder_pre_norm": ("relu", 2, True),
}


def model(kind: str):
    import torch

    nn = torch.nn

    class Classifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            if kind == "attention":
                self.attn = nn.MultiheadAttention(WIDTH, 4, batch_first=True)
            else:
                activation, heads, norm_first = KINDS[kind]
                layer = nn.TransformerEncoderLayer(WIDTH, heads, 32, dropout=0.0,
                                                   activation=activation, batch_first=True,
                                                   norm_first=norm_first)  # fmt: skip
                self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.fc = nn.Linear(WIDTH, 3)

        def forward(self, x):
            if kind == "attention":
                return self.fc(self.attn(x, x, x, need_weights=False)[0][:, 0])
            return self.fc(self.encoder(x).mean(1))

    torch.manual_seed(0)
    module = Classifier()
    with torch.no_grad():  # torch starts the attention biases and LayerNorms at 0 and 1
        for p in module.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return module.eval()


def sample(batch: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, STEPS, WIDTH)).astype(np.float32)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """fn(kind, (exporter, opset)) → (torch module, ONNX file), each exported once."""
    import torch

    folder, modules, files = tmp_path_factory.mktemp("transformer"), {}, {}

    def get(kind, variant):
        module = modules.setdefault(kind, model(kind))
        if (kind, variant) not in files:
            exporter, opset = variant
            files[kind, variant] = export(module, torch.from_numpy(sample(3)),
                                          folder / f"{kind}_{exporter}_{opset}.onnx",
                                          exporter=exporter, opset=opset)  # fmt: skip
        return module, files[kind, variant]

    return get


def imported(exported, kind, variant):
    module, path = exported(kind, variant)
    result = import_onnx(path, group_blocks=False)
    x = sample(4, seed=7)
    assert_close(run_project(result.project, x), torch_outputs(module, x))
    assert result.parameters == sum(p.numel() for p in module.parameters())
    return result, list(result.project.graph.nodes.values())


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", ["encoder_relu", "encoder_gelu"])
def test_encoder_imports_as_one_transformer_encoder_and_matches_torch(exported, kind, variant):
    _, nodes = imported(exported, kind, variant)
    assert [n.type for n in nodes] == ["Input", "TransformerEncoder", "Mean", "Dense", "Output"]
    activation, heads, _ = KINDS[kind]
    params = nodes[1].params
    assert (params["num_layers"], params["nhead"], params["d_model"]) == (2, heads, WIDTH)
    assert (params["activation"], params["dim_feedforward"]) == (activation, 32)
    assert params["batch_first"] is True and params["norm_first"] is False


@pytest.mark.parametrize("variant", VARIANTS)
def test_self_attention_imports_as_multihead_attention_with_its_heads(exported, variant):
    _, nodes = imported(exported, "attention", variant)
    assert [n.type for n in nodes] == ["Input", "MultiheadAttention", "Select", "Dense",
                                       "Output"]  # fmt: skip
    assert (nodes[1].params["num_heads"], nodes[1].params["embed_dim"]) == (4, WIDTH)


@pytest.mark.parametrize("variant", [("legacy", 17),
                                     pytest.param(("dynamo", 18), marks=pytest.mark.slow)])
def test_pre_norm_layers_import_as_attention_norm_and_dense_nodes(exported, variant):
    _, nodes = imported(exported, "encoder_pre_norm", variant)
    types = [n.type for n in nodes]
    assert types.count("MultiheadAttention") == 2 and types.count("LayerNorm") == 4
    assert "Reshape" not in types and "Softmax" not in types


@pytest.mark.parametrize("variant", [("legacy", 17),
                                     pytest.param(("dynamo", 18), marks=pytest.mark.slow)])
def test_imported_encoder_trains_with_a_falling_loss(exported, variant, tmp_path):
    _, path = exported("encoder_gelu", variant)
    project = import_onnx(path).project
    x = sample(48, seed=2)
    y = np.argmax(x.mean(1)[:, :3], axis=1).astype(np.int64)
    losses = train_a_few_steps(project, tmp_path, x, y, epochs=3, lr=0.01)
    assert np.all(np.isfinite(losses))
    assert losses[-1] < losses[0]


def test_imported_self_attention_trains_with_a_falling_loss(exported, tmp_path):
    _, path = exported("attention", ("legacy", 17))
    project = import_onnx(path).project
    x = sample(48, seed=3)
    y = np.argmax(x[:, 0, :3], axis=1).astype(np.int64)
    losses = train_a_few_steps(project, tmp_path, x, y, epochs=3, lr=0.01)
    assert losses[-1] < losses[0]
