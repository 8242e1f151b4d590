"""The Inspector: choices by keyboard, composites, following undo, refusing what is typed."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from app.catalogue import CATALOGUE
from app.document import Project, editing
from app.gui.main_window import MainWindow
from tests.widgets.canvas_support import mlp, title_point
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
    grouping = editing.group(project.graph, [b.id, c.id], definition="Block")
    inspector, stack = make_inspector(qtbot, project)
    inspector.show_node((), grouping.node_id)
    assert list(inspector.fields) == ["name"] and "Block" in inspector.title.text()
    inspector.show_node((grouping.node_id,), b.id)
    assert "out_channels" in inspector.fields
    editing.ungroup(project.graph, grouping.node_id)  # the composite goes: nothing to show
    inspector.show_node((), a.id)
    project.graph.remove_node(a.id)
    qtbot.waitUntil(lambda: inspector.node is None and not inspector.fields)
    assert "Select a node" in inspector.title.text()


def type_into(field, text):
    """What a hand does: select what the field holds, type over it, press Enter."""
    field.setFocus()
    field.selectAll()
    QTest.keyClicks(field, text)
    QTest.keyClick(field, Qt.Key.Key_Return)


def recorder(signal):
    seen = []
    signal.connect(seen.append)
    return seen


def test_a_refused_shape_changes_nothing_and_a_valid_one_clears_the_refusal(qtbot):
    project = Project()
    a, b, c = mlp(project)
    inspector, stack = make_inspector(qtbot, project)
    messages, cleared = recorder(inspector.message), recorder(inspector.cleared)
    inspector.show_node((), a.id)
    field = inspector.fields["shape"]
    assert field.text() == "(2,)"

    for junk, why in (("(5, x)", "'x' is not a whole number"),
                      ("(5,x,7)", "'x' is not a whole number"),
                      ("5x", "a number is missing after 'x'")):
        type_into(field, junk)
        assert project.graph.node(a.id).params["shape"] == (2,) and stack.count() == 0
        assert "ef5350" in field.styleSheet()
        assert messages[-1].startswith("points: shape must be a list of sizes ≥ 1")
        assert why in messages[-1].lower() and field.toolTip() == messages[-1]
    assert len(messages) == 3 and not cleared

    type_into(field, "(5, 7)")
    assert project.graph.node(a.id).params["shape"] == (5, 7)
    assert stack.undoText() == "Set points.shape to (5, 7) (hidden follows)"
    assert cleared == [messages[-1]] and len(messages) == 3  # the last refusal, once
    assert field.styleSheet() == "" and field.toolTip().startswith("Shape of one sample")
    qtbot.waitUntil(lambda: inspector.fields["shape"].text() == "(5, 7)")
    type_into(inspector.fields["shape"], "(3, 3)")  # no refusal left to clear
    assert cleared == [messages[-1]] and project.graph.node(a.id).params["shape"] == (3, 3)


def test_an_int_field_refuses_what_is_not_a_whole_number(qtbot):
    project = Project()
    a, b, c = mlp(project)
    inspector, stack = make_inspector(qtbot, project)
    messages, cleared = recorder(inspector.message), recorder(inspector.cleared)
    inspector.show_node((), b.id)
    field = inspector.fields["out_channels"]
    for junk, why in (("2.5", "'2.5' is not a whole number"),
                      ("abc", "'abc' is not a whole number"),
                      ("1_000", "'1_000' is not a whole number"),
                      ("0", "0 is less than 1")):
        type_into(field, junk)
        assert project.graph.node(b.id).params["out_channels"] == 16 and stack.count() == 0
        assert "ef5350" in field.styleSheet()
        assert messages[-1] == f"hidden: out_channels must be a whole number ≥ 1. {why}."
    type_into(field, "16")  # the value it already has: nothing to do, but it is valid
    assert stack.count() == 0 and field.styleSheet() == "" and cleared == [messages[-1]]


def test_a_float_field_refuses_nan_and_junk(qtbot):
    project = Project()
    a, b, c = mlp(project)
    dropout = project.graph.add_node(CATALOGUE.new_node("Dropout", name="drop"))
    inspector, stack = make_inspector(qtbot, project)
    messages = recorder(inspector.message)
    inspector.show_node((), dropout.id)
    field = inspector.fields["p"]
    before = project.graph.node(dropout.id).params["p"]
    for junk in ("nan", "0,5", "1.5", "abc"):
        type_into(field, junk)
        assert project.graph.node(dropout.id).params["p"] == before and stack.count() == 0
    assert [m.split(". ", 1)[1] for m in messages] == [
        "'nan' is not a finite number.", "'0,5' is not a number.", "1.5 is more than 1.",
        "'abc' is not a number."]
    type_into(field, "0.25")
    assert project.graph.node(dropout.id).params["p"] == 0.25


def test_a_refused_name_is_cleared_by_typing_the_name_back(qtbot):
    project = Project()
    a, b, c = mlp(project)
    inspector, stack = make_inspector(qtbot, project)
    messages, cleared = recorder(inspector.message), recorder(inspector.cleared)
    inspector.show_node((), b.id)
    name = inspector.fields["name"]
    type_into(name, "relu")  # taken
    assert project.graph.node(b.id).name == "hidden" and "ef5350" in name.styleSheet()
    type_into(name, "hidden")
    assert name.styleSheet() == "" and cleared == messages and stack.count() == 0


def test_showing_another_node_forgets_the_refusals(qtbot):
    project = Project()
    a, b, c = mlp(project)
    inspector, stack = make_inspector(qtbot, project)
    cleared = recorder(inspector.cleared)
    inspector.show_node((), b.id)
    type_into(inspector.fields["out_channels"], "x")
    inspector.show_node((), b.id)  # the same node again: still remembered
    inspector.show_node((), a.id)
    assert inspector.fields["shape"].styleSheet() == ""
    inspector.show_node((), b.id)
    field = inspector.fields["out_channels"]
    assert field.styleSheet() == "" and field.text() == "16"
    type_into(field, "8")
    assert project.graph.node(b.id).params["out_channels"] == 8 and not cleared


def test_the_status_bar_loses_a_refusal_once_the_value_is_valid(qtbot, monkeypatch):
    discard = staticmethod(lambda *args, **kwargs: QMessageBox.StandardButton.Discard)
    monkeypatch.setattr(QMessageBox, "warning", discard)  # closing the edited window
    window = MainWindow(remember_layout=False)
    qtbot.addWidget(window)
    window.resize(1300, 800)
    window.show()
    qtbot.waitExposed(window)
    editor, inspector = window.workbench.editor, window.workbench.inspector
    a, b, c = mlp(window.project)
    editor.set_project(window.project, window.undo_stack)
    QTest.mouseClick(editor.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=title_point(editor, a.id))
    assert inspector.node.id == a.id
    status = window.statusBar()

    type_into(inspector.fields["shape"], "(5, x)")
    assert window.project.graph.node(a.id).params["shape"] == (2,)
    assert status.currentMessage() == ("points: shape must be a list of sizes ≥ 1 such as "
                                       "(1, 28, 28). 'x' is not a whole number.")
    type_into(inspector.fields["shape"], "(5, 7)")
    assert window.project.graph.node(a.id).params["shape"] == (5, 7)
    assert status.currentMessage() == ""

    # A newer message is not the refusal's to clear.
    qtbot.waitUntil(lambda: inspector.fields["shape"].text() == "(5, 7)")
    type_into(inspector.fields["shape"], "5,,7")
    assert "A number is missing between two commas." in status.currentMessage()
    window.show_message("Saved.", 8000)
    type_into(inspector.fields["shape"], "5, 7,")  # (5, 7) again: valid, nothing to do
    assert status.currentMessage() == "Saved." and window.undo_stack.count() == 1
    assert inspector.fields["shape"].styleSheet() == ""
