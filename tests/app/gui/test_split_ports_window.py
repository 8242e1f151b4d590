"""In the window: output_num typed in the Inspector gives a Split node that many output ports;
a connection from a port that goes is taken away, and one Ctrl+Z brings both back."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from app.catalogue import CATALOGUE
from app.compiler import infer_shapes
from app.document import Graph, Project
from app.io.project_file import save_project
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import select_node, shown_window, type_into_inspector
from tests.widgets.canvas_support import scene_point

LEFT = Qt.MouseButton.LeftButton


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def split_project(path) -> None:
    """points (6, 4) → split (axis 1, 3 parts) → part0/1/2 (Rescale), saved at `path`."""
    graph = Graph()

    def add(type_name, name, position, **params):
        return graph.add_node(CATALOGUE.new_node(type_name, name=name, position=position,
                                                 params=params))

    points = add("Input", "points", (0, 0), shape=(6, 4))
    split = add("Split", "split", (220, 0), axis=1, output_num=3)
    graph.connect(points.id, "out", split.id, "in")
    for i in range(3):
        part = add("Rescale", f"part{i}", (460, 120 * i - 120))
        graph.connect(split.id, f"out{i}", part.id, "in")
    save_project(Project(graph=graph, name="split"), path)


def test_output_num_typed_in_the_inspector_changes_the_ports_and_undo_restores(window, qtbot,
                                                                               tmp_path):
    split_project(tmp_path / "split.cwproj")
    assert window.open_project(tmp_path / "split.cwproj", interactive=False)
    editor = window.workbench.editor
    split = select_node(window, qtbot, "split")
    graph = window.project.graph
    gone = graph.edges_from(split, "out2")[0].id
    assert editor.scene.nodes[split].outputs == ("out0", "out1", "out2")

    type_into_inspector(window, qtbot, "output_num", "2")
    assert graph.node(split).outputs == ("out0", "out1")
    assert gone not in graph.edges and len(graph.edges_from(split)) == 2
    qtbot.waitUntil(lambda: editor.scene.nodes[split].outputs == ("out0", "out1"))
    assert gone not in editor.scene.edges
    part2 = graph.node_named("part2").id
    qtbot.waitUntil(lambda: "not connected" in editor.scene.nodes[part2].error)
    assert window.undo_action.text() == (
        "&Undo Set split.output_num to 2 (1 connection from out2 removed)")
    assert infer_shapes(graph).output_shapes[split] == {"out0": ("N", 3, 4),
                                                         "out1": ("N", 3, 4)}

    # One Ctrl+Z on the canvas, as a user would: click an empty spot, press the keys.
    QTest.mouseClick(editor.view.viewport(), LEFT, pos=scene_point(editor, -400, -400))
    QTest.keyClick(editor.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert graph.node(split).outputs == ("out0", "out1", "out2")
    assert graph.node(split).params["output_num"] == 3
    assert graph.edge(gone).src_port == "out2"
    qtbot.waitUntil(lambda: editor.scene.nodes[split].outputs == ("out0", "out1", "out2"))
    assert gone in editor.scene.edges
    qtbot.waitUntil(lambda: editor.scene.nodes[part2].error == "")

    select_node(window, qtbot, "split")
    type_into_inspector(window, qtbot, "output_num", "4")  # more parts: every edge stays
    assert graph.node(split).outputs == ("out0", "out1", "out2", "out3")
    assert len(graph.edges_from(split)) == 3
    qtbot.waitUntil(lambda: "doesn't divide into 4" in editor.scene.nodes[split].error)
