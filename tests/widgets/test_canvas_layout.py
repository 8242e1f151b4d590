"""Where things land on the canvas: badges clear of labels, dropped and spliced nodes clear of
their neighbours, copies named after their original, auto-layout in even layers."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QByteArray, QMimeData, QPointF, QRectF, Qt
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from app.document import Project
from tests.widgets.canvas_support import add, chain, click, key, make_editor, title_point
from widgets.node_editor import style
from widgets.node_editor.view import NODE_MIME

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def project():
    return Project()


@pytest.fixture
def editor(qtbot, project):
    return make_editor(qtbot, project)


def body(editor, node_id: str) -> QRectF:
    """The node's body in scene coordinates (without the port dots sticking out)."""
    item = editor.scene.nodes[node_id]
    return QRectF(item.x(), item.y(), item.width, item.height)


def assert_no_overlaps(editor) -> None:
    items = list(editor.scene.nodes)
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            assert not body(editor, a).intersects(body(editor, b)), (
                editor.project.graph.node(a).name, editor.project.graph.node(b).name)


def drop(editor, payload: str, scene_xy: tuple[float, float]) -> None:
    """A palette drag let go over the canvas at a scene point (enter, move, drop)."""
    viewport = editor.view.viewport()
    target = editor.view.mapFromScene(QPointF(*scene_xy))
    mime = QMimeData()
    mime.setData(NODE_MIME, QByteArray(payload.encode()))
    action, left = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
    none = Qt.KeyboardModifier.NoModifier
    for event in (QDragEnterEvent(target, action, mime, left, none),
                  QDragMoveEvent(target, action, mime, left, none),
                  QDropEvent(QPointF(target), action, mime, left, none)):
        QApplication.sendEvent(viewport, event)


# ---- the mode badge -----------------------------------------------------------------------


def test_the_mode_badge_leaves_a_composites_node_count_readable(editor, project, qtbot):
    a = add(project, "Input", 0, 0, "points", shape=(2,))
    b = add(project, "Dropout", 260, 0, "drop", p=0.2)
    c = add(project, "Dense", 520, 0, "dense", in_channels=2, out_channels=4)
    d = add(project, "ReLU", 780, 0, "relu")
    chain(project, a, b, c, d)
    view = editor.view.viewport()
    click(view, title_point(editor, b.id))
    for node in (c, d):
        click(view, title_point(editor, node.id), CTRL)
    key(editor, Qt.Key.Key_G, CTRL)  # group the three
    composite = next(n for n in project.graph.nodes.values() if n.is_composite)
    item = editor.scene.nodes[composite.id]
    assert item.summary == "Group · 3 nodes"
    edge_into = project.graph.edge_into(composite.id, composite.inputs[0])
    for training, badge in ((False, "predict"), (True, "train")):
        editor.scene.set_network_mode(training)
        assert item.mode_badge == badge
        text = item.summary_rect()
        text_end = text.left() + style.advance("summary", item.summary)
        pill = item.mode_badge_rect()
        assert text_end + 4 <= pill.left(), (text_end, pill)  # the count stays readable
        assert pill.right() <= item.width  # and the pill stays on the node
        edge = editor.scene.edges[edge_into.id]
        assert edge.path().pointAtPercent(1.0) == item.port_scene_pos(composite.inputs[0], False)


# ---- dropped and spliced nodes ------------------------------------------------------------


def test_a_node_dropped_on_another_lands_beside_it_not_on_it(editor, project):
    a = add(project, "Dense", 0, 0, "dense1", in_channels=2, out_channels=4)
    add(project, "ReLU", 0, 120, "relu1")
    centre = body(editor, a.id).center()
    drop(editor, "type:Tanh", (centre.x(), centre.y()))
    new = next(n for n in project.graph.nodes.values() if n.type == "Tanh")
    assert_no_overlaps(editor)
    # ... and as near the drop as there is room: within a node's size of it
    landed = body(editor, new.id).center()
    assert abs(landed.x() - centre.x()) + abs(landed.y() - centre.y()) < 300
    assert editor.stack.count() == 1


def test_a_node_spliced_into_a_short_edge_overlaps_neither_end(editor, project):
    a = add(project, "Input", 0, 0, "points", shape=(2,))
    b = add(project, "Dense", 200, 0, "dense1", in_channels=2, out_channels=4)
    chain(project, a, b)
    item_a, item_b = editor.scene.nodes[a.id], editor.scene.nodes[b.id]
    start, end = item_a.port_scene_pos("out", True), item_b.port_scene_pos("in", False)
    drop(editor, "type:ReLU", ((start.x() + end.x()) / 2, start.y()))
    relu = next(n for n in project.graph.nodes.values() if n.type == "ReLU")
    assert project.graph.edge_into(relu.id, "in").src_node == a.id  # spliced in
    assert project.graph.edge_into(b.id, "in").src_node == relu.id
    assert_no_overlaps(editor)


# ---- copies' names ------------------------------------------------------------------------


