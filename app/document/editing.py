"""Compound graph edits: group a selection into a composite, ungroup it, copy and paste."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from app.document.data import edge_to_data, graph_from_data, node_to_data, rename_ids
from app.document.graph import Graph, reachable
from app.document.node import (
    BOUNDARY_TYPES,
    COMPOSITE,
    SUBGRAPH_INPUT,
    SUBGRAPH_OUTPUT,
    DocumentError,
    Edge,
    Node,
    check_name,
    new_id,
    position,
)

_NUMBER = re.compile(r"(\w*?[A-Za-z_])(\d+)")  # 'dense2' -> 'dense', '2'
_PORT_GAP = 200.0  # how far left/right of the selection a composite's port nodes sit


@dataclass(frozen=True)
class Grouping:
    node_id: str  # the new composite node
    node_ids: tuple[str, ...]  # the nodes now inside it
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class Ungrouping:
    node_ids: tuple[str, ...]  # the nodes taken out, now in the graph
    renamed: Mapping[str, tuple[str, str]]  # node id -> (old, new) where a name was taken


@dataclass(frozen=True)
class Pasted:
    node_ids: tuple[str, ...]
    id_map: Mapping[str, str]  # copied id -> new id, for nodes and edges at every level


def group(
    graph: Graph, node_ids: Iterable[str], *, definition: str = "Group", name: str = ""
) -> Grouping:
    """Move the selection into a new composite node (named from `definition` if no `name`).

    Each outside output feeding the selection becomes one input port, each selected
    output used outside one output port. Node and edge ids are kept (an edge into the
    selection keeps its id on the inside, an edge out of it on the outside), so
    Parameter values and hooks stay attached.
    """
    chosen = _selection(graph, node_ids)
    if not chosen:
        raise DocumentError("Select at least one node to group.")
    check_name(definition, "Definition name")
    inside = set(chosen)
    outside_names = {n.name for n in graph.nodes.values() if n.id not in inside}
    if name:
        check_name(name)
        if name in outside_names:
            raise DocumentError(f"Another node is already named '{name}'.")
    else:
        name = graph.unique_name(definition.lower())
    _refuse_loops(graph, inside)

    edges = list(graph.edges.values())
    sources = list(
        dict.fromkeys(
            (e.src_node, e.src_port)
            for e in edges
            if e.src_node not in inside and e.dst_node in inside
        )
    )
    sinks = list(
        dict.fromkeys(
            (e.src_node, e.src_port)
            for e in edges
            if e.src_node in inside and e.dst_node not in inside
        )
    )
    inner_names = {graph.node(i).name for i in chosen}
    in_ports = _port_names("in", len(sources), inner_names)
    out_ports = _port_names("out", len(sinks), inner_names | set(in_ports))

    xs = [graph.node(i).position[0] for i in chosen]
    ys = [graph.node(i).position[1] for i in chosen]
    centre = (sum(xs) / len(xs), sum(ys) / len(ys))
    port_in = {
        key: Node(SUBGRAPH_INPUT, port, outputs=("out",), position=(min(xs) - _PORT_GAP, y))
        for key, port, y in zip(sources, in_ports, _spread(centre[1], len(sources)), strict=True)
    }
    port_out = {
        key: Node(SUBGRAPH_OUTPUT, port, inputs=("in",), position=(max(xs) + _PORT_GAP, y))
        for key, port, y in zip(sinks, out_ports, _spread(centre[1], len(sinks)), strict=True)
    }
    composite_id = new_id()
    inner_edges: list[Edge] = []
    outer_edges: list[Edge] = []
    wired: set[tuple[str, str]] = set()  # sources and sinks whose port edge exists already
    for e in edges:
        key = (e.src_node, e.src_port)
        if e.src_node in inside and e.dst_node in inside:
            inner_edges.append(e)
        elif e.dst_node in inside:
            port = port_in[key]
            if key not in wired:
                wired.add(key)
                outer_edges.append(Edge(e.src_node, e.src_port, composite_id, port.name))
            inner_edges.append(Edge(port.id, "out", e.dst_node, e.dst_port, e.id))
        elif e.src_node in inside:
            port = port_out[key]
            if key not in wired:
                wired.add(key)
                inner_edges.append(Edge(e.src_node, e.src_port, port.id, "in"))
            outer_edges.append(Edge(composite_id, port.name, e.dst_node, e.dst_port, e.id))
        else:
            outer_edges.append(e)
    inner_nodes = [port_in[k] for k in sources] + [graph.node(i) for i in chosen]
    inner_nodes += [port_out[k] for k in sinks]
    composite = Node(
        COMPOSITE,
        name,
        inputs=in_ports,
        outputs=out_ports,
        position=centre,
        subgraph=Graph._build(inner_nodes, inner_edges, subgraph=True),
        definition=definition,
        id=composite_id,
    )
    nodes = []
    for node in graph.nodes.values():
        if node.id == chosen[0]:
            nodes.append(composite)
        if node.id not in inside:
            nodes.append(node)
    graph._adopt(nodes, outer_edges)
    return Grouping(composite_id, tuple(chosen), tuple(in_ports), tuple(out_ports))


def ungroup(graph: Graph, node_id: str) -> Ungrouping:
    """Put a composite's inside back in its place, rewiring its ports' edges through."""
    composite = graph.node(node_id)
    if composite.subgraph is None:
        raise DocumentError(f"'{composite.name}' is not a composite.")
    sub = composite.subgraph
    ports_in = {n.id: n.name for n in sub.nodes.values() if n.type == SUBGRAPH_INPUT}
    ports_out = {n.id: n.name for n in sub.nodes.values() if n.type == SUBGRAPH_OUTPUT}
    feeds = {e.dst_port: e for e in graph.edges.values() if e.dst_node == node_id}
    result_of = {ports_out[e.dst_node]: e for e in sub.edges.values() if e.dst_node in ports_out}

    def seen_outside(node: str, port: str) -> tuple[str, str] | None:
        if node in ports_in:  # a port passed straight through: whatever feeds it outside
            e = feeds.get(ports_in[node])
            return None if e is None else (e.src_node, e.src_port)
        return node, port

    taken = {n.name for n in graph.nodes.values() if n.id != node_id}
    renamed: dict[str, tuple[str, str]] = {}
    inner: list[Node] = []
    for node in sub.nodes.values():
        if node.type in BOUNDARY_TYPES:
            continue
        name = graph.free_name(node.name, taken)
        taken.add(name)
        if name != node.name:
            renamed[node.id] = (node.name, name)
            node = node.replace(name=name)
        inner.append(node)

    edges: list[Edge] = []
    for e in graph.edges.values():
        if e.dst_node == node_id:
            port_id = next(i for i, p in ports_in.items() if p == e.dst_port)
            edges += [
                Edge(e.src_node, e.src_port, x.dst_node, x.dst_port, x.id)
                for x in sub.edges.values()
                if x.src_node == port_id and x.dst_node not in ports_out
            ]
        elif e.src_node == node_id:
            inside = result_of.get(e.src_port)
            src = None if inside is None else seen_outside(inside.src_node, inside.src_port)
            if src is not None:
                edges.append(Edge(*src, e.dst_node, e.dst_port, e.id))
        else:
            edges.append(e)
    boundary = ports_in.keys() | ports_out.keys()
    edges += [
        e for e in sub.edges.values() if e.src_node not in boundary and e.dst_node not in boundary
    ]
    nodes = []
    for node in graph.nodes.values():
        nodes += inner if node.id == node_id else [node]
    graph._adopt(nodes, edges)
    return Ungrouping(tuple(n.id for n in inner), MappingProxyType(renamed))


def copy(graph: Graph, node_ids: Iterable[str]) -> dict:
    """The selected nodes and the edges among them as plain data, for the clipboard."""
    chosen = _selection(graph, node_ids, skip_ports=True)
    inside = set(chosen)
    return {
        "nodes": [node_to_data(graph.node(i)) for i in chosen],
        "edges": [
            edge_to_data(e)
            for e in graph.edges.values()
            if e.src_node in inside and e.dst_node in inside
        ],
    }


def paste(graph: Graph, data: Any, *, offset: tuple[float, float] = (0.0, 0.0)) -> Pasted:
    """Add copies of clipboard data with fresh ids and free names, moved by `offset`."""
    dx, dy = position(offset)
    fresh: dict[str, str] = {}
    pasted = graph_from_data(rename_ids(data, fresh, new_id))
    taken = {n.name for n in graph.nodes.values()}
    nodes = []
    for node in pasted.nodes.values():
        name = _copy_name(graph, node.name, taken)
        taken.add(name)
        x, y = node.position
        nodes.append(node.replace(name=name, position=(x + dx, y + dy)))
    graph._adopt(
        list(graph.nodes.values()) + nodes,
        list(graph.edges.values()) + list(pasted.edges.values()),
    )
    return Pasted(tuple(n.id for n in nodes), MappingProxyType(fresh))


def _selection(graph: Graph, node_ids: Iterable[str], *, skip_ports: bool = False) -> list[str]:
    """The selected ids in graph order, each checked to exist; a composite's ports refused."""
    wanted = {graph.node(i).id for i in node_ids}
    chosen = []
    for node in graph.nodes.values():
        if node.id in wanted and node.type in BOUNDARY_TYPES:
            if skip_ports:
                continue
            raise DocumentError(f"'{node.name}' is a port of this composite.")
        if node.id in wanted:
            chosen.append(node.id)
    return chosen


