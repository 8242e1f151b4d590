"""Where a parallel-coordinates axis puts a value (0 at its bottom, 1 at its top) and what
its ticks say: categorical values evenly, numbers linearly or by decade (`log`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_TICKS = 6  # distinct values an axis labels one by one; more: round values
MIN_GAP = 0.07  # of the axis's height: values closer than this get round values instead


@dataclass(frozen=True)
class PCAxis:
    """An axis: `name` keys the rows' values; `choices` makes it categorical (its values in
    that order; found from the rows if empty and a value is not a number); `log` spaces it by
    decade; `higher_better` (the metric's axis) says which end is best."""

    name: str
    label: str = ""
    log: bool = False
    choices: tuple[Any, ...] = ()
    higher_better: bool | None = None

    @property
    def title(self) -> str:
        return self.label or self.name


class Scale:
    """Where an axis puts a value: 0 (bottom) to 1 (top); NaN for a value it can't place."""

    def __init__(self, axis: PCAxis, values: Sequence[Any]) -> None:
        self.axis = axis
        present = [v for v in values if v is not None]
        numeric = all(_is_number(v) for v in present)
        self.choices: tuple[Any, ...] = axis.choices
        if not self.choices and not numeric:
            self.choices = tuple(dict.fromkeys(present))
        self.log = axis.log and not self.choices
        if self.choices:
            self.low, self.high = 0.0, float(max(len(self.choices) - 1, 1))
            return
        raw = np.array([self._raw(v) for v in present], dtype=float)
        raw = raw[np.isfinite(raw)]
        low, high = (float(raw.min()), float(raw.max())) if len(raw) else (0.0, 1.0)
        if high - low <= 1e-12 * max(1.0, abs(high)):
            low, high = low - 0.5, high + 0.5  # one value: in the middle
        self.low, self.high = low, high

    def _raw(self, value: Any) -> float:
        if value is None:
            return math.nan
        if self.choices:
            try:
                index = self.choices.index(value)
            except ValueError:
                return math.nan
            return float(index) if len(self.choices) > 1 else 0.5
        value = float(value)
        if self.log:
            return math.log10(value) if value > 0 else math.nan
        return value

    def place(self, value: Any) -> float:
        if value is not None and not self.choices and not _is_number(value):
            return math.nan
        return (self._raw(value) - self.low) / (self.high - self.low)

    def ticks(self, values: Sequence[Any]) -> list[tuple[float, str]]:
        """(position, text) of the tick labels: each value when they are few and apart
        enough to read, else round values spread over the axis."""
        if self.choices:
            return [(self.place(c), str(c)) for c in self.choices]
        present = sorted({float(v) for v in values if _is_number(v)
                          and math.isfinite(self.place(v))})  # fmt: skip
        places = [self.place(v) for v in present]
        apart = all(b - a >= MIN_GAP for a, b in zip(places, places[1:], strict=False))
        if 0 < len(present) <= MAX_TICKS and apart:
            return [(t, _short(v)) for t, v in zip(places, present, strict=True)]
        return [(self.place(v), _short(v)) for v in self._round_values()]

    def _round_values(self) -> list[float]:
        """Round values inside the axis: decades on a log axis (when it spans two or more),
        else steps of 1, 2 or 5 times a power of ten, about four of them."""
        low, high = self.low, self.high
        if self.log and high - low >= 1:
            return [10.0**k for k in range(math.ceil(low - 1e-9), math.floor(high + 1e-9) + 1)]
        if self.log:
            low, high = 10**low, 10**high
        raw = (high - low) / 4
        power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
        step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
        first = math.ceil(low / step - 1e-9)
        values = [k * step for k in range(first, math.floor(high / step + 1e-9) + 1)]
        return [float(f"{v:.12g}") for v in values if v > 0 or not self.log]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.number) and not isinstance(value, bool)


def _short(value: float) -> str:
    value = float(value)
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.3g}"
