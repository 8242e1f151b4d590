"""Saving is atomic: a save killed (SIGKILL) at any moment leaves the old file or the new one,
whole and loadable — proven on a 10-million-parameter project (issue 13)."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from app.document import Project
from app.io.project_file import load_project, save_project
from tests.app.session.session_samples import chain

pytestmark = pytest.mark.slow  # ~25 s: 32 processes started, each killed

ROOT = Path(__file__).resolve().parents[3]
WIDTHS = (1000, 4000, 1500, 10)  # Dense layers: 10,020,510 Parameters, a 40 MB file
KILLS = 32
SEED = 13  # the moments of the kills, as fractions of a save's duration
TIMEOUT = 60

# Saves versions `start`, `start + 1`, … of the project over PATH in a loop, printing each
# version once its save has returned, until it is killed.
SAVER = """
import sys
from app.io.project_file import save_project
from tests.app.io.test_atomic_save import big_project, mark
path, version = sys.argv[1], int(sys.argv[2])
project = big_project()
print("ready", flush=True)
while True:
    mark(project, version)
    save_project(project, path)
    print(version, flush=True)
    version += 1
"""


def big_project() -> Project:
    """An MLP 1000-4000-1500-10 with the same random weights every time."""
    layers = [("Input", {"shape": (WIDTHS[0],)})]
    for i, (fan_in, fan_out) in enumerate(zip(WIDTHS, WIDTHS[1:], strict=False)):
        layers += [("ReLU", {})] if i else []
        layers.append(("Dense", {"in_channels": fan_in, "out_channels": fan_out}))
    project = Project(graph=chain(*layers, ("Output", {"loss": "MSELoss"})), name="v0")
    rng = np.random.default_rng(0)
    for i, (fan_in, fan_out) in enumerate(zip(WIDTHS, WIDTHS[1:], strict=False)):
        project.param_values[project.graph.node_named(f"dense{i + 1}").id] = {
            "weight": rng.standard_normal((fan_out, fan_in), dtype=np.float32),
            "bias": np.zeros(fan_out, dtype=np.float32),
        }
    return project


def dense_values(project: Project) -> list[dict[str, np.ndarray]]:
    return [project.param_values[project.graph.node_named(f"dense{i + 1}").id]
            for i in range(len(WIDTHS) - 1)]  # fmt: skip


def mark(project: Project, version: int) -> None:
    """Make `project` version `version`: in its name, and in the first and last rows and
    the biases of every layer (the start and the end of params.npz)."""
    project.name = f"v{version}"
    for values in dense_values(project):
        values["weight"][[0, -1]] = version
        values["bias"][:] = version


def check_whole(path: Path, base: Project) -> int:
    """The version `path` holds; fails unless it loads and is that version exactly."""
    project = load_project(path)
    version = int(project.name[1:])
    assert len(project.graph.nodes) == len(base.graph.nodes)
    for got, want in zip(dense_values(project), dense_values(base), strict=True):
        assert got.keys() == want.keys()
        weight = got["weight"]
        assert weight.shape == want["weight"].shape and weight.dtype == np.float32
        assert (weight[[0, -1]] == version).all() and (got["bias"] == version).all()
        np.testing.assert_array_equal(weight[1:-1], want["weight"][1:-1])
    return version


def test_a_save_killed_at_any_moment_leaves_the_old_or_the_new_project(tmp_path):
    folder = tmp_path / "projects"
    folder.mkdir()
    path = folder / "big.cwproj"
    base = big_project()
    mark(base, 0)
    durations = []
    for _ in range(2):  # version 0: the old file the first kill starts from
        start = time.perf_counter()
        save_project(base, path)
        durations.append(time.perf_counter() - start)
    save_time = min(durations)
    moments = random.Random(SEED)
    version, kills_mid_save, seen = 0, 0, set()
    for _ in range(KILLS):
        saver = subprocess.Popen([sys.executable, "-c", SAVER, str(path), str(version + 1)],
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)  # fmt: skip
        try:
            assert saver.stdout.readline() == "ready\n", saver.stderr.read()
            time.sleep(moments.uniform(0.0, 3.0) * save_time)
        finally:
            saver.send_signal(signal.SIGKILL)
            out, err = saver.communicate(timeout=TIMEOUT)
        assert saver.returncode == -signal.SIGKILL, err
        saved = [int(line) for line in out.split()]
        last = saved[-1] if saved else version  # the last save known to have returned
        # A temporary file beside the project: the kill landed mid-save.
        kills_mid_save += any(p != path for p in folder.iterdir())
        # Killed between the rename and the print, the new version is there unannounced.
        found = check_whole(path, base)
        assert found in (last, last + 1), (found, last)
        seen.add(found - version)
        version = found
        # Loading it removed what the killed save left (its process is gone): nothing stays.
        assert [p.name for p in folder.iterdir() if p != path] == []
    assert kills_mid_save >= KILLS // 3, kills_mid_save
    assert 0 in seen and max(seen) >= 1  # both old files and new ones were left
