"""Compound edits: group/ungroup, copy/paste, and snapshot/restore as their undo."""

from __future__ import annotations

import numpy as np
import pytest

from app.document import (
    COMPOSITE,
    SUBGRAPH_INPUT,
    SUBGRAPH_OUTPUT,
    DocumentError,
    EdgeAdded,
    EdgeRemoved,
    Graph,
    Hook,
    NodeAdded,
    NodeRemoved,
    NodeRenamed,
    Project,
    editing,
)
from app.document.data import graph_from_data, graph_to_data, restore_graph
from tests.app.document.document_samples import (
    add_node,
    canonical,
    chain,
    connections,
    dense,
    mlp,
    sink,
    source,
)


def names(graph: Graph) -> list[str]:
    return [n.name for n in graph.nodes.values()]


def wiring(graph: Graph) -> set[tuple[str, str, str, str]]:
    """Edges by the names and ports they join."""
    name = {n.id: n.name for n in graph.nodes.values()}
    return {
        (name[e.src_node], e.src_port, name[e.dst_node], e.dst_port) for e in graph.edges.values()
    }


# ---- group --------------------------------------------------------------------------------


def test_group_a_chain_segment():
    graph, (a, b, c, d) = mlp()
    in_edge, mid_edge, out_edge = graph.edges.values()
    events: list = []
    graph.events.subscribe(events.append)
    grouping = editing.group(graph, [c.id, b.id], definition="Block")

    composite = graph.node(grouping.node_id)
    assert names(graph) == ["input1", "block1", "output1"]
    assert composite.type == COMPOSITE and composite.definition == "Block"
    assert (composite.inputs, composite.outputs) == (("in",), ("out",))
    assert grouping.node_ids == (b.id, c.id)
    assert wiring(graph) == {("input1", "out", "block1", "in"), ("block1", "out", "output1", "in")}
    inside = composite.subgraph
    assert [n.type for n in inside.nodes.values()] == [
        SUBGRAPH_INPUT,
        "Dense",
        "Dense",
        SUBGRAPH_OUTPUT,
    ]
    assert wiring(inside) == {
        ("in", "out", "dense1", "in"),
        ("dense1", "out", "dense2", "in"),
        ("dense2", "out", "out", "in"),
    }
    # ids survive: nodes, the inner edge, the edge in (now inside), the edge out (outside)
    assert inside.node(b.id) is b and mid_edge.id in inside.edges and in_edge.id in inside.edges
    assert out_edge.id in graph.edges
    # the edge out keeps its id but now leaves the composite: removed, then added anew
    assert [type(e) for e in events] == [
        EdgeRemoved,
        EdgeRemoved,
        EdgeRemoved,
        NodeRemoved,
        NodeRemoved,
        NodeAdded,
        EdgeAdded,
        EdgeAdded,
    ]
    assert graph.topological_order()[1] == composite.id


def test_group_makes_one_port_per_outside_source_and_per_used_output():
    graph = Graph()
    x, y = graph.add_node(source("x")), graph.add_node(source("y"))
    p, q = graph.add_node(add_node("p")), graph.add_node(add_node("q"))
    out1, out2, out3 = (graph.add_node(sink(f"o{i}")) for i in range(3))
    graph.connect(x.id, "out", p.id, "x")
    graph.connect(x.id, "out", q.id, "x")  # same source again: same port
    graph.connect(y.id, "out", p.id, "y")
    graph.connect(p.id, "out", q.id, "y")
    graph.connect(q.id, "out", out1.id, "in")
    graph.connect(q.id, "out", out2.id, "in")  # same output again: same port
    graph.connect(p.id, "out", out3.id, "in")
    grouping = editing.group(graph, [p.id, q.id], definition="Pair", name="pair")
    composite = graph.node(grouping.node_id)
    assert composite.name == "pair"
    assert (composite.inputs, composite.outputs) == (("in1", "in2"), ("out1", "out2"))
    assert wiring(graph) == {
        ("x", "out", "pair", "in1"),
        ("y", "out", "pair", "in2"),
        ("pair", "out1", "o0", "in"),
        ("pair", "out1", "o1", "in"),
        ("pair", "out2", "o2", "in"),
    }
    assert wiring(composite.subgraph) == {
        ("in1", "out", "p", "x"),
        ("in1", "out", "q", "x"),
        ("in2", "out", "p", "y"),
        ("p", "out", "q", "y"),
        ("q", "out", "out1", "in"),
        ("p", "out", "out2", "in"),
    }


