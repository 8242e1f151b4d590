"""The example projects' training steps for engine_vs_torch.py: the residual CNN
(issue 27) and the character-level Transformer (issue 28).

The engine side is the shipped project compiled as the app compiles it; the PyTorch side
is that project exported with `cellwright export --torch` and loaded with the same
initial weights. Both train on the same batch of the example's data (64 digits; 64
windows of 32 characters of the shipped text, int64 token ids) with cross-entropy and
SGD with momentum (the harness's step), so the first losses agree.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

from benchmarks.sgd_steps import engine_step, torch_step

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"
BATCH = 64


def _project(name: str):
    from app.io.project_file import load_project

    return load_project(EXAMPLES / f"{name}.cwproj")


def _data(name: str):
    """The first BATCH samples of the example's own data set."""
    from app.datasets.loading import read_dataset

    data = read_dataset(_project(name).training["dataset"])
    return data.x[:BATCH].copy(), data.y[:BATCH].copy()


def _engine_side(name: str):
    from app.compiler import compile_project

    return engine_step(compile_project(_project(name)).network, *_data(name))


def _torch_side(name: str):
    from app.export.torch_script import export_torch

    with tempfile.TemporaryDirectory(prefix="cellwright-bench-") as folder:
        script = Path(folder) / f"{name}.py"
        export_torch(_project(name), script)
        spec = importlib.util.spec_from_file_location(f"{name}_export", script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        net = module.load_network()  # the weights are read here: the folder may go
    return torch_step(net, *_data(name))


def _sides(name: str) -> dict:
    return {"engine": lambda: _engine_side(name), "torch": lambda: _torch_side(name)}


WORKLOADS = {
    "residual": {"title": "residual CNN example (digits)", "batch": BATCH, "target": 0.8,
                 "steps": 100, **_sides("residual_cnn")},
    "transformer": {"title": "char Transformer example (text)", "batch": BATCH,
                    "target": 0.6, "steps": 100, **_sides("char_transformer")},
}
