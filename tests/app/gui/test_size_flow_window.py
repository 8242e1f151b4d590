"""In the window: a width typed in the Inspector flows to the next layer, one Ctrl+Z takes
it all back, and a size the user typed stays and is marked when it no longer fits."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import SPIRAL, select_node, shown_window, type_into_inspector
from tests.widgets.canvas_support import scene_point

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)






def size(window, node_id: str, key: str):
    return window.project.graph.node(node_id).params[key]


def test_a_width_typed_in_the_inspector_flows_and_one_ctrl_z_restores_both(window, qtbot):
    assert window.open_example(SPIRAL)
    dense1 = select_node(window, qtbot, "dense1")
    dense2 = next(n.id for n in window.project.graph.nodes.values() if n.name == "dense2")
    assert (size(window, dense1, "out_channels"), size(window, dense2, "in_channels")) == (32, 32)

    type_into_inspector(window, qtbot, "out_channels", "16")
    assert size(window, dense1, "out_channels") == 16
    assert size(window, dense2, "in_channels") == 16  # never typed: it followed
    editor = window.workbench.editor
    qtbot.waitUntil(lambda: editor.scene.nodes[dense2].error == "")
    assert window.undo_action.text() == "&Undo Set dense1.out_channels to 16 (dense2 follows)"

    # One Ctrl+Z on the canvas (as a user would: click an empty spot, press the keys).
    QTest.mouseClick(editor.view.viewport(), LEFT, pos=scene_point(editor, -400, -400))
    QTest.keyClick(editor.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert size(window, dense1, "out_channels") == 32
    assert size(window, dense2, "in_channels") == 32


def test_a_typed_size_stays_and_is_marked_with_the_reason(window, qtbot):
    assert window.open_example(SPIRAL)
    editor, inspector = window.workbench.editor, window.workbench.inspector
    dense2 = select_node(window, qtbot, "dense2")
    assert "⚠" not in inspector.form.labelForField(inspector.fields["in_channels"]).text()
    type_into_inspector(window, qtbot, "in_channels", "16")  # typed: does not fit the 32 arriving
    assert window.project.graph.node(dense2).typed == {"in_channels"}

    dense1 = select_node(window, qtbot, "dense1")
    type_into_inspector(window, qtbot, "out_channels", "16")  # now it fits
    type_into_inspector(window, qtbot, "out_channels", "8")
    assert size(window, dense1, "out_channels") == 8
    assert size(window, dense2, "in_channels") == 16  # typed: it stays
    qtbot.waitUntil(lambda: "expects 16" in editor.scene.nodes[dense2].error)  # on the node

    select_node(window, qtbot, dense_name := "dense2")
    qtbot.waitUntil(lambda: not inspector._rebuild_timer.isActive())
    field = inspector.fields["in_channels"]
    label = inspector.form.labelForField(field)
    assert inspector.node.name == dense_name
    assert label.text() == "in_channels ⚠"
    assert "You typed 16" in field.toolTip() and "(N, 8)" in field.toolTip()
    assert "e0a030" in field.styleSheet()
    assert inspector.fields["out_channels"].styleSheet() == ""  # only the size that misfits

    type_into_inspector(window, qtbot, "in_channels", "")  # cleared: it follows the input again
    assert size(window, dense2, "in_channels") == 8
    assert window.project.graph.node(dense2).typed == frozenset()
    qtbot.waitUntil(lambda: "⚠" not in inspector.form.labelForField(
        inspector.fields["in_channels"]).text())
