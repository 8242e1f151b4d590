"""The Qt side of a session's bridge: `app.session.bridge.SessionBridge`'s queued events as a
signal on the GUI thread.

The training thread only calls `_wake.emit()` (a queued signal: no Qt object is touched
there); on the GUI thread the bridge drains — applying to the project what the run
handed over — and re-emits each event as `arrived`.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Qt, Signal

from app.session import Progress, TrainingSession
from app.session.bridge import SessionBridge


class QtSessionBridge(QObject):
    """One session's start, pause, resume and end as `arrived`, on the GUI thread.

    `latest` is the newest Progress; `paused` is set while the run waits in a pause.
    """

    arrived = Signal(object)
    _woken = Signal()

    def __init__(self, session: TrainingSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._woken.connect(self._on_woken, Qt.ConnectionType.QueuedConnection)
        self.core = SessionBridge(session, notify=self._woken.emit)

    @property
    def latest(self) -> Progress | None:
        return self.core.latest

    @property
    def paused(self) -> threading.Event:
        return self.core.paused

    def drain(self) -> None:
        """Apply what was handed over and deliver the queued events now (the GUI thread)."""
        for event in self.core.drain():
            self.arrived.emit(event)

    def close(self) -> None:
        self.core.close()

    def _on_woken(self) -> None:
        self.drain()
