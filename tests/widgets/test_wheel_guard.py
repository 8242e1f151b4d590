"""The mouse wheel never edits a field the user has not clicked into: over an unfocused
drop-down or spin box it scrolls the panel around it (Inspector, Run dock, data set form,
Preferences) or passes on (Parameter window); a focused field still takes it.

Every wheel here is a real one, sent through the window system as a mouse sends it
(QTest.wheelEvent), so it lands on whatever widget is under the pointer and an ignored
event travels up to the parents as it does for a user.
"""

import re
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QDialogButtonBox,
    QDockWidget,
    QMessageBox,
    QScrollArea,
)

from app.document import Project
from app.gui.main_window import MainWindow
from tests.app.gui.dialogs import record_dialogs
from tests.widgets.canvas_support import mlp, title_point
from widgets.form_fields import WheelWhenFocused
from widgets.inspector import Inspector
from widgets.node_editor import NodeEditor
from widgets.plots.hook_controls import DEFAULT_SETTINGS, PaneBar, StatusLine
from widgets.preferences_dialog import Preferences, PreferencesDialog
from widgets.reinit_dialog import ReinitDialog
from widgets.run_panel import RunPanel
from widgets.tensor_editor import TensorEditor

SPIRALS = {
    "dataset": {"builtin": "spirals", "options": {"n_samples": 400, "noise": 0.05}},
    "optimizer": "SGD", "learning_rate": 0.02, "batch_size": 32, "epochs": 100,
    "validation_fraction": 0.2, "seed": 0,
}  # fmt: skip


def wheel_over(field, notches: int) -> None:
    """Turn the wheel `notches` (negative: towards the user) over the middle of `field`."""
    top = field.window()
    centre = field.mapTo(top, field.rect().center())
    QTest.wheelEvent(top.windowHandle(), QPointF(centre), QPoint(0, 120 * notches))


def show_active(qtbot, widget, size) -> None:
    widget.resize(*size)
    with qtbot.waitActive(widget):  # focus moves only inside the active window
        widget.show()
        widget.activateWindow()


def wheel_scrolls_past(qtbot, area: QScrollArea, field) -> None:
    """A wheel over the unfocused `field` moves `area`'s scroll bar (which has room to)."""
    assert not field.hasFocus()
    area.ensureWidgetVisible(field)
    bar = area.verticalScrollBar()
    assert bar.maximum() > 0, "the panel must be shorter than its fields for this test"
    before = bar.value()
    wheel_over(field, -1 if before < bar.maximum() else 1)
    assert bar.value() != before, f"{field.objectName()}: the panel did not scroll"
    assert not field.hasFocus()  # the wheel alone gives no focus


def value_of(field):
    if isinstance(field, QComboBox):
        return field.currentIndex(), field.currentText()
    if isinstance(field, QAbstractSpinBox):
        return field.value()
    return field.text()


def wheel_fields(root) -> list:
    """The drop-downs and spin boxes a user sees in `root` (not those of hidden menus)."""
    found = root.findChildren(QComboBox) + root.findChildren(QAbstractSpinBox)
    return [field for field in found if field.isVisibleTo(root)]


# ---- the Inspector ---------------------------------------------------------------------------


@pytest.fixture
def inspector(qtbot):
    """The Inspector showing a Dense node, in a short scroll area as in the main window."""
    project = Project()
    _, dense, _ = mlp(project)
    inspector = Inspector()
    stack = QUndoStack(inspector)
    inspector.set_document(project.graph, stack)
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setWidget(inspector)
    qtbot.addWidget(area)
    show_active(qtbot, area, (280, 140))
    inspector.show_node((), dense.id)
    qtbot.waitUntil(lambda: area.verticalScrollBar().maximum() > 0)  # laid out: it scrolls
    inspector.area, inspector.stack = area, stack
    inspector.params = lambda: dict(project.graph.node(dense.id).params)
    return inspector


@pytest.mark.parametrize("name", ["has_bias", "activation", "in_channels", "out_channels"])
def test_a_wheel_over_an_inspector_field_scrolls_and_edits_nothing(qtbot, inspector, name):
    params = inspector.params()
    field = inspector.fields[name]
    shown = value_of(field)
    for _ in range(3):
        wheel_scrolls_past(qtbot, inspector.area, field)
    assert value_of(field) == shown and inspector.params() == params
    assert inspector.stack.count() == 0  # no undo step


def test_the_inspector_fields_are_all_wheel_safe_and_a_focused_one_takes_the_wheel(
    qtbot, inspector
):
    assert all(isinstance(f, WheelWhenFocused) for f in wheel_fields(inspector))
    box = inspector.fields["has_bias"]
    assert box.currentText() == "true"
    inspector.area.ensureWidgetVisible(box)
    box.setFocus()
    wheel_over(box, -1)
    assert inspector.params()["has_bias"] is False
    assert inspector.stack.count() == 1


