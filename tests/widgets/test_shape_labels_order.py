"""Edge shape labels end up right whatever ran between an edit and the canvas's shape timer:
connection checks, fitting and `shapes_now` update the kept shapes too, and what they saw
change must still reach the labels."""

from __future__ import annotations

from app.compiler.shapes import LiveShapes
from app.document import Project
from tests.app.compiler.compiler_samples import add
from tests.widgets.canvas_support import make_editor
from widgets.node_editor.node_types import (
    LiveShapeLabels,
    check_connection,
    fitting,
    shapes_now,
)


def row(project: Project):
    """x (N, 4), then Dense 4→6, ReLU, Dense 6→3, Tanh, Dense 3→2: nothing connected yet."""
    graph = project.graph
    return [add(graph, "Input", shape=(4,)),
            add(graph, "Dense", in_channels=4, out_channels=6), add(graph, "ReLU"),
            add(graph, "Dense", in_channels=6, out_channels=3), add(graph, "Tanh"),
            add(graph, "Dense", in_channels=3, out_channels=2)]


def test_labels_of_edges_wired_back_to_back_all_show_after_one_timer(qtbot):
    project = Project()
    nodes = row(project)
    editor = make_editor(qtbot, project)
    scene, live = editor.scene, editor.scene.live_shapes
    pairs = list(zip(nodes, nodes[1:], strict=False))
    for (a, b), later in zip(pairs, [*pairs[1:], None], strict=True):
        assert editor.connect_ports(a.id, "out", b.id, "in")  # no events processed between
        if later is not None:  # the canvas checks the next drag while it hovers
            assert check_connection(scene.graph, later[0].id, "out", later[1].id, "in",
                                    scene.root, live=live) is None
    assert len(scene.edges) == 5
    scene._on_shape_timer_timeout()  # the timer firing once
    want = ["(N, 4)", "(N, 6)", "(N, 6)", "(N, 3)", "(N, 3)"]
    graph = project.graph
    got = [scene.edges[graph.edge_into(b.id, "in").id]._shape_text for _, b in pairs]
    assert got == want


def test_labels_follow_edits_seen_first_by_fitting_and_shapes_now():
    project = Project()
    graph = project.graph
    x, dense, relu, *_ = row(project)
    labels = LiveShapeLabels(graph)
    labels.update()
    first = graph.connect(x.id, "out", dense.id, "in")
    fitting(graph, dense.id, "out", relu.id, live=labels)  # updates the kept shapes first
    second = graph.connect(dense.id, "out", relu.id, "in")
    shapes_now(graph, labels)  # and again
    shapes, touched = labels.update()
    assert shapes.labels == {first.id: "(N, 4)", second.id: "(N, 6)"}
    assert {first.id, second.id} <= touched[1]
    graph.set_params(dense.id, {"out_channels": 5})
    shapes_now(graph, labels)
    shapes, touched = labels.update()
    assert shapes.labels[second.id] == "(N, 5)" and dense.id in touched[0]


def test_take_touched_gathers_every_update_since_the_last_take():
    project = Project()
    graph = project.graph
    x, dense, relu, *_ = row(project)
    live = LiveShapes(graph)
    live.update()
    assert live.take_touched() is None  # the first update: everything
    first = graph.connect(x.id, "out", dense.id, "in")
    live.update()
    assert live.touched[1] == {first.id}
    second = graph.connect(dense.id, "out", relu.id, "in")
    live.update()
    assert first.id not in live.touched[1]  # the last update alone
    nodes, edges = live.take_touched()
    assert {first.id, second.id} <= edges and {dense.id, relu.id} <= nodes
    live.update()
    assert live.take_touched() == (set(), set())  # taken: nothing new since
    live.invalidate()
    live.update()
    graph.set_params(dense.id, {"out_channels": 5})
    live.update()
    assert live.take_touched() is None  # everything since, however much changed after
