"""The Inspector on its own: choices by keyboard, composites, and following undo."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtTest import QTest

from app.document import Project
from tests.widgets.canvas_support import mlp
from widgets.inspector import Inspector


def make_inspector(qtbot, project):
    inspector = Inspector()
    qtbot.addWidget(inspector)
    stack = QUndoStack(inspector)
    inspector.set_document(project.graph, stack)
    inspector.show()
    qtbot.waitExposed(inspector)
    return inspector, stack


def test_a_choice_changes_by_keyboard_and_undo_shows_at_once(qtbot):
    project = Project()
    a, b, c = mlp(project)
    inspector, stack = make_inspector(qtbot, project)
    inspector.show_node((), b.id)
    box = inspector.fields["activation"]
    assert box.currentText() == "none"
    box.setFocus()
    QTest.keyClick(box, Qt.Key.Key_Down)
    chosen = project.graph.node(b.id).params["activation"]
    assert chosen is not None and box.currentText() == str(chosen)
    assert stack.undoText() == f"Set hidden.activation to '{chosen}'"
    stack.undo()
    qtbot.waitUntil(lambda: inspector.fields["activation"].currentText() == "none")


def test_a_composite_shows_its_name_only_and_a_deleted_node_clears_the_form(qtbot):
    project = Project()
    a, b, c = mlp(project)
    grouping = project.graph.group([b.id, c.id], definition="Block")
    inspector, stack = make_inspector(qtbot, project)
    inspector.show_node((), grouping.node_id)
    assert list(inspector.fields) == ["name"] and "Block" in inspector.title.text()
    inspector.show_node((grouping.node_id,), b.id)
    assert "out_channels" in inspector.fields
    project.graph.ungroup(grouping.node_id)  # the composite goes: nothing to show
    inspector.show_node((), a.id)
    project.graph.remove_node(a.id)
    qtbot.waitUntil(lambda: inspector.node is None and not inspector.fields)
    assert "Select a node" in inspector.title.text()
