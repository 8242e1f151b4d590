"""The Runs table: a row per run with its metrics, sorted as numbers with missing values last,
the best run marked, a run's changes on hover, renaming in place, the kept-weights box,
and only the rows a history change names redrawn."""

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent, QUndoStack
from PySide6.QtTest import QSignalSpy, QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QToolTip

from app.document import Project, RunsChanged
from app.undo.commands import perform
from app.undo.runs import RenameRunCommand
from tests.widgets.runs_support import record
from widgets.runs_model import BEST_MARK, COLUMN, keep_state
from widgets.runs_table import RunsTable

pytestmark = pytest.mark.gui


@pytest.fixture
def project():
    return Project()


@pytest.fixture
def table(qtbot, project):
    widget = RunsTable()
    qtbot.addWidget(widget)
    widget.resize(1100, 300)
    widget.set_history(project.runs)
    project.events.subscribe(lambda e: isinstance(e, RunsChanged) and widget.follow(e))
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def add_three(project):
    """run 1 (width 32), run 2 (width 64: best), run 3 (width 64, lr 0.1)."""
    runs = [record(width=32, scale=1.0), record(width=64, scale=0.5),
            record(width=64, lr=0.1, scale=0.8)]  # fmt: skip
    for run in runs:
        project.runs.add(run)
    return runs


def text(table, view_row, key):
    return table.proxy.index(view_row, COLUMN[key]).data()


def column_texts(table, key):
    return [text(table, row, key) for row in range(table.proxy.rowCount())]


def cell_point(table, view_row, key) -> QPoint:
    return table.view.visualRect(table.proxy.index(view_row, COLUMN[key])).center()


def click_header(qtbot, table, key):
    header = table.view.horizontalHeader()
    x = header.sectionViewportPosition(COLUMN[key]) + header.sectionSize(COLUMN[key]) // 2
    QTest.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))


def test_a_row_per_run_with_its_figures_and_the_best_marked(table, project):
    add_three(project)
    assert table.proxy.rowCount() == 3 and not table.empty_label.isVisible()
    assert column_texts(table, "name") == ["run 1", BEST_MARK + "run 2", "run 3"]
    assert column_texts(table, "steps") == ["40", "40", "40"]
    assert column_texts(table, "final_accuracy")[0] == "100.0%"  # accuracy as a percent
    assert text(table, 0, "final_loss") == f"{project.runs.records[0].metric('final_loss'):.4g}"
    assert column_texts(table, "changes") == ["first run", "1 change", "1 change"]
    swatch = table.proxy.index(1, COLUMN["name"]).data(Qt.ItemDataRole.DecorationRole)
    assert swatch.name() == project.runs.records[1].colour  # each run in its own colour
    assert len({r.colour for r in project.runs.records}) == 3


def test_columns_no_run_has_a_value_in_are_hidden(table, project):
    project.runs.add(record(validation=False))
    view = table.view
    assert view.isColumnHidden(COLUMN["final_val_loss"])
    assert view.isColumnHidden(COLUMN["best_val_accuracy"])
    assert not view.isColumnHidden(COLUMN["final_loss"])
    project.runs.add(record(validation=True))  # one run with a validation set: shown
    assert not view.isColumnHidden(COLUMN["final_val_loss"])


def test_an_empty_history_says_how_runs_come(table):
    assert table.proxy.rowCount() == 0
    assert table.empty_label.isVisible() and "train" in table.empty_label.text()


def test_sorting_compares_numbers_as_numbers_and_puts_missing_values_last(qtbot, table, project):
    for scale in (10.0, 9.0, 0.5):  # as text "10" would sort before "9"
        project.runs.add(record(scale=scale))
    project.runs.add(record(scale=1.0, validation=False))  # no validation loss
    click_header(qtbot, table, "final_val_loss")
    ascending = column_texts(table, "name")
    assert [n.removeprefix(BEST_MARK) for n in ascending] == ["run 3", "run 2", "run 1", "run 4"]
    click_header(qtbot, table, "final_val_loss")  # again: descending
    descending = [n.removeprefix(BEST_MARK) for n in column_texts(table, "name")]
    assert descending == ["run 1", "run 2", "run 3", "run 4"]  # the missing one still last


def test_hovering_a_run_shows_its_changes(qtbot, table, project):
    add_three(project)
    viewport = table.view.viewport()
    for row, wanted in ((0, "the first run"), (1, "dense2.out_channels 32 → 64"),
                        (2, "learning_rate 0.01 → 0.1")):  # fmt: skip
        pos = cell_point(table, row, "status")
        QApplication.sendEvent(viewport, QHelpEvent(QEvent.Type.ToolTip, pos,
                                                    viewport.mapToGlobal(pos)))  # fmt: skip
        qtbot.waitUntil(lambda w=wanted: w in QToolTip.text())
        assert f"run {row + 1}" in QToolTip.text()
    QToolTip.hideText()
    project.runs.add(record(width=64, lr=0.1, scale=0.8))  # the same as run 3
    assert "no changes" in table.proxy.index(3, 0).data(Qt.ItemDataRole.ToolTipRole)


