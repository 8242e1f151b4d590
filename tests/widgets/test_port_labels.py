"""Nodes with several outputs show each output's own shape beside its port, connected or not,
and follow edits; their edges keep their own shape labels."""

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from app.catalogue import BATCH, CATALOGUE, NodeType, ParamSpec, PortSpec, ShapeError
from app.document import Project, editing
from tests.widgets.canvas_support import add, make_editor
from widgets.node_editor import style

SHOTS = Path(os.environ.get("CELLWRIGHT_SHOTS", "/tmp/shots"))


def halves(values, ins):
    """Cuts the features in two: the first `first`, then the rest."""
    (batch, features), first = ins["in"], values["first"]
    if first >= features:
        raise ShapeError(f"Halves: first ({first}) must be less than the features ({features}).")
    return {"head": (batch, first), "tail": (batch, features - first)}


@pytest.fixture
def two_outputs():
    """A node type of our own with two outputs (as Split has), registered while the test runs."""
    node_type = NodeType("Halves", "Reshaping", "Cuts the features in two.",
                         (PortSpec("in"),), (PortSpec("head"), PortSpec("tail")),
                         (ParamSpec("first", "int", 4, minimum=1),),
                         lambda p: f"Halves {p['first']}", infer=halves)
    CATALOGUE.register(node_type)
    yield node_type
    CATALOGUE.unregister("Halves")


def pair_project():
    """x (N, 8) → a composite 'Pair' holding Dense 8→4 and Dense 8→3, each on to a ReLU."""
    project = Project()
    graph = project.graph
    x = add(project, "Input", 0, 0, "x", shape=(8,))
    a = add(project, "Dense", 260, -60, "a", in_channels=8, out_channels=4)
    b = add(project, "Dense", 260, 80, "b", in_channels=8, out_channels=3)
    ra = add(project, "ReLU", 560, -60, "ra")
    rb = add(project, "ReLU", 560, 120, "rb")
    for src, dst in ((x, a), (x, b), (a, ra), (b, rb)):
        graph.connect(src.id, "out", dst.id, "in")
    grouping = editing.group(graph, [a.id, b.id], definition="Pair")
    return project, graph.node(grouping.node_id), b


def pixel(scene, point: QPointF) -> QColor:
    """The colour the scene paints at a scene point (rendered 1:1)."""
    image = QImage(9, 9, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    scene.render(painter, QRectF(0, 0, 9, 9), QRectF(point.x() - 4, point.y() - 4, 9, 9))
    painter.end()
    return image.pixelColor(4, 4)


def test_each_output_of_a_composite_shows_its_own_shape(qtbot):
    project, pair, b = pair_project()
    editor = make_editor(qtbot, project)
    scene = editor.scene
    item = scene.nodes[pair.id]
    assert pair.outputs == ("out1", "out2")
    assert item.port_shapes == {"out1": "(N, 4)", "out2": "(N, 3)"}
    edges = {e.src_port: scene.edges[e.id] for e in project.graph.edges_from(pair.id)}
    assert edges["out1"]._shape_text == "(N, 4)" and edges["out2"]._shape_text == "(N, 3)"
    x = project.graph.node_named("x")
    assert scene.nodes[x.id].port_shapes == {}  # one output: its edges say it
    for port in pair.outputs:  # each pill sits inside the node, clear of the port names
        rect = item.shape_rect(port)
        assert rect.left() > 0 and rect.right() < item.width - style.advance("port", port)
        assert abs(rect.center().y() - item.port_pos(port, True).y()) < 1
        edge = edges[port]
        assert edge.path().pointAtPercent(0) == item.port_scene_pos(port, True)
        assert pixel(scene, item.mapToScene(rect.topLeft() + QPointF(3, 4))) == style.LABEL_BG
    between = pixel(scene, item.mapToScene(QPointF(item.width / 2, style.HEADER + style.ROW)))
    assert between != style.LABEL_BG  # between the rows: the node's body, no pill

    width = item.width
    pair.subgraph.set_params(b.id, {"out_channels": 1234567})  # an edit inside the composite
    qtbot.waitUntil(lambda: item.port_shapes.get("out2") == "(N, 1234567)")
    assert item.port_shapes["out1"] == "(N, 4)" and item.width > width  # room for it
    rect = item.shape_rect("out2")
    assert rect.left() > 12 + style.advance("port", "in")  # clear of the input's name
    assert edges["out2"].path().pointAtPercent(0) == item.port_scene_pos("out2", True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    editor.view.centerOn(item)
    assert editor.grab().save(str(SHOTS / "port_shapes_composite.png"))


def test_a_node_type_with_two_outputs_shows_them_unconnected_and_follows_edits(
        qtbot, two_outputs):
    project = Project()
    x = add(project, "Input", 0, 0, "x", shape=(10,))
    cut = add(project, "Halves", 260, 0, "cut", first=4)
    project.graph.connect(x.id, "out", cut.id, "in")
    editor = make_editor(qtbot, project)
    item = editor.scene.nodes[cut.id]
    assert item.port_shapes == {"head": f"({BATCH}, 4)", "tail": f"({BATCH}, 6)"}
    project.graph.set_params(cut.id, {"first": 7})
    qtbot.waitUntil(lambda: item.port_shapes == {"head": "(N, 7)", "tail": "(N, 3)"})
    project.graph.set_params(cut.id, {"first": 12})  # refused by its shape rule
    qtbot.waitUntil(lambda: item.port_shapes == {})
    assert item.error == "Halves: first (12) must be less than the features (10)."
    project.graph.set_params(cut.id, {"first": 2})
    qtbot.waitUntil(lambda: item.port_shapes == {"head": "(N, 2)", "tail": "(N, 8)"})
    assert not item.error
    SHOTS.mkdir(parents=True, exist_ok=True)
    editor.view.centerOn(item)
    assert editor.grab().save(str(SHOTS / "port_shapes_halves.png"))
