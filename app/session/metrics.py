"""Loss and accuracy curves: per-step and per-epoch histories, saved with the project.

Columns are named by STEP_COLUMNS and EPOCH_COLUMNS; a plot takes
`metrics.steps.snapshot()[:, STEP_COLUMNS.index("loss")]`. Both are `History`s: the
first N steps exactly (the training setting `history_steps`), a uniform sample of the
middle and the last N, so a long run still shows its start. Missing numbers (accuracy
of a regression, validation without a split) are NaN in the buffers and null in JSON.

In the project (`training.state.history`) each keeps its rows, oldest first, as a table
of numbers ("steps", "epochs"), and beside it ("step_history", "epoch_history") what
sampling needs to go on: each row's arrival number, the total and the sampler's state.
Older files with the tables alone still load (their rows taken as the first ones).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from app.session.events import EpochMetrics
from app.session.history import HISTORY_STEPS, History, thin_state

STEP_COLUMNS = ("step", "epoch", "loss", "accuracy", "learning_rate")
EPOCH_COLUMNS = ("epoch", "step", "loss", "accuracy", "val_loss", "val_accuracy")
EPOCH_HISTORY = 10_000  # epochs kept exactly at the start and end: in practice, all
SAVED_ROWS = 30_000  # most rows of one history in project.json (all, up to history_steps 10,000)


class Metrics:
    """The histories a training session writes and plot panes poll."""

    def __init__(self, history_steps: int = HISTORY_STEPS,
                 epoch_history: int = EPOCH_HISTORY) -> None:  # fmt: skip
        self.steps = History(history_steps, len(STEP_COLUMNS))
        self.epochs = History(epoch_history, len(EPOCH_COLUMNS))

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

    def to_json(self, saved_rows: int = SAVED_ROWS) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for key, columns, history in self._histories():
            state = thin_state(history.state(), saved_rows)
            data[f"{key[:-1]}_columns"] = list(columns)
            data[key] = [[_json_number(v) for v in row] for row in state["history"]]
            data[f"{key[:-1]}_history"] = {
                "total": int(state["total"]),
                "arrival": [int(a) for a in state["arrival"]],
                "random": base64.b64encode(state["random"].astype("<u4").tobytes()).decode(),
            }
            if "reservoir" in state:
                data[f"{key[:-1]}_history"]["reservoir"] = [int(a) for a in state["reservoir"]]
        return data

    def load_json(self, data: Mapping[str, Any] | None) -> None:
        """Refill the histories from `to_json()` output; ValueError if it is damaged."""
        self.clear()
        if not data:
            return
        for key, columns, history in self._histories():
            if list(data.get(f"{key[:-1]}_columns", columns)) != list(columns):
                raise ValueError(f"its {key} history has unknown columns")
            rows = data.get(key, [])
            try:
                block = np.array([[math.nan if v is None else v for v in r] for r in rows],
                                 dtype=np.float64).reshape(-1, len(columns))  # fmt: skip
            except (TypeError, ValueError):
                raise ValueError(f"its {key} history is not a table of numbers") from None
            kept = data.get(f"{key[:-1]}_history")
            try:
                history.restore(_state(block, kept))
            except ValueError as exc:
                raise ValueError(f"its {key} history is damaged: {exc}") from None

    def _histories(self) -> tuple[tuple[str, tuple[str, ...], History], ...]:
        return ("steps", STEP_COLUMNS, self.steps), ("epochs", EPOCH_COLUMNS, self.epochs)


def _state(rows: np.ndarray, kept: Any) -> dict[str, np.ndarray]:
    """A `History.state()` from a saved table and what was saved beside it (older files:
    nothing, and the rows are taken as the first ones)."""
    if kept is None:
        return {"history": rows, "arrival": np.arange(len(rows)),
                "total": np.array(len(rows))}  # fmt: skip
    if not isinstance(kept, Mapping):
        raise ValueError("what goes with its rows is not an object")
    total, words = kept.get("total"), kept.get("random")
    if isinstance(total, bool) or not isinstance(total, int):
        raise ValueError("its total is not a whole number")
    state = {"history": rows, "arrival": _counts(kept.get("arrival"), "arrival numbers"),
             "total": np.array(max(min(total, 2**62), -1), dtype=np.int64)}  # fmt: skip
    if "reservoir" in kept:
        state["reservoir"] = _counts(kept["reservoir"], "reservoir order")
    if words is not None:
        try:
            raw = base64.b64decode(words.encode("ascii"), validate=True)
            state["random"] = np.frombuffer(raw, dtype="<u4").astype(np.uint32)
        except (AttributeError, ValueError, UnicodeError):
            raise ValueError("its random generator state is not readable") from None
    return state


def _counts(values: Any, what: str) -> np.ndarray:
    if not isinstance(values, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**62 for v in values
    ):
        raise ValueError(f"its {what} are not whole numbers")
    return np.array(values, dtype=np.int64).reshape(-1)


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
