"""Data set → Import Image Folder…: choose a folder or a path,label CSV and its options, see
thumbnails per class, the counts, the shape and the skipped files, read on a worker with
Cancel; OK gives the form one new setting, read once. Also the form's other data options:
missing values of a CSV, a built-in's standardise box, and a gone or changed folder."""

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QPlainTextEdit, QProgressDialog, QPushButton

from app.datasets import loading
from app.datasets.images import load_images
from tests.widgets.image_folders import write_shapes
from widgets.dataset_form import DatasetForm

SPIRALS = {"builtin": "spirals", "options": {"n_samples": 200, "noise": 0.1}}


@pytest.fixture
def form(qtbot, tmp_path):
    form = DatasetForm()
    qtbot.addWidget(form)
    form.show_spec(SPIRALS, tmp_path)
    form.show()
    form.seen_chosen, form.seen_messages = [], []
    form.chosen.connect(form.seen_chosen.append)
    form.message.connect(form.seen_messages.append)
    return form


@pytest.fixture
def reads(monkeypatch):
    """Every image reading, by folder name."""
    seen = []

    def counting(path, **options):
        seen.append(path.name)
        return load_images(path, **options)

    monkeypatch.setattr(loading, "load_images", counting)
    return seen


def open_dialog(form, qtbot):
    qtbot.mouseClick(form.image_button, Qt.MouseButton.LeftButton)
    dialog = form.image_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def choose_folder(dialog, qtbot, monkeypatch, path, button="choose_image_folder"):
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(path))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    qtbot.mouseClick(dialog.findChild(type(dialog.ok), button), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.ok.isEnabled() or dialog.error.isVisible(), timeout=10_000)


def type_into(qtbot, box, text):
    box.lineEdit().selectAll()
    QTest.keyClicks(box.lineEdit(), text)
    QTest.keyClick(box.lineEdit(), Qt.Key.Key_Return)


def test_the_preview_shows_each_class_its_count_the_shape_and_the_skipped_files(
        form, qtbot, monkeypatch, tmp_path, reads):
    photos = write_shapes(tmp_path / "photos", per_class=10)
    dialog = open_dialog(form, qtbot)
    assert not dialog.ok.isEnabled()  # nothing chosen yet
    choose_folder(dialog, qtbot, monkeypatch, photos)
    assert "30 images of 3×32×32" in dialog.summary.text()
    assert "3 classes" in dialog.summary.text()
    headings = [h.text() for h in dialog.grid.headings]
    assert headings == ["circle (10)", "square (10)", "triangle (10)"]
    assert len(dialog.grid.pictures) == 3 * 8  # 8 thumbnails a class
    assert all(p.pixmap() is not None and not p.pixmap().isNull() for p in dialog.grid.pictures)
    assert dialog.skipped.isVisible() and dialog.skipped.text().startswith("1 file skipped")
    qtbot.mouseClick(dialog.details, Qt.MouseButton.LeftButton)
    listing = dialog.details_dialog.findChild(QPlainTextEdit, "skipped_files")
    assert listing.toPlainText().startswith("circle/broken.png: ")
    dialog.details_dialog.close()
    # Options: 16 high, 20 wide, grey, cropped: read again and shown.
    type_into(qtbot, dialog.height_box, "16")
    qtbot.waitUntil(lambda: "1×" not in dialog.summary.text() and "3×16×32" in
                    dialog.summary.text(), timeout=10_000)
    type_into(qtbot, dialog.width_box, "20")
    dialog.color.setCurrentIndex(dialog.color.findData("gray"))
    dialog.color.activated.emit(dialog.color.currentIndex())
    dialog.fit.setCurrentIndex(dialog.fit.findData("crop"))
    dialog.fit.activated.emit(dialog.fit.currentIndex())
    qtbot.waitUntil(lambda: "30 images of 1×16×20" in dialog.summary.text(), timeout=10_000)
    read_before_ok = len(reads)
    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    assert len(form.seen_chosen) == 1
    spec = form.seen_chosen[0]
    assert spec["images"] == "photos"  # inside the project's folder: relative
    assert (spec["size"], spec["fit"], spec["color"]) == ([16, 20], "crop", "gray")
    assert len(spec["digest"]) > 8
    assert len(reads) == read_before_ok  # the form took the dialog's reading
    assert form.dataset.sample_shape == (1, 16, 20) and len(form.dataset) == 30
    assert "1 file could not be used" in form.summary.text()
    assert form.fields["dataset"].currentText() == "photos (imported)"