def test_in_the_window_a_wheel_over_the_inspector_of_a_selected_dense_node_edits_nothing(
    qtbot, monkeypatch
):
    record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)  # if it fails: no prompt
    window = MainWindow(remember_layout=False)
    qtbot.addWidget(window)
    show_active(qtbot, window, (1280, 800))
    editor, inspector = window.findChild(NodeEditor), window.findChild(Inspector)
    area = window.findChild(QScrollArea, "inspector_scroll")
    _, dense, _ = mlp(window.project)
    editor.set_project(window.project, window.undo_stack)
    QTest.mouseClick(editor.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=title_point(editor, dense.id))  # fmt: skip
    assert inspector.node.id == dense.id
    dock = window.findChild(QDockWidget, "inspector_dock")
    window.resizeDocks([dock], [160], Qt.Orientation.Vertical)  # short: the Inspector scrolls
    qtbot.waitUntil(lambda: area.verticalScrollBar().maximum() > 0)
    params = dict(window.project.graph.node(dense.id).params)
    undo_steps = window.undo_stack.count()
    for name in ("has_bias", "activation", "out_channels"):
        field = inspector.fields[name]
        shown = value_of(field)
        for _ in range(3):
            wheel_scrolls_past(qtbot, area, field)
        assert value_of(field) == shown
    assert dict(window.project.graph.node(dense.id).params) == params
    assert window.undo_stack.count() == undo_steps and not window.isWindowModified()


# ---- the Run dock and its data set form ------------------------------------------------------


@pytest.fixture
def panel(qtbot):
    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.changes = []
    panel.setting_changed.connect(lambda key, value: panel.changes.append((key, value)))
    panel.set_settings(SPIRALS, None)
    show_active(qtbot, panel, (320, 260))
    panel.area = panel.findChild(QScrollArea)
    return panel


@pytest.mark.parametrize("key", ["dataset", "samples", "noise", "loss", "optimizer",
                                 "optimizer_options.momentum", "epochs",
                                 "validation_fraction", "history_steps"])  # fmt: skip
def test_a_wheel_over_a_run_dock_field_scrolls_and_changes_no_setting(qtbot, panel, key):
    field = panel.fields[key]
    shown = value_of(field)
    for _ in range(3):
        wheel_scrolls_past(qtbot, panel.area, field)
    assert value_of(field) == shown and panel.changes == []


def test_a_wheel_over_the_csv_columns_of_the_data_form_changes_nothing(qtbot, panel, tmp_path):
    (tmp_path / "points.csv").write_text("a,b,label\n1,2,0\n3,4,1\n5,6,0\n", encoding="utf-8")
    panel.set_settings({**SPIRALS, "dataset": {"csv": "points.csv"}}, tmp_path)
    data = panel.data
    data.chosen.connect(lambda spec: panel.changes.append(("dataset", spec)))
    assert data.dataset is not None and data.dataset.feature_names == ("a", "b")
    for key in ("label_column", "task", "dataset"):
        field = data.fields[key]
        shown = value_of(field)
        wheel_scrolls_past(qtbot, panel.area, field)
        assert value_of(field) == shown
    assert panel.changes == [] and data.dataset.feature_names == ("a", "b")


def test_the_run_dock_fields_are_all_wheel_safe_and_a_focused_one_takes_the_wheel(qtbot, panel):
    for optimizer in ("SGD", "Momentum", "Adam", "AdamW"):
        panel.set_settings({**SPIRALS, "optimizer": optimizer}, None)
        assert all(isinstance(f, WheelWhenFocused) for f in wheel_fields(panel)), optimizer
    noise = panel.fields["noise"]
    panel.area.ensureWidgetVisible(noise)
    noise.setFocus()
    wheel_over(noise, 1)
    assert panel.changes and panel.changes[-1][0] == "dataset"
    assert panel.changes[-1][1]["options"]["noise"] == pytest.approx(0.06)


# ---- Preferences ------------------------------------------------------------------------------


@pytest.fixture
def preferences(qtbot):
    dialog = PreferencesDialog(Preferences(autosave_seconds=60, recent_files=10))
    qtbot.addWidget(dialog)
    return dialog


def test_preferences_open_with_every_field_in_sight(qtbot, preferences):
    preferences.adjustSize()
    show_active(qtbot, preferences, (preferences.width(), preferences.height()))
    assert preferences.scroll.verticalScrollBar().maximum() == 0


def test_a_refused_data_folder_s_reason_shows_in_full_below_the_fields(
    qtbot, preferences, tmp_path
):
    preferences.adjustSize()
    show_active(qtbot, preferences, (preferences.width(), preferences.height()))
    qtbot.keyClicks(preferences.data_folder, str(tmp_path / "no such folder"))
    ok = preferences.buttons.button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
    qtbot.wait(20)  # laid out again
    error = preferences.error
    assert error.isVisible() and "does not exist" in error.text() and error.height() > 20
    assert error.visibleRegion().boundingRect().height() == error.height()  # not scrolled off


