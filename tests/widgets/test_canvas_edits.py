"""The canvas driven by real mouse and keyboard events, asserting on the document."""

import pytest
from PySide6.QtCore import QPoint, Qt

from app.document import Project
from tests.widgets.canvas_support import (
    add,
    chain,
    click,
    drag,
    key,
    make_editor,
    mlp,
    port_point,
    scene_point,
    title_point,
)


@pytest.fixture
def project():
    return Project()


@pytest.fixture
def editor(qtbot, project):
    return make_editor(qtbot, project)


def messages(editor):
    seen = []
    editor.message.connect(seen.append)
    return seen


def test_dragging_from_an_output_to_an_input_connects_them_and_undo_redo(editor, project, qtbot):
    a = add(project, "Input", 0, 0, "points", shape=(2,))
    b = add(project, "Dense", 300, 0, "hidden", in_channels=2, out_channels=4)
    graph, view = project.graph, editor.view.viewport()

    drag(view, port_point(editor, a.id, "out", True), port_point(editor, b.id, "in", False))

    edge = graph.edge_into(b.id, "in")
    assert edge is not None and (edge.src_node, edge.src_port) == (a.id, "out")
    assert edge.id in editor.scene.edges
    label = editor.scene.edges[edge.id].label
    qtbot.waitUntil(lambda: label.text.text() == "(N, 2)" and label.isVisible())
    assert editor.stack.undoText() == "Connect points → hidden"
    editor.stack.undo()
    assert not graph.edges and not editor.scene.edges
    editor.stack.redo()
    assert graph.edge_into(b.id, "in").id == edge.id


def test_connecting_refits_the_receiving_layer_in_the_same_step(editor, project):
    a = add(project, "Input", 0, 0, "points", shape=(5,))
    b = add(project, "Dense", 300, 0, "hidden", in_channels=1, out_channels=4)
    view = editor.view.viewport()
    drag(view, port_point(editor, b.id, "in", False), port_point(editor, a.id, "out", True))
    assert project.graph.node(b.id).params["in_channels"] == 5
    assert project.graph.edge_into(b.id, "in") is not None
    editor.stack.undo()  # one step takes both back
    assert project.graph.node(b.id).params["in_channels"] == 1 and not project.graph.edges


def test_an_illegal_connection_is_refused_with_the_reason(editor, project):
    a = add(project, "Input", 0, 0, "points", shape=(2,))
    b = add(project, "Conv2d", 300, 0, "conv")
    c = add(project, "ReLU", 300, 200, "relu")
    seen = messages(editor)
    view = editor.view.viewport()

    drag(view, port_point(editor, a.id, "out", True), port_point(editor, b.id, "in", False))
    assert not project.graph.edges and editor.stack.count() == 0
    assert seen and seen[-1].startswith("Can't connect") and "conv" in seen[-1].lower()

    drag(view, port_point(editor, a.id, "out", True), port_point(editor, c.id, "out", True))
    assert not project.graph.edges
    assert "output to an input" in seen[-1]


