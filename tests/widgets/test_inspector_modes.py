"""The Inspector with modes and impossible values: only the hyper-parameters that apply show,
the form lays out again when the mode changes, and a value the spec or the shape rule
refuses shows its reason under the field it was typed into."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel

from app.catalogue import CATALOGUE
from app.catalogue.docs import param_help
from app.document import Project
from tests.widgets.canvas_support import add, chain, make_editor
from widgets.inspector import Inspector

CONV = CATALOGUE.get("Conv2d")


@pytest.fixture
def shown(qtbot):
    """A canvas and an Inspector on one project: images (N, 8, 6, 6) → conv (8 → 8)."""
    project = Project()
    images = add(project, "Input", 0, 0, "images", shape=(8, 6, 6))
    conv = add(project, "Conv2d", 260, 0, "conv", in_channels=8, out_channels=8)
    chain(project, images, conv)
    editor = make_editor(qtbot, project)
    inspector = Inspector()
    qtbot.addWidget(inspector)
    inspector.resize(320, 700)
    inspector.set_document(project.graph, editor.stack)
    inspector.show()
    qtbot.waitExposed(inspector)
    inspector.activateWindow()
    inspector.messages, inspector.cleared_messages = [], []
    inspector.message.connect(inspector.messages.append)
    inspector.cleared.connect(inspector.cleared_messages.append)
    inspector.show_node((), conv.id)
    return project, editor, inspector, conv


def rows(inspector):
    """The field labels in form order, as shown."""
    form, found = inspector.form, []
    for row in range(form.rowCount()):
        label = form.itemAt(row, form.ItemRole.LabelRole)
        if label is not None and isinstance(label.widget(), QLabel):
            found.append(label.widget().text())
    return found


def note(inspector, key):
    """The reason shown under a field ('' when its row is hidden)."""
    label = inspector.notes[key]
    return label.text() if inspector.form.isRowVisible(label) else ""


def type_into(field, text):
    field.setFocus()
    field.selectAll()
    QTest.keyClicks(field, text)
    QTest.keyClick(field, Qt.Key.Key_Return)


def choose(qtbot, inspector, key, steps):
    """Move a drop-down by keyboard, one step at a time, as a hand does."""
    for step in steps:
        box = inspector.fields[key]
        box.setFocus()
        before = box.currentText()
        QTest.keyClick(box, step)
        qtbot.waitUntil(lambda b=before: inspector.fields[key].currentText() != b)


def test_padding_shows_only_in_pad_mode_and_the_form_follows_the_mode(shown, qtbot):
    project, editor, inspector, conv = shown
    stack = editor.stack
    assert rows(inspector) == ["Name", "in_channels", "out_channels", "kernel_size", "stride",
                               "pad_mode", "dilation", "group", "has_bias"]
    choose(qtbot, inspector, "pad_mode", [Qt.Key.Key_Down, Qt.Key.Key_Down])  # valid, pad
    assert project.graph.node(conv.id).params["pad_mode"] == "pad"
    qtbot.waitUntil(lambda: "padding" in inspector.fields)
    assert rows(inspector)[5:8] == ["pad_mode", "padding", "dilation"]
    assert inspector.fields["pad_mode"].hasFocus()  # the rebuilt form kept the focus
    type_into(inspector.fields["padding"], "1")
    assert project.graph.node(conv.id).params["padding"] == 1
    steps = stack.count()
    choose(qtbot, inspector, "pad_mode", [Qt.Key.Key_Up])  # back to 'valid'
    qtbot.waitUntil(lambda: "padding" not in inspector.fields)
    # Hidden, padding must not break the node: it went back to 0 in the same undo step.
    params = project.graph.node(conv.id).params
    assert (params["pad_mode"], params["padding"]) == ("valid", 0)
    assert stack.count() == steps + 1
    assert stack.undoText() == "Set conv.pad_mode to 'valid', conv.padding to 0"
    assert not editor.scene.nodes[conv.id].error
    stack.undo()
    qtbot.waitUntil(lambda: "padding" in inspector.fields)
    assert inspector.fields["padding"].text() == "1"


def test_every_field_and_its_label_carry_the_docs(shown):
    project, editor, inspector, conv = shown
    for key in ("in_channels", "stride", "pad_mode", "group", "has_bias"):
        help_text = param_help(CONV.param(key), CONV)
        assert inspector.fields[key].toolTip() == help_text
        assert inspector.form.labelForField(inspector.fields[key]).toolTip() == help_text
    assert inspector.fields["stride"].toolTip() == "Step between windows. Default: 1."


def test_a_negative_size_is_refused_with_its_reason_under_the_field(shown, qtbot):
    project, editor, inspector, conv = shown
    field = inspector.fields["out_channels"]
    type_into(field, "-3")
    why = "conv: out_channels must be a whole number ≥ 1. -3 is less than 1."
    assert project.graph.node(conv.id).params["out_channels"] == 8 and editor.stack.count() == 0
    assert field.text() == "-3"  # what was typed stays, to be put right
    assert note(inspector, "out_channels") == why and inspector.messages == [why]
    assert "ef5350" in field.styleSheet() and field.toolTip() == why
    assert inspector.notes["out_channels"].isVisible()
    type_into(field, "4")
    assert project.graph.node(conv.id).params["out_channels"] == 4
    assert note(inspector, "out_channels") == "" and inspector.cleared_messages == [why]


def test_a_group_that_does_not_divide_the_channels_is_kept_marked_and_explained(shown, qtbot):
    project, editor, inspector, conv = shown
    type_into(inspector.fields["group"], "3")
    assert project.graph.node(conv.id).params["group"] == 3  # taken: it can be put right
    why = ("Conv2d: in_channels (8) and out_channels (8) must both be divisible by "
           "group (3).")
    qtbot.waitUntil(lambda: editor.scene.nodes[conv.id].error == why)  # the node is marked
    assert inspector.messages == [f"conv: {why}"]
    qtbot.waitUntil(lambda: note(inspector, "group") == f"⚠ {why}")  # where it was typed
    assert inspector.notes["group"].isVisible() and not inspector.problem.isVisible()
    assert "ef5350" in inspector.fields["group"].styleSheet()
    assert note(inspector, "in_channels") == note(inspector, "out_channels") == ""
    for key in ("in_channels", "out_channels", "group"):  # every field it names is flagged
        label = inspector.form.labelForField(inspector.fields[key])
        assert label.text() == f"{key} ⚠" and label.toolTip() == why
    assert inspector.form.labelForField(inspector.fields["stride"]).text() == "stride"

    inspector.show_node((), None)  # shown again later: under the first field it names
    inspector.show_node((), conv.id)
    assert note(inspector, "in_channels") == f"⚠ {why}" and note(inspector, "group") == ""

    type_into(inspector.fields["group"], "2")
    qtbot.waitUntil(lambda: not editor.scene.nodes[conv.id].error)
    qtbot.waitUntil(lambda: note(inspector, "in_channels") == "")
    assert all(note(inspector, key) == "" for key in inspector.notes)
    assert inspector.form.labelForField(inspector.fields["group"]).text() == "group"
    assert inspector.fields["group"].styleSheet() == ""


def test_a_problem_no_field_names_shows_above_the_form_and_follows_other_edits(shown, qtbot):
    project, editor, inspector, conv = shown
    images = project.graph.node_named("images")
    project.graph.set_params(conv.id, {"pad_mode": "valid"})
    project.graph.set_params(images.id, {"shape": (8, 2, 2)})  # smaller than the kernel
    qtbot.waitUntil(lambda: inspector.problem.isVisible())
    error = editor.scene.nodes[conv.id].error
    assert error == "Conv2d: the window of 3 doesn't fit a size of 2."
    assert inspector.problem.text() == f"⚠ {error}"
    assert all(note(inspector, key) == "" for key in inspector.notes)
    project.graph.set_params(images.id, {"shape": (8, 6, 6)})
    qtbot.waitUntil(lambda: not inspector.problem.isVisible())
