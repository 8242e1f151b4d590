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
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.datasets import Dataset
from app.document import Project

DEFAULT_START, DEFAULT_END, DEFAULT_STEPS = 1e-7, 10.0, 100
DIVERGE = 4.0  # stop once the smoothed loss is this many times its lowest
SMOOTHING = 0.98  # the exponential moving average of the loss (bias-corrected)


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


def find_learning_rate(project: Project, *, folder: str | Path | None = None,
                       dataset: Dataset | None = None, start: float = DEFAULT_START,
                       end: float = DEFAULT_END, steps: int = DEFAULT_STEPS,
                       should_stop: Callable[[], bool] | None = None,
                       progress: Callable[[int, float, float], None] | None = None,
                       ) -> LRFinding:  # fmt: skip
    """Run the finder on a copy of `project` (see the module's docstring)."""
    raise NotImplementedError
