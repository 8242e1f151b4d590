"""The Runs dock in the window: every run trained is listed; two runs with a width change in
between show the change on hover and, both selected, two overlaid curves with a legend;
restoring a run's weights and deleting runs are one undo step each; the kept-weights box,
a run's colour and the size cap mark the project unsaved; Runs (CSV) writes the file."""

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QColor, QHelpEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QColorDialog,
    QMessageBox,
    QStyle,
    QStyleOptionViewItem,
    QToolTip,
)

from app.session import READY
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import (
    SPIRAL,
    TIMEOUT,
    open_example,
    select_node,
    shown_window,
    type_into_inspector,
)
from tests.widgets.runs_support import record
from widgets.runs_model import COLUMN

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def open_runs(window, qtbot, **training):
    """The spiral example (with these settings) and the Runs dock shown (View → Runs)."""
    run = open_example(window, qtbot, SPIRAL, **training)
    dock = window.runs.dock
    dock.toggleViewAction().trigger()
    qtbot.waitUntil(lambda: dock.isVisible() and not dock.isFloating(), timeout=TIMEOUT)
    return run


def train(window, qtbot) -> None:
    """Start a run and wait for it to end and be recorded."""
    run, runs = window.run, window.project.runs
    count = len(runs)
    qtbot.waitUntil(lambda: run.session is not None and run.fingerprint() == run._fingerprint,
                    timeout=TIMEOUT)  # fmt: skip
    run.start()
    qtbot.waitUntil(lambda: run.status == READY and len(runs) == count + 1, timeout=TIMEOUT)


def table_of(window):
    return window.runs.view


def cell_point(window, row: int, key: str) -> QPoint:
    table = table_of(window)
    return table.view.visualRect(table.proxy.index(row, COLUMN[key])).center()


