"""Graph edits: each real change emits one id-carrying event; refused edits change nothing."""

from __future__ import annotations

import dataclasses

import pytest

from app.document import (
    ABSENT,
    SUBGRAPH_INPUT,
    DocumentError,
    Edge,
    EdgeAdded,
    EdgeRemoved,
    Graph,
    Node,
    NodeAdded,
    NodeMoved,
    NodeRemoved,
    NodeRenamed,
    ParamChanged,
    PortsChanged,
)
from app.document.data import graph_from_data, graph_to_data, restore_graph
from tests.app.document.document_samples import add_node, canonical, chain, dense, mlp, sink, source


@pytest.fixture
def recorded():
    """A graph and the list of events it emits."""
    graph = Graph()
    events: list = []
    graph.events.subscribe(events.append)
    return graph, events


def refused(graph: Graph, events: list, edit, match: str) -> None:
    """The edit raises DocumentError with `match`, and neither the graph nor events change."""
    before, seen = canonical(graph), len(events)
    with pytest.raises(DocumentError, match=match):
        edit()
    assert canonical(graph) == before
    assert len(events) == seen


# ---- add / remove -------------------------------------------------------------------------


def test_add_node_names_it_from_its_type_and_emits(recorded):
    graph, events = recorded
    a = graph.add_node(dense())
    b = graph.add_node(dense())
    c = graph.add_node(Node("Conv2d", inputs=("in",), outputs=("out",)))
    assert [a.name, b.name, c.name] == ["dense1", "dense2", "conv2d1"]
    assert events == [NodeAdded(a.id), NodeAdded(b.id), NodeAdded(c.id)]
    assert graph.node(a.id) is a and len(a.id) == 32 and list(graph.nodes) == [a.id, b.id, c.id]


def test_add_node_at_an_index(recorded):
    graph, _ = recorded
    a, b = graph.add_node(dense()), graph.add_node(dense())
    c = graph.add_node(dense(), index=1)
    assert list(graph.nodes) == [a.id, c.id, b.id]


def test_add_node_refusals(recorded):
    graph, events = recorded
    a = graph.add_node(dense("fc"))
    refused(graph, events, lambda: graph.add_node(dense("fc")), "already named 'fc'")
    refused(
        graph, events, lambda: graph.add_node(dense("fc2").replace(id=a.id)), "already in the graph"
    )
    refused(graph, events, lambda: graph.add_node("fc"), "Expected a Node")
    port = Node(SUBGRAPH_INPUT, "in", outputs=("out",))
    refused(graph, events, lambda: graph.add_node(port), "made by grouping")


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: dense("2fast"), "not allowed"),
        (lambda: dense("my layer"), "not allowed"),
        (lambda: dense("a.b"), "not allowed"),
        (lambda: dense("x" * 65), "too long"),
        (lambda: Node("", "a"), "not a valid type"),
        (lambda: Node("Dense", inputs="in"), "not one string"),
        (lambda: Node("Dense", inputs=("in", "in")), "twice"),
        (lambda: Node("Dense", params={"units": float("nan")}), "finite"),
        (lambda: Node("Dense", params={"units": {"a": 1}}), "not dict"),
        (lambda: Node("Dense", params={"bad key": 1}), "not allowed"),
        (lambda: Node("Dense", position=(0, float("inf"))), "finite"),
        (lambda: Node("Dense", position="xy"), "two numbers"),
        (lambda: Node("Dense", id="has space"), "node id"),
        (lambda: Node("Composite"), "subgraph"),
    ],
)
def test_malformed_nodes_are_refused_with_a_reason(make, match):
    with pytest.raises(DocumentError, match=match):
        make()


def test_nodes_are_immutable_and_params_normalized():
    node = Node("Conv2d", params={"kernel_size": [3, [1, 2]], "n": __import__("numpy").int64(4)})
    assert node.params == {"kernel_size": (3, (1, 2)), "n": 4} and type(node.params["n"]) is int
    with pytest.raises(TypeError):
        node.params["n"] = 5  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.name = "x"  # type: ignore[misc]