def _refuse_loops(graph: Graph, inside: set[str]) -> None:
    """A node outside the selection that is both fed by it and feeds it would make a loop."""
    after: dict[str, list[str]] = {}
    before: dict[str, list[str]] = {}
    for e in graph.edges.values():
        after.setdefault(e.src_node, []).append(e.dst_node)
        before.setdefault(e.dst_node, []).append(e.src_node)
    between = (reachable(inside, after) & reachable(inside, before)) - inside
    if between:
        culprit = next(n for n in graph.nodes.values() if n.id in between)
        raise DocumentError(
            f"Can't group: '{culprit.name}' is fed by the selection and feeds it too; "
            "select it as well, or leave out the nodes around it."
        )


def _port_names(stem: str, count: int, taken: set[str]) -> list[str]:
    if count == 1 and stem not in taken:
        return [stem]
    names: list[str] = []
    i = 1
    while len(names) < count:
        if f"{stem}{i}" not in taken:
            names.append(f"{stem}{i}")
        i += 1
    return names


def _spread(centre: float, count: int, gap: float = 60.0) -> list[float]:
    return [centre + (i - (count - 1) / 2) * gap for i in range(count)]


def _copy_name(graph: Graph, name: str, taken: set[str]) -> str:
    """A copy's name: its own if free, else its stem with the next free number after its
    own (a copy of dense2 is dense3, or dense4 if that is taken; never dense1)."""
    if name not in taken:
        return name
    numbered = _NUMBER.fullmatch(name)
    if numbered is None:
        return graph.free_name(name, taken)
    stem, number = numbered.group(1), int(numbered.group(2))
    return next(f"{stem}{n}" for n in itertools.count(number + 1) if f"{stem}{n}" not in taken)