def click_row(window, row: int, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    QTest.mouseClick(table_of(window).view.viewport(), Qt.MouseButton.LeftButton, modifier,
                     cell_point(window, row, "steps"))  # fmt: skip


def hover_text(window, qtbot, row: int) -> str:
    viewport = table_of(window).view.viewport()
    pos = cell_point(window, row, "status")
    QApplication.sendEvent(viewport, QHelpEvent(QEvent.Type.ToolTip, pos,
                                                viewport.mapToGlobal(pos)))  # fmt: skip
    qtbot.waitUntil(lambda: QToolTip.isVisible() and bool(QToolTip.text()))
    text = QToolTip.text()
    QToolTip.hideText()
    return text


def click_kept_box(window, row: int) -> None:
    """Click the check box of the Weights column, where it is drawn."""
    table = table_of(window)
    index = table.proxy.index(row, COLUMN["kept"])
    option = QStyleOptionViewItem()
    table.view.initViewItemOption(option)
    option.rect = table.view.visualRect(index)
    option.features |= QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator
    box = table.view.style().subElementRect(
        QStyle.SubElement.SE_ItemViewItemCheckIndicator, option, table.view)  # fmt: skip
    QTest.mouseClick(table.view.viewport(), Qt.MouseButton.LeftButton, pos=box.center())


def values(window, record) -> dict:
    """The project's values of the Parameters `record` kept (not the optimizer's state)."""
    held = window.project.param_values
    return {(node_id, name): held[node_id][name].copy()
            for node_id, arrays in record.weights.items() for name in arrays}  # fmt: skip


def test_two_runs_with_a_wider_layer_show_the_change_and_overlay(window, qtbot):
    open_runs(window, qtbot, epochs=3)
    train(window, qtbot)
    select_node(window, qtbot, "dense2")
    type_into_inspector(window, qtbot, "out_channels", "64")
    assert window.project.graph.node_named("dense2").params["out_channels"] == 64
    train(window, qtbot)
    first, second = window.project.runs.records
    table = table_of(window)
    assert table.proxy.rowCount() == 2
    assert "dense2.out_channels 32 → 64" in hover_text(window, qtbot, 1)
    assert "the first run" in hover_text(window, qtbot, 0)
    click_row(window, 0)
    click_row(window, 1, Qt.KeyboardModifier.ControlModifier)
    overlay = window.runs.overlay
    assert [r.id for r in overlay.runs] == [first.id, second.id]
    assert overlay.names == [first.name, second.name] and overlay.legend.isVisible()
    loss_items = [item for item in window.run.curves.loss_plot.items
                  if any(item is i for pairs in overlay.items.values() for _p, i in pairs)]
    colours = {item.opts["pen"].color().name() for item in loss_items}
    assert colours == {first.colour, second.colour} and first.colour != second.colour
    for done in (first, second):
        loss = overlay.items[done.id][0][1]
        x, _y = loss.getData()
        assert x[0] >= 1 and x[-1] == done.steps  # steps since the run's start
    click_row(window, 1)  # one run alone
    assert overlay.names == [second.name]
    table.view.clearSelection()
    assert overlay.names == [] and not overlay.legend.isVisible()


def test_restoring_a_kept_run_is_one_undo_step_and_refused_while_training(window, qtbot,
                                                                        dialogs):  # fmt: skip
    open_runs(window, qtbot, epochs=2)
    train(window, qtbot)
    click_kept_box(window, 0)  # keep run 1's weights whatever comes
    first = window.project.runs.records[0]
    qtbot.waitUntil(lambda: first.keep is True)
    assert window.unsaved
    trained_first = values(window, first)
    train(window, qtbot)  # run 2 goes on from there
    trained = values(window, first)
    assert first.kept  # neither the last run now, maybe not the best: kept all the same
    assert any(not np.array_equal(trained[k], v) for k, v in trained_first.items())
    stack = window.undo_stack
    depth = stack.count()
    click_row(window, 0)
    window.runs.view.restore_action.trigger()
    assert stack.count() == depth + 1  # one step
    for key, array in trained_first.items():
        np.testing.assert_array_equal(window.project.param_values[key[0]][key[1]], array)
    assert "Restored the weights of run 1" in window.statusBar().currentMessage()
    stack.undo()
    for key, array in trained.items():
        np.testing.assert_array_equal(window.project.param_values[key[0]][key[1]], array)
    window.run.panel.setting_changed.emit("epochs", 1000)  # a long run
    run = window.run
    qtbot.waitUntil(lambda: run.fingerprint() == run._fingerprint, timeout=TIMEOUT)
    depth = stack.count()
    run.start()  # while it trains: refused
    assert run.status != READY
    assert not window.runs.restore(first.id)
    assert "Training is running" in window.statusBar().currentMessage()
    assert stack.count() == depth
    run.stop()


def test_deleting_runs_with_the_delete_key_is_undoable(window, qtbot):
    open_runs(window, qtbot, epochs=1)
    train(window, qtbot)
    train(window, qtbot)
    runs = window.project.runs
    ids = [r.id for r in runs.records]
    click_row(window, 0)
    click_row(window, 1, Qt.KeyboardModifier.ControlModifier)
    assert len(window.runs.overlay.runs) == 2
    table_of(window).view.setFocus()
    QTest.keyClick(table_of(window).view, Qt.Key.Key_Delete)
    assert len(runs) == 0 and table_of(window).proxy.rowCount() == 0
    assert window.runs.overlay.runs == []  # deleted runs are no longer drawn
    window.undo_stack.undo()
    assert [r.id for r in runs.records] == ids and table_of(window).proxy.rowCount() == 2


def add_made_runs(window, count: int) -> list:
    """Runs made by hand (1,000 steps each, about 25 kB): the size cap needs many."""
    runs = [record(steps=1000, scale=1.0 + i / 10) for i in range(count)]
    for run in runs:
        window.project.runs.add(run)
    return runs


def test_a_colour_and_the_kept_box_mark_the_project_unsaved(window, qtbot, monkeypatch,
                                                              dialogs):  # fmt: skip
    open_runs(window, qtbot)
    runs = add_made_runs(window, 3)
    assert not window.unsaved
    monkeypatch.setattr(QColorDialog, "getColor", staticmethod(lambda *a, **k: QColor("#123456")))
    click_row(window, 1)
    window.runs.view.colour_action.trigger()
    assert runs[1].colour == "#123456" and window.unsaved
    overlay = window.runs.overlay  # the run shown is drawn in its new colour
    assert overlay.items[runs[1].id][0][1].opts["pen"].color().name() == "#123456"
    assert runs[2].kept and runs[2].keep is None  # held for now, as the last run
    click_kept_box(window, 2)  # ticked: kept whatever comes
    assert runs[2].keep is True and not dialogs.shown
    dialogs.answer = QMessageBox.StandardButton.No
    click_kept_box(window, 2)  # unticked: asked first, and kept on No
    assert dialogs.shown[-1][1] == "Let the weights go" and runs[2].kept
    dialogs.answer = QMessageBox.StandardButton.Yes
    click_kept_box(window, 2)
    assert not runs[2].kept and runs[2].keep is False
    index = table_of(window).proxy.index(2, COLUMN["kept"])
    assert not index.flags() & Qt.ItemFlag.ItemIsUserCheckable  # gone for good


def test_the_size_cap_asks_before_dropping_runs_and_says_how_many(window, qtbot, dialogs):
    open_runs(window, qtbot)
    runs = window.project.runs
    add_made_runs(window, 8)
    box = table_of(window).cap_box
    dialogs.answer = QMessageBox.StandardButton.No
    assert window.runs.set_cap(0.1) == []
    assert len(runs) == 8 and runs.cap_mb != 0.1 and box.value() == runs.cap_mb
    assert not window.unsaved
    dialogs.answer = QMessageBox.StandardButton.Yes
    box.setFocus()
    box.selectAll()
    QTest.keyClicks(box, "0.1")
    QTest.keyClick(box, Qt.Key.Key_Return)
    assert dialogs.shown[-1][1] == "Drop runs" and runs.cap_mb == 0.1
    assert 0 < len(runs) < 8 and table_of(window).proxy.rowCount() == len(runs)
    dropped = 8 - len(runs)
    assert f"dropped {dropped} run" in window.statusBar().currentMessage()
    assert window.unsaved


def export_runs(window, path):
    window.exports._ask_path = lambda _name: str(path)
    window.exports.actions["runs"].trigger()
    return window.statusBar().currentMessage()


def test_runs_csv_export_writes_every_runs_curve_points(window, qtbot, tmp_path, dialogs):
    open_runs(window, qtbot, epochs=1)
    export_runs(window, tmp_path / "none.csv")  # no runs yet: said, nothing written
    assert dialogs.shown[-1][:2] == ("warning", "Export failed")
    assert "no runs" in dialogs.shown[-1][2] and not (tmp_path / "none.csv").exists()
    train(window, qtbot)
    train(window, qtbot)
    message = export_runs(window, tmp_path / "runs")
    path = tmp_path / "runs.csv"
    assert str(path) in message and "2 runs" in message
    lines = path.read_text().splitlines()
    header = [c.strip() for c in lines[0].split(",")]
    assert header[:4] == ["run", "step", "metric", "value"]
    names = {line.split(",")[0] for line in lines[1:]}
    assert {r.name for r in window.project.runs.records} <= names
    failed = len(dialogs.shown)
    export_runs(window, tmp_path / "missing" / "folder" / "runs.csv")  # can't be written
    assert len(dialogs.shown) == failed + 1 and dialogs.shown[-1][1] == "Export failed"
    assert len(window.project.runs) == 2  # nothing lost


def test_weights_that_no_longer_fit_are_named_and_the_rest_restored(window, qtbot):
    open_runs(window, qtbot)
    project = window.project
    dense1 = project.graph.node_named("dense1").id
    dense2 = project.graph.node_named("dense2").id
    made = record()
    made.weights = {dense1: {"weight": project.param_values[dense1]["weight"] + 1.0},
                    dense2: {"weight": np.zeros((5, 5), np.float32)}}  # another shape
    made.keep = True
    project.runs.add(made)
    wanted = made.weights[dense1]["weight"].copy()
    before = project.param_values[dense2]["weight"].copy()
    click_row(window, 0)
    window.runs.view.restore_action.trigger()
    np.testing.assert_array_equal(project.param_values[dense1]["weight"], wanted)
    np.testing.assert_array_equal(project.param_values[dense2]["weight"], before)
    message = window.statusBar().currentMessage()
    assert "1 did not fit" in message and "(5, 5) kept" in message


def test_another_project_empties_the_table_and_the_overlay(window, qtbot):
    open_runs(window, qtbot)
    add_made_runs(window, 2)
    click_row(window, 0)
    assert window.runs.overlay.runs
    window.project_holder.new()
    assert table_of(window).proxy.rowCount() == 0 and window.runs.overlay.runs == []
    assert window.runs.overlay.names == []
    window.project.runs.add(record())  # the new project's runs are followed
    assert table_of(window).proxy.rowCount() == 1
