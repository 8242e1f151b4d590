"""A history that never loses the start: the first N rows, a sample of the middle, the last N.

A plot of a long run wants its first steps exactly (where the loss falls fastest and
where a bad start shows), its latest steps exactly, and a fair picture of everything
between. `History` keeps three parts in storage allocated once:

- head: the first `head` rows ever appended, as they came;
- reservoir: `middle` rows drawn uniformly from the rows that left the tail
  (Algorithm R, with a private `random.Random`, so the global generators that make
  training reproducible are never touched);
- tail: the last `head` rows, a ring.

Each row keeps its arrival number, so `snapshot()` gives head, reservoir and tail in the
order the rows came. Plot panes poll `version` and take a `snapshot()`; `state()` and
`restore()` carry a history through a project file, with the arrival count and the
generator, so a reopened run samples on as if it had never stopped.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

HISTORY_STEPS = 2_000  # rows kept exactly at the start, and again at the end
STATE_KEYS = ("history", "arrival", "total", "random", "reservoir")
_MT_WORDS = 625  # a Mersenne Twister state: 624 words and the position in them

__all__ = ["HISTORY_STEPS", "STATE_KEYS", "History", "HistoryColumns", "thin_state"]


class History:
    """The first `head` rows, a uniform sample of `middle` rows between, the last `head` rows.

    `version` grows with every write; `total` counts every row ever appended. One writer
    thread and any readers: a small lock is held for a row copy (writer) or an array copy
    (reader). The storage is allocated at the first append, so a history nobody writes
    to costs nothing.
    """

    def __init__(self, head: int, width: int, *, middle: int | None = None, seed: int = 0,
                 dtype: type = np.float64) -> None:  # fmt: skip
        middle = head if middle is None else middle
        for value, what, least in ((head, "head", 1), (width, "width", 1), (middle, "middle", 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"A history's {what} is a whole number of {least} or more, "
                                 f"not {value!r}.")  # fmt: skip
        self._head_size, self._middle_size, self._width = head, middle, width
        self._dtype = np.dtype(dtype)
        self._seed = seed
        self._random = random.Random(seed)
        self._rows: np.ndarray | None = None  # [head | reservoir | tail ring]
        self._arrival: np.ndarray | None = None  # each stored row's arrival number
        self._version = 0
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._heads = 0  # rows in the head
        self._kept = 0  # rows in the reservoir
        self._tail_start = 0  # oldest row of the tail ring
        self._tails = 0  # rows in the tail
        self._total = 0

    def _allocate(self) -> None:
        self._rows = np.empty((self.capacity, self._width), dtype=self._dtype)
        self._arrival = np.empty(self.capacity, dtype=np.int64)

    # ---- the reader API ------------------------------------------------------------

    @property
    def capacity(self) -> int:
        """The most rows held: head, reservoir and tail."""
        return 2 * self._head_size + self._middle_size

    @property
    def head(self) -> int:
        """Rows kept exactly at the start (and at the end)."""
        return self._head_size

    @property
    def middle(self) -> int:
        """Rows of the uniform sample between start and end."""
        return self._middle_size

    @property
    def width(self) -> int:
        return self._width

    @property
    def version(self) -> int:
        """Increases with every write; compare with the last value seen to skip redraws."""
        return self._version

    @property
    def total(self) -> int:
        """Rows appended since creation (or the last clear), held or not."""
        return self._total

    def __len__(self) -> int:
        return self._heads + self._kept + self._tails

    def snapshot(self) -> np.ndarray:
        """A copy of the rows held in order of arrival: shape (len(self), width)."""
        with self._lock:
            return self._ordered()[0]

    def snapshot_with_version(self) -> tuple[np.ndarray, int]:
        """`snapshot()` and the `version` it shows, taken together."""
        with self._lock:
            return self._ordered()[0], self._version

    def newest(self, n: int) -> np.ndarray:
        """A copy of the last `n` rows held (fewer while fewer are), oldest first; from the
        tail alone when it holds them, so a sparkline does not copy the whole history."""
        with self._lock:
            if n <= self._tails:
                ring = self._tail_start + np.arange(self._tails - n, self._tails)
                return self._rows[self._head_size + self._middle_size + ring % self._head_size]
            return self._ordered()[0][-n:] if n > 0 else self._ordered()[0][:0]

    def last(self) -> np.ndarray | None:
        """A copy of the newest row, or None while empty."""
        with self._lock:
            if self._tails:
                return self._rows[self._tail_slot(self._tails - 1)].copy()
            if self._heads:
                return self._rows[self._heads - 1].copy()
            return None

    # ---- writing ---------------------------------------------------------------------

    def append(self, row: Sequence[float] | np.ndarray) -> None:
        """Write one row (exactly `width` numbers): O(width), whatever the history holds."""
        with self._lock:
            slot = self._slot()  # first: it allocates the storage on the first append
            self._rows[slot] = row
            self._advance()

    def append_values(self, *values: float) -> None:
        """`append` for a row given as separate numbers: `append_values(step, loss, acc)`."""
        if len(values) != self._width:
            raise ValueError(f"A row holds {self._width} numbers, not {len(values)}.")
        with self._lock:
            slot = self._slot()
            row = self._rows[slot]
            for i, value in enumerate(values):
                row[i] = value
            self._advance()

    def extend(self, rows: Iterable[Sequence[float]] | np.ndarray) -> None:
        """Append many rows (oldest first); one version bump for all of them."""
        block = np.asarray(rows, dtype=self._dtype).reshape(-1, self._width)
        if not len(block):
            return
        with self._lock:
            for row in block:
                slot = self._slot()
                self._rows[slot] = row
                self._total += 1
            self._version += 1

    def clear(self) -> None:
        with self._lock:
            self._reset()
            self._version += 1

    def _slot(self) -> int:
        """Where the row arriving now goes (its arrival number already written there).

        A full tail first hands its oldest row to the reservoir (Algorithm R: the k-th
        row of the middle stays with probability middle / (k + 1)).
        """
        if self._rows is None:
            self._allocate()
        number = self._total
        if number < self._head_size:
            slot = self._heads
            self._heads += 1
        elif self._tails < self._head_size:
            slot = self._tail_slot(self._tails)
            self._tails += 1
        else:
            slot = self._tail_slot(0)
            self._tail_start = (self._tail_start + 1) % self._head_size
            self._offer(slot)
        self._arrival[slot] = number
        return slot

    def _offer(self, slot: int) -> None:
        """The row at `slot` leaves the tail: keep it in the reservoir, or let it go."""
        middle = self._middle_size
        if not middle:
            return
        if self._kept < middle:
            into = self._kept
            self._kept += 1
        else:
            seen = int(self._arrival[slot]) - self._head_size + 1  # rows of the middle so far
            into = int(self._random.random() * seen)
            if into >= middle:
                return
        at = self._head_size + into
        self._rows[at] = self._rows[slot]
        self._arrival[at] = self._arrival[slot]

    def _advance(self) -> None:
        self._total += 1
        self._version += 1

    def _tail_slot(self, i: int) -> int:
        return self._head_size + self._middle_size + (self._tail_start + i) % self._head_size

    def _ordered(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, arrival numbers) held, in order of arrival."""
        if self._rows is None or not len(self):
            return np.empty((0, self._width), self._dtype), np.empty(0, np.int64)
        start = self._head_size
        kept = start + np.argsort(self._arrival[start : start + self._kept], kind="stable")
        tail = start + self._middle_size + (self._tail_start + np.arange(self._tails)) % start
        index = np.concatenate((np.arange(self._heads), kept, tail)).astype(np.intp)
        return self._rows[index], self._arrival[index]

    # ---- saving ----------------------------------------------------------------------

    def state(self) -> dict[str, np.ndarray]:
        """What `restore` needs to go on exactly: rows and their arrival numbers (in order
        of arrival), the total, the sampling generator's position and the reservoir's
        arrival numbers in the order it stores them (which row a draw replaces)."""
        with self._lock:
            rows, arrival = self._ordered()
            total = self._total
            words = self._random.getstate()[1]
            start = self._head_size
            order = (self._arrival[start : start + self._kept].copy() if self._rows is not None
                     else np.empty(0, np.int64))  # fmt: skip
        return {
            "history": rows,
            "arrival": arrival,
            "total": np.array(total, dtype=np.int64),
            "random": np.array(words, dtype=np.uint32),
            "reservoir": order,
        }

    def restore(self, state: Mapping[str, np.ndarray]) -> None:
        """Take back what `state()` gave (ValueError, the history unchanged, if it is damaged).

        A state saved with other sizes is fitted: rows among the first `head` arrivals
        go to the head, among the last `head` to the tail, and a uniform sample of the
        others to the reservoir. Without "random" the generator starts from the seed
        and the total; without "reservoir" the reservoir is stored in order of arrival.
        """
        rows, arrival, total, words, order = _checked(state, self._width)
        head, middle = self._head_size, self._middle_size
        at_start = arrival < head
        at_end = ~at_start & (arrival >= total - head)
        between = np.flatnonzero(~at_start & ~at_end)
        generator = random.Random(self._seed + total)
        if words is not None:
            generator.setstate((3, tuple(int(w) for w in words), None))
        if len(between) > middle:  # saved with a larger reservoir: a uniform sample of it
            chosen = generator.sample(range(len(between)), middle)
            between = between[np.sort(np.array(chosen, dtype=np.intp))]
        elif order is not None and len(order) == len(between):  # as it was stored
            place = np.searchsorted(arrival[between], order)
            place[place == len(between)] = 0
            if len(np.unique(order)) != len(order) or (arrival[between][place] != order).any():
                raise ValueError("the saved history's reservoir order does not match its rows")
            between = between[place]
        parts = (np.flatnonzero(at_start), between, np.flatnonzero(at_end))
        with self._lock:
            if self._rows is None:
                self._allocate()
            self._reset()
            for part, offset in zip(parts, (0, head, head + middle), strict=True):
                self._rows[offset : offset + len(part)] = rows[part]
                self._arrival[offset : offset + len(part)] = arrival[part]
            self._heads, self._kept, self._tails = (len(p) for p in parts)
            self._total = total
            self._random = generator
            self._version += 1

    def __repr__(self) -> str:
        return (f"History(head={self._head_size}, middle={self._middle_size}, "
                f"width={self._width}, rows={len(self)}, total={self._total})")  # fmt: skip


