"""Group many disjoint selections into composites at once, in time linear in the graph.

`editing.group` rebuilds the whole graph for each composite it makes: 150 residual blocks
of a 1,000-node network took 2 s. Here each selection is grouped by `editing.group` in a
small graph of its own (its nodes and stand-ins for their neighbours), so each composite
is exactly what grouping it in place makes; the graph then takes all of them in one
removal, the composites and their edges.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from app.document import SUBGRAPH_OUTPUT, Edge, Graph, Node, editing

_STAND_IN = "Outside"  # the type of a stand-in for a neighbour outside the selection


def group_all(graph: Graph, selections: Sequence[tuple[Sequence[str], str, str]]) -> list[str]:
    """Group each (node ids, definition, name) of `selections` into a composite.

    The selections must be disjoint, their names free, and none may be fed by a node
    outside it that it feeds (a loop), as for `editing.group`. Node and edge ids are kept
    as `editing.group` keeps them. Returns the composites' ids in the order given.
    """
    rank = {nid: i for i, nid in enumerate(graph.nodes)}
    owner = {nid: k for k, (members, _, _) in enumerate(selections) for nid in members}
    touching: list[list[Edge]] = [[] for _ in selections]
    for e in graph.edges.values():
        ends = {owner.get(e.src_node), owner.get(e.dst_node)} - {None}
        for k in ends:
            touching[k].append(e)
    composites: list[Node] = []
    outer: list[list[Edge]] = []
    result_port: dict[tuple[str, str], tuple[str, str]] = {}  # (node, port) -> composite's
    for k, (members, definition, name) in enumerate(selections):
        local = _neighbourhood(graph, set(members), touching[k], rank)
        grouping = editing.group(local, members, definition=definition, name=name)
        composite = local.node(grouping.node_id)
        inside = composite.subgraph
        for e in inside.edges.values():
            port = inside.node(e.dst_node)
            if port.type == SUBGRAPH_OUTPUT:
                result_port[(e.src_node, e.src_port)] = (composite.id, port.name)
        composites.append(composite)
        outer.append([e for e in local.edges.values() if composite.id in (e.src_node, e.dst_node)])

    graph.remove_nodes(owner)
    firsts = sorted((min(rank[n] for n in members), k)
                    for k, (members, _, _) in enumerate(selections))  # fmt: skip
    kept = sorted(rank[n] for n in graph.nodes)
    for placed, (first, k) in enumerate(firsts):  # where its first node was, as group does
        index = placed + bisect.bisect_left(kept, first)
        graph.add_node(composites[k], index=index)
    for k, composite in enumerate(composites):  # in order: each connects to what is there
        for e in outer[k]:
            if e.dst_node == composite.id:
                src, port = result_port.get((e.src_node, e.src_port), (e.src_node, e.src_port))
                graph.connect(src, port, composite.id, e.dst_port, edge_id=e.id)
            elif e.dst_node not in owner:  # into another selection: made from its side
                graph.connect(composite.id, e.src_port, e.dst_node, e.dst_port, edge_id=e.id)
    return [c.id for c in composites]


def _neighbourhood(graph: Graph, members: set[str], edges: list[Edge],
                   rank: dict[str, int]) -> Graph:  # fmt: skip
    """The selection's nodes, stand-ins for their neighbours, and the edges touching them,
    all in the graph's order."""
    local = Graph()
    near = members | {e.src_node for e in edges} | {e.dst_node for e in edges}
    for nid in sorted(near, key=rank.__getitem__):
        node = graph.node(nid)
        if nid not in members:
            node = Node(_STAND_IN, node.name, inputs=node.inputs, outputs=node.outputs, id=nid)
        local.add_node(node)
    for e in edges:
        local.connect(e.src_node, e.src_port, e.dst_node, e.dst_port, edge_id=e.id)
    return local