@pytest.mark.parametrize("name", ["autosave", "recent", "theme"])
def test_a_wheel_over_a_preference_scrolls_and_changes_nothing(qtbot, preferences, name):
    show_active(qtbot, preferences, (460, 90))  # shorter than its fields
    field = getattr(preferences, name)
    for _ in range(2):
        wheel_scrolls_past(qtbot, preferences.scroll, field)
    assert preferences.preferences() == Preferences(autosave_seconds=60, recent_files=10)


def test_a_focused_preference_takes_the_wheel(qtbot, preferences):
    show_active(qtbot, preferences, (460, 300))
    assert all(isinstance(f, WheelWhenFocused) for f in wheel_fields(preferences))
    preferences.recent.setFocus()
    wheel_over(preferences.recent, 1)
    assert preferences.preferences().recent_files == 11


# ---- the Parameter window and its Re-initialize dialog ---------------------------------------


class WheelSeen(QObject):
    """Counts the wheel events that reach a widget (passed on from a child, here)."""

    def __init__(self, widget):
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, watched, event):  # noqa: N802
        if event.type() == QEvent.Type.Wheel:
            self.count += 1
        return False


def test_a_wheel_over_the_parameter_window_s_spin_boxes_changes_no_slice_and_no_seed(qtbot):
    editor = TensorEditor()
    qtbot.addWidget(editor)
    array = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    editor.set_tensor(array, "conv.weight")
    show_active(qtbot, editor, (700, 400))
    assert all(isinstance(f, WheelWhenFocused) for f in wheel_fields(editor))
    seen = WheelSeen(editor)
    axis, seed = editor.axis_spins[0], editor.seed_spin
    corner = editor.model.data(editor.model.index(0, 0))
    for spin in (axis, seed):
        wheel_over(spin, -1)
        wheel_over(spin, 1)
    assert axis.value() == 0 and seed.value() == 0
    assert editor.model.data(editor.model.index(0, 0)) == corner  # the same slice
    assert seen.count == 4  # each wheel went on to the window around them
    axis.setFocus()
    wheel_over(axis, 1)
    assert axis.value() == 1 and editor.model.data(editor.model.index(0, 0)) != corner


def test_a_wheel_over_the_reinitialize_dialog_changes_nothing_until_clicked(qtbot):
    dialog = ReinitDialog("dense1.weight", seed=5)
    qtbot.addWidget(dialog)
    show_active(qtbot, dialog, (400, 300))
    assert all(isinstance(f, WheelWhenFocused) for f in wheel_fields(dialog))
    chosen = dialog.read()
    for field in (dialog.kind, dialog.seed, dialog.fields["mode"]):
        wheel_over(field, -1)
        wheel_over(field, -1)
    assert dialog.read() == chosen
    dialog.seed.setFocus()
    wheel_over(dialog.seed, 1)
    assert dialog.read()[2] == 6


# ---- a hook pane's controls --------------------------------------------------------------------


def test_a_wheel_over_a_hook_pane_s_view_and_selectors_changes_nothing_until_clicked(qtbot):
    bar = PaneBar(("histogram", "stats", "heatmap"), dict(DEFAULT_SETTINGS))
    line = StatusLine(dict(DEFAULT_SETTINGS))
    for widget in (bar, line):
        qtbot.addWidget(widget)
    show_active(qtbot, bar, (500, 40))
    line.sample_spin.show()
    show_active(qtbot, line, (500, 40))
    for field in (bar.view_combo, line.sample_spin):
        assert isinstance(field, WheelWhenFocused)
        shown = value_of(field)
        wheel_over(field, -1)
        assert value_of(field) == shown
    line.sample_spin.setFocus()
    wheel_over(line.sample_spin, 1)
    assert line.sample_spin.value() == 1


def test_every_drop_down_and_spin_box_of_the_views_is_a_wheel_safe_one():
    """The one rule, for views written later too: make them from widgets.form_fields."""
    root = Path(__file__).parents[2]
    raw = re.compile(r"\b(QComboBox|QSpinBox|QDoubleSpinBox|QAbstractSpinBox)\(")
    subclass = re.compile(r"^class \w+\(([^)]*\b(QComboBox|QSpinBox|QDoubleSpinBox)\b[^)]*)\)",
                          re.MULTILINE)  # fmt: skip
    found = []
    for path in sorted([*root.glob("widgets/**/*.py"), *root.glob("app/gui/**/*.py")]):
        if path.name == "form_fields.py":
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(root)}: {m.group(0)}" for m in raw.finditer(text)]
        found += [f"{path.relative_to(root)}: {m.group(0)}" for m in subclass.finditer(text)
                  if "WheelWhenFocused" not in m.group(1)]  # fmt: skip
    assert found == []