def test_compatible_ports_light_up_while_dragging(editor, project):
    from PySide6.QtTest import QTest

    a = add(project, "Input", 0, 0, "points", shape=(2,))
    b = add(project, "Conv2d", 300, 0, "conv")
    c = add(project, "ReLU", 300, 200, "relu")
    view = editor.view.viewport()
    start = port_point(editor, a.id, "out", True)
    QTest.mousePress(view, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    QTest.mouseMove(view, start + QPoint(40, 40))
    assert editor.scene.nodes[c.id].highlight == {("in", False): True}
    assert editor.scene.nodes[b.id].highlight == {("in", False): False}
    QTest.mouseRelease(view, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    assert editor.scene.nodes[c.id].highlight == {}


def test_dragging_a_connected_input_away_disconnects_it(editor, project):
    a, b, c = mlp(project)
    view = editor.view.viewport()
    drag(view, port_point(editor, c.id, "in", False), scene_point(editor, 520, 300))
    assert project.graph.edge_into(c.id, "in") is None
    assert editor.stack.undoText() == "Disconnect hidden → relu"
    editor.stack.undo()
    assert project.graph.edge_into(c.id, "in") is not None


def test_moving_a_node_is_one_command_snapped_to_the_grid(editor, project):
    a, b, c = mlp(project)
    view = editor.view.viewport()
    start = title_point(editor, b.id)
    drag(view, start, start + QPoint(53, 91), steps=10)
    x, y = project.graph.node(b.id).position
    assert (x % 20, y % 20) == (0, 0) and (x, y) != (260.0, 0.0)
    assert abs(x - 313) <= 10 and abs(y - 91) <= 10
    assert editor.stack.count() == 1 and editor.stack.undoText() == "Move hidden"
    editor.stack.undo()
    assert project.graph.node(b.id).position == (260.0, 0.0)
    assert editor.scene.nodes[b.id].pos().x() == 260.0
    editor.stack.redo()
    assert project.graph.node(b.id).position == (x, y)


def test_without_snapping_a_node_lands_where_it_is_dropped(editor, project):
    a, b, c = mlp(project)
    editor.actions["snap"].setChecked(False)
    start = title_point(editor, b.id)
    drag(editor.view.viewport(), start, start + QPoint(53, 91), steps=10)
    assert project.graph.node(b.id).position == (313.0, 91.0)


def test_moving_a_selection_moves_all_of_it_in_one_command(editor, project):
    a, b, c = mlp(project)
    editor.scene.select([a.id, b.id])
    start = title_point(editor, a.id)
    drag(editor.view.viewport(), start, start + QPoint(0, 100))
    assert project.graph.node(a.id).position == (0.0, 100.0)
    assert project.graph.node(b.id).position == (260.0, 100.0)
    assert project.graph.node(c.id).position == (520.0, 0.0)
    assert editor.stack.count() == 1 and editor.stack.undoText() == "Move 2 nodes"


def test_rubber_band_selects_and_delete_key_removes_then_undo(editor, project):
    a, b, c = mlp(project)
    view = editor.view.viewport()
    drag(view, scene_point(editor, 200, -60), scene_point(editor, 800, 150))
    assert editor.selected_node_ids() == [b.id, c.id]
    key(editor, Qt.Key.Key_Delete)
    assert set(project.graph.nodes) == {a.id} and not project.graph.edges
    assert editor.stack.undoText() == "Delete 2 nodes"
    editor.stack.undo()
    assert set(project.graph.nodes) == {a.id, b.id, c.id} and len(project.graph.edges) == 2
    assert set(editor.scene.nodes) == {a.id, b.id, c.id}
    editor.stack.redo()
    assert set(project.graph.nodes) == {a.id}


def test_backspace_deletes_a_clicked_node_and_a_clicked_edge(editor, project):
    a, b, c = mlp(project)
    click(editor.view.viewport(), title_point(editor, c.id))
    assert editor.selected_node_ids() == [c.id]
    key(editor, Qt.Key.Key_Backspace)
    assert c.id not in project.graph.nodes
    edge = next(iter(project.graph.edges.values()))
    middle = editor.scene.edges[edge.id].path().pointAtPercent(0.25)
    click(editor.view.viewport(), editor.view.mapFromScene(middle))
    key(editor, Qt.Key.Key_Backspace)
    assert not project.graph.edges and len(project.graph.nodes) == 2


def test_views_follow_document_events_only(editor, project):
    a, b, c = mlp(project)
    project.graph.rename_node(b.id, "encoder")  # an edit from elsewhere (e.g. a script)
    project.graph.move_node(c.id, (600.0, 40.0))
    project.graph.set_param(b.id, "out_channels", 32)
    editor.scene.refresh_shapes()
    item = editor.scene.nodes[b.id]
    assert item.name == "encoder" and item.summary == "Dense 2→32"
    assert editor.scene.nodes[c.id].pos().x() == 600.0
    edge = project.graph.edge_into(c.id, "in")
    assert editor.scene.edges[edge.id].label.text.text() == "(N, 32)"


def test_a_node_with_an_error_is_marked_with_the_reason(editor, project):
    a = add(project, "Input", 0, 0, "points", shape=(3, 8, 8))
    b = add(project, "Dense", 300, 0, "hidden", in_channels=5, out_channels=4)
    project.graph.connect(a.id, "out", b.id, "in")
    editor.scene.refresh_shapes()
    item = editor.scene.nodes[b.id]
    assert item.error and item.toolTip() == item.error
    project.graph.set_param(b.id, "in_channels", 8)
    editor.scene.refresh_shapes()
    assert not editor.scene.nodes[b.id].error


def test_select_all_and_auto_layout_orders_left_to_right(editor, project):
    a, b, c = mlp(project)
    project.graph.move_nodes({a.id: (600, 300), b.id: (0, 0), c.id: (300, 500)})
    key(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert len(editor.selected_node_ids()) == 3
    editor.actions["auto_layout"].trigger()
    xs = [project.graph.node(n.id).position[0] for n in (a, b, c)]
    assert xs == sorted(xs) and len(set(xs)) == 3
    assert editor.stack.undoText() == "Auto-layout 3 nodes"
    editor.stack.undo()
    assert project.graph.node(a.id).position == (600.0, 300.0)


def test_auto_layout_leaves_room_for_every_shape_label(editor, project):
    a = add(project, "Input", 0, 0, "image", shape=(16, 4, 4))
    b = add(project, "ReLU", 10, 200, "relu")
    c = add(project, "Sigmoid", 20, 400, "squash")
    chain(project, a, b, c)
    key(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    editor.actions["auto_layout"].trigger()
    editor.scene.refresh_shapes()
    labels = [edge.label for edge in editor.scene.edges.values()]
    assert [lb.text.text() for lb in labels] == ["(N, 16, 4, 4)"] * 2
    assert all(lb.isVisible() for lb in labels)


def test_dragging_a_connected_input_to_another_input_moves_the_edge_in_one_step(editor, project):
    a, b, c = mlp(project)
    d = add(project, "Sigmoid", 520, 200, "squash")
    view = editor.view.viewport()
    drag(view, port_point(editor, c.id, "in", False), port_point(editor, d.id, "in", False))
    graph = project.graph
    assert graph.edge_into(c.id, "in") is None
    assert graph.edge_into(d.id, "in").src_node == b.id
    assert editor.stack.undoText() == "Reconnect hidden → squash"
    editor.stack.undo()
    assert graph.edge_into(c.id, "in").src_node == b.id and graph.edge_into(d.id, "in") is None


def test_connecting_an_input_lets_the_sizes_after_it_follow_in_the_same_step(editor, project):
    a = add(project, "Input", 0, 0, "points", shape=(5,))
    b = add(project, "Dense", 300, 0, "hidden", in_channels=1, out_channels=16)
    c = add(project, "ReLU", 600, 0, "relu")
    d = add(project, "Dense", 900, 0, "head", in_channels=1, out_channels=2)
    chain(project, b, c, d)  # nothing arrives yet: head's in_channels could not be fitted
    editor.view.centerOn(300, 100)
    view = editor.view.viewport()
    drag(view, port_point(editor, a.id, "out", True), port_point(editor, b.id, "in", False))
    graph = project.graph
    assert graph.node(b.id).params["in_channels"] == 5
    assert graph.node(d.id).params["in_channels"] == 16  # two nodes on, it followed
    assert editor.stack.count() == 1 and editor.stack.undoText() == "Connect points → hidden"
    editor.stack.undo()
    assert graph.node(b.id).params["in_channels"] == 1
    assert graph.node(d.id).params["in_channels"] == 1 and graph.edge_into(b.id, "in") is None
