"""Where a project's training stands, read from the project alone (no network, no session).

When no session can be made — a stray node, code not trusted, a data set that can't be
read — the history stays in view: the step and epoch it was trained to, and its curves.
Only training and prediction need a network that builds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.session.history import HISTORY_STEPS
from app.session.metrics import Metrics
from app.session.progress import TrainingState


@dataclass(frozen=True)
class HeldProgress:
    """The step and epoch a project was trained to, and its metric history (None if none)."""

    step: int = 0
    epoch: int = 0
    metrics: Metrics | None = None


def held_progress(project: Any) -> HeldProgress:
    """What `project.training` says of the training done; a damaged part reads as none."""
    training = getattr(project, "training", None)
    if not isinstance(training, Mapping):
        return HeldProgress()
    saved = training.get("state")
    try:
        state = TrainingState.from_json(saved)
    except ValueError:
        return HeldProgress()
    steps = training.get("history_steps")
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
        steps = HISTORY_STEPS
    metrics: Metrics | None = Metrics(steps)
    try:
        metrics.load_json(saved.get("history") if isinstance(saved, Mapping) else None)
    except (ValueError, TypeError, AttributeError):
        metrics = None  # curves are nice to have: the step count still shows
    return HeldProgress(state.step, state.epoch, metrics)
