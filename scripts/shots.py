"""What every screenshot script does first: run from the repository, offscreen, with a
throw-away settings folder, and pump the event loop while the window works.

    shots.prepare()                        # before importing the app
    with shots.application() as app:       # a QApplication; settings in a scratch folder
        pump = functools.partial(shots.pump, app)
        pump(0.5)                          # let timers and layouts run half a second
        shots.pump(app, 60, until=lambda: run.status == READY)   # or until a condition
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def prepare() -> None:
    """Offscreen Qt, the repository as the working folder and first on the import path."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))


@contextlib.contextmanager
def application() -> Iterator[object]:
    """The app's QApplication, its settings kept in a folder removed afterwards."""
    from PySide6.QtCore import QSettings

    from app.main import _application

    with tempfile.TemporaryDirectory() as scratch:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, scratch)
        yield _application()


def pump(app, seconds: float, until: Callable[[], bool] | None = None) -> bool:
    """Process events for `seconds`, or until `until()` is true (then True; False if it
    never was). The GUI's timers run as in the app, not as a busy loop."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        if until is not None and until():
            return True
        time.sleep(0.005)
    return until is None
