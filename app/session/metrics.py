"""Loss and accuracy curves: per-step and per-epoch ring buffers, saved with the project.

Columns are named by STEP_COLUMNS and EPOCH_COLUMNS; a plot takes
`metrics.steps.snapshot()[:, STEP_COLUMNS.index("loss")]`. Missing numbers (accuracy
of a regression, validation without a split) are NaN in the buffers and null in JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from app.session.events import EpochMetrics
from app.session.ring_buffer import RingBuffer

STEP_COLUMNS = ("step", "epoch", "loss", "accuracy", "learning_rate")
EPOCH_COLUMNS = ("epoch", "step", "loss", "accuracy", "val_loss", "val_accuracy")
STEP_CAPACITY = 50_000  # steps kept for the live curves
EPOCH_CAPACITY = 10_000
SAVED_STEPS = 5_000  # steps of history a project file keeps (every epoch is kept)


class Metrics:
    """The ring buffers a training session writes and plot panes poll."""

    def __init__(self, step_capacity: int = STEP_CAPACITY,
                 epoch_capacity: int = EPOCH_CAPACITY) -> None:  # fmt: skip
        self.steps = RingBuffer(step_capacity, len(STEP_COLUMNS))
        self.epochs = RingBuffer(epoch_capacity, len(EPOCH_COLUMNS))

    def add_step(self, step: int, epoch: int, loss: float, accuracy: float | None,
                 learning_rate: float) -> None:  # fmt: skip
        self.steps.append_values(step, epoch, loss, _nan(accuracy), learning_rate)

    def add_epoch(self, metrics: EpochMetrics) -> None:
        m = metrics
        self.epochs.append_values(m.epoch, m.step, m.loss, _nan(m.accuracy), _nan(m.val_loss),
                                  _nan(m.val_accuracy))  # fmt: skip

    def epoch_list(self) -> list[EpochMetrics]:
        """Every epoch held, oldest first."""
        return [_epoch_metrics(row) for row in self.epochs.snapshot()]

    def last_epoch(self) -> EpochMetrics | None:
        row = self.epochs.last()
        return None if row is None else _epoch_metrics(row)

    def clear(self) -> None:
        self.steps.clear()
        self.epochs.clear()

    # ---- saved history -------------------------------------------------------------

    def to_json(self, saved_steps: int = SAVED_STEPS) -> dict[str, Any]:
        steps = self.steps.snapshot()[-saved_steps:] if saved_steps else self.steps.snapshot()[:0]
        return {
            "step_columns": list(STEP_COLUMNS),
            "steps": [[_json_number(v) for v in row] for row in steps],
            "epoch_columns": list(EPOCH_COLUMNS),
            "epochs": [[_json_number(v) for v in row] for row in self.epochs.snapshot()],
        }

    def load_json(self, data: Mapping[str, Any] | None) -> None:
        """Refill the buffers from `to_json()` output; ValueError if it is damaged."""
        self.clear()
        if not data:
            return
        for key, columns, buffer in (
            ("steps", STEP_COLUMNS, self.steps),
            ("epochs", EPOCH_COLUMNS, self.epochs),
        ):
            if list(data.get(f"{key[:-1]}_columns", columns)) != list(columns):
                raise ValueError(f"its {key} history has unknown columns")
            rows = data.get(key, [])
            try:
                block = np.array([[math.nan if v is None else v for v in r] for r in rows],
                                 dtype=np.float64).reshape(-1, len(columns))  # fmt: skip
            except (TypeError, ValueError):
                raise ValueError(f"its {key} history is not a table of numbers") from None
            buffer.extend(block)


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def _json_number(value: float) -> float | int | None:
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() and abs(value) < 2**53 else float(value)


def _optional(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _epoch_metrics(row: np.ndarray) -> EpochMetrics:
    epoch, step, loss, accuracy, val_loss, val_accuracy = row
    return EpochMetrics(int(epoch), int(step), float(loss), _optional(accuracy),
                        _optional(val_loss), _optional(val_accuracy))  # fmt: skip
