"""Helpers for node-editor tests: a shown editor over a project, and real mouse gestures."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QUndoStack
from PySide6.QtTest import QTest

from app.catalogue import CATALOGUE
from app.document import Project
from widgets.node_editor import NodeEditor

LEFT = Qt.MouseButton.LeftButton
NO_MODIFIER = Qt.KeyboardModifier.NoModifier


def make_editor(qtbot, project: Project | None = None) -> NodeEditor:
    editor = NodeEditor()
    qtbot.addWidget(editor)
    stack = QUndoStack(editor)
    editor.resize(1000, 700)
    editor.show()
    qtbot.waitExposed(editor)
    editor.activateWindow()
    editor.set_project(project if project is not None else Project(), stack)
    editor.view.resetTransform()
    editor.view.centerOn(300, 100)
    editor.view.setFocus()
    return editor


def add(project: Project, type_name: str, x: float, y: float, name: str = "", **params):
    node = CATALOGUE.new_node(type_name, name=name, position=(x, y), params=params)
    return project.graph.add_node(node)


def chain(project: Project, *nodes):
    for a, b in zip(nodes, nodes[1:], strict=False):
        project.graph.connect(a.id, "out", b.id, b.inputs[0])


def mlp(project: Project):
    """points (Input (N, 2)) → hidden (Dense 2→16) → relu, in a row."""
    a = add(project, "Input", 0, 0, "points", shape=(2,))
    b = add(project, "Dense", 260, 0, "hidden", in_channels=2, out_channels=16)
    c = add(project, "ReLU", 520, 0, "relu")
    chain(project, a, b, c)
    return a, b, c


def port_point(editor: NodeEditor, node_id: str, port: str, output: bool) -> QPoint:
    """Viewport pixel of a port's dot."""
    item = editor.scene.nodes[node_id]
    return editor.view.mapFromScene(item.port_scene_pos(port, output))


def title_point(editor: NodeEditor, node_id: str) -> QPoint:
    """Viewport pixel in a node's title bar (where one grabs it to move it)."""
    item = editor.scene.nodes[node_id]
    return editor.view.mapFromScene(item.mapToScene(QPointF(30.0, 12.0)))


def scene_point(editor: NodeEditor, x: float, y: float) -> QPoint:
    return editor.view.mapFromScene(QPointF(x, y))


def drag(widget, start: QPoint, end: QPoint, button=LEFT, modifiers=NO_MODIFIER, steps=6):
    """Press at `start`, move in steps to `end`, release there (as a hand would)."""
    QTest.mousePress(widget, button, modifiers, start)
    for i in range(1, steps + 1):
        point = start + (end - start) * (i / steps)
        QTest.mouseMove(widget, point)
    QTest.mouseRelease(widget, button, modifiers, end)


def click(widget, point: QPoint, modifiers=NO_MODIFIER) -> None:
    QTest.mouseClick(widget, LEFT, modifiers, point)


def key(editor: NodeEditor, key_, modifiers=NO_MODIFIER) -> None:
    QTest.keyClick(editor.view, key_, modifiers)
