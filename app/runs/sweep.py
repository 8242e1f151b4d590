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

The state also holds "done_trials": the trial index of each id in "done" (a run the
user deleted, or the size cap dropped, stays done). "metric" is what ranks the runs:
the spec's, else best_val_loss for a project that holds data back for validation,
else best_loss (`best()` falls back to best_loss when no run has a validation loss).
A trial that can't train at all (a setting the network refuses) raises SweepError
naming it; one that fails while training is recorded with status "failed" and the
sweep goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from app.compiler import CompileError
from app.datasets import Dataset
from app.document import Project, RunRecord
from app.document.node import new_id
from app.document.runs import METRICS
from app.runs.copying import copy_project
from app.runs.sweep_spec import SweepSpec, SweepSpecError
from app.runs.sweep_values import SHORT, apply_trial, run_name, show
from app.session import STOPPED, Progress, TrainingError, TrainingFinished, TrainingSession

STATUSES = ("running", "stopped", "finished")


class SweepError(Exception):
    """A sweep can't start or go on; the message says why, in the user's words."""


def trial_text(values: Mapping[str, Any]) -> str:
    """"lr=0.01 batch_size=64"."""
    return " ".join(f"{SHORT.get(k, k)}={show(v)}" for k, v in values.items())


class Sweep:
    """A project's sweep: its spec, its trials, and which are done (`project.runs.sweep`)."""

    def __init__(self, project: Project, spec: SweepSpec, state: dict[str, Any],
                 folder: str | Path | None) -> None:  # fmt: skip
        self.project = project
        self.spec = spec
        self.state = state
        self.folder = Path(folder) if folder else None
        self._dataset: Dataset | None = None  # read by the first run, then shared

    @classmethod
    def start(cls, project: Project, spec: SweepSpec, *,
              folder: str | Path | None = None) -> Sweep:  # fmt: skip
        """A new sweep on `project` (its queue state written into project.runs.sweep)."""
        trials = spec.trials(project)  # SweepSpecError if a node axis does not fit
        fraction = project.training.get("validation_fraction", 0.2)
        metric = spec.metric or ("best_val_loss" if fraction else "best_loss")
        state = {"id": new_id(), "spec": spec.to_json(), "trials": trials, "done": [],
                 "done_trials": [], "status": "running", "metric": metric}  # fmt: skip
        sweep = cls(project, spec, state, folder)
        sweep._save()
        return sweep

    @classmethod
    def resume(cls, project: Project, *, folder: str | Path | None = None) -> Sweep:
        """The project's saved sweep, to go on from its first trial not done."""
        data = project.runs.sweep
        if not data:
            raise SweepError("This project has no sweep to resume; start one instead.")
        try:
            spec = SweepSpec.from_json(data["spec"])
            trials = [dict(t) for t in data["trials"]]
            done = [str(i) for i in data.get("done", [])]
            done_trials = [int(i) for i in data.get("done_trials", [])]
            state = {"id": str(data["id"]), "spec": spec.to_json(), "trials": trials,
                     "done": done, "done_trials": done_trials,
                     "status": str(data.get("status", "stopped")),
                     "metric": str(data.get("metric") or spec.metric or "best_loss")}  # fmt: skip
        except SweepSpecError as exc:
            raise SweepError(str(exc)) from None
        except (KeyError, TypeError, ValueError) as exc:
            raise SweepError(f"The project's saved sweep is damaged ({type(exc).__name__}: "
                             f"{exc}); start a new one.") from None  # fmt: skip
        try:
            spec.resolved(project)  # its nodes and values still fit the network
        except SweepSpecError as exc:
            raise SweepError(f"The saved sweep can't go on with the network as it is now: "
                             f"{exc}") from None  # fmt: skip
        return cls(project, spec, state, folder)

    # ---- the queue -----------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.state["id"]

    @property
    def trials(self) -> list[dict[str, Any]]:
        return self.state["trials"]

    @property
    def status(self) -> str:
        return self.state["status"]

    @property
    def total(self) -> int:
        """Trials in the sweep."""
        return len(self.state["trials"])

    def pending(self) -> list[tuple[int, dict[str, Any]]]:
        """(index, values) of each trial not done yet, in order."""
        done = set(self.state["done_trials"])
        return [(i, dict(t)) for i, t in enumerate(self.state["trials"]) if i not in done]

    @property
    def metric(self) -> str:
        """The METRICS name ranking the runs (see the module's docstring)."""
        if self.spec.metric:
            return self.spec.metric
        metric = self.state.get("metric") or "best_loss"
        records = self.records()
        if metric == "best_val_loss" and records and all(
                r.metric(metric) is None for r in records):  # fmt: skip
            return "best_loss"
        return metric

    # ---- training ------------------------------------------------------------------

    def train(self, index: int, values: dict[str, Any], *, dataset: Dataset | None = None,
              should_stop: Callable[[], bool] | None = None,
              progress: Callable[[int, int], None] | None = None,
              source: Project | None = None) -> RunRecord | None:  # fmt: skip
        """Train trial `index` on a fresh copy (any thread; the project is only read); its
        record (origin "sweep", `sweep` info set), or None if stopped before it ended.
        `source`: the project to copy instead of the sweep's (a copy taken on the owner
        thread, so a worker never reads a project the user is editing)."""
        stop = should_stop or (lambda: False)
        if stop():
            return None
        copy = copy_project(self.project if source is None else source, fresh=True)
        try:
            apply_trial(copy, values, self.spec.epochs)
            data = self._dataset if dataset is None else dataset  # read once, then shared
            session = TrainingSession(copy, folder=self.folder, restart=True, dataset=data,
                                      origin="sweep")
        except (TrainingError, CompileError, ValueError) as exc:
            raise SweepError(f"Sweep run {index + 1} ({trial_text(values)}) can't train: "
                             f"{exc}") from None  # fmt: skip
        self._dataset = session.dataset
        asked = threading.Event()

        def watch(event: object) -> None:  # on this thread, after every step
            if isinstance(event, Progress):
                if progress is not None:
                    progress(event.run_step, event.steps_planned)
                if not asked.is_set() and stop():
                    asked.set()
                    session.stop()

        session.events.subscribe(watch)
        result = session.run(epochs=copy.training.get("epochs"))
        if asked.is_set() and isinstance(result, TrainingFinished) and result.reason == STOPPED:
            return None
        record = session.last_record
        if record is None:  # no step was trained
            return None
        record.origin = "sweep"
        record.sweep = {"id": self.id, "index": index, "values": dict(values)}
        record.name = run_name(index, values)
        return record

    def record(self, record: RunRecord) -> None:
        """Add a trial's record to the project's runs and mark it done (owner thread)."""
        info = record.sweep or {}
        if info.get("id") != self.id or not isinstance(info.get("index"), int):
            raise SweepError("That run does not belong to this sweep.")
        self.project.runs.add(record)
        self.state["done"].append(record.id)
        self.state["done_trials"].append(info["index"])
        if not self.pending():
            self.state["status"] = "finished"
        self._save()

    def mark(self, status: str) -> None:
        """"running", "stopped" or "finished" into the queue state (owner thread)."""
        if status not in STATUSES:
            raise ValueError(f"A sweep's status is one of {', '.join(STATUSES)}, not "
                             f"{status!r}.")  # fmt: skip
        self.state["status"] = status
        self._save()

    def run(self, *, should_stop: Callable[[], bool] | None = None,
            dataset: Dataset | None = None) -> Iterator[RunRecord]:
        """Headless: train every pending trial here, recording each as it ends. Stopped
        (by `should_stop`, Ctrl+C, an error, or the loop left early), the sweep is marked
        "stopped" with the runs done so far recorded."""
        self.mark("running")
        try:
            for index, values in self.pending():
                record = self.train(index, values, dataset=dataset, should_stop=should_stop)
                if record is None:
                    return
                self.record(record)
                yield record
        finally:
            if self.pending():
                self.mark("stopped")

    # ---- results -------------------------------------------------------------------

    def records(self) -> list[RunRecord]:
        """This sweep's runs in the project's history, in trial order."""
        mine = [r for r in self.project.runs if (r.sweep or {}).get("id") == self.id]
        return sorted(mine, key=lambda r: r.sweep.get("index", 0))

    def best(self) -> RunRecord | None:
        """The best of `records()` by the spec's metric."""
        metric = self.metric
        higher = METRICS.get(metric, ("", False))[1]
        scored = [r for r in self.records() if r.metric(metric) is not None]
        if not scored:
            return None
        pick = max if higher else min
        return pick(scored, key=lambda r: r.metric(metric))

    def _save(self) -> None:
        state = dict(self.state)
        state["trials"] = [dict(t) for t in state["trials"]]
        state["done"], state["done_trials"] = list(state["done"]), list(state["done_trials"])
        self.project.runs.set_sweep(state)