def test_renaming_in_place_goes_through_the_undo_stack(qtbot, table, project):
    add_three(project)
    stack = QUndoStack()
    table.rename_requested.connect(
        lambda run_id, name: perform(stack, RenameRunCommand(project, run_id, name)))
    point = cell_point(table, 0, "name")
    QTest.mouseClick(table.view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    QTest.mouseDClick(table.view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: table.view.viewport().findChild(QLineEdit) is not None)
    editor = table.view.viewport().findChild(QLineEdit)
    assert editor.text() == "run 1"  # the name alone, without the best run's mark
    editor.selectAll()
    QTest.keyClicks(editor, "wide baseline")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: project.runs.records[0].name == "wide baseline")  # (queued)
    assert project.runs.records[0].named
    assert text(table, 0, "name") == "wide baseline"
    stack.undo()
    assert text(table, 0, "name") == "run 1" and not project.runs.records[0].named


def test_the_kept_box_asks_and_is_only_there_while_weights_are(qtbot, table, project):
    runs = add_three(project)
    # By default the best (run 2) and the last (run 3) hold their weights, for now.
    assert [keep_state(r) for r in runs] == [Qt.CheckState.Unchecked,
                                             Qt.CheckState.PartiallyChecked,
                                             Qt.CheckState.PartiallyChecked]  # fmt: skip
    flags = [table.proxy.index(r, COLUMN["kept"]).flags() for r in range(3)]
    assert not flags[0] & Qt.ItemFlag.ItemIsUserCheckable  # let go: can't be kept now
    assert flags[2] & Qt.ItemFlag.ItemIsUserCheckable
    spy = QSignalSpy(table.keep_requested)
    table.proxy.setData(table.proxy.index(2, COLUMN["kept"]), Qt.CheckState.Checked.value,
                        Qt.ItemDataRole.CheckStateRole)  # fmt: skip
    assert spy.count() == 1 and spy.at(0) == [runs[2].id, True]
    project.runs.set_keep(runs[2].id, True)
    assert text(table, 2, "kept") == "kept" and keep_state(runs[2]) == Qt.CheckState.Checked
    table.proxy.setData(table.proxy.index(2, COLUMN["kept"]), Qt.CheckState.Unchecked.value,
                        Qt.ItemDataRole.CheckStateRole)  # fmt: skip
    assert spy.count() == 2 and spy.at(1) == [runs[2].id, False]
    assert runs[2].kept  # the view asks; the owner lets them go


def test_selecting_rows_reports_the_runs_in_the_history_order(qtbot, table, project):
    runs = add_three(project)
    spy = QSignalSpy(table.selection_changed)
    viewport = table.view.viewport()
    QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, pos=cell_point(table, 2, "steps"))
    QTest.mouseClick(viewport, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ControlModifier,
                     cell_point(table, 0, "steps"))  # fmt: skip
    assert table.selected_ids() == [runs[0].id, runs[2].id]
    assert spy.at(spy.count() - 1) == [[runs[0].id, runs[2].id]]
    assert table.delete_action.isEnabled() and not table.restore_action.isEnabled()
    deleted = QSignalSpy(table.delete_requested)
    table.view.setFocus()
    QTest.keyClick(table.view, Qt.Key.Key_Delete)
    assert deleted.count() == 1 and deleted.at(0) == [[runs[0].id, runs[2].id]]


def test_a_change_redraws_only_the_rows_it_names(qtbot, table, project):
    runs = add_three(project)
    table.select([runs[1].id])
    changed = QSignalSpy(table.model.dataChanged)
    reset = QSignalSpy(table.model.modelReset)
    project.runs.set_colour(runs[0].id, "#123456")
    assert changed.count() == 1
    top, bottom = changed.at(0)[0], changed.at(0)[1]
    assert top.row() == bottom.row() == 0
    project.runs.add(record(scale=2.0))  # a new row, the others kept (and the selection)
    assert reset.count() == 0 and table.proxy.rowCount() == 4
    assert table.selected_ids() == [runs[1].id]
    project.runs.remove([runs[0].id])
    assert reset.count() == 0 and table.proxy.rowCount() == 3
    assert [n.removeprefix(BEST_MARK) for n in column_texts(table, "name")] == [
        "run 2", "run 3", "run 4"]  # fmt: skip
    assert table.selected_ids() == [runs[1].id]


def test_restore_rename_and_colour_act_on_one_run(qtbot, table, project):
    runs = add_three(project)
    asked = {name: QSignalSpy(getattr(table, f"{name}_requested"))
             for name in ("restore", "colour")}  # fmt: skip
    table.select([runs[1].id])
    assert table.restore_action.isEnabled()  # run 2 (the best) holds its weights
    table.restore_action.trigger()
    table.colour_action.trigger()
    assert asked["restore"].at(0) == [runs[1].id] and asked["colour"].at(0) == [runs[1].id]
    table.select([runs[0].id])
    assert not table.restore_action.isEnabled()  # its weights went
    table.select([runs[0].id, runs[1].id])
    assert not table.rename_action.isEnabled() and not table.colour_action.isEnabled()


def test_the_size_cap_box_asks_for_a_new_cap(qtbot, table, project):
    spy = QSignalSpy(table.cap_changed)
    box = table.cap_box
    assert box.value() == project.runs.cap_mb
    box.setFocus()
    box.selectAll()
    QTest.keyClicks(box, "0.5")
    QTest.keyClick(box, Qt.Key.Key_Return)
    assert spy.count() == 1 and spy.at(0) == [0.5]
    table.set_cap(2.0)  # shown without asking
    assert spy.count() == 1 and box.value() == 2.0


def test_the_context_menu_holds_the_runs_actions(table):
    assert table.view.contextMenuPolicy() == Qt.ContextMenuPolicy.ActionsContextMenu
    names = [a.objectName() for a in table.view.actions()]
    assert names == ["runs_restore_action", "runs_delete_action", "runs_rename_action",
                     "runs_colour_action"]  # fmt: skip
