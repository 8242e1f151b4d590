"""The learning-rate finder: train a copy of the network for up to `steps` steps with the rate
growing exponentially from `start` to `end`, stop when the loss blows up, and suggest a
rate from the smoothed loss. The project — its weights and optimizer state — is not touched.

    finding = find_learning_rate(project, folder=..., start=1e-7, end=10.0, steps=100,
                                 should_stop=event.is_set, progress=callback)
    finding.rates, finding.losses, finding.smoothed      # one entry per step taken
    finding.steepest, finding.min_tenth, finding.suggestion

`steepest`: the rate where the smoothed loss falls fastest against log(rate);
`min_tenth`: a tenth of the rate at the smoothed loss's minimum; `suggestion`: the one
the finder proposes (the steepest, unless it lies beyond the minimum). Refusals (no data
set, a network that does not fit) raise `LRFinderError` with the reason.

The copy trains in a `TrainingSession` of its own (app.runs.copying.copy_project: the
project's weights, no optimizer state), so a step is the one Start takes — one batch,
reshuffled through epochs, the project's gradient clipping and augmentation, a NaN or
infinite loss caught — but the finder sets the rate of every step (any `lr_schedule` is
left out) and ends the run when the smoothed loss passes `DIVERGE` times its lowest. The
engine's random generator (and NumPy's global one), which making a session seeds, are put
back as they were at once; the copy's run draws from a generator lent to the calling
thread, so a run going on in another thread (the window's) is not moved.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.compiler import CompileError
from app.datasets import Dataset
from app.document import Project
from app.runs.copying import copy_project
from app.session import Progress, TrainingError, TrainingFailed, TrainingSession

DEFAULT_START, DEFAULT_END, DEFAULT_STEPS = 1e-7, 10.0, 100
MIN_STEPS, MAX_STEPS = 5, 10_000
MIN_RATE, MAX_RATE = 1e-12, 1e6  # what a float32 rate holds with room to spare
DIVERGE = 4.0  # stop once the smoothed loss is this many times its lowest
SMOOTHING = 0.98  # the exponential moving average of the loss (bias-corrected)
STOPPED_BY_USER = "stopped on request"


class LRFinderError(Exception):
    """The finder can't run; the message says why, in the user's words."""


@dataclass(frozen=True)
class LRFinding:
    rates: np.ndarray
    losses: np.ndarray
    smoothed: np.ndarray
    steepest: float | None
    min_tenth: float | None
    suggestion: float | None
    stopped_early: str  # why it stopped before `steps` ("" if it did not)
    seconds: float

    @property
    def steps(self) -> int:
        """Steps taken (each with its rate and loss)."""
        return len(self.rates)


def check_bounds(start: float, end: float, steps: int) -> None:
    """LRFinderError saying what is allowed unless MIN_RATE <= start < end <= MAX_RATE and
    MIN_STEPS <= steps <= MAX_STEPS."""
    for value, what in ((start, "start rate"), (end, "end rate")):
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not MIN_RATE <= value <= MAX_RATE):  # fmt: skip
            raise LRFinderError(
                f"The {what} must be a number from {MIN_RATE:g} to {MAX_RATE:g}, not {value!r}."
            )
    if start >= end:
        raise LRFinderError(
            f"The start rate ({start:g}) must be below the end rate ({end:g})."
        )
    if isinstance(steps, bool) or not isinstance(steps, int) or not (
            MIN_STEPS <= steps <= MAX_STEPS):  # fmt: skip
        raise LRFinderError(
            f"The number of steps must be a whole number from {MIN_STEPS} to "
            f"{MAX_STEPS:,}, not {steps!r}."
        )


def rate_schedule(start: float, end: float, steps: int) -> np.ndarray:
    """The rate of each step: `start` growing by the same factor each step to `end`."""
    return start * (end / start) ** (np.arange(steps) / (steps - 1))


def smooth(losses: np.ndarray | list[float], beta: float = SMOOTHING) -> np.ndarray:
    """The bias-corrected exponential moving average of `losses`."""
    values = np.asarray(losses, dtype=np.float64)
    out = np.empty_like(values)
    average = 0.0
    for i, loss in enumerate(values):
        average = beta * average + (1.0 - beta) * loss
        out[i] = average / (1.0 - beta ** (i + 1))
    return out


def suggest(rates: np.ndarray, smoothed: np.ndarray) -> tuple[float | None, float | None,
                                                             float | None]:  # fmt: skip
    """(steepest, min_tenth, suggestion) of a search; None where there is too little.

    The steepest descent skips the first and last few points (a tenth of them, at most 10
    and 5), where the smoothing's start and the blow-up would otherwise win.
    """
    rates, smoothed = np.asarray(rates, np.float64), np.asarray(smoothed, np.float64)
    if not len(rates):
        return None, None, None
    lowest = int(np.argmin(smoothed))
    min_tenth = float(rates[lowest]) / 10.0
    steepest = None
    first = min(10, len(rates) // 10)
    last = len(rates) - min(5, len(rates) // 10)
    if last - first >= 3:
        slopes = np.gradient(smoothed, np.log(rates))[first:last]
        at = int(np.argmin(slopes))
        if slopes[at] < 0:
            steepest = float(rates[first + at])
    if steepest is None or steepest > rates[lowest]:
        return steepest, min_tenth, min_tenth
    return steepest, min_tenth, steepest


class _Search:
    """Follows the copy's run step by step: records, sets the next rate, ends it."""

    def __init__(self, session: TrainingSession, rates: np.ndarray,
                 should_stop: Callable[[], bool] | None,
                 progress: Callable[[int, float, float], None] | None) -> None:  # fmt: skip
        self.session, self.rates = session, rates
        self.should_stop, self.progress = should_stop, progress
        self.losses: list[float] = []
        self.average = 0.0
        self.lowest = math.inf
        self.stopped = ""

    def on_event(self, event: object) -> None:
        if not isinstance(event, Progress):
            return
        step = len(self.losses)
        loss = float(event.loss)
        self.losses.append(loss)
        self.average = SMOOTHING * self.average + (1.0 - SMOOTHING) * loss
        smoothed = self.average / (1.0 - SMOOTHING ** (step + 1))
        self.lowest = min(self.lowest, smoothed)
        if self.progress is not None:
            self.progress(step + 1, float(self.rates[step]), loss)
        if step > 0 and smoothed > DIVERGE * self.lowest:
            self.stopped = (f"the smoothed loss passed {DIVERGE:g}× its lowest at rate "
                            f"{self.rates[step]:.3g}")  # fmt: skip
        elif self.should_stop is not None and self.should_stop():
            self.stopped = STOPPED_BY_USER
        elif step + 1 < len(self.rates):
            self.session.set_learning_rate(float(self.rates[step + 1]))
            return
        self.session.stop()


