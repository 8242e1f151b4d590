"""Running a sweep: one training run after another on copies of the network, each recorded in
the project's run history, with a queue whose state the project keeps (`project.runs.sweep`),
so a save and reopen finds an interrupted sweep and can resume it.

    sweep = Sweep.start(project, spec, folder=...)    # writes project.runs.sweep
    sweep = Sweep.resume(project, folder=...)         # the saved queue, from its next run
    for record in sweep.run(should_stop=...):         # headless: on this thread
        ...                                           # each is in project.runs already
    # in the window: `SweepWorker(sweep)` trains on a worker thread; the GUI's timer calls
    # `worker.take()` for finished records and adds them (`sweep.record(r)`) itself.

The queue state (JSON): {"id", "spec": SweepSpec.to_json(), "trials": [values...],
"done": [run ids], "status": "running" | "stopped" | "finished", "metric"}.
Each run trains a fresh copy (`copy_project(project, fresh=True)`) with the trial's
values applied, for the spec's epochs (else the project's), and is recorded with
origin "sweep" and `sweep={"id", "index", "values"}`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from app.datasets import Dataset
from app.document import Project, RunRecord
from app.runs.sweep_spec import SweepSpec


class SweepError(Exception):
    """A sweep can't start or go on; the message says why, in the user's words."""


class Sweep:
    """A project's sweep: its spec, its trials, and which are done (`project.runs.sweep`)."""

    @classmethod
    def start(cls, project: Project, spec: SweepSpec, *,
              folder: str | Path | None = None) -> Sweep:  # fmt: skip
        """A new sweep on `project` (its queue state written into project.runs.sweep)."""
        raise NotImplementedError

    @classmethod
    def resume(cls, project: Project, *, folder: str | Path | None = None) -> Sweep:
        """The project's saved sweep, to go on from its first trial not done."""
        raise NotImplementedError

    @property
    def total(self) -> int:
        """Trials in the sweep."""
        raise NotImplementedError

    def pending(self) -> list[tuple[int, dict[str, Any]]]:
        """(index, values) of each trial not done yet, in order."""
        raise NotImplementedError

    def train(self, index: int, values: dict[str, Any], *, dataset: Dataset | None = None,
              should_stop: Callable[[], bool] | None = None,
              progress: Callable[[int, int], None] | None = None) -> RunRecord | None:  # fmt: skip
        """Train trial `index` on a fresh copy (any thread; the project is only read); its
        record (origin "sweep", `sweep` info set), or None if stopped before it ended."""
        raise NotImplementedError

    def record(self, record: RunRecord) -> None:
        """Add a trial's record to the project's runs and mark it done (owner thread)."""
        raise NotImplementedError

    def mark(self, status: str) -> None:
        """"running", "stopped" or "finished" into the queue state (owner thread)."""
        raise NotImplementedError

    def run(self, *, should_stop: Callable[[], bool] | None = None,
            dataset: Dataset | None = None) -> Iterator[RunRecord]:
        """Headless: train every pending trial here, recording each as it ends."""
        raise NotImplementedError

    def records(self) -> list[RunRecord]:
        """This sweep's runs in the project's history, in trial order."""
        raise NotImplementedError

    def best(self) -> RunRecord | None:
        """The best of `records()` by the spec's metric."""
        raise NotImplementedError


class SweepWorker:
    """Trains a sweep's pending trials on a worker thread; the GUI's timer polls it.

    `take()` gives the records finished since the last call (the GUI then calls
    `sweep.record(r)` for each); `progress` is (trial index, trials, step, steps of the
    trial) or None; `done` is set when it ended (all trained, stopped, or failed with
    `error`); `stop()` ends the current trial (not recorded) and the worker.
    """

    def __init__(self, sweep: Sweep, *, dataset: Dataset | None = None) -> None:
        raise NotImplementedError
