"""Pause, resume, stop, Step and learning-rate requests to a run, from any thread.

The thread that trains reads them between two steps (`Trainer`); a pause waits here,
and serves what it is asked for meanwhile (a hand-over of the results, see
app.session.handover) without ending.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class RunControl:
    """Pause, resume, stop and learning-rate requests from other threads, read between steps."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._pause = False
        self._stop = False
        self._steps_allowed = 0  # steps to take while paused (Step)
        self._learning_rate: float | None = None

    def pause(self) -> None:
        with self._changed:
            self._pause = True

    def resume(self) -> None:
        with self._changed:
            self._pause = False
            self._changed.notify_all()

    def stop(self) -> None:
        with self._changed:
            self._stop = True
            self._changed.notify_all()

    def step_once(self) -> None:
        """While paused, let exactly one more step run, then stay paused."""
        with self._changed:
            self._steps_allowed += 1
            self._changed.notify_all()

    def set_learning_rate(self, value: float) -> None:
        with self._changed:
            self._learning_rate = value

    @property
    def paused(self) -> bool:
        return self._pause

    @property
    def stop_requested(self) -> bool:
        return self._stop

    def take_learning_rate(self) -> float | None:
        with self._changed:
            value, self._learning_rate = self._learning_rate, None
            return value

    def wake(self) -> None:
        """Make a pause look again at what it waits for (e.g. a hand-over was asked for)."""
        with self._changed:
            self._changed.notify_all()

    def wait_while_paused(self, on_pause: Callable[[], None], on_resume: Callable[[], None],
                          serve: Callable[[], None] | None = None,
                          wanted: Callable[[], bool] | None = None) -> None:  # fmt: skip
        """Return at once unless paused; else call `on_pause` and wait for resume, stop or Step.

        `on_resume` is called when the pause ends (not for a single Step: it stays paused).
        While it waits, `serve()` is called (on this thread) whenever `wanted()` turns true
        and `wake()` is called: the pause goes on after it.
        """
        with self._changed:
            if not self._pause or self._stop:
                return
            if self._steps_allowed:  # Step pressed while paused: one step, still paused
                self._steps_allowed -= 1
                return
        on_pause()
        asked = wanted if wanted is not None and serve is not None else (lambda: False)
        while True:
            with self._changed:
                self._changed.wait_for(
                    lambda: not self._pause or self._stop or self._steps_allowed > 0 or asked()
                )
                if self._pause and not self._stop and self._steps_allowed:
                    self._steps_allowed -= 1
                    return
                if not self._pause or self._stop:
                    break
            serve()  # asked for while paused: served, and still paused
        on_resume()
