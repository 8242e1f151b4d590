"""Undo commands: each edit applies once, undoes and redoes exactly; refused edits never push."""

import numpy as np
import pytest
from PySide6.QtGui import QUndoStack

from app.document import ABSENT, Graph, Project, editing
from app.undo.commands import (
    AddNodeCommand,
    ConnectCommand,
    DisconnectCommand,
    MoveCommand,
    PasteCommand,
    RenameCommand,
    delete_command,
    graph_at,
    group_command,
    perform,
    ungroup_command,
)
from app.undo.size_edit import SizeEditCommand
from tests.app.document.document_samples import canonical, dense, mlp, sink, source


@pytest.fixture
def stack(qapp):
    stack = QUndoStack()
    yield stack
    stack.deleteLater()


def check_round_trip(stack, graph, command):
    """Apply, undo back to the start, redo to the end state; returns the end state."""
    before = canonical(graph)
    assert perform(stack, command) is None
    after = canonical(graph)
    assert after != before
    stack.undo()
    assert canonical(graph) == before
    stack.redo()
    assert canonical(graph) == after
    return after


def test_add_node_names_it_and_undoes(stack):
    graph = Graph()
    command = AddNodeCommand(graph, (), dense())
    check_round_trip(stack, graph, command)
    assert graph.node(command.node_id).name == "dense1"
    assert stack.undoText() == "Add Dense 'dense1'"


def test_move_is_one_command_for_many_nodes(stack):
    graph, (a, b, *_) = mlp()
    moves = {a.id: (a.position, (10.0, 20.0)), b.id: (b.position, (30.0, 40.0))}
    check_round_trip(stack, graph, MoveCommand(graph, (), moves))
    assert stack.count() == 1 and stack.undoText() == "Move 2 nodes"
    assert graph.node(b.id).position == (30.0, 40.0)


def test_connect_and_disconnect_keep_the_edge_id(stack):
    graph = Graph()
    a, b = graph.add_node(source()), graph.add_node(sink())
    connect = ConnectCommand(graph, (), a.id, "out", b.id, "in")
    check_round_trip(stack, graph, connect)
    assert list(graph.edges) == [connect.edge_id]
    assert stack.undoText() == "Connect input1 → output1"
    check_round_trip(stack, graph, DisconnectCommand(graph, (), connect.edge_id))
    assert not graph.edges
    stack.undo()
    assert list(graph.edges) == [connect.edge_id]


def test_a_refused_edit_is_not_pushed_and_changes_nothing(stack):
    graph, (a, b, c, d) = mlp()
    before = canonical(graph)
    message = perform(stack, ConnectCommand(graph, (), d.id, "out", a.id, "in"))
    assert message and "no output" in message
    message = perform(stack, ConnectCommand(graph, (), c.id, "out", b.id, "in"))
    assert "already connected" in message
    assert stack.count() == 0 and canonical(graph) == before


def test_rename_and_set_param(stack):
    graph, (_, b, *_) = mlp()
    check_round_trip(stack, graph, RenameCommand(graph, (), b.id, "encoder"))
    assert stack.undoText() == "Rename dense1 to encoder"
    check_round_trip(stack, graph, SizeEditCommand(graph, (), b.id, {"out_channels": 8}))
    assert stack.undoText().startswith("Set encoder.out_channels to 8")
    assert graph.node(b.id).params["out_channels"] == 8
    check_round_trip(stack, graph, SizeEditCommand(graph, (), b.id, {"out_channels": ABSENT}))
    assert "out_channels" not in graph.node(b.id).params


def test_delete_selection_of_nodes_and_edges_is_one_step(stack):
    graph, (a, b, c, d) = mlp()
    last_edge = graph.edge_into(d.id, "in").id
    command = delete_command(graph, (), [b.id], [last_edge])
    check_round_trip(stack, graph, command)
    assert set(graph.nodes) == {a.id, c.id, d.id} and not graph.edges
    assert stack.undoText() == "Delete 1 node and 1 edge"


def test_paste_carries_parameter_values_to_the_new_ids(stack):
    project = Project()
    graph = project.graph
    a, b = graph.add_node(source()), graph.add_node(dense())
    graph.connect(a.id, "out", b.id, "in")
    weight = np.arange(6, dtype=np.float32).reshape(2, 3)
    values = {b.id: {"weight": weight}}
    data = editing.copy(graph, [a.id, b.id])
    command = PasteCommand(graph, (), data, values, project.param_values, offset=(40, 40))
    check_round_trip(stack, graph, command)
    new_a, new_b = (graph.node(i) for i in command.node_ids)
    assert (new_a.name, new_b.name) == ("input2", "dense2")
    assert new_b.position == (40.0, 40.0)
    assert np.array_equal(project.param_values[new_b.id]["weight"], weight)
    assert project.param_values[new_b.id]["weight"] is not weight
    assert len(graph.edges) == 2
    stack.undo()
    assert new_b.id not in project.param_values
    stack.redo()
    assert np.array_equal(project.param_values[new_b.id]["weight"], weight)


def test_group_ungroup_and_edits_inside_survive_undo_of_the_group(stack):
    graph, (a, b, c, d) = mlp()
    group = group_command(graph, (), [b.id, c.id])
    check_round_trip(stack, graph, group)
    composite = group.result.node_id
    assert stack.undoText() == "Group 2 nodes into group1"
    inside = graph_at(graph, (composite,))
    assert {b.id, c.id} <= set(inside.nodes)
    check_round_trip(stack, graph, RenameCommand(graph, (composite,), b.id, "first"))
    # Undo both, redo both: the composite is rebuilt, and the path still finds it.
    stack.undo()
    stack.undo()
    assert b.id in graph.nodes
    stack.redo()
    stack.redo()
    assert graph_at(graph, (composite,)).node(b.id).name == "first"
    check_round_trip(stack, graph, ungroup_command(graph, (), composite))
    assert graph.node(b.id).name == "first" and composite not in graph.nodes


def test_an_undo_that_fails_is_logged_not_raised(stack, caplog):
    graph, (_, b, *_) = mlp()
    assert perform(stack, RenameCommand(graph, (), b.id, "x")) is None
    graph.rename_node(b.id, "y")  # behind the stack's back
    graph.add_node(dense("dense1"))  # so undoing to 'dense1' is refused
    stack.undo()
    assert "failed" in caplog.text and graph.node(b.id).name == "y"
