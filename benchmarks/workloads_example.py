"""The residual CNN example's training step for engine_vs_torch.py (issue 27).

The engine side is the shipped project compiled as the app compiles it; the PyTorch side
is that project exported with `cellwright export --torch` and loaded with the same
initial weights. Both train on the same batch of 64 digits with cross-entropy and SGD
with momentum (the harness's step), so the first losses agree.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

from benchmarks.sgd_steps import engine_step, torch_step

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "resources" / "examples" / "residual_cnn.cwproj"
BATCH = 64


def _project():
    from app.io.project_file import load_project

    return load_project(EXAMPLE)


def _data():
    from app.datasets import make_builtin

    data = make_builtin("digits")
    return data.x[:BATCH].copy(), data.y[:BATCH].copy()


def engine_side():
    from app.compiler import compile_project

    return engine_step(compile_project(_project()).network, *_data())


def torch_side():
    from app.export.torch_script import export_torch

    with tempfile.TemporaryDirectory(prefix="cellwright-bench-") as folder:
        script = Path(folder) / "residual_cnn.py"
        export_torch(_project(), script)
        spec = importlib.util.spec_from_file_location("residual_cnn_export", script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        net = module.load_network()  # the weights are read here: the folder may go
    return torch_step(net, *_data())


WORKLOADS = {
    "residual": {"title": "residual CNN example (digits)", "batch": BATCH, "target": 0.8,
                 "steps": 100, "engine": engine_side, "torch": torch_side},
}
