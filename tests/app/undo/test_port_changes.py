"""Output ports that follow a hyper-parameter (Split's output_num): the edit, the connections
leaving ports that go, and their shapes are one undo step."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QUndoStack

from app.catalogue import CATALOGUE
from app.compiler.shapes import LiveShapes, infer_shapes
from app.document import Graph, PortsChanged, Project, editing
from app.document.data import graph_from_data, graph_to_data
from app.undo.commands import graph_at, perform
from app.undo.size_edit import SizeEditCommand


def add(graph: Graph, type_name: str, name: str, **params):
    return graph.add_node(CATALOGUE.new_node(type_name, name=name, params=params))


@pytest.fixture
def net():
    """points (6, 4) → split (axis 1, 3 parts) → out0/out1/out2 → scale0/1/2."""
    graph = Graph()
    points = add(graph, "Input", "points", shape=(6, 4))
    split = add(graph, "Split", "split", axis=1, output_num=3)
    graph.connect(points.id, "out", split.id, "in")
    edges = {}
    for i in range(3):
        scale = add(graph, "Rescale", f"scale{i}")
        edges[f"out{i}"] = graph.connect(split.id, f"out{i}", scale.id, "in")
    assert infer_shapes(graph).ok
    return graph, split.id, edges


def edit(root: Graph, node_id: str, value, path=()):
    stack = QUndoStack()
    command = SizeEditCommand(root, path, node_id, {"output_num": value})
    assert perform(stack, command) is None
    return stack, command


def snapshot(graph: Graph) -> dict:
    return graph_to_data(graph)


def test_fewer_parts_take_their_ports_and_connections_away_in_one_undo_step(net):
    graph, split, edges = net
    before = snapshot(graph)
    events = []
    graph.events.subscribe(events.append)
    stack, command = edit(graph, split, 2)
    node = graph.node(split)
    assert node.outputs == ("out0", "out1") and node.params["output_num"] == 2
    assert edges["out2"].id not in graph.edges
    assert {e.id for e in graph.edges_from(split)} == {edges["out0"].id, edges["out1"].id}
    assert [e for e in events if isinstance(e, PortsChanged)] == [
        PortsChanged(split, ("in",), ("out0", "out1", "out2"))]
    assert command.text() == "Set split.output_num to 2 (1 connection from out2 removed)"
    assert stack.count() == 1
    report = infer_shapes(graph)
    assert report.output_shapes[split] == {"out0": ("N", 3, 4), "out1": ("N", 3, 4)}
    assert report.errors[graph.node_named("scale2").id] == "Input 'in' is not connected."

    stack.undo()
    assert snapshot(graph)["nodes"] == before["nodes"]
    assert sorted(map(str, snapshot(graph)["edges"])) == sorted(map(str, before["edges"]))
    assert graph.edge(edges["out2"].id) == edges["out2"]  # the same connection, same id
    assert infer_shapes(graph).ok
    stack.redo()
    assert graph.node(split).outputs == ("out0", "out1")
    assert edges["out2"].id not in graph.edges


def test_more_parts_add_ports_and_keep_every_connection(net):
    graph, split, edges = net
    stack, command = edit(graph, split, 6)
    assert graph.node(split).outputs == tuple(f"out{i}" for i in range(6))
    assert {e.id for e in graph.edges_from(split)} == {e.id for e in edges.values()}
    assert command.text() == "Set split.output_num to 6"
    report = infer_shapes(graph)
    assert report.ok
    assert [report.shape(split, f"out{i}") for i in range(6)] == [("N", 1, 4)] * 6
    stack.undo()
    assert graph.node(split).outputs == ("out0", "out1", "out2")


def test_a_part_count_that_does_not_divide_still_sets_the_ports_and_says_why(net):
    graph, split, _ = net
    stack, _ = edit(graph, split, 4)
    assert graph.node(split).outputs == ("out0", "out1", "out2", "out3")
    assert infer_shapes(graph).errors[split] == (
        "Split: the size 6 along axis 1 of (N, 6, 4) doesn't divide into 4 equal parts.")


def test_live_shapes_follow_the_ports_through_undo_and_redo(net):
    graph, split, _ = net
    live = LiveShapes(graph)
    live.update()
    stack, _ = edit(graph, split, 2)
    for step in (None, stack.undo, stack.redo, stack.undo):
        if step is not None:
            step()
        found, fresh = live.update(), infer_shapes(graph)
        assert (found.output_shapes, found.edge_shapes, found.errors) == (
            fresh.output_shapes, fresh.edge_shapes, fresh.errors)
    live.close()


def test_other_edits_leave_the_ports_alone(net):
    graph, split, edges = net
    stack = QUndoStack()
    assert perform(stack, SizeEditCommand(graph, (), split, {"axis": -1})) is None
    assert graph.node(split).outputs == ("out0", "out1", "out2")
    assert len(graph.edges_from(split)) == 3
    # A value the type refuses (the Inspector never sends one) changes no port.
    assert perform(stack, SizeEditCommand(graph, (), split, {"output_num": 0})) is None
    assert graph.node(split).outputs == ("out0", "out1", "out2")
    assert infer_shapes(graph).errors[split].startswith("Output_num must be a whole number")


def test_ports_follow_inside_a_composite_and_come_back_on_undo():
    project = Project()
    graph = project.graph
    points = add(graph, "Input", "points", shape=(6,))
    split = add(graph, "Split", "split", axis=1, output_num=2)
    left, right = add(graph, "Rescale", "left"), add(graph, "Rescale", "right")
    stack_node = add(graph, "Stack", "both")
    graph.connect(points.id, "out", split.id, "in")
    graph.connect(split.id, "out0", left.id, "in")
    graph.connect(split.id, "out1", right.id, "in")
    graph.connect(left.id, "out", stack_node.id, "x")
    graph.connect(right.id, "out", stack_node.id, "y")
    grouped = editing.group(graph, [split.id, left.id, right.id, stack_node.id])
    inner = graph_at(graph, (grouped.node_id,))
    inner_split = inner.node_named("split").id
    stack, _ = edit(graph, inner_split, 3, path=(grouped.node_id,))
    assert inner.node(inner_split).outputs == ("out0", "out1", "out2")
    assert infer_shapes(graph).ok
    stack.undo()
    assert inner.node(inner_split).outputs == ("out0", "out1")


def test_changed_ports_are_saved_and_read_back(net):
    graph, split, _ = net
    edit(graph, split, 2)
    again = graph_from_data(graph_to_data(graph))
    assert again.node(split).outputs == ("out0", "out1")
    assert infer_shapes(again).output_shapes[split] == infer_shapes(graph).output_shapes[split]


def test_ports_out_of_step_with_the_values_follow_at_the_next_edit(net):
    """A file edited by hand may give a Split values its ports don't match; the next edit of
    the node (here: sizes following a connection) brings the ports in line, undoably."""
    graph, split, edges = net
    graph.set_param(split, "output_num", 2)  # not through a command: the ports stay
    assert graph.node(split).outputs == ("out0", "out1", "out2")
    stack = QUndoStack()
    command = SizeEditCommand(graph, (), split, {}, typed=False)
    assert perform(stack, command) is None and not command.isObsolete()
    assert graph.node(split).outputs == ("out0", "out1")
    assert edges["out2"].id not in graph.edges
    stack.undo()
    assert graph.node(split).outputs == ("out0", "out1", "out2")
    assert graph.edge(edges["out2"].id) == edges["out2"]