class HistoryColumns:
    """Columns `start:stop` of a History, with its reader API: rows stay aligned with the
    other columns' (one append writes them all)."""

    def __init__(self, history: History, start: int, stop: int) -> None:
        if not 0 <= start < stop <= history.width:
            raise ValueError(f"Columns {start}:{stop} are not within a row of {history.width}.")
        self._history = history
        self._columns = slice(start, stop)

    @property
    def capacity(self) -> int:
        return self._history.capacity

    @property
    def width(self) -> int:
        return self._columns.stop - self._columns.start

    @property
    def version(self) -> int:
        return self._history.version

    @property
    def total(self) -> int:
        return self._history.total

    def __len__(self) -> int:
        return len(self._history)

    def snapshot(self) -> np.ndarray:
        return self._history.snapshot()[:, self._columns].copy()

    def snapshot_with_version(self) -> tuple[np.ndarray, int]:
        rows, version = self._history.snapshot_with_version()
        return rows[:, self._columns].copy(), version

    def newest(self, n: int) -> np.ndarray:
        return self._history.newest(n)[:, self._columns]

    def last(self) -> np.ndarray | None:
        row = self._history.last()
        return None if row is None else row[self._columns].copy()


def thin_state(state: Mapping[str, np.ndarray], most: int) -> dict[str, np.ndarray]:
    """`state` (of `History.state()`) with at most `most` rows, for saving a huge history:
    the first and the last third of them as they are, the rows between thinned evenly.
    `restore` takes the result like any state (the rows it lacks are simply not held)."""
    rows, arrival = state["history"], state["arrival"]
    if len(rows) <= most:
        return dict(state)
    edge = most // 3
    between = np.arange(edge, len(rows) - edge)
    between = between[np.linspace(0, len(between) - 1, most - 2 * edge).astype(np.intp)]
    index = np.concatenate((np.arange(edge), between, np.arange(len(rows) - edge, len(rows))))
    thin = {k: v for k, v in state.items() if k != "reservoir"}  # no longer the whole of it
    return {**thin, "history": rows[index], "arrival": arrival[index]}