def find_learning_rate(project: Project, *, folder: str | Path | None = None,
                       dataset: Dataset | None = None, start: float = DEFAULT_START,
                       end: float = DEFAULT_END, steps: int = DEFAULT_STEPS,
                       should_stop: Callable[[], bool] | None = None,
                       progress: Callable[[int, float, float], None] | None = None,
                       ) -> LRFinding:  # fmt: skip
    """Run the finder on a copy of `project` (see the module's docstring).

    `progress(step, rate, loss)` is called after every step (on the calling thread);
    `should_stop()` is asked after every step, and ends the search when true.
    """
    check_bounds(start, end, steps)
    began = time.perf_counter()
    rates = rate_schedule(float(start), float(end), steps)
    copy = copy_project(project)
    copy.training.pop("lr_schedule", None)  # the finder sets every step's rate
    copy.training["learning_rate"] = float(rates[0])
    try:  # (a session draws new weights and its runs from generators of its own)
        session = TrainingSession(copy, folder=folder, restart=True, dataset=dataset)
    except (TrainingError, CompileError) as exc:
        raise LRFinderError(str(exc)) from None
    search = _Search(session, rates, should_stop, progress)
    session.events.subscribe(search.on_event)
    per_epoch = max(session.train_set.batch_count(session.settings.batch_size), 1)
    result = None
    if should_stop is not None and should_stop():
        search.stopped = STOPPED_BY_USER
    else:
        result = session.run(epochs=math.ceil(steps / per_epoch) + 1, steps=steps,
                             record=False)  # a search, not a run of the project
    if isinstance(result, TrainingFailed):
        if not _non_finite(result):
            raise LRFinderError(result.message)
        failed = float(rates[len(search.losses)])
        search.stopped = f"the loss or the weights became infinite or NaN at rate {failed:.3g}"
    losses = np.asarray(search.losses, dtype=np.float64)
    taken = rates[:len(losses)].copy()
    smoothed = smooth(losses)
    steepest, min_tenth, suggestion = suggest(taken, smoothed)
    return LRFinding(taken, losses, smoothed, steepest, min_tenth, suggestion,
                     search.stopped, time.perf_counter() - began)  # fmt: skip


def _non_finite(result: TrainingFailed) -> bool:
    """Did the step fail on a NaN or infinity (rather than an error in the network)?"""
    return isinstance(result.error, ArithmeticError)
