"""The main window as the GUI benchmarks open it: offscreen, with its settings in a
throw-away folder (the user's are neither read nor written), a shipped example open
and a run long enough to outlast any measurement ready to Start."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

LONG_RUN = 1_000_000  # epochs: the run outlasts the measurement


def training_window(example: Path, width: int, height: int):
    """(app, window) with `example` open as an untitled copy and its session compiled."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    settings_dir = tempfile.mkdtemp(prefix="cellwright-bench-")
    for fmt in (QSettings.Format.IniFormat, QSettings.Format.NativeFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, settings_dir)
    app = QApplication.instance() or QApplication([])
    from app.gui.main_window import MainWindow

    window = MainWindow(remember_layout=False)
    window._confirm_discard_changes = lambda: True  # nothing to save from a benchmark
    window.resize(width, height)
    window.show()
    assert window.open_example(example)
    run = window.run
    run.panel.setting_changed.emit("epochs", LONG_RUN)
    app.processEvents()
    run._on_refresh_timer_timeout()  # the session for the long run, now rather than in 300 ms
    return app, window