def test_a_copy_of_dense2_is_named_after_it_never_dense1(editor, project):
    add(project, "Input", 0, 0, "points", shape=(2,))
    b = add(project, "Dense", 260, 0, "dense2", in_channels=2, out_channels=4)  # no dense1
    view = editor.view.viewport()
    click(view, title_point(editor, b.id))
    key(editor, Qt.Key.Key_D, CTRL)  # Duplicate
    names = [n.name for n in project.graph.nodes.values()]
    assert names == ["points", "dense2", "dense3"]
    click(view, title_point(editor, b.id))
    key(editor, Qt.Key.Key_C, CTRL)
    editor.view.setFocus()
    key(editor, Qt.Key.Key_V, CTRL)  # dense3 is taken: the next after it
    assert [n.name for n in project.graph.nodes.values()][-1] == "dense4"


# ---- auto-layout --------------------------------------------------------------------------


def branching(project):
    """points → (left, right) → sum → out, all stacked in one column with uneven gaps."""
    p = add(project, "Input", 0, 0, "points", shape=(4,))
    left = add(project, "Dense", 0, 90, "left", in_channels=4, out_channels=4)
    right = add(project, "Dense", 0, 300, "right", in_channels=4, out_channels=4)
    total = add(project, "Add", 0, 420, "total")
    relu = add(project, "ReLU", 0, 700, "relu")
    graph = project.graph
    graph.connect(p.id, "out", left.id, "in")
    graph.connect(p.id, "out", right.id, "in")
    graph.connect(left.id, "out", total.id, total.inputs[0])
    graph.connect(right.id, "out", total.id, total.inputs[1])
    graph.connect(total.id, "out", relu.id, "in")
    return p, left, right, total, relu


def test_auto_layout_puts_nodes_in_layers_by_depth_with_even_gaps(editor, project):
    p, left, right, total, relu = branching(project)
    key(editor, Qt.Key.Key_A, CTRL)
    key(editor, Qt.Key.Key_L, CTRL)
    rects = {n.name: body(editor, n.id) for n in (p, left, right, total, relu)}
    columns = [[rects["points"]], [rects["left"], rects["right"]], [rects["total"]],
               [rects["relu"]]]
    for column in columns:  # one layer, one column: the same left edge
        assert len({r.left() for r in column}) == 1
    gaps = [min(r.left() for r in nxt) - max(r.right() for r in column)
            for column, nxt in zip(columns, columns[1:], strict=False)]
    assert min(gaps) > 0 and max(gaps) - min(gaps) < 0.5, gaps  # even, not one column
    upper, lower = sorted(columns[1], key=lambda r: r.top())
    assert lower.top() - upper.bottom() > 0
    # the single nodes sit level with the middle of the two-node layer (to the grid)
    middle = (upper.top() + lower.bottom()) / 2
    for name in ("points", "total", "relu"):
        assert abs(rects[name].center().y() - middle) <= style.GRID / 2
    for rect in rects.values():  # on the grid, as the canvas keeps them
        assert rect.left() % style.GRID == 0 and rect.top() % style.GRID == 0
    assert_no_overlaps(editor)
    assert editor.stack.undoText() == "Auto-layout 5 nodes"


def test_auto_layout_of_nodes_with_others_between_keeps_them_in_separate_layers(editor, project):
    p, left, right, total, relu = branching(project)
    view = editor.view.viewport()
    editor.view.centerOn(0, 350)
    click(view, title_point(editor, p.id))
    for node in (total, relu):
        click(view, title_point(editor, node.id), CTRL)
    key(editor, Qt.Key.Key_L, CTRL)
    xs = [project.graph.node(n.id).position[0] for n in (p, total, relu)]
    assert xs == sorted(xs) and len(set(xs)) == 3, xs  # not stacked in one column
    widths = [editor.scene.nodes[n.id].width for n in (p, total)]
    gaps = [xs[1] - xs[0] - widths[0], xs[2] - xs[1] - widths[1]]
    assert gaps[0] == gaps[1] > 0


def test_a_dense_spliced_in_makes_the_next_layers_width_follow_in_one_step(editor, project):
    a = add(project, "Input", 0, 0, "points", shape=(2,))
    b = add(project, "Dense", 260, 0, "hidden", in_channels=2, out_channels=16)
    c = add(project, "Dense", 620, 0, "head", in_channels=16, out_channels=4)
    chain(project, a, b, c)
    start = editor.scene.nodes[b.id].port_scene_pos("out", True)
    end = editor.scene.nodes[c.id].port_scene_pos("in", False)
    drop(editor, "type:Dense", ((start.x() + end.x()) / 2, start.y()))
    graph = project.graph
    new = graph.node(graph.edge_into(c.id, "in").src_node)
    assert new.type == "Dense" and new.params["in_channels"] == 16  # fitted to what arrives
    assert graph.node(c.id).params["in_channels"] == new.params["out_channels"] == 8
    assert editor.stack.count() == 1
    assert editor.stack.undoText() == f"Insert {new.name} into a connection"
    editor.stack.undo()
    assert graph.node(c.id).params["in_channels"] == 16 and new.id not in graph.nodes
    assert_no_overlaps(editor)
