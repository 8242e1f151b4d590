"""A data file or image folder read on a worker thread, shown with a progress dialog and
Cancel while the GUI thread polls the reading (no Qt call crosses the thread) and keeps
handling events (app.datasets.loading.Reading)."""

from __future__ import annotations

from PySide6.QtCore import QEventLoop, Qt, QTimer
from PySide6.QtWidgets import QProgressDialog, QWidget

from app.datasets.loading import Reading

POLL_MS = 50  # how often the GUI thread looks at a reading's progress


def show_reading(parent: QWidget, reading: Reading) -> None:
    """Show a large file's reading with Cancel until it ends; the GUI goes on meanwhile."""
    dialog = QProgressDialog(f"Reading {reading.path.name}…", "Cancel", 0, 1000, parent)
    dialog.setObjectName("dataset_progress")
    dialog.setWindowTitle("Import data")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    dialog.setMinimumDuration(0)
    dialog.canceled.connect(reading.cancel)
    loop = QEventLoop(parent)
    timer = QTimer(parent)
    timer.setInterval(POLL_MS)

    def on_timer_timeout() -> None:
        dialog.setValue(reading.permille())
        if reading.finished.is_set():
            loop.quit()

    timer.timeout.connect(on_timer_timeout)
    try:
        dialog.show()
        timer.start()
        if not reading.finished.is_set():
            loop.exec()
    finally:
        timer.stop()
        timer.deleteLater()
        loop.deleteLater()
        dialog.blockSignals(True)  # closing emits canceled(); the loader ends the reading
        dialog.close()
        dialog.deleteLater()