def test_group_refusals():
    graph, (a, b, c, d) = mlp()
    before = canonical(graph)
    with pytest.raises(DocumentError, match="'dense1' is fed by the selection and feeds it"):
        editing.group(graph, [a.id, c.id])
    with pytest.raises(DocumentError, match="at least one"):
        editing.group(graph, [])
    with pytest.raises(DocumentError, match="no node"):
        editing.group(graph, [a.id, "nope"])
    with pytest.raises(DocumentError, match="already named 'output1'"):
        editing.group(graph, [b.id], name="output1")
    with pytest.raises(DocumentError, match="Definition name"):
        editing.group(graph, [b.id], definition="not ok")
    assert canonical(graph) == before


def test_a_composite_may_take_a_selected_nodes_name():
    graph, (a, b, c, d) = mlp()
    grouping = editing.group(graph, [b.id], name="dense1")
    assert graph.node(grouping.node_id).name == "dense1"


def test_group_and_ungroup_round_trip():
    graph, (a, b, c, d) = mlp()
    before_nodes = [graph.node(i) for i in graph.nodes]
    before_edges = connections(graph)
    grouping = editing.group(graph, [b.id, c.id])
    ungrouping = editing.ungroup(graph, grouping.node_id)
    assert ungrouping.node_ids == (b.id, c.id) and not ungrouping.renamed
    assert [graph.node(i) for i in graph.nodes] == before_nodes  # same node objects, same order
    assert connections(graph) == before_edges  # same edge ids and endpoints


def test_group_undo_and_redo_by_snapshots_are_exact():
    graph, (a, b, c, d) = mlp()
    before = graph_to_data(graph)
    editing.group(graph, [b.id, c.id])
    after = graph_to_data(graph)
    restore_graph(graph, before)
    assert canonical(graph) == canonical(graph_from_data(before))
    restore_graph(graph, after)
    assert canonical(graph) == canonical(graph_from_data(after))


def test_nested_groups_and_ungroup_with_name_clashes():
    graph, (a, b, c, d) = mlp()
    outer = editing.group(graph, [b.id, c.id], definition="Outer")
    inside = graph.node(outer.node_id).subgraph
    inner = editing.group(inside, [b.id], definition="Inner")
    assert graph.find(b.id)[0] is inside.node(inner.node_id).subgraph
    # a node outside now takes the name of one inside the composite
    graph.rename_node(a.id, "dense2")
    ungrouping = editing.ungroup(graph, outer.node_id)
    assert ungrouping.renamed == {c.id: ("dense2", "dense1")}
    assert names(graph) == ["dense2", "inner1", "dense1", "output1"]
    assert wiring(graph) == {
        ("dense2", "out", "inner1", "in"),
        ("inner1", "out", "dense1", "in"),
        ("dense1", "out", "output1", "in"),
    }
    assert editing.ungroup(graph, inner.node_id).renamed == {b.id: ("dense1", "dense3")}
    assert names(graph) == ["dense2", "dense3", "dense1", "output1"]


def test_ungroup_a_port_passed_straight_through():
    graph, (a, b, c, d) = mlp()
    grouping = editing.group(graph, [b.id])
    inside = graph.node(grouping.node_id).subgraph
    port_in, port_out = inside.node_named("in"), inside.node_named("out")
    inside.remove_node(b.id)
    inside.connect(port_in.id, "out", port_out.id, "in")
    editing.ungroup(graph, grouping.node_id)
    assert wiring(graph) == {("input1", "out", "dense2", "in"), ("dense2", "out", "output1", "in")}


def test_ungroup_refuses_a_plain_node():
    graph, (a, *_) = mlp()
    with pytest.raises(DocumentError, match="not a composite"):
        editing.ungroup(graph, a.id)