def _checked(state: Mapping[str, np.ndarray], width: int) -> tuple[
        np.ndarray, np.ndarray, int, np.ndarray | None, np.ndarray | None]:  # fmt: skip
    """(rows, arrival numbers, total, generator words, reservoir order) of a saved state,
    checked; the last two None if it has none."""
    if not isinstance(state, Mapping):
        raise ValueError(f"a saved history is a mapping of arrays, not {type(state).__name__}")
    missing = [k for k in ("history", "arrival", "total") if k not in state]
    if missing:
        raise ValueError(f"the saved history has no {', '.join(missing)}")
    rows, arrival, total = (np.asarray(state[k]) for k in ("history", "arrival", "total"))
    if rows.dtype.kind not in "biuf" or rows.ndim != 2 or rows.shape[1] != width:
        raise ValueError(f"the saved history's rows are {rows.dtype} of shape {rows.shape}, "
                         f"not numbers in rows of {width}")  # fmt: skip
    if arrival.dtype.kind not in "iu" or arrival.shape != (len(rows),):
        raise ValueError(f"the saved history has {arrival.shape} arrival numbers "
                         f"({arrival.dtype}) for {len(rows)} rows")  # fmt: skip
    if total.dtype.kind not in "iu" or total.shape != () or total < 0:
        raise ValueError(f"the saved history's total is not a count ({total!r})")
    total = int(total)
    arrival = arrival.astype(np.int64)
    if len(arrival) and (arrival[0] < 0 or arrival[-1] >= total
                         or (np.diff(arrival) <= 0).any()):  # fmt: skip
        raise ValueError("the saved history's arrival numbers are not rising within its total")
    words = state.get("random")
    if words is not None:
        words = np.asarray(words)
        if (words.dtype.kind not in "iu" or words.shape != (_MT_WORDS,)
                or (words < 0).any() or (words >= 1 << 32).any() or words[-1] > _MT_WORDS - 1):
            raise ValueError("the saved history's random generator state is damaged")
    order = state.get("reservoir")
    if order is not None:
        order = np.asarray(order)
        if order.dtype.kind not in "iu" or order.ndim != 1:
            raise ValueError("the saved history's reservoir order is not a list of numbers")
        order = order.astype(np.int64)
    return rows, arrival, total, words, order
