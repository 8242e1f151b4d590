"""What the export tests share: running an exported script, and the engine's own outputs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

import engine
from app.compiler import compile_project
from app.document import Project


def load_script(path: Path):
    """The exported script at `path`, imported as a module."""
    spec = importlib.util.spec_from_file_location(f"exported_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def engine_outputs(project: Project, *inputs: np.ndarray) -> np.ndarray:
    """The compiled project's output for `inputs`, predicting (what an export must match)."""
    network = compile_project(project).network
    network.set_train(False)
    with engine.no_grad():
        return network(*(engine.Tensor(x) for x in inputs)).asnumpy()