class SweepWorker(threading.Thread):
    """Trains a sweep's pending trials on a worker thread; the GUI's timer polls it.

    `take()` gives the records finished since the last call (the GUI then calls
    `sweep.record(r)` for each); `progress` is (trial index, trials, step, steps of the
    trial) or None; `done` is set when it ended (all trained, stopped, or failed with
    `error`); `stop()` ends the current trial (not recorded) and the worker.

    The trials are those pending when the worker is made, and the network and settings
    trained are the project's then (a copy is taken here, on the owner thread: the user
    may edit the project meanwhile). `error` is a message for the user (None if none);
    `stopped` says `stop()` was called. The worker never writes the project.
    """

    def __init__(self, sweep: Sweep, *, dataset: Dataset | None = None) -> None:
        super().__init__(name="cellwright-sweep", daemon=True)
        self.sweep = sweep
        self._trials = sweep.pending()
        self._source = copy_project(sweep.project, fresh=True)
        self._dataset = dataset
        self.progress: tuple[int, int, int, int] | None = None
        self.done = threading.Event()
        self.error: str | None = None
        self._stop_asked = threading.Event()
        self._lock = threading.Lock()
        self._finished: list[RunRecord] = []

    @property
    def stopped(self) -> bool:
        return self._stop_asked.is_set()

    def stop(self) -> None:
        self._stop_asked.set()

    def take(self) -> list[RunRecord]:
        with self._lock:
            taken, self._finished = self._finished, []
        return taken

    def run(self) -> None:
        total = self.sweep.total
        try:
            for index, values in self._trials:
                if self._stop_asked.is_set():
                    break
                self.progress = (index, total, 0, 0)

                def progress(step: int, steps: int, index: int = index) -> None:
                    self.progress = (index, total, step, steps)

                record = self.sweep.train(index, values, dataset=self._dataset,
                                          should_stop=self._stop_asked.is_set,
                                          progress=progress, source=self._source)  # fmt: skip
                if record is None:
                    break
                with self._lock:
                    self._finished.append(record)
        except SweepError as exc:
            self.error = str(exc)
        except Exception as exc:  # a bug: said, not lost on a thread nobody watches
            self.error = f"The sweep failed unexpectedly ({type(exc).__name__}: {exc})."
        finally:
            self.done.set()
