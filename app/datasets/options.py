"""The options of generated data sets: what each is called, its range and what it does.

A built-in set's `make_<key>` takes some of these keyword options; the Run dock's data set
form shows a field for each one the function takes (app.datasets.builtin.BUILTIN), and
`check_whole` / `check_number` refuse a value outside the range in the same words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.datasets.dataset import DatasetError


@dataclass(frozen=True)
class Option:
    """One option of a generated data set."""

    label: str  # as the form names it
    tip: str
    low: float
    high: float
    whole: bool = True  # a whole number (else any number in [low, high])


MAX_LENGTH = 10_000  # a sequence, window or context longer than this is a typo

OPTIONS: dict[str, Option] = {
    "n_samples": Option("Samples", "How many samples to make.", 1, 1_000_000),
    "noise": Option("Noise", "How far the values stray from the clean signal.", 0.0, 10.0,
                    whole=False),
    "seed": Option("Seed", "The same seed makes the same data set.", 0, 2**31 - 1),
    "window": Option("Window", "Time steps each sample shows the network.", 1, MAX_LENGTH),
    "horizon": Option("Horizon", "Time steps after the window to predict.", 1, 1000),
    "length": Option("Length", "Time steps in each sequence.", 2, MAX_LENGTH),
    "context": Option("Context", "Characters the network sees before the one it predicts.",
                      1, MAX_LENGTH),
    "stride": Option("Stride", "Steps from one sample's start to the next one's.", 1,
                     MAX_LENGTH),
}  # fmt: skip


def check_whole(value: Any, name: str) -> int:
    """`value` as an int if it is a whole number in the option's range, else DatasetError."""
    option = OPTIONS[name]
    low, high = int(option.low), int(option.high)
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise DatasetError(
            f"{option.label} must be a whole number from {low:,} to {high:,}, not {value!r}."
        )
    if not low <= value <= high:
        raise DatasetError(
            f"{option.label} must be from {low:,} to {high:,}, not {int(value):,}."
        )
    return int(value)


def check_number(value: Any, name: str) -> float:
    """`value` as a float if it is a number in the option's range, else DatasetError."""
    option = OPTIONS[name]
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    if not ok or not option.low <= value <= option.high:
        raise DatasetError(
            f"{option.label} must be a number from {option.low:g} to {option.high:g}, "
            f"not {value!r}."
        )
    return float(value)
