"""The Data edits table lists every edited sample, follows undo and redo, and its Remove and
Clear all buttons are one undo step each."""

import numpy as np
import pytest
from PySide6.QtCore import Qt

from app.datasets import Dataset
from app.datasets.edits import SETTING
from app.document import Project
from app.undo.commands import DocumentStack
from app.undo.data_edits import exclude, relabel
from widgets.data_edits_table import DataEditsTable

NAMES = ("cat", "dog", "fox")


@pytest.fixture
def stack(qapp):
    stack = DocumentStack()
    yield stack
    stack.deleteLater()


@pytest.fixture
def project():
    return Project(name="p", training={"dataset": "moons"})


@pytest.fixture
def data():
    x = np.arange(12, dtype=np.float32)[:, None]
    return Dataset(x=x, y=np.arange(12) % 3, class_names=NAMES, name="Pets")


@pytest.fixture
def table(qtbot, project, stack):
    view = DataEditsTable(project, stack)
    view.set_class_names(NAMES)
    qtbot.addWidget(view)
    view.show()
    return view


def cells(view):
    t = view.table
    return [(t.item(r, 0).text(), t.item(r, 1).text()) for r in range(t.rowCount())]


def select_row(qtbot, view, row):
    t = view.table
    rect = t.visualItemRect(t.item(row, 0))
    qtbot.mouseClick(t.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_the_table_lists_edits_and_follows_undo(table, project, stack, data):
    assert cells(table) == [] and table.summary.text() == "No data edits."
    assert not table.clear_button.isEnabled() and not table.remove_button.isEnabled()
    relabel(stack, project, data, 4, 0)
    exclude(stack, project, data, 7)
    assert cells(table) == [("sample 4", "relabelled dog → cat"), ("sample 7", "excluded")]
    assert table.summary.text() == "2 samples edited." and table.clear_button.isEnabled()
    stack.undo()
    assert cells(table) == [("sample 4", "relabelled dog → cat")]
    stack.redo()
    assert table.rows == [4, 7]


def test_remove_takes_back_the_selected_edit_as_one_step(qtbot, table, project, stack, data):
    relabel(stack, project, data, 4, 0)
    exclude(stack, project, data, 7)
    select_row(qtbot, table, 1)
    assert table.remove_button.isEnabled()
    count = stack.count()
    qtbot.mouseClick(table.remove_button, Qt.MouseButton.LeftButton)
    assert cells(table) == [("sample 4", "relabelled dog → cat")]
    assert stack.count() == count + 1 and stack.undoText() == "Restore sample 7"
    assert list(project.training[SETTING]["samples"]) == ["4"]
    stack.undo()
    assert table.rows == [4, 7]


def test_clear_all_is_one_undo_step(qtbot, table, project, stack, data):
    for i in (1, 2, 5):
        exclude(stack, project, data, i)
    qtbot.mouseClick(table.clear_button, Qt.MouseButton.LeftButton)
    assert cells(table) == [] and SETTING not in project.training
    assert stack.undoText() == "Clear 3 data edits"
    stack.undo()
    assert table.rows == [1, 2, 5]


def test_a_refusal_is_reported_not_raised(qtbot, table, project, stack, data):
    exclude(stack, project, data, 1)
    stack.lock_reason = "Stop training to change the data edits."
    with qtbot.waitSignal(table.refused) as signal:
        qtbot.mouseClick(table.clear_button, Qt.MouseButton.LeftButton)
    assert signal.args == ["Stop training to change the data edits."]
    assert table.rows == [1]


def test_a_damaged_setting_is_shown_and_can_be_cleared(qtbot, table, project, stack):
    project.set_training(SETTING, {"samples": "???"})
    assert cells(table) == [] and "damaged" in table.summary.text()
    assert table.clear_button.isEnabled()
    qtbot.mouseClick(table.clear_button, Qt.MouseButton.LeftButton)
    assert SETTING not in project.training and table.summary.text() == "No data edits."


def test_the_note_says_which_edits_were_not_applied(table):
    table.set_note("1 data edit was not applied: …")
    assert table.note.isVisible() and table.note.text().startswith("1 data edit")
    table.set_note("")
    assert not table.note.isVisible()


def test_another_project_is_shown_after_opening_it(table, stack, data):
    other = Project(name="q", training={"dataset": "moons"})
    exclude(stack, other, data, 3)
    table.set_project(other, stack)
    assert table.rows == [3]