def test_a_path_label_csv_and_a_separate_validation_folder(form, qtbot, monkeypatch, tmp_path):
    write_shapes(tmp_path / "pool", per_class=4, broken=False)
    lines = ["path,label"] + [f"pool/{k}/{i}.png,{k}" for k in ("circle", "square")
                              for i in range(4)]  # fmt: skip
    (tmp_path / "labels.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    held = write_shapes(tmp_path / "held", per_class=2, broken=False)
    dialog = open_dialog(form, qtbot)
    choose_folder(dialog, qtbot, monkeypatch, tmp_path / "labels.csv", "choose_image_csv")
    assert "8 images" in dialog.summary.text() and "2 classes" in dialog.summary.text()
    choose_folder(dialog, qtbot, monkeypatch, held, "choose_validation_folder")
    # the triangle class of the validation folder has no training image: skipped, said so
    assert "4 of them from the validation folder" in dialog.summary.text()
    assert dialog.skipped.text().startswith("2 files skipped")
    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    spec = form.seen_chosen[-1]
    assert spec["images"] == "labels.csv" and spec["validation"] == "held"


def test_a_single_class_is_refused_with_the_reason_and_ok_stays_off(form, qtbot, monkeypatch,
                                                                     tmp_path):
    one = write_shapes(tmp_path / "one", per_class=3, broken=False,
                       classes={"circle": (200, 0, 0)})  # fmt: skip
    dialog = open_dialog(form, qtbot)
    choose_folder(dialog, qtbot, monkeypatch, one)
    assert dialog.error.isVisible() and "one class only" in dialog.error.text()
    assert not dialog.ok.isEnabled()
    qtbot.mouseClick(dialog.buttons.button(dialog.buttons.StandardButton.Cancel),
                     Qt.MouseButton.LeftButton)  # fmt: skip
    assert form.seen_chosen == [] and form.fields["dataset"].currentData() == "spirals"


def test_reading_shows_progress_and_cancel_keeps_the_data_set(form, qtbot, monkeypatch,
                                                              tmp_path):
    photos = write_shapes(tmp_path / "photos", per_class=8)

    def slowly(path, progress, **options):
        def on_progress(done, total):
            progress(done, total)
            time.sleep(0.02)

        return load_images(path, progress=on_progress, **options, cache=None)

    monkeypatch.setattr(loading, "load_images", slowly)
    dialog = open_dialog(form, qtbot)
    seen = []

    def watch():
        progress = dialog.findChild(QProgressDialog, "dataset_progress")
        if progress is not None and progress.isVisible() and not seen:
            seen.append(progress.labelText())
            progress.findChild(QPushButton).click()  # its Cancel button

    timer = QTimer()
    timer.timeout.connect(watch)
    timer.start(5)
    try:
        choose_folder(dialog, qtbot, monkeypatch, photos)
    finally:
        timer.stop()
    assert seen == ["Reading photos…"]
    assert "cancel" in dialog.error.text().lower() and not dialog.ok.isEnabled()
    dialog.reject()
    assert form.seen_chosen == [] and form.fields["dataset"].currentData() == "spirals"


def test_a_gone_or_changed_folder_is_said_and_the_form_still_shows(form, qtbot, tmp_path):
    photos = write_shapes(tmp_path / "photos", per_class=3)
    spec = {"images": "photos", "size": [16, 16], "fit": "resize", "color": "rgb"}
    digest = load_images(photos, size=16).digest
    form.show_spec({**spec, "digest": digest}, tmp_path)
    assert not form.status.isVisible() and len(form.dataset) == 9
    (photos / "square" / "extra.png").write_bytes((photos / "square" / "0.png").read_bytes())
    form.show_spec({**spec, "digest": digest}, tmp_path)
    assert form.status.isVisible() and "has changed" in form.status.text()
    assert len(form.dataset) == 10  # read as it is now
    form.show_spec({**spec, "images": "elsewhere", "digest": digest}, tmp_path)
    assert form.status.isVisible() and "elsewhere" in form.status.text()
    assert form.error.isVisible() and form.dataset is None


def test_missing_values_refuse_or_drop_rows(form, qtbot, tmp_path):
    rows = ["a,b,label"] + [f"{i},{i % 3},{i % 2}" for i in range(20)] + ["1,,0", "nan,2,1"]
    (tmp_path / "gaps.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    form.show_spec({"csv": "gaps.csv", "label_column": "label"}, tmp_path)
    missing = form.fields["missing"]
    assert missing.isVisible() and missing.currentData() == "refuse"
    assert form.error.isVisible() and form.dataset is None
    missing.setCurrentIndex(missing.findData("drop"))
    missing.activated.emit(missing.currentIndex())
    assert form.seen_chosen[-1] == {"csv": "gaps.csv", "label_column": "label",
                                    "missing": "drop"}  # fmt: skip
    assert len(form.dataset) == 20 and "2" in form.summary.text()
    form.show_spec(SPIRALS, tmp_path)
    assert not missing.isVisible()


def test_a_builtin_that_takes_standardise_gets_its_box(form, qtbot, tmp_path):
    box = form.fields["standardise"]
    assert not box.isVisible()  # spirals take none
    form.show_spec({"builtin": "iris", "options": {}}, tmp_path)
    assert box.isVisible() and box.isChecked()
    scaled = form.dataset.x.copy()
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    assert form.seen_chosen[-1] == {"builtin": "iris", "options": {"standardise": False}}
    raw = form.dataset.x
    assert abs(float(scaled.mean())) < 1e-6 and float(raw.mean()) > 1  # cm, not scaled
    assert not np.allclose(raw, scaled)
