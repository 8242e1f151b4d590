"""Copy/paste, group/ungroup, composites and navigation on the canvas, by keyboard and mouse."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QCursor, QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.document import COMPOSITE, Project
from tests.widgets.canvas_support import (
    click,
    drag,
    key,
    make_editor,
    mlp,
    scene_point,
    title_point,
)

CTRL = Qt.KeyboardModifier.ControlModifier
SHIFT = Qt.KeyboardModifier.ShiftModifier


@pytest.fixture
def project():
    return Project()


@pytest.fixture
def editor(qtbot, project):
    return make_editor(qtbot, project)


def test_copy_paste_keeps_hyper_parameters_and_parameter_values(editor, project):
    a, b, c = mlp(project)
    weight = np.arange(32, dtype=np.float32).reshape(16, 2)
    project.param_values[b.id] = {"weight": weight}
    editor.scene.select([a.id, b.id])
    key(editor, Qt.Key.Key_C, CTRL)
    QCursor.setPos(editor.view.viewport().mapToGlobal(scene_point(editor, 100, 300)))
    key(editor, Qt.Key.Key_V, CTRL)

    assert len(project.graph.nodes) == 5 and len(project.graph.edges) == 3
    new = [project.graph.node(i) for i in editor.selected_node_ids()]
    assert [n.name for n in new] == ["points1", "hidden1"]
    assert dict(new[1].params) == dict(b.params)
    assert np.array_equal(project.param_values[new[1].id]["weight"], weight)
    assert editor.stack.undoText() == "Paste 2 nodes"
    editor.stack.undo()
    assert len(project.graph.nodes) == 3 and new[1].id not in project.param_values
    editor.stack.redo()
    assert np.array_equal(project.param_values[new[1].id]["weight"], weight)


def test_cut_then_paste_and_duplicate(editor, project):
    a, b, c = mlp(project)
    editor.scene.select([c.id])
    key(editor, Qt.Key.Key_X, CTRL)
    assert c.id not in project.graph.nodes and editor.stack.undoText() == "Cut 1 nodes"
    QCursor.setPos(editor.view.mapToGlobal(QPoint(-50, -50)))  # cursor off the canvas
    key(editor, Qt.Key.Key_V, CTRL)
    pasted = project.graph.node(editor.selected_node_ids()[0])
    assert pasted.name == "relu" and pasted.type == "ReLU"
    key(editor, Qt.Key.Key_D, CTRL)
    dup = project.graph.node(editor.selected_node_ids()[0])
    assert dup.name == "relu1"
    assert dup.position == (pasted.position[0] + 40, pasted.position[1] + 40)
    assert editor.stack.undoText() == "Duplicate 1 nodes"


def test_group_open_breadcrumb_back_and_ungroup(editor, project, qtbot):
    a, b, c = mlp(project)
    editor.scene.select([b.id, c.id])
    key(editor, Qt.Key.Key_G, CTRL)
    composite = next(n for n in project.graph.nodes.values() if n.type == COMPOSITE)
    assert set(project.graph.nodes) == {a.id, composite.id}
    assert composite.inputs == ("in",) and composite.outputs == ()
    assert project.graph.edge_into(composite.id, "in").src_node == a.id
    assert editor.stack.undoText() == f"Group 2 nodes into {composite.name}"

    QTest.mouseDClick(
        editor.view.viewport(), Qt.MouseButton.LeftButton, pos=title_point(editor, composite.id)
    )
    assert editor.path == (composite.id,)
    assert set(editor.scene.nodes) == set(composite.subgraph.nodes)
    assert [btn.text() for btn in editor.breadcrumb.buttons] == ["Network", composite.name]

    # An edit inside is an edit of the composite's subgraph, undoable from the stack.
    start = title_point(editor, c.id)
    drag(editor.view.viewport(), start, start + QPoint(0, 80))
    assert composite.subgraph.node(c.id).position[1] > 0
    editor.stack.undo()
    assert composite.subgraph.node(c.id).position == (520.0, 0.0)

    click(editor.breadcrumb.buttons[0], QPoint(5, 5))
    assert editor.path == () and editor.selected_node_ids() == [composite.id]
    key(editor, Qt.Key.Key_G, CTRL | SHIFT)
    assert set(project.graph.nodes) == {a.id, b.id, c.id} and len(project.graph.edges) == 2
    editor.stack.undo()
    editor.stack.undo()  # the group itself
    assert set(project.graph.nodes) == {a.id, b.id, c.id}


def test_undoing_the_group_while_inside_it_returns_to_the_parent(editor, project, qtbot):
    a, b, c = mlp(project)
    editor.scene.select([b.id])
    editor.group_selection()
    composite = editor.selected_node_ids()[0]
    editor.open_composite(composite)
    editor.stack.undo()
    qtbot.waitUntil(lambda: editor.path == ())
    assert set(editor.scene.nodes) == {a.id, b.id, c.id}


def test_wheel_zooms_around_the_cursor(editor):
    view = editor.view
    anchor = QPoint(300, 200)
    before = view.mapToScene(anchor)
    for _ in range(3):
        event = QWheelEvent(
            QPointF(anchor),
            QPointF(view.viewport().mapToGlobal(anchor)),
            QPoint(0, 0),
            QPoint(0, 120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(view.viewport(), event)
    assert view.zoom == pytest.approx(1.18**3)
    after = view.mapToScene(anchor)
    # Scroll bars hold whole pixels: a pixel or two of drift over three steps.
    assert abs(after.x() - before.x()) < 4 and abs(after.y() - before.y()) < 4


def test_middle_button_and_space_drag_pan(editor, project):
    mlp(project)
    view = editor.view
    before = view.mapToScene(QPoint(100, 100))
    drag(view.viewport(), QPoint(400, 300), QPoint(300, 250), button=Qt.MouseButton.MiddleButton)
    moved = view.mapToScene(QPoint(100, 100))
    assert moved.x() - before.x() == pytest.approx(100, abs=2)
    assert moved.y() - before.y() == pytest.approx(50, abs=2)
    QTest.keyPress(view, Qt.Key.Key_Space)
    drag(view.viewport(), QPoint(300, 250), QPoint(400, 300))
    QTest.keyRelease(view, Qt.Key.Key_Space)
    assert view.mapToScene(QPoint(100, 100)).x() == pytest.approx(before.x(), abs=2)
    assert project.graph.node_named("points").position == (0.0, 0.0)  # nothing moved


def test_f_fits_the_whole_network(editor, project):
    a, b, c = mlp(project)
    editor.view.set_zoom(3.0)
    editor.view.centerOn(5000, 5000)
    key(editor, Qt.Key.Key_F)
    visible = editor.view.mapToScene(editor.view.viewport().rect()).boundingRect()
    for item in editor.scene.nodes.values():
        assert visible.contains(item.sceneBoundingRect())


def test_f_fits_edges_that_bulge_past_their_nodes(editor, project):
    a, b, c = mlp(project)
    # b's output feeds a node placed left of it in the row below: the curve swings out.
    d = project.graph.add_node(project.graph.node(c.id).replace(id="d" * 32, name="relu_b"))
    project.graph.move_node(d.id, (-200.0, 400.0))
    project.graph.disconnect(project.graph.edge_into(c.id, "in").id)
    project.graph.connect(b.id, "out", d.id, "in")
    key(editor, Qt.Key.Key_F)
    visible = editor.view.mapToScene(editor.view.viewport().rect()).boundingRect()
    for item in [*editor.scene.nodes.values(), *editor.scene.edges.values()]:
        assert visible.contains(item.sceneBoundingRect())


def test_zooming_out_hides_labels(editor, project, qtbot):
    a, b, c = mlp(project)
    editor.scene.refresh_shapes()
    label = next(iter(editor.scene.edges.values())).label
    assert label.isVisible()
    editor.view.set_zoom(0.3)
    assert not label.isVisible()
    editor.view.set_zoom(1.0)
    assert label.isVisible()


def test_a_closed_editor_stops_listening_to_the_document(qtbot, project):
    from widgets.node_editor import NodeEditor

    mlp(project)
    editor = NodeEditor()
    editor.set_project(project, None)
    listeners = len(project.graph.events)
    assert listeners >= 1
    editor.deleteLater()
    qtbot.waitUntil(lambda: len(project.graph.events) < listeners)


def test_an_undo_inside_a_composite_seen_from_outside_updates_it(editor, project, qtbot):
    a, b, c = mlp(project)
    editor.scene.select([b.id, c.id])
    editor.group_selection()
    composite = editor.selected_node_ids()[0]
    editor.open_composite(composite)
    editor.scene.select([c.id])
    editor.delete_selection()
    editor.go_up()
    item = editor.scene.nodes[composite]
    assert item.summary.endswith("1 node")
    editor.stack.undo()  # the delete inside, undone from the top level
    assert item.summary.endswith("2 nodes")