def test_remove_node_removes_its_edges_first(recorded):
    graph, events = recorded
    a, b, c = chain(graph, source(), dense(), sink())
    ab, bc = graph.edges.values()
    del events[:]
    removal = graph.remove_node(b.id)
    assert events == [EdgeRemoved(ab.id, ab), EdgeRemoved(bc.id, bc), NodeRemoved(b.id, b)]
    assert list(graph.nodes) == [a.id, c.id] and not graph.edges
    refused(graph, events, lambda: graph.remove_node(b.id), "no node")
    assert removal.nodes == ((1, b),)


def test_reinsert_undoes_a_delete_exactly(recorded):
    graph, events = recorded
    chain(graph, source(), dense(), dense(), sink())
    before = canonical(graph)
    middle = list(graph.nodes)[1:3]
    removal = graph.remove_nodes(middle)
    del events[:]
    graph.reinsert(removal)
    assert canonical(graph) == before
    assert [type(e) for e in events] == [NodeAdded, NodeAdded] + [EdgeAdded] * 3
    with pytest.raises(DocumentError):
        graph.reinsert(removal)  # already back


# ---- rename / params / move / ports -------------------------------------------------------


def test_rename(recorded):
    graph, events = recorded
    a, b = graph.add_node(dense()), graph.add_node(dense())
    del events[:]
    graph.rename_node(a.id, "encoder")
    assert events == [NodeRenamed(a.id, "dense1", "encoder")] and graph.node(a.id).name == "encoder"
    graph.rename_node(a.id, "encoder")  # no-op
    assert len(events) == 1
    refused(graph, events, lambda: graph.rename_node(a.id, "dense2"), "already named 'dense2'")
    refused(graph, events, lambda: graph.rename_node(a.id, ""), "can't be empty")
    refused(graph, events, lambda: graph.rename_node(a.id, "a b"), "not allowed")
    refused(graph, events, lambda: graph.rename_node("nope", "x"), "no node")
    assert graph.node_named("dense2") is graph.node(b.id)


def test_set_param_emits_old_and_new(recorded):
    graph, events = recorded
    a = graph.add_node(dense(units=4))
    del events[:]
    graph.set_param(a.id, "units", 8)
    graph.set_param(a.id, "activation", "relu")
    graph.set_param(a.id, "units", 8)  # no-op
    assert events == [
        ParamChanged(a.id, "units", 4, 8),
        ParamChanged(a.id, "activation", ABSENT, "relu"),
    ]
    assert dict(graph.node(a.id).params) == {"units": 8, "activation": "relu"}


def test_set_param_tells_int_float_and_bool_apart(recorded):
    graph, events = recorded
    a = graph.add_node(dense(flag=1))
    del events[:]
    graph.set_param(a.id, "flag", True)
    graph.set_param(a.id, "flag", 1.0)
    graph.set_param(a.id, "flag", 1.0)
    graph.set_param(a.id, "flag", -0.0)
    assert [(e.old, e.new) for e in events] == [(1, True), (True, 1.0), (1.0, -0.0)]


def test_set_params_and_unset(recorded):
    graph, events = recorded
    a = graph.add_node(dense(units=4, bias=True))
    del events[:]
    graph.set_params(a.id, {"units": 4, "bias": False, "kernel": [3, 3], "gone": ABSENT})
    assert events == [
        ParamChanged(a.id, "bias", True, False),
        ParamChanged(a.id, "kernel", ABSENT, (3, 3)),
    ]
    graph.set_param(a.id, "bias", ABSENT)
    assert events[-1] == ParamChanged(a.id, "bias", False, ABSENT)
    assert "bias" not in graph.node(a.id).params
    bad = {"units": 5, "shape": object()}
    refused(graph, events, lambda: graph.set_params(a.id, bad), "not object")
    refused(graph, events, lambda: graph.set_param(a.id, "x", float("inf")), "finite")
    refused(graph, events, lambda: graph.set_param("nope", "x", 1), "no node")


