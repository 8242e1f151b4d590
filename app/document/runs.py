"""The project's run history: every training run with its settings, network, curves and metrics.

A `RunRecord` is made when a run ends (app.session.run_record, on the project's own
thread) and added with `project.runs.add(record)`, which works out the record's diff
against the run before it (app.document.run_diff), gives it a colour, decides whose
weights stay (the user's per-run choice; by default the best run's and the last run's),
and trims the history to its size cap, never dropping a named run or the best one.

Curves are the run's own rows of the session's step and epoch histories (columns
STEP_COLUMNS and EPOCH_COLUMNS, float32), thinned to at most CURVE_ROWS rows with the
start and end kept exactly. Metrics are named by METRICS; a run's `score` is what
"best" means: the lowest validation loss it reached, else the lowest epoch loss.

Every change tells the project's listeners with a `RunsChanged` event.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.document.node import DocumentError, check_id, new_id

STEP_COLUMNS = ("step", "epoch", "loss", "accuracy", "learning_rate")  # = app.session's
EPOCH_COLUMNS = ("epoch", "step", "loss", "accuracy", "val_loss", "val_accuracy")
CURVE_ROWS = 1_000  # most rows of a run's step curve kept (its epoch curve: as many)
STATUSES = ("finished", "stopped", "failed")
ORIGINS = ("window", "cli", "sweep")
# name -> (shown as, True if higher is better)
METRICS: dict[str, tuple[str, bool]] = {
    "final_loss": ("final loss", False),
    "best_loss": ("best loss", False),
    "final_accuracy": ("final accuracy", True),
    "best_accuracy": ("best accuracy", True),
    "final_val_loss": ("final val loss", False),
    "best_val_loss": ("best val loss", False),
    "final_val_accuracy": ("final val accuracy", True),
    "best_val_accuracy": ("best val accuracy", True),
}
DEFAULT_CAP_MB = 4.0
CAP_MB_RANGE = (0.1, 1024.0)
# Distinct on light and dark backgrounds, in the order runs take them; the live curves'
# blue and orange come last, so a run overlaid on them is not lost.
COLOURS = ("#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
           "#7f7f7f", "#ff7f0e", "#1f77b4")  # fmt: skip
Weights = dict[str, dict[str, np.ndarray]]  # node id -> Parameter name -> values


@dataclass(frozen=True)
class RunsChanged:
    """The run history changed: `what` is "added", "removed", "changed" or "sweep"; `ids`
    names the runs concerned (empty for the sweep state or everything)."""

    what: str
    ids: tuple[str, ...] = ()


@dataclass(eq=False)
class RunRecord:
    """One run, from its start to its end.

    `settings`: the project's training settings at the start (JSON, without "state").
    `network`: `run_diff.summarise(graph)` at the start. `diff`: `run_diff.diff(...)`
    against the run before (set by `RunHistory.add`; empty for the first run).
    `first_step`: the step the session stood at before the run; `steps`: steps trained.
    `keep`: the user's choice for its weights (None: the default, best or last).
    `named`: the user gave the name (the size cap never drops it).
    `sweep`: for a sweep's run, {"id", "index", "values": {setting: value}}.
    """

    settings: dict[str, Any]
    network: dict[str, Any]
    started: str  # ISO 8601, UTC
    duration: float  # seconds
    first_step: int
    steps: int
    status: str = "finished"
    message: str = ""
    metrics: dict[str, float | None] = field(default_factory=dict)
    steps_curve: np.ndarray = field(default_factory=lambda: np.empty((0, len(STEP_COLUMNS)),
                                                                     np.float32))
    epochs_curve: np.ndarray = field(default_factory=lambda: np.empty((0, len(EPOCH_COLUMNS)),
                                                                      np.float32))
    weights: Weights | None = None
    origin: str = "window"
    sweep: dict[str, Any] | None = None
    diff: list[dict[str, Any]] = field(default_factory=list)
    name: str = ""
    colour: str = ""
    named: bool = False
    keep: bool | None = None
    id: str = field(default_factory=new_id)

    def __post_init__(self) -> None:
        check_id(self.id, "A run id")
        if self.status not in STATUSES:
            raise DocumentError(f"A run's status is one of {', '.join(STATUSES)}, "
                                f"not {self.status!r}.")  # fmt: skip
        if self.origin not in ORIGINS:
            raise DocumentError(f"A run's origin is one of {', '.join(ORIGINS)}, "
                                f"not {self.origin!r}.")  # fmt: skip
        self.steps_curve = _curve(self.steps_curve, len(STEP_COLUMNS), "step")
        self.epochs_curve = _curve(self.epochs_curve, len(EPOCH_COLUMNS), "epoch")

    @property
    def steps_per_second(self) -> float | None:
        return self.steps / self.duration if self.duration > 0 and self.steps else None

    @property
    def score(self) -> float | None:
        """What "best" compares (lower is better): the lowest validation loss, else the
        lowest loss; None with neither."""
        for key in ("best_val_loss", "best_loss", "final_loss"):
            value = self.metrics.get(key)
            if value is not None and math.isfinite(value):
                return float(value)
        return None

    @property
    def kept(self) -> bool:
        """Its weights are held (and saved)."""
        return self.weights is not None

    def metric(self, name: str) -> float | None:
        value = self.metrics.get(name)
        return None if value is None or not math.isfinite(value) else float(value)

    def curve_bytes(self) -> int:
        """About what its record and curves take in a project file (not its weights): its
        arrays, its JSON (settings, network, diff: measured once per diff) and headers."""
        key = (id(self.diff), len(self.diff))
        cached = self.__dict__.get("_json_bytes")
        if cached is None or cached[0] != key:
            try:
                size = len(json.dumps([self.settings, self.network, self.diff, self.metrics,
                                       self.message, self.sweep], default=str))  # fmt: skip
            except (TypeError, ValueError, RecursionError):
                size = 100_000  # not storable as it is: saving says so; counted as big
            cached = self.__dict__["_json_bytes"] = (key, size)
        return int(self.steps_curve.nbytes + self.epochs_curve.nbytes) + cached[1] + 1_000

    def weight_bytes(self) -> int:
        if not self.weights:
            return 0
        return sum(a.nbytes for arrays in self.weights.values() for a in arrays.values())


def _curve(rows: Any, width: int, what: str) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    if rows.ndim != 2 or rows.shape[1] != width:
        raise DocumentError(f"A run's {what} curve has {width} columns; got shape {rows.shape}.")
    return rows


def thin_rows(rows: np.ndarray, most: int = CURVE_ROWS) -> np.ndarray:
    """At most `most` rows: a quarter at each end exactly, evenly spaced rows between."""
    rows = np.asarray(rows)
    if len(rows) <= most:
        return rows
    end = most // 4
    middle = np.linspace(end, len(rows) - end - 1, most - 2 * end).round().astype(int)
    index = np.concatenate([np.arange(end), middle, np.arange(len(rows) - end, len(rows))])
    return rows[np.unique(index)]


def curve_metrics(steps: np.ndarray, epochs: np.ndarray) -> dict[str, float | None]:
    """Final and best loss and accuracy, train and validation, from a run's curves: the
    epoch rows where there are any (whole-epoch figures), else the step rows."""
    out: dict[str, float | None] = {}
    sources = {"loss": ("loss", True), "accuracy": ("accuracy", False),
               "val_loss": ("val_loss", True), "val_accuracy": ("val_accuracy", False)}
    for name, (column, lower) in sources.items():
        if len(epochs) and column in EPOCH_COLUMNS:
            values = epochs[:, EPOCH_COLUMNS.index(column)]
        elif column in STEP_COLUMNS:
            values = steps[:, STEP_COLUMNS.index(column)] if len(steps) else np.empty(0)
        else:
            values = np.empty(0)
        finite = values[np.isfinite(values)]
        last = values[-1] if len(values) else math.nan
        out[f"final_{name}"] = float(last) if math.isfinite(last) else None
        out[f"best_{name}"] = (float(finite.min() if lower else finite.max())
                               if len(finite) else None)  # fmt: skip
    return out


class RunHistory:
    """The project's runs, oldest first, and the state of a sweep (JSON, app.runs.sweep's).

    `emit` is the project's event sender (set by Project); each change emits RunsChanged.
    """

    def __init__(self, records: Iterable[RunRecord] = (), *, cap_mb: float = DEFAULT_CAP_MB,
                 sweep: Mapping[str, Any] | None = None) -> None:  # fmt: skip
        self.records: list[RunRecord] = list(records)
        self.cap_mb = check_cap(cap_mb)
        self.sweep: dict[str, Any] | None = dict(sweep) if sweep else None
        self.emit: Callable[[object], None] = lambda event: None

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self):
        return iter(list(self.records))

    def get(self, run_id: str) -> RunRecord | None:
        return next((r for r in self.records if r.id == run_id), None)

    def index(self, run_id: str) -> int:
        for index, record in enumerate(self.records):
            if record.id == run_id:
                return index
        raise DocumentError("That run is no longer in the history.")

    @property
    def last(self) -> RunRecord | None:
        return self.records[-1] if self.records else None

    def best(self) -> RunRecord | None:
        """The run with the lowest `score` (the earliest of equals); None if none has one."""
        scored = [r for r in self.records if r.score is not None]
        return min(scored, key=lambda r: r.score) if scored else None

    # ---- changes (the undo commands and the session call these) ---------------------------

    def add(self, record: RunRecord) -> list[RunRecord]:
        """Append `record` (a new run): its diff against the last run, a name and colour if
        it has none, the default weights choice, and the size cap. Returns the runs the cap
        dropped (oldest first)."""
        from app.document.run_diff import diff  # beside this module; only needed here

        if self.get(record.id) is not None:
            raise DocumentError("That run is already in the history.")
        previous = self.last
        record.diff = diff(previous.network, record.network,
                           previous.settings, record.settings) if previous else []  # fmt: skip
        if not record.name:
            record.name = f"run {self._next_number()}"
        if not record.colour:
            used = {r.colour for r in self.records}
            free = [c for c in COLOURS if c not in used]
            record.colour = free[0] if free else COLOURS[len(self.records) % len(COLOURS)]
        self.records.append(record)
        self._settle_weights()
        dropped = self.trim()
        self.emit(RunsChanged("added", (record.id,)))
        if dropped:
            self.emit(RunsChanged("removed", tuple(r.id for r in dropped)))
        return dropped

    def remove(self, run_ids: Iterable[str]) -> list[tuple[int, RunRecord]]:
        """Take runs out; returns each with where it was (for an undo), in index order."""
        ids = set(run_ids)
        taken = [(i, r) for i, r in enumerate(self.records) if r.id in ids]
        if not taken:
            raise DocumentError("Those runs are no longer in the history.")
        self.records = [r for r in self.records if r.id not in ids]
        self.emit(RunsChanged("removed", tuple(r.id for _, r in taken)))
        return taken

    def insert(self, taken: Iterable[tuple[int, RunRecord]]) -> None:
        """Put runs back where they were (the undo of `remove`)."""
        taken = sorted(taken, key=lambda pair: pair[0])
        for index, record in taken:
            if self.get(record.id) is None:
                self.records.insert(min(index, len(self.records)), record)
        self.emit(RunsChanged("added", tuple(r.id for _, r in taken)))

    def rename(self, run_id: str, name: str) -> str:
        """Give a run the user's name (kept by the cap); returns the old name."""
        record = self._record(run_id)
        name = str(name).strip()
        if not name:
            raise DocumentError("A run's name can't be empty.")
        if len(name) > 120:
            raise DocumentError("A run's name is at most 120 characters.")
        old, record.name, record.named = record.name, name, True
        self.emit(RunsChanged("changed", (run_id,)))
        return old

    def set_colour(self, run_id: str, colour: str) -> str:
        record = self._record(run_id)
        if not (isinstance(colour, str) and len(colour) == 7 and colour[0] == "#"
                and all(c in "0123456789abcdefABCDEF" for c in colour[1:])):  # fmt: skip
            raise DocumentError(f"A run's colour is written #rrggbb, not {colour!r}.")
        old, record.colour = record.colour, colour.lower()
        self.emit(RunsChanged("changed", (run_id,)))
        return old

    def set_keep(self, run_id: str, keep: bool) -> None:
        """Keep a run's weights (only while it still has them) or let them go."""
        record = self._record(run_id)
        if keep and record.weights is None:
            raise DocumentError(f"The weights of {record.name} were not kept, so they can't "
                                "be kept now.")  # fmt: skip
        record.keep = bool(keep)
        if not keep:
            record.weights = None
        self.emit(RunsChanged("changed", (run_id,)))

    def set_cap(self, cap_mb: float) -> list[RunRecord]:
        self.cap_mb = check_cap(cap_mb)
        dropped = self.trim()
        if dropped:
            self.emit(RunsChanged("removed", tuple(r.id for r in dropped)))
        return dropped

    def set_sweep(self, sweep: Mapping[str, Any] | None) -> None:
        self.sweep = dict(sweep) if sweep else None
        self.emit(RunsChanged("sweep"))

    # ---- size ---------------------------------------------------------------------------

    def size_bytes(self) -> int:
        """About what the records and curves take in the project file (weights apart)."""
        return sum(r.curve_bytes() for r in self.records)

    def weight_bytes(self) -> int:
        return sum(r.weight_bytes() for r in self.records)

    def trim(self) -> list[RunRecord]:
        """Drop the oldest runs that are neither named, nor the best, nor the last, nor
        kept by the user's choice (their weights ticked), until the records fit the cap;
        returns them."""
        limit = self.cap_mb * (1 << 20)
        dropped: list[RunRecord] = []
        size = self.size_bytes()
        while size > limit:
            best, last = self.best(), self.last
            victim = next((r for r in self.records if not r.named and r.keep is not True
                           and r is not best and r is not last), None)  # fmt: skip
            if victim is None:
                break
            self.records.remove(victim)
            dropped.append(victim)
            size -= victim.curve_bytes()
        return dropped

    def _settle_weights(self) -> None:
        """Runs left to the default keep their weights while they are the best or the last."""
        best, last = self.best(), self.last
        for record in self.records:
            if record.keep is None and record is not best and record is not last:
                record.weights = None

    def _record(self, run_id: str) -> RunRecord:
        record = self.get(run_id)
        if record is None:
            raise DocumentError("That run is no longer in the history.")
        return record

    def _next_number(self) -> int:
        numbers = [int(r.name[4:]) for r in self.records  # "run ²" is no number: isascii
                   if r.name.startswith("run ") and r.name[4:].isascii()
                   and r.name[4:].isdigit()]  # fmt: skip
        return max(numbers + [len(self.records)]) + 1  # a renamed run still counts


def check_cap(cap_mb: Any) -> float:
    low, high = CAP_MB_RANGE
    if isinstance(cap_mb, bool) or not isinstance(cap_mb, int | float) or not (
            low <= float(cap_mb) <= high):  # fmt: skip
        raise DocumentError(f"The run history's size cap is {low:g} to {high:g} MB, "
                            f"not {cap_mb!r}.")  # fmt: skip
    return float(cap_mb)
