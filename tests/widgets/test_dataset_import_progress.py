"""Importing a large data file: a progress dialog with Cancel, and a GUI that keeps working."""

import os
import threading
import time

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QLabel, QProgressDialog, QPushButton

from app.datasets import csv_stream, file_import, loading
from widgets.dataset_form import DatasetForm

SPIRALS = {"builtin": "spirals", "options": {"n_samples": 200, "noise": 0.1}}


@pytest.fixture
def form(qtbot, tmp_path, monkeypatch):
    """A form showing Spirals, for which a file of 100 KB is large; what it says is kept."""
    monkeypatch.setattr(loading, "PROGRESS_BYTES", 100_000)
    monkeypatch.setattr(csv_stream, "CHUNK_BYTES", 16_384)  # a report every 16 KB
    form = DatasetForm()
    qtbot.addWidget(form)
    form.show_spec(SPIRALS, tmp_path)
    form.show()
    form.seen_chosen, form.seen_messages = [], []
    form.chosen.connect(form.seen_chosen.append)
    form.message.connect(form.seen_messages.append)
    return form


@pytest.fixture
def slow_disk(monkeypatch):
    """Each chunk read takes 20 ms, as from a slow disk, so a Cancel comes in time."""

    def slowly(load):
        def load_slowly(path, progress, **options):
            def on_progress(done, total):
                progress(done, total)
                time.sleep(0.02)

            return load(path, progress=on_progress, **options)

        return load_slowly

    monkeypatch.setattr(loading, "load_csv", slowly(file_import.load_csv))
    monkeypatch.setattr(loading, "load_npz", slowly(file_import.load_npz))


def write_csv(path, rows=30_000):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(rows, 2)).round(4)
    lines = ["x1,x2,label"] + [f"{a},{b},{i % 2}" for i, (a, b) in enumerate(x.tolist())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


class Watcher:
    """A GUI-thread timer: counts its ticks (the GUI is responsive while they come) and
    notes the progress dialog it sees; with `cancel_at` it clicks Cancel once the bar
    has passed that value."""

    def __init__(self, qtbot, form, cancel_at=None):
        self.qtbot, self.form, self.cancel_at = qtbot, form, cancel_at
        self.ticks, self.values, self.cancelled, self.titles = 0, [], False, set()
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._on_timer_timeout)
        self.timer.start()

    def _on_timer_timeout(self):
        self.ticks += 1
        dialog = self.form.findChild(QProgressDialog, "dataset_progress")
        if dialog is None or not dialog.isVisible():
            return
        self.values.append(dialog.value())
        self.titles.add(dialog.labelText())
        if self.cancel_at is not None and not self.cancelled and dialog.value() > self.cancel_at:
            self.cancelled = True
            button = dialog.findChild(QPushButton)
            assert button.text() == "Cancel"
            self.qtbot.mouseClick(button, Qt.MouseButton.LeftButton)

    def stop(self):
        self.timer.stop()


def import_file(qtbot, form, monkeypatch, path):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    qtbot.mouseClick(form.import_button, Qt.MouseButton.LeftButton)


def no_reading_thread():
    return not any(t.name == "data-import" for t in threading.enumerate())


def test_cancel_in_the_progress_dialog_keeps_the_data_set_and_says_so(
    qtbot, form, monkeypatch, tmp_path, slow_disk
):
    path = write_csv(tmp_path / "big.csv")
    assert path.stat().st_size > 10 * 16_384  # many chunks
    watcher = Watcher(qtbot, form, cancel_at=100)
    started = time.perf_counter()
    import_file(qtbot, form, monkeypatch, path)
    watcher.stop()
    assert watcher.cancelled and watcher.titles == {"Reading big.csv…"}
    assert max(watcher.values) < 1000  # it never got to the end
    assert time.perf_counter() - started < 5
    assert watcher.ticks >= 10  # the GUI thread kept handling events while the file was read
    assert no_reading_thread()
    assert form.seen_chosen == []
    assert form.seen_messages == ["Reading big.csv was cancelled. The data set is unchanged."]
    assert form.fields["dataset"].currentText() == "Spirals"
    assert (
        form.dataset.name == "Spirals" and not form.findChild(QLabel, "dataset_error").isVisible()
    )
    qtbot.waitUntil(lambda: form.findChild(QProgressDialog) is None)  # closed and deleted

    # Importing it again reads it again, to the end this time.
    watcher = Watcher(qtbot, form)
    import_file(qtbot, form, monkeypatch, path)
    watcher.stop()
    assert form.seen_chosen == [{"csv": "big.csv"}]
    assert len(watcher.values) >= 3 and watcher.values == sorted(watcher.values)
    assert form.fields["dataset"].currentText() == "big.csv (imported)"
    summary = form.findChild(QLabel, "dataset_summary").text()
    assert summary.startswith("30000 samples of 2 features · 2 classes")


def test_a_large_npz_and_a_new_label_column_are_read_behind_the_dialog(
    qtbot, form, monkeypatch, tmp_path, slow_disk
):
    path = tmp_path / "big.npz"
    np.savez(path, x=np.zeros((15_000, 3)), y=np.arange(15_000) % 3)
    watcher = Watcher(qtbot, form)
    import_file(qtbot, form, monkeypatch, path)
    watcher.stop()
    assert watcher.titles == {"Reading big.npz…"} and watcher.ticks >= 5
    assert form.seen_chosen == [{"npz": "big.npz"}] and form.dataset.num_classes == 3

    # Choosing another label column reads the CSV again, and can be cancelled too.
    csv_path = write_csv(tmp_path / "points.csv")
    import_file(qtbot, form, monkeypatch, csv_path)
    assert form.seen_chosen[-1] == {"csv": "points.csv"}
    watcher = Watcher(qtbot, form, cancel_at=0)
    column = form.fields["label_column"]
    column.setCurrentIndex(column.findText("x2"))
    column.activated.emit(column.currentIndex())
    watcher.stop()
    assert watcher.cancelled and form.seen_chosen[-1] == {"csv": "points.csv"}
    assert column.currentText() == "label"  # back to the column the data set has
    assert form.seen_messages[-1].startswith("Reading points.csv was cancelled.")
    assert no_reading_thread()


def test_a_small_file_loads_without_a_dialog(qtbot, form, monkeypatch, tmp_path):
    path = write_csv(tmp_path / "small.csv", rows=50)
    watcher = Watcher(qtbot, form)
    import_file(qtbot, form, monkeypatch, path)
    watcher.stop()
    assert watcher.values == [] and form.seen_chosen == [{"csv": "small.csv"}]


def test_a_semicolon_csv_is_imported_with_its_delimiter(qtbot, form, monkeypatch, tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text("a;b;label\n1,5;2;x\n3;4;y\n".replace("1,5", "1.5"), encoding="utf-8")
    import_file(qtbot, form, monkeypatch, path)
    assert form.seen_chosen == [{"csv": "excel.csv", "delimiter": ";"}]
    assert form.dataset.feature_names == ("a", "b")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_is_refused_by_the_form_without_blocking(qtbot, form, monkeypatch, tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    started = time.perf_counter()
    import_file(qtbot, form, monkeypatch, fifo)
    assert time.perf_counter() - started < 5
    error = form.findChild(QLabel, "dataset_error")
    assert error.isVisible() and "is a named pipe (FIFO), not a regular file" in error.text()
    assert form.seen_chosen == [] and form.dataset.name == "Spirals"