def test_move(recorded):
    graph, events = recorded
    a, b = graph.add_node(dense()), graph.add_node(dense().replace(position=(5, 5)))
    del events[:]
    graph.move_node(a.id, (10, 20))
    graph.move_node(a.id, (10.0, 20.0))  # no-op
    graph.move_nodes({a.id: (10, 20), b.id: (6, 6)})  # only b moved
    assert events == [
        NodeMoved(a.id, (0.0, 0.0), (10.0, 20.0)),
        NodeMoved(b.id, (5.0, 5.0), (6.0, 6.0)),
    ]
    refused(graph, events, lambda: graph.move_nodes({a.id: (1, 1), "nope": (0, 0)}), "no node")
    refused(graph, events, lambda: graph.move_node(a.id, (float("nan"), 0)), "finite")


def test_set_ports(recorded):
    graph, events = recorded
    a, cat = chain(graph, source(), Node("Concat", inputs=("x0",), outputs=("out",)))
    del events[:]
    graph.set_ports(cat.id, ["x0", "x1"], ["out"])
    assert events == [PortsChanged(cat.id, ("x0",), ("out",))]
    assert graph.node(cat.id).inputs == ("x0", "x1")
    graph.set_ports(cat.id, ["x0", "x1"], ["out"])  # no-op
    assert len(events) == 1
    refused(graph, events, lambda: graph.set_ports(cat.id, ["x1"], ["out"]), "'x0'.*connected")
    refused(graph, events, lambda: graph.set_ports(a.id, [], []), "'out'.*connected")


# ---- connect / disconnect -----------------------------------------------------------------


def test_connect_and_disconnect(recorded):
    graph, events = recorded
    a, b = graph.add_node(source()), graph.add_node(dense())
    del events[:]
    edge = graph.connect(a.id, "out", b.id, "in")
    assert events == [EdgeAdded(edge.id)] and graph.edge(edge.id) == edge
    assert graph.edge_into(b.id, "in") == edge and graph.edges_from(a.id) == [edge]
    assert graph.disconnect(edge.id) == edge
    assert events[-1] == EdgeRemoved(edge.id, edge) and not graph.edges
    refused(graph, events, lambda: graph.disconnect(edge.id), "no connection")


def test_an_output_may_feed_many_inputs(recorded):
    graph, _ = recorded
    a, add = graph.add_node(source()), graph.add_node(add_node())
    graph.connect(a.id, "out", add.id, "x")
    graph.connect(a.id, "out", add.id, "y")
    assert len(graph.edges_from(a.id, "out")) == 2


def test_connect_refusals(recorded):
    graph, events = recorded
    a, b, c = chain(graph, source(), dense(), dense())
    d = graph.add_node(add_node())

    def connect(*args, **kw):
        return lambda: graph.connect(*args, **kw)

    refused(graph, events, connect("nope", "out", d.id, "x"), "no node")
    refused(graph, events, connect(a.id, "y", d.id, "x"), "no output 'y' \\(it has: out\\)")
    refused(graph, events, connect(a.id, "out", d.id, "z"), "no input 'z' \\(it has: x, y\\)")
    refused(graph, events, connect(d.id, "out", d.id, "x"), "itself")
    refused(graph, events, connect(a.id, "out", b.id, "in"), "already connected")
    edge_id = next(iter(graph.edges))
    refused(graph, events, connect(a.id, "out", d.id, "x", edge_id=edge_id), "already in the graph")
    graph.connect(c.id, "out", d.id, "x")
    # d's output feeding back into the chain makes a loop: a -> b -> c -> d -> (b or d.y)
    graph.disconnect(graph.edge_into(b.id, "in").id)
    refused(graph, events, connect(d.id, "out", b.id, "in"), "loop")


