"""Missing values in a data file: empty, NaN or infinite cells, refused or their rows dropped.

A CSV or NPZ data set setting may say what to do with a row (a sample) that has a missing
value in a chosen column: `"missing": "refuse"` (the default) refuses the file, saying how
many rows have one, in which columns and where; `"missing": "drop"` leaves those rows out
and the Dataset's `note` says how many, so nothing is lost unsaid. Other bad values (text
where a number belongs, a number too large for 32 bits) are refused either way: they are
mistakes, not gaps. A classification also needs two classes or more (`check_classes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from app.datasets.dataset import DatasetError

REFUSE, DROP = "refuse", "drop"
MISSING_CHOICES = (REFUSE, DROP)
SHOWN_PLACES = 5  # lines or indices named in a message, the first ones met
_NOT_FINITE = ("nan", "inf", "infinity")


def check_missing(missing: Any) -> str:
    """`missing` if it is one of MISSING_CHOICES, else DatasetError saying what is allowed."""
    if not isinstance(missing, str) or missing not in MISSING_CHOICES:
        raise DatasetError(
            f"The 'missing' option must be 'refuse' (refuse a file with empty, NaN or "
            f"infinite values) or 'drop' (leave those rows out), not {missing!r}."
        )
    return missing


def is_missing(cell: str) -> bool:
    """Whether a stripped CSV cell is a gap: empty, or NaN or infinity spelled out."""
    if not cell:
        return True
    body = cell[1:] if cell[0] in "+-" else cell
    return body.lower() in _NOT_FINITE


class Gaps:
    """The rows (samples) with a missing value: how many, in which columns, the first places.

    `unit` is what a place is ("line" of a CSV file, "index" of an NPZ array); `first` is
    the first gap met, told in full.
    """

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.rows = 0
        self.by_column: dict[str, int] = {}
        self.places: list[int] = []
        self.first = ""

    def __bool__(self) -> bool:
        return self.rows > 0

    def add(self, place: int, columns: Sequence[str], first: str) -> None:
        """One row at `place` with a gap in each of `columns`; `first` tells its first gap."""
        self.rows += 1
        for column in columns:
            self.by_column[column] = self.by_column.get(column, 0) + 1
        if len(self.places) < SHOWN_PLACES:
            self.places.append(place)
        if not self.first:
            self.first = first

    def add_rows(self, places: np.ndarray, column: str, first: str) -> None:
        """Rows at `places` (sorted) with a gap in `column`; counts a row once per column."""
        self.by_column[column] = self.by_column.get(column, 0) + len(places)
        if not self.first and len(places):
            self.first = first

    def set_rows(self, places: np.ndarray) -> None:
        """The rows with any gap (after `add_rows` for each column), sorted."""
        self.rows = len(places)
        self.places = [int(p) for p in places[:SHOWN_PLACES]]

    def summary(self) -> str:
        """'column 2 ('b'): 3, column 4 ('d'): 1; lines 2, 7, 9, …'"""
        columns = ", ".join(f"{name}: {count:,}" for name, count in self.by_column.items())
        places = ", ".join(str(p) for p in self.places)
        more = ", …" if self.rows > len(self.places) else ""
        units = self.unit if len(self.places) == 1 else _plural(self.unit)
        return f"{columns}; {units} {places}{more}"

    def refusal(self, total: int, offer_drop: bool = True) -> str:
        """Why the file is refused (the `missing: 'refuse'` choice)."""
        fix = ", or choose to drop such rows (missing: 'drop')." if offer_drop else (
            ": the rows of a time series can't be left out.")  # fmt: skip
        return (
            f"{self.first} In all, {_rows(self.rows, self.unit)} of {total:,} "
            f"{'has' if self.rows == 1 else 'have'} an empty, NaN or infinite value "
            f"({self.summary()}). Correct the file{fix}"
        )

    def note(self, total: int) -> str:
        """What the Dataset's `note` says after dropping (the `missing: 'drop'` choice)."""
        return (
            f"Dropped {_rows(self.rows, self.unit)} of {total:,} with an empty, NaN or "
            f"infinite value ({self.summary()})."
        )

    def nothing_left(self) -> str:
        return (
            f"Every row has an empty, NaN or infinite value ({self.summary()}); dropping "
            "them leaves nothing to train on. Correct the file or choose other columns."
        )


def check_classes(y: np.ndarray, class_names: Sequence[str], where: str) -> None:
    """Refuse a classification whose labels (in `where`) hold fewer than two classes."""
    present = np.unique(y)
    if len(present) >= 2:
        return
    if len(present) == 0:
        raise DatasetError(f"There are no labels in {where}.")
    name = class_names[int(present[0])]
    raise DatasetError(
        f"Every sample has the same label {name!r} ({where}): a classification needs at "
        "least two classes. Choose another label column, or choose regression if it holds "
        "a number to predict."
    )


def npz_gaps(
    x: np.ndarray, y: np.ndarray, x_key: str, y_key: str, missing: str
) -> tuple[np.ndarray, np.ndarray, str]:
    """(x, y, note) with the samples that have a NaN or infinite value refused (DatasetError
    saying how many and where) or, with `missing` "drop", left out and told in the note."""
    gaps = Gaps("index")
    bad = np.zeros(len(x), dtype=bool)
    for key, array in ((x_key, x), (y_key, y)):
        if array.dtype.kind != "f":
            continue
        rows = ~np.isfinite(array.reshape(len(array), -1)).all(axis=1)
        if rows.any():
            at = np.flatnonzero(rows)
            gaps.add_rows(at, f"'{key}'", f"Array '{key}' has values that are NaN or "
                                          f"infinite (first at index {at[0]}).")  # fmt: skip
            bad |= rows
    if not bad.any():
        return x, y, ""
    gaps.set_rows(np.flatnonzero(bad))
    if missing != DROP:
        raise DatasetError(gaps.refusal(len(x)))
    if bad.all():
        raise DatasetError(gaps.nothing_left())
    keep = ~bad
    return x[keep], y[keep], gaps.note(len(x))


def _rows(count: int, unit: str) -> str:
    word = "sample" if unit == "index" else "row"
    return f"{count:,} {word}{'s' if count != 1 else ''}"


def _plural(unit: str) -> str:
    return "indices" if unit == "index" else f"{unit}s"
