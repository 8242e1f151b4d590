"""A long headless run with 5 hooks keeps its memory flat (issue 13)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.document import Hook
from app.io.project_file import load_project
from app.resources_path import resource_path
from app.session import Progress, TrainingFinished, TrainingSession

pytestmark = pytest.mark.slow  # ~5 s

STEPS = 10_000
FIRST_READING = 2_000
READ_EVERY = 100  # steps between two summaries, as a GUI timer at 5 Hz on a ~500 steps/s run
MOST_GROWTH_MB = 20
REPO = Path(__file__).resolve().parents[3]


def resident_mb() -> float:
    """This process's resident memory, after a full collection, in MB."""
    gc.collect()
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def measure() -> dict:
    """Train 10,000 steps of the spiral example with 5 hooks, read as the window would;
    the resident memory every 2,000 steps, and what the checks below need."""
    project = load_project(resource_path("examples", "spiral_mlp.cwproj"))
    # As a user attaches them (benchmarks/hook_overhead.py): forward hooks on the first 3
    # layers, backward hooks on the last 2.
    layers = [node.id for node in project.graph.nodes.values() if node.type == "Dense"]
    project.hooks = [Hook("forward", target) for target in layers[:3]] + [
        Hook("backward", target, "norm") for target in layers[-2:]
    ]
    session = TrainingSession(project, folder=resource_path("examples"))
    captures = session.captures
    assert len(captures.captures) == 5 and not captures.skipped
    captures.pace.budget = None  # every step copied: the histories fill head, middle and tail
    readings: dict[int, float] = {}
    rows = 0

    def read(event) -> None:  # what the window's panes do on their timer
        nonlocal rows
        if not isinstance(event, Progress) or event.step % READ_EVERY:
            return
        rows += captures.summarise()
        for capture in captures.captures.values():
            capture.stats.snapshot()
            capture.histograms.snapshot()
            capture.latest.snapshot()
        session.metrics.steps.snapshot_with_version()
        if event.step % FIRST_READING == 0:
            readings[event.step] = resident_mb()

    session.events.subscribe(read)
    per_epoch = session._trainer.batches_per_epoch
    result = session.run(epochs=STEPS // per_epoch + 1, steps=STEPS)
    return {"finished": isinstance(result, TrainingFinished) and result.step == STEPS,
            "captured": [c.captured for c in captures.captures.values()], "rows": rows,
            "readings": readings}


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_ten_thousand_steps_with_five_hooks_keep_memory_flat():
    # In a process of its own, as the app runs: the test process holds whatever the tests
    # before it loaded (torch, onnxruntime…), whose heap grows for reasons not the run's.
    code = ("import json; from tests.app.session.test_long_run import measure; "
            "print(json.dumps(measure()))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["finished"]
    assert all(c > STEPS // 2 for c in found["captured"])
    assert found["rows"] > 5 * 4_000  # past each history's head and its tail: the reservoir
    readings = {int(step): mb for step, mb in found["readings"].items()}
    growth = readings[STEPS] - readings[FIRST_READING]
    assert growth < MOST_GROWTH_MB, readings
