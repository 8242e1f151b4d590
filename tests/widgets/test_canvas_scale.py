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


def test_a_selected_edge_is_drawn_selected_and_back(qtbot):
    from tests.widgets.canvas_support import mlp
    from widgets.node_editor import style

    project = Project()
    mlp(project)
    editor = make_editor(qtbot, project)
    first, second = editor.scene.edges.values()
    first.setSelected(True)
    assert first.pen().color() == style.EDGE_SELECTED
    assert second.pen().color() == style.EDGE
    editor.scene.clearSelection()
    second.setSelected(True)
    assert first.pen().color() == style.EDGE
    assert second.pen().color() == style.EDGE_SELECTED
    project.graph.disconnect(second.edge_id)  # a selected edge that goes away: no error
    editor.scene.clearSelection()
    assert editor.scene.selected_edge_ids() == [] and editor.scene._selected_edges == set()


def test_after_an_edit_the_canvas_shows_what_a_fresh_inference_says(qtbot):
    from app.compiler.shapes import infer_shapes

    project = Project()
    graph = project.graph
    chains = []
    for row in range(50):
        nodes = [graph.add_node(CATALOGUE.new_node("Input", position=(0, row * 140.0),
                                                   params={"shape": (16,)}))]
        for column in range(1, 5):
            kind = "Dense" if column % 2 else "ReLU"
            params = {"in_channels": 16, "out_channels": 16} if kind == "Dense" else {}
            nodes.append(graph.add_node(CATALOGUE.new_node(
                kind, position=(column * 240.0, row * 140.0), params=params)))
            graph.connect(nodes[-2].id, "out", nodes[-1].id, "in")
        chains.append(nodes)
    editor = make_editor(qtbot, project)
    scene = editor.scene
    graph.set_params(chains[3][1].id, {"out_channels": 24})  # the next Dense no longer fits
    qtbot.waitUntil(lambda: scene.nodes[chains[3][3].id].error != "", timeout=2000)
    report = infer_shapes(graph)
    for edge_id, item in scene.edges.items():
        assert item._shape_text == report.describe(edge_id)
    for node_id, item in scene.nodes.items():
        assert item.error == report.errors.get(node_id, "")
    assert "24" in scene.edges[graph.edge_into(chains[3][2].id, "in").id]._shape_text
    graph.set_params(chains[3][1].id, {"out_channels": 16})
    qtbot.waitUntil(lambda: scene.nodes[chains[3][3].id].error == "", timeout=2000)
    assert scene.shapes.errors == {}
