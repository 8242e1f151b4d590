"""Recording a training run in the project's run history (app.document.runs).

A run is a session's `start()` or `run()` to its end (a pause and a resume inside it stay
one run; a one-step run of Step with no run going on is not recorded). The session's
`RunRecorder` notes the start on the project's own thread (`begin`, in `_claim`): when,
the step it stood at, the training settings (with the defaults of those left unset) and
a summary of the network. At the end,
on the thread that trains, `finish` gathers how it ended, how long it took (pauses left
out), the steps trained and the run's own rows of the metric histories, thinned — nothing
per step. The `RunEnd` travels on the run's final `RunResult`; applying that result on
the project's thread builds the `RunRecord` (metrics from the curves, a copy of the
Parameters as the run's weights) and adds it to `project.runs`.

A run of origin "sweep" trains a copy of a project: its record is made (the session's
`last_record`) but not added to the copy's history — the sweep adds it to the project it
belongs to. A run that trained no step is not recorded.
"""

from __future__ import annotations

import copy
import datetime
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.document import Project
from app.document.node import new_id
from app.document.run_diff import summarise
from app.document.runs import (
    EPOCH_COLUMNS,
    ORIGINS,
    STEP_COLUMNS,
    RunRecord,
    curve_metrics,
    thin_rows,
)
from app.session.events import (
    STOPPED,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingResumed,
)
from app.session.progress import is_optimizer_entry
from app.session.settings import DEFAULTS


@dataclass(frozen=True)
class RunStart:
    """What the project was when a run began (taken on the project's thread)."""

    started: str  # ISO 8601, UTC
    clock: float  # time.monotonic() then
    first_step: int
    settings: dict[str, Any]
    network: dict[str, Any]
    origin: str


@dataclass(frozen=True)
class RunEnd:
    """How a run ended (taken on the thread that trains), to become its RunRecord."""

    start: RunStart
    status: str
    message: str
    steps: int
    duration: float
    steps_curve: np.ndarray
    epochs_curve: np.ndarray
    id: str = field(default_factory=new_id)  # the record's: applied twice, added once


class RunRecorder:
    """A session's start and end of each recorded run."""

    def __init__(self, origin: str = "window") -> None:
        if origin not in ORIGINS:
            raise ValueError(f"A run's origin is one of {', '.join(ORIGINS)}, not {origin!r}.")
        self.origin = origin
        self._start: RunStart | None = None
        self._end: RunEnd | None = None
        self._paused_at: float | None = None
        self._paused = 0.0

    def begin(self, project: Project, step: int, record: bool = True) -> None:
        """A run starts (the project's own thread); `record` False: this one is not kept."""
        self._paused_at, self._paused, self._end = None, 0.0, None
        if not record:
            self._start = None
            return
        # The settings the run used: the defaults of those the project leaves unset too,
        # so the next run's diff says "optimizer Adam → Momentum", not "(unset) → …".
        settings = copy.deepcopy({**DEFAULTS, **{k: v for k, v in project.training.items()
                                                 if k != "state"}})  # fmt: skip
        self._start = RunStart(
            started=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            clock=time.monotonic(), first_step=int(step), settings=settings,
            network=summarise(project.graph), origin=self.origin,
        )  # fmt: skip

    def on_event(self, event: object) -> None:
        """A pause's time is no training time (called for pause, resume and the end)."""
        if isinstance(event, TrainingPaused) and self._paused_at is None:
            self._paused_at = time.monotonic()
        elif (isinstance(event, TrainingResumed | TrainingFinished | TrainingFailed)
              and self._paused_at is not None):  # fmt: skip
            self._paused += time.monotonic() - self._paused_at
            self._paused_at = None

    def finish(self, event: TrainingFinished | TrainingFailed, step: int,
               metrics: Any) -> RunEnd | None:  # fmt: skip
        """The run's end (on the thread that trains); None if it is not recorded or trained
        no step. Asked again (its hand-over was cut short), the same end."""
        start, self._start = self._start, None
        if start is None:
            return self._end
        self.on_event(event)
        steps = int(step) - start.first_step
        if steps <= 0:
            return None
        if isinstance(event, TrainingFailed):
            status = "failed"
        else:
            status = "stopped" if event.reason == STOPPED else "finished"
        duration = max(time.monotonic() - start.clock - self._paused, 0.0)
        self._end = RunEnd(start, status, event.message, steps, duration,
                           _own_rows(metrics.steps.snapshot(), STEP_COLUMNS, start.first_step),
                           _own_rows(metrics.epochs.snapshot(), EPOCH_COLUMNS,
                                     start.first_step))  # fmt: skip
        return self._end


def _own_rows(rows: np.ndarray, columns: tuple[str, ...], first_step: int) -> np.ndarray:
    rows = np.asarray(rows)
    if not len(rows):
        return np.empty((0, len(columns)), np.float32)
    mine = rows[rows[:, columns.index("step")] > first_step]
    return np.array(thin_rows(mine), dtype=np.float32)


def make_record(end: RunEnd, values: Mapping[str, Mapping[str, np.ndarray]]) -> RunRecord:
    """The RunRecord of a run that ended; `values` are its Parameter values (and optimizer
    entries, left out) by node id, copied."""
    weights = {node_id: {name: np.array(a, copy=True) for name, a in arrays.items()
                         if not is_optimizer_entry(name)}
               for node_id, arrays in values.items()}  # fmt: skip
    start = end.start
    return RunRecord(
        settings=copy.deepcopy(start.settings), network=copy.deepcopy(start.network),
        started=start.started, duration=end.duration, first_step=start.first_step,
        steps=end.steps, status=end.status, message=end.message,
        metrics=curve_metrics(end.steps_curve, end.epochs_curve),
        steps_curve=end.steps_curve.copy(), epochs_curve=end.epochs_curve.copy(),
        weights={k: v for k, v in weights.items() if v}, origin=start.origin, id=end.id,
    )  # fmt: skip


def record_run(project: Project, end: RunEnd,
               values: Mapping[str, Mapping[str, np.ndarray]]) -> RunRecord:  # fmt: skip
    """Make the run's record and add it to `project.runs` (not a sweep's; nor twice)."""
    held = project.runs.get(end.id)
    if held is not None:
        return held
    record = make_record(end, values)
    if record.origin != "sweep":
        project.runs.add(record)
    return record
