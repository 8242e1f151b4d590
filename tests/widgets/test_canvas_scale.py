"""Big graphs on the canvas: Fit All shows every node, and nodes added through the document
(as a script adds them) can be scrolled to."""

from PySide6.QtCore import QRectF

from app.catalogue import CATALOGUE
from app.document import Project
from tests.widgets.canvas_support import make_editor
from widgets.node_editor.view import MIN_SCALE


def test_fit_all_shows_every_node_even_past_the_usual_minimum_zoom(qtbot):
    project = Project()
    graph = project.graph
    for i in range(2_000):  # one row 400,000 units wide: MIN_SCALE would show a sliver
        graph.add_node(CATALOGUE.new_node("ReLU", position=(i * 200.0, 0.0)))
    editor = make_editor(qtbot, project)
    view = editor.view
    view.fit_all()
    assert view.zoom < MIN_SCALE
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    for item in editor.scene.nodes.values():
        assert seen.contains(item.sceneBoundingRect()), item.sceneBoundingRect()
    view.set_zoom(view.zoom / 10)  # the wheel can't go below what Fit All needed
    assert view.zoom >= view.min_scale


def test_a_node_added_through_the_document_can_be_scrolled_to(qtbot):
    project = Project()
    graph = project.graph
    graph.add_node(CATALOGUE.new_node("ReLU", position=(0.0, 0.0)))
    editor = make_editor(qtbot, project)
    far = graph.add_node(CATALOGUE.new_node("Tanh", position=(250_000.0, 90_000.0)))
    item = editor.scene.nodes[far.id]
    assert editor.scene.sceneRect().contains(item.sceneBoundingRect())
    view = editor.view
    view.centerOn(item)
    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    assert seen.intersects(QRectF(item.sceneBoundingRect()))
    graph.move_nodes({far.id: (-300_000.0, -50_000.0)})  # moved there by a script
    assert editor.scene.sceneRect().contains(editor.scene.nodes[far.id].sceneBoundingRect())
