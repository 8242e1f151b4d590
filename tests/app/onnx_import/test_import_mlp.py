"""An MLP with LayerNorm and GELU, exported by torch's legacy exporter (opsets 13 and 17) and
its dynamo exporter (opset 18): it imports as Dense, LayerNorm, GELU, Dense whatever the
exporter spelled out, computes what torch computes, and trains in a training session."""

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

VARIANTS = variants(13)


def mlp():
    import torch

    nn = torch.nn

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1, self.norm = nn.Linear(6, 16), nn.LayerNorm(16)
            self.act, self.drop, self.fc2 = nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 3)

        def forward(self, x):
            return self.fc2(self.drop(self.act(self.norm(self.fc1(x)))))

    torch.manual_seed(0)
    module = MLP()
    with torch.no_grad():  # LayerNorm weights that are not the identity, to be checked
        module.norm.weight.uniform_(0.5, 1.5)
        module.norm.bias.uniform_(-0.5, 0.5)
    return module.eval()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The MLP, and its file from an (exporter, opset), exported once when first asked for."""
    import torch

    module, folder, files = mlp(), tmp_path_factory.mktemp("mlp"), {}

    def file(variant):
        if variant not in files:
            exporter, opset = variant
            files[variant] = export(module, torch.randn(4, 6),
                                    folder / f"mlp_{exporter}_{opset}.onnx", exporter=exporter,
                                    opset=opset)  # fmt: skip
        return files[variant]

    return module, file


@pytest.mark.parametrize("variant", VARIANTS)
def test_mlp_imports_as_its_layers_and_matches_torch(exported, variant):
    module, file = exported
    result = import_onnx(file(variant), group_blocks=False)
    types = [n.type for n in result.project.graph.nodes.values()]
    assert types == ["Input", "Dense", "LayerNorm", "GELU", "Dense", "Output"]
    gelu = next(n for n in result.project.graph.nodes.values() if n.type == "GELU")
    assert gelu.params["approximate"] is False  # torch's nn.GELU() is the exact erf form
    x = np.random.default_rng(1).standard_normal((5, 6)).astype(np.float32)
    assert_close(run_project(result.project, x), torch_outputs(module, x))
    assert result.parameters == sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("variant", VARIANTS)
def test_imported_mlp_trains_with_a_falling_loss(exported, variant, tmp_path):
    _, file = exported
    project = import_onnx(file(variant)).project
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 6)).astype(np.float32)
    y = np.argmax(x[:, :3], axis=1).astype(np.int64)
    losses = train_a_few_steps(project, tmp_path, x, y, epochs=4)
    assert np.all(np.isfinite(losses))
    assert losses[-1] < losses[0]
