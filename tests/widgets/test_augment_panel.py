"""The Run dock's Augmentation section: each operation's amount, the seed and Enabled as one
`augmentation` setting per edit; a setting the data can't take refused in place; locked
with the other settings; a preview of one batch before and after."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QTableWidget

from widgets.run_panel import RunPanel

DIGITS = {"builtin": "digits", "options": {"n_samples": 200}}
MOONS = {"builtin": "moons", "options": {"n_samples": 100, "noise": 0.1}}


@pytest.fixture
def panel(qtbot, tmp_path):
    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.set_settings({"dataset": DIGITS}, tmp_path)
    panel.resize(420, 1400)
    panel.show()
    panel.seen, panel.said = [], []
    panel.setting_changed.connect(lambda key, value: panel.seen.append((key, value)))
    panel.message.connect(panel.said.append)
    return panel


def field(panel, key):
    return panel.fields[f"augmentation.{key}"]


def type_into(qtbot, box, text):
    box.setFocus()
    box.lineEdit().selectAll()
    QTest.keyClicks(box.lineEdit(), text)
    QTest.keyClick(box.lineEdit(), Qt.Key.Key_Return)


def test_each_edit_emits_the_whole_setting_once(panel, qtbot):
    type_into(qtbot, field(panel, "flip"), "0.5")
    type_into(qtbot, field(panel, "shift"), "2")
    type_into(qtbot, field(panel, "rotate"), "10")
    type_into(qtbot, field(panel, "seed"), "7")
    type_into(qtbot, field(panel, "seed"), "7")  # the same again: nothing
    qtbot.mouseClick(field(panel, "enabled"), Qt.MouseButton.LeftButton)  # off
    assert panel.seen == [
        ("augmentation", {"flip": 0.5}),
        ("augmentation", {"flip": 0.5, "shift": 2}),
        ("augmentation", {"flip": 0.5, "shift": 2, "rotate": 10.0}),
        ("augmentation", {"flip": 0.5, "shift": 2, "rotate": 10.0, "seed": 7}),
        ("augmentation", {"flip": 0.5, "shift": 2, "rotate": 10.0, "seed": 7, "enabled": False}),
    ]


def test_all_off_again_is_no_setting(panel, qtbot, tmp_path):
    panel.set_settings({"dataset": DIGITS, "augmentation": {"noise": 0.1}}, tmp_path)
    assert field(panel, "noise").value() == pytest.approx(0.1)
    type_into(qtbot, field(panel, "noise"), "0")
    assert panel.seen == [("augmentation", None)]  # the Run dock removes the entry


def test_an_image_operation_on_tabular_data_is_refused_in_place(panel, qtbot, tmp_path):
    panel.set_settings({"dataset": MOONS}, tmp_path)
    type_into(qtbot, field(panel, "rotate"), "10")
    assert panel.seen == []
    error = panel.augment.error
    assert error.isVisible() and "rotate works on images" in error.text()
    assert field(panel, "rotate").styleSheet() and "images" in field(panel, "rotate").toolTip()
    assert panel.said and "rotate" in panel.said[-1]
    type_into(qtbot, field(panel, "noise"), "0.05")  # noise works on any samples
    assert panel.seen == [("augmentation", {"noise": 0.05})]


def test_a_saved_setting_the_data_cant_take_shows_why(panel, tmp_path):
    panel.set_settings({"dataset": MOONS, "augmentation": {"flip": 0.5}}, tmp_path)
    assert panel.augment.error.isVisible() and "flip" in panel.augment.error.text()
    panel.set_settings({"dataset": DIGITS, "augmentation": {"flip": 0.5}}, tmp_path)
    assert not panel.augment.error.isVisible()


def test_locked_while_a_run_is_active(panel):
    panel.set_locked("Settings are locked while a run is active.")
    assert not any(field(panel, k).isEnabled()
                   for k in ("enabled", "flip", "shift", "rotate", "noise", "seed"))
    panel.set_locked(None)
    assert field(panel, "flip").isEnabled()


def test_the_preview_shows_a_batch_before_and_after(panel, qtbot, tmp_path):
    panel.set_settings({"dataset": DIGITS, "augmentation": {"flip": 1.0, "brightness": 0.5}},
                       tmp_path)  # fmt: skip
    qtbot.mouseClick(panel.augment.preview_button, Qt.MouseButton.LeftButton)
    dialog = panel.augment.preview_dialog
    assert dialog is not None and dialog.isVisible()
    shown = dialog.shown
    assert len(dialog.before.pictures) == len(dialog.after.pictures) == 16
    mirrored = shown.before[..., ::-1]  # every one flipped, then brightened
    ratio = shown.after.sum(axis=(1, 2, 3)) / mirrored.sum(axis=(1, 2, 3))
    assert np.allclose(shown.after, mirrored * ratio[:, None, None, None], atol=1e-5)
    before = dialog.before.pictures[0].pixmap().toImage()
    after = dialog.after.pictures[0].pixmap().toImage()
    assert before != after
    assert "flip 100%, brightness ±50%" in dialog.text.text()
    first = shown.indices.copy()
    qtbot.mouseClick(dialog.findChild(type(panel.augment.preview_button), "augment_another"),
                     Qt.MouseButton.LeftButton)  # fmt: skip
    assert not np.array_equal(dialog.shown.indices, first)
    dialog.close()


def test_the_preview_of_tabular_data_shows_the_numbers(panel, qtbot, tmp_path):
    panel.set_settings({"dataset": MOONS, "augmentation": {"noise": 0.5}}, tmp_path)
    qtbot.mouseClick(panel.augment.preview_button, Qt.MouseButton.LeftButton)
    dialog = panel.augment.preview_dialog
    table = dialog.findChild(QTableWidget, "augment_numbers")
    assert table.isVisible() and not dialog.before.isVisible()
    assert table.rowCount() == 16 and table.columnCount() == 2
    shown = dialog.shown
    text = table.item(0, 0).text()
    assert text == f"{shown.before[0, 0]:.4g} → {shown.after[0, 0]:.4g}"
    assert not np.allclose(shown.before, shown.after)
    dialog.close()
