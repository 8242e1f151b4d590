"""How often a live view may redraw: a share of one core for its drawing, the rest for training.

Painting a plot is mostly Python (pyqtgraph), so every millisecond the GUI thread
spends on it is a millisecond the training thread waits for the interpreter (and, on
a 2-core machine, a core its BLAS threads wait for). A view that streams data charges
the CPU time of each redraw — updating its items and painting them — to its budget,
and asks `ready()` before the next one: yes only once that cost is at most `share` of
the time gone by since the last redraw. Cheap views redraw at their timer's full
rate; costly ones space their redraws out instead of slowing training down.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class FrameBudget:
    """Spaces one view's redraws so their CPU time stays within `share` of one core."""

    def __init__(self, share: float) -> None:
        if not 0.0 < share <= 1.0:
            raise ValueError(f"A frame budget is a share of one core in (0, 1], not {share!r}.")
        self.share = share
        self._at: float | None = None  # when the last redraw was allowed
        self._spent = 0.0  # CPU seconds charged since then

    def ready(self) -> bool:
        """True if a redraw now keeps within the budget (and counts from now); else False."""
        now = time.monotonic()
        if self._at is not None and self._spent > self.share * (now - self._at):
            return False
        self._at, self._spent = now, 0.0
        return True

    def charge(self, seconds: float) -> None:
        """Count `seconds` of CPU time spent on this view's drawing."""
        self._spent += seconds

    def timed(self, work: Callable[..., Any], *args: Any) -> Any:
        """Run `work(*args)` on this thread and charge its CPU time; its result."""
        start = time.thread_time()
        try:
            return work(*args)
        finally:
            self.charge(time.thread_time() - start)