def test_connect_with_a_given_edge_id(recorded):
    graph, _ = recorded
    a, b = graph.add_node(source()), graph.add_node(dense())
    assert graph.connect(a.id, "out", b.id, "in", edge_id="e1").id == "e1"


# ---- queries ------------------------------------------------------------------------------


def test_topological_order_is_stable_by_insertion():
    graph = Graph()
    late = graph.add_node(sink("late"))
    b = graph.add_node(dense("b"))
    a = graph.add_node(source("a"))
    c = graph.add_node(dense("c"))
    graph.connect(a.id, "out", b.id, "in")
    graph.connect(b.id, "out", late.id, "in")
    graph.connect(a.id, "out", c.id, "in")
    names = [graph.node(i).name for i in graph.topological_order()]
    assert names == ["a", "b", "late", "c"]
    assert graph.topological_order() == graph.topological_order()


def test_topological_order_of_a_long_chain_needs_no_recursion():
    nodes = [dense(f"d{i}") for i in range(3000)]
    edges = [Edge(a.id, "out", b.id, "in") for a, b in zip(nodes[1:], nodes, strict=False)]
    graph = Graph._build(nodes, edges, subgraph=False)  # wired back to front
    order = graph.topological_order()
    assert order[0] == nodes[-1].id and order[-1] == nodes[0].id


def test_walk_find_and_free_names():
    graph, (a, *_) = mlp()
    assert [n.name for _, n in graph.walk()] == ["input1", "dense1", "dense2", "output1"]
    assert graph.find(a.id) == (graph, a) and graph.find("nope") is None
    assert graph.free_name("dense1") == "dense3" and graph.free_name("fresh") == "fresh"
    assert graph.unique_name("dense") == "dense3"
    assert len(graph) == 4 and a.id in graph and [n.id for n in graph][0] == a.id


def test_data_round_trip_and_restore(recorded):
    graph, events = recorded
    chain(graph, source(), dense(units=3, k=(1, 2.0, None, "s", True)), sink())
    data = graph_to_data(graph)
    assert canonical(graph_from_data(data)) == canonical(graph)
    graph.rename_node(next(iter(graph.nodes)), "x")
    restore_graph(graph, data)
    assert canonical(graph) == canonical(graph_from_data(data))
    seen = len(events)
    restore_graph(graph, data)  # nothing to do
    assert len(events) == seen


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda d: d.pop("edges"), "exactly 'nodes' and 'edges'"),
        (lambda d: d["nodes"].append(5), "Expected a node"),
        (lambda d: d["nodes"][0].pop("name"), "missing 'name'"),
        (lambda d: d["nodes"][0].update(extra=1), "unexpected 'extra'"),
        (lambda d: d["nodes"][1].update(name="input1"), "already named"),
        (lambda d: d["edges"][0].update(dst="nope"), "no node"),
        (lambda d: d["edges"][1].update(dst_port="bogus"), "no input 'bogus'"),
        (lambda d: d["edges"].append(dict(d["edges"][0], id="other")), "already connected"),
        (lambda d: d["nodes"][0].update(inputs=[["x"]]), "malformed|Port name"),
    ],
)
def test_from_data_refuses_malformed_data(mutate, match):
    graph, _ = mlp()
    data = graph_to_data(graph)
    mutate(data)
    with pytest.raises(DocumentError, match=match):
        graph_from_data(data)


def test_from_data_refuses_a_loop():
    graph, (a, b, c, d) = mlp()
    data = graph_to_data(graph)
    graph.disconnect(graph.edge_into(b.id, "in").id)
    data = graph_to_data(graph)
    data["edges"].append(
        {"id": "loop", "src": c.id, "src_port": "out", "dst": b.id, "dst_port": "in"}
    )
    with pytest.raises(DocumentError, match="loop"):
        graph_from_data(data)
