"""One session's events for the thread that owns the project (the GUI thread), Qt-free.

The training thread emits every event on itself. `SessionBridge` listens there and does
as little as it can: the newest `Progress` goes into an attribute (one write per step,
read by a timer), `EpochEnded` is left to the ring buffers, and a run's start, pause,
resume and end are queued, with `notify()` called so the owner knows to look (the Qt
adapter in app.gui emits a queued signal; a script may pass nothing and poll). The
owner calls `drain()`: it applies to the project what the run handed over up to the
events it returns (see app.session.handover), so a listener that hears "finished" finds
the project already holding the run.

    bridge = SessionBridge(session, notify=wake_the_gui)
    for event in bridge.drain():    # on the owner's thread
        ...
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from app.session.events import EpochEnded, Progress, TrainingPaused
from app.session.session import TrainingSession


class SessionBridge:
    """The few events of `session` that matter to its owner, queued for its thread.

    `latest` is the newest Progress (written by the training thread); `paused` is set
    while the run waits in a pause (and cleared when the owner asks for a Step from it).
    """

    def __init__(self, session: TrainingSession,
                 notify: Callable[[], None] | None = None) -> None:  # fmt: skip
        self.session = session
        self.latest: Progress | None = None
        self.paused = threading.Event()
        self._notify = notify
        self._queued: deque[object] = deque()  # the training thread appends, the owner pops
        self._subscription = session.events.subscribe(self._on_session_event)

    def _on_session_event(self, event: object) -> None:  # the training thread
        if isinstance(event, Progress):
            self.latest = event  # one attribute write per step, nothing else
            return
        if isinstance(event, EpochEnded):
            return  # the curves read epochs from the ring buffer
        if isinstance(event, TrainingPaused):
            self.paused.set()
        else:
            self.paused.clear()
        self._queued.append(event)
        if self._notify is not None:
            self._notify()

    def drain(self) -> list[object]:
        """The events queued since the last call, oldest first, with what the run handed
        over before them applied to the project. On the project's own thread."""
        events = []
        while self._queued:
            events.append(self._queued.popleft())
        self.session.apply_results()  # each result is put before the event it precedes
        return events

    def close(self) -> None:
        self._subscription.unsubscribe()
        self._notify = None
