"""A long headless run with 5 hooks keeps its memory flat (issue 13)."""

from __future__ import annotations

import gc
import os

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


def resident_mb() -> float:
    """This process's resident memory, after a full collection, in MB."""
    gc.collect()
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 1e6


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_ten_thousand_steps_with_five_hooks_keep_memory_flat():
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
    assert isinstance(result, TrainingFinished) and result.step == STEPS
    assert all(c.captured > STEPS // 2 for c in captures.captures.values())
    assert rows > 5 * 4_000  # past each history's head and its tail: the reservoir is used
    growth = readings[STEPS] - readings[FIRST_READING]
    assert growth < MOST_GROWTH_MB, readings
