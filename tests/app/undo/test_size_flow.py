"""Sizes nobody typed follow their input, down the graph; typed ones stay and say why."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QUndoStack

from app.catalogue import CATALOGUE
from app.compiler.shapes import fitting_params, infer_shapes
from app.compiler.size_flow import FOLLOWING, arriving, follow, misfits
from app.document import Graph, Project, editing
from app.document.data import graph_from_data, graph_to_data
from app.io.project_file import load_project, save_project
from app.undo.commands import perform
from app.undo.size_edit import SizeEditCommand


def add(graph: Graph, type_name: str, name: str, **params):
    return graph.add_node(CATALOGUE.new_node(type_name, name=name, params=params))


def chain(graph: Graph, *nodes) -> None:
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, "out", b.id, b.inputs[0])


@pytest.fixture
def net():
    """points (2,) → dense1 2→32 → relu → bn (32) → dense2 32→8, everything fitting."""
    project = Project()
    graph = project.graph
    nodes = [
        add(graph, "Input", "points", shape=(2,)),
        add(graph, "Dense", "dense1", in_channels=2, out_channels=32),
        add(graph, "ReLU", "relu"),
        add(graph, "BatchNorm1d", "bn", num_features=32),
        add(graph, "Dense", "dense2", in_channels=32, out_channels=8),
    ]
    chain(graph, *nodes)
    assert infer_shapes(graph).ok
    return project, {n.name: n.id for n in nodes}


def param(graph: Graph, node_id: str, key: str):
    return graph.node(node_id).params[key]


def edit(graph: Graph, node_id: str, key: str, value, *, path=(), typed=True):
    stack = QUndoStack()
    command = SizeEditCommand(graph, path, node_id, {key: value}, typed=typed)
    assert perform(stack, command) is None
    return stack, command


def test_a_width_change_flows_down_the_graph_as_one_undo_step(net):
    project, ids = net
    graph = project.graph
    stack, command = edit(graph, ids["dense1"], "out_channels", 16)
    assert param(graph, ids["bn"], "num_features") == 16  # through the ReLU
    assert param(graph, ids["dense2"], "in_channels") == 16  # and past the BatchNorm
    assert infer_shapes(graph).ok
    assert stack.count() == 1
    assert command.followed == [ids["bn"], ids["dense2"]]
    assert stack.undoText() == "Set dense1.out_channels to 16 (bn, dense2 follow)"
    stack.undo()
    assert param(graph, ids["dense1"], "out_channels") == 32
    assert param(graph, ids["bn"], "num_features") == 32
    assert param(graph, ids["dense2"], "in_channels") == 32
    stack.redo()
    assert param(graph, ids["dense2"], "in_channels") == 16


def test_the_input_shape_flows_into_the_first_layer(net):
    project, ids = net
    graph = project.graph
    stack, _ = edit(graph, ids["points"], "shape", (3,))
    assert param(graph, ids["dense1"], "in_channels") == 3
    assert param(graph, ids["bn"], "num_features") == 32  # dense1's width did not change
    stack.undo()
    assert param(graph, ids["dense1"], "in_channels") == 2


def test_a_typed_size_stays_and_says_why_it_no_longer_fits(net):
    project, ids = net
    graph = project.graph
    edit(graph, ids["dense2"], "in_channels", 32)  # typed, though it is what fits
    assert graph.node(ids["dense2"]).typed == {"in_channels"}
    edit(graph, ids["dense1"], "out_channels", 16)
    assert param(graph, ids["bn"], "num_features") == 16
    assert param(graph, ids["dense2"], "in_channels") == 32  # typed: it stays
    report = infer_shapes(graph)
    dense2 = graph.node(ids["dense2"])
    assert "expects 32" in report.errors[ids["dense2"]]
    why = misfits(dense2, arriving(report, graph, dense2))
    assert set(why) == {"in_channels"}
    assert "You typed 32" in why["in_channels"] and "(N, 16)" in why["in_channels"]
    assert misfits(graph.node(ids["bn"]), arriving(report, graph, graph.node(ids["bn"]))) == {}


def test_typing_a_width_that_is_not_a_size_marks_nothing(net):
    project, ids = net
    edit(project.graph, ids["dense1"], "out_channels", 16)
    assert project.graph.node(ids["dense1"]).typed == frozenset()


def test_a_fit_on_connect_makes_a_typed_size_follow_again(net):
    project, ids = net
    graph = project.graph
    edit(graph, ids["dense2"], "in_channels", 5)
    edit(graph, ids["dense2"], "in_channels", 32, typed=False)
    assert graph.node(ids["dense2"]).typed == frozenset()
    edit(graph, ids["dense1"], "out_channels", 16)
    assert param(graph, ids["dense2"], "in_channels") == 16


def test_in_an_old_file_a_size_that_did_not_fit_counts_as_typed(net):
    project, ids = net
    graph = project.graph
    graph.set_params(ids["dense2"], {"in_channels": 10})  # as an old file may hold it
    assert graph.node(ids["dense2"]).typed == frozenset()
    edit(graph, ids["dense1"], "out_channels", 16)
    assert param(graph, ids["bn"], "num_features") == 16
    assert param(graph, ids["dense2"], "in_channels") == 10


def test_sizes_follow_into_a_composite_and_back(net):
    project, ids = net
    graph = project.graph
    grouping = editing.group(graph, [ids["relu"], ids["bn"]], definition="Block", name="block")
    stack, _ = edit(graph, ids["dense1"], "out_channels", 16)
    inside = graph.node(grouping.node_id).subgraph
    assert inside.node(ids["bn"]).params["num_features"] == 16
    assert param(graph, ids["dense2"], "in_channels") == 16  # after the composite
    stack.undo()
    assert inside.node(ids["bn"]).params["num_features"] == 32
    assert param(graph, ids["dense2"], "in_channels") == 32
    assert follow(graph, infer_shapes(graph)) == []  # everything fits: nothing to follow


def test_an_edit_inside_a_composite_flows_out_of_it(net):
    project, ids = net
    graph = project.graph
    grouping = editing.group(graph, [ids["dense1"], ids["relu"]], definition="Block",
                             name="block")
    stack, command = edit(graph, ids["dense1"], "out_channels", 16, path=(grouping.node_id,))
    assert graph.node(grouping.node_id).subgraph.node(ids["dense1"]).params["out_channels"] == 16
    assert param(graph, ids["bn"], "num_features") == 16
    assert param(graph, ids["dense2"], "in_channels") == 16
    stack.undo()
    assert param(graph, ids["dense2"], "in_channels") == 32


def test_typed_marks_are_saved_and_old_files_without_them_load(net, tmp_path):
    project, ids = net
    graph = project.graph
    edit(graph, ids["dense2"], "in_channels", 32)
    data = graph_to_data(graph)
    nodes = {n["name"]: n for n in data["nodes"]}
    assert nodes["dense2"]["typed"] == ["in_channels"]
    assert "typed" not in nodes["dense1"]  # nothing typed: the node reads as before
    assert graph_from_data(data).node(ids["dense2"]).typed == {"in_channels"}
    path = tmp_path / "net.cwproj"
    save_project(project, path)
    assert load_project(path).graph.node(ids["dense2"]).typed == {"in_channels"}
    del nodes["dense2"]["typed"]  # a file from before the marks
    assert graph_from_data(data).node(ids["dense2"]).typed == frozenset()


def test_following_names_exactly_what_a_connection_fits():
    shapes = {"Dense": (None, 7), "Conv2d": (None, 7, 5, 5), "BatchNorm1d": (None, 7),
              "BatchNorm2d": (None, 7, 5, 5)}
    for type_name, keys in FOLLOWING.items():
        assert tuple(fitting_params(type_name, shapes[type_name])) == keys
