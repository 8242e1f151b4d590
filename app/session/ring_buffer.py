"""Fixed-size buffers the training thread writes and plot panes poll: rows in, ordered copies out.

The training thread appends one row per step into storage allocated once; a GUI timer
(~30 Hz) compares `version` with the value it saw last and, only when it changed, takes
a `snapshot()`. No Qt call and no signal per step: the thread boundary is one small lock
held for a row copy (writer) or an array copy (reader).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np


class RingBuffer:
    """The last `capacity` rows of `width` numbers; older rows are overwritten.

    `version` grows by one with every write (append, extend, clear), so a reader that
    remembers it knows whether anything changed. `total` counts every row ever appended.
    """

    def __init__(self, capacity: int, width: int, dtype: type = np.float64) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"A ring buffer holds at least 1 row, not {capacity!r}.")
        if isinstance(width, bool) or not isinstance(width, int) or width < 1:
            raise ValueError(f"A ring buffer row holds at least 1 number, not {width!r}.")
        self._rows = np.full((capacity, width), np.nan, dtype=dtype)
        self._next = 0  # where the next row goes
        self._count = 0  # rows held, up to capacity
        self._total = 0
        self._version = 0
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        return self._rows.shape[0]

    @property
    def width(self) -> int:
        return self._rows.shape[1]

    @property
    def version(self) -> int:
        """Increases with every write; compare with the last value seen to skip redraws."""
        return self._version

    @property
    def total(self) -> int:
        """Rows appended since creation (or the last clear), including overwritten ones."""
        return self._total

    def __len__(self) -> int:
        return self._count

    def append(self, row: Sequence[float] | np.ndarray) -> None:
        """Write one row (exactly `width` numbers) into the preallocated storage."""
        with self._lock:
            self._rows[self._next] = row
            self._advance()

    def append_values(self, *values: float) -> None:
        """`append` for a row given as separate numbers: `append_values(step, loss, acc)`."""
        if len(values) != self.width:
            raise ValueError(f"A row holds {self.width} numbers, not {len(values)}.")
        with self._lock:
            row = self._rows[self._next]
            for i, value in enumerate(values):
                row[i] = value
            self._advance()

    def extend(self, rows: Iterable[Sequence[float]] | np.ndarray) -> None:
        """Append many rows (oldest first), e.g. to refill the buffer from saved history."""
        block = np.asarray(rows, dtype=self._rows.dtype).reshape(-1, self.width)
        with self._lock:
            for row in block[-self.capacity :]:
                self._rows[self._next] = row
                self._next = (self._next + 1) % self.capacity
                self._count = min(self._count + 1, self.capacity)
            self._total += len(block)
            self._version += 1

    def _advance(self) -> None:
        self._next = (self._next + 1) % self.capacity
        if self._count < self.capacity:
            self._count += 1
        self._total += 1
        self._version += 1

    def clear(self) -> None:
        with self._lock:
            self._rows.fill(np.nan)
            self._next = self._count = self._total = 0
            self._version += 1

    def snapshot(self) -> np.ndarray:
        """A copy of the rows held, oldest first: shape (len(self), width)."""
        with self._lock:
            return self._ordered()

    def snapshot_with_version(self) -> tuple[np.ndarray, int]:
        """`snapshot()` and the `version` it shows, taken together."""
        with self._lock:
            return self._ordered(), self._version

    def _ordered(self) -> np.ndarray:
        if self._count < self.capacity:
            return self._rows[: self._count].copy()
        return np.concatenate((self._rows[self._next :], self._rows[: self._next]))

    def last(self) -> np.ndarray | None:
        """A copy of the newest row, or None while empty."""
        with self._lock:
            if not self._count:
                return None
            return self._rows[(self._next - 1) % self.capacity].copy()

    def __repr__(self) -> str:
        return (
            f"RingBuffer(capacity={self.capacity}, width={self.width}, rows={self._count}, "
            f"version={self._version})"
        )