def test_the_ports_of_a_composite_are_fixed_from_inside():
    graph, (a, b, c, d) = mlp()
    composite = graph.node(editing.group(graph, [b.id]).node_id)
    inside = composite.subgraph
    port = inside.node_named("in")
    with pytest.raises(DocumentError, match="port of this composite"):
        inside.remove_node(port.id)
    with pytest.raises(DocumentError, match="names a port"):
        inside.rename_node(port.id, "x")
    with pytest.raises(DocumentError, match="follow its inside"):
        graph.set_ports(composite.id, ["a"], ["b"])
    snapshot = graph_to_data(inside)
    snapshot["nodes"] = [n for n in snapshot["nodes"] if n["type"] != SUBGRAPH_OUTPUT]
    snapshot["edges"] = [
        e for e in snapshot["edges"] if e["dst"] in {n["id"] for n in snapshot["nodes"]}
    ]
    with pytest.raises(DocumentError, match="can't change from inside"):
        restore_graph(inside, snapshot)
    with pytest.raises(DocumentError, match="made by grouping"):
        restore_graph(graph, {"nodes": [dict(snapshot["nodes"][0])], "edges": []})


def test_restore_keeps_a_composites_inside_object_and_tells_its_watchers():
    graph, (a, b, c, d) = mlp()
    composite = graph.node(editing.group(graph, [b.id, c.id]).node_id)
    inside = composite.subgraph
    snapshot = graph_to_data(graph)
    inner_events: list = []
    inside.events.subscribe(inner_events.append)
    inside.rename_node(b.id, "renamed")
    restore_graph(graph, snapshot)
    assert graph.node(composite.id).subgraph is inside
    assert inside.node(b.id).name == "dense1"
    assert inner_events == [
        NodeRenamed(b.id, "dense1", "renamed"),
        NodeRenamed(b.id, "renamed", "dense1"),
    ]


def test_parameter_values_and_hooks_follow_nodes_into_a_composite():
    graph, (a, b, c, d) = mlp()
    edge_in = graph.edge_into(b.id, "in")
    project = Project(graph=graph, hooks=[Hook("forward", b.id), Hook("hook_backward", edge_in.id)])
    project.param_values[b.id] = {"weight": np.ones((3, 2))}
    editing.group(graph, [b.id, c.id])
    assert b.id in project.live_param_values() and len(project.live_hooks()) == 2
    graph.remove_node(next(n.id for n in graph.nodes.values() if n.type == COMPOSITE))
    assert project.live_param_values() == {} and project.live_hooks() == []
    assert b.id in project.param_values  # kept in memory for an undo


# ---- copy / paste -------------------------------------------------------------------------


def test_copy_and_paste_make_fresh_ids_and_free_names():
    graph, (a, b, c, d) = mlp()
    editing.group(graph, [c.id])
    data = editing.copy(graph, [b.id, next(iter(graph.nodes.values())).id, list(graph.nodes)[2]])
    assert len(data["nodes"]) == 3 and len(data["edges"]) == 2
    pasted = editing.paste(graph, data, offset=(50, 0))
    new = [graph.node(i) for i in pasted.node_ids]
    assert [n.name for n in new] == ["input2", "dense2", "group2"]  # dense2 is inside group1
    assert all(n.id not in (a.id, b.id) for n in new)
    assert new[1].position == (b.position[0] + 50, b.position[1])
    assert pasted.id_map[b.id] == new[1].id and pasted.id_map[c.id] != c.id  # inner ids too
    copied_inner = new[2].subgraph
    assert pasted.id_map[c.id] in copied_inner.nodes
    assert len(graph.edges) == 3 + 2


def test_paste_refuses_malformed_data_and_changes_nothing():
    graph, (a, b, c, d) = mlp()
    data = editing.copy(graph, [b.id, c.id])
    data["edges"].append(dict(data["edges"][0], dst="elsewhere"))
    before = canonical(graph)
    with pytest.raises(DocumentError):
        editing.paste(graph, data)
    with pytest.raises(DocumentError):
        editing.paste(graph, {"nodes": "x", "edges": []})
    assert canonical(graph) == before


def test_copy_skips_a_composites_port_nodes():
    graph, (a, b, c, d) = mlp()
    inside = graph.node(editing.group(graph, [b.id]).node_id).subgraph
    data = editing.copy(inside, list(inside.nodes))
    assert [n["type"] for n in data["nodes"]] == ["Dense"]
    editing.paste(inside, data)
    assert names(inside) == ["in", "dense1", "out", "dense2"]


def test_chain_helper_connects_first_inputs():
    graph = Graph()
    a, b = chain(graph, source(), dense())
    assert graph.edge_into(b.id, "in").src_node == a.id
