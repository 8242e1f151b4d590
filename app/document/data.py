"""Graphs as plain JSON-able data and back: the form of project files, the clipboard and undo."""

from __future__ import annotations

from typing import Any

from app.document.graph import Graph
from app.document.node import COMPOSITE, DocumentError, Edge, Node

MAX_NESTING = 32  # composites inside composites; deeper data is refused, not recursed into

NODE_KEYS = {"id", "type", "name", "position", "inputs", "outputs", "params"}
COMPOSITE_KEYS = {"definition", "subgraph"}
OPTIONAL_KEYS = {"typed"}  # written only when not empty: older files and versions lack it
EDGE_KEYS = {"id", "src", "src_port", "dst", "dst_port"}


def graph_to_data(graph: Graph) -> dict:
    return {
        "nodes": [node_to_data(n) for n in graph.nodes.values()],
        "edges": [edge_to_data(e) for e in graph.edges.values()],
    }


def node_to_data(node: Node) -> dict:
    data: dict[str, Any] = {
        "id": node.id,
        "type": node.type,
        "name": node.name,
        "position": list(node.position),
        "inputs": list(node.inputs),
        "outputs": list(node.outputs),
        "params": {k: _plain(v) for k, v in node.params.items()},
    }
    if node.typed:
        data["typed"] = sorted(node.typed)
    if node.subgraph is not None:
        data["definition"] = node.definition
        data["subgraph"] = graph_to_data(node.subgraph)
    return data


def edge_to_data(edge: Edge) -> dict:
    return {
        "id": edge.id,
        "src": edge.src_node,
        "src_port": edge.src_port,
        "dst": edge.dst_node,
        "dst_port": edge.dst_port,
    }


def graph_from_data(data: Any, *, subgraph: bool = False, _depth: int = 0) -> Graph:
    """Build a graph, checking it like the edit methods do; DocumentError if anything is off."""
    if _depth > MAX_NESTING:
        raise DocumentError(f"Composites are nested more than {MAX_NESTING} deep.")
    _expect(data, dict, "a graph")
    if set(data) != {"nodes", "edges"}:
        raise DocumentError("A graph must have exactly 'nodes' and 'edges'.")
    nodes = [node_from_data(n, _depth) for n in _expect(data["nodes"], list, "the node list")]
    edges = [edge_from_data(e) for e in _expect(data["edges"], list, "the edge list")]
    return Graph._build(nodes, edges, subgraph=subgraph)


def restore_graph(graph: Graph, data: Any) -> None:
    """Make `graph` equal to a `graph_to_data` snapshot, emitting events for the differences.

    Undo of any compound edit (group, ungroup, paste) is `restore_graph(graph, before)`.
    """
    target = graph_from_data(data, subgraph=graph._is_subgraph)
    if graph._is_subgraph and target.boundary() != graph.boundary():
        raise DocumentError("A composite's ports can't change from inside it.")
    graph._adopt(list(target.nodes.values()), list(target.edges.values()))


def node_from_data(data: Any, _depth: int = 0) -> Node:
    _expect(data, dict, "a node")
    composite = data.get("type") == COMPOSITE
    wanted = NODE_KEYS | COMPOSITE_KEYS if composite else NODE_KEYS
    if set(data) - OPTIONAL_KEYS != wanted:
        raise DocumentError(f"A node has {_keys_problem(set(data) - OPTIONAL_KEYS, wanted)}.")
    sub = None
    if composite:
        sub = graph_from_data(data["subgraph"], subgraph=True, _depth=_depth + 1)
    try:
        return Node(
            id=_expect(data["id"], str, "a node id"),
            type=data["type"],
            name=_expect(data["name"], str, "a node name"),
            position=_expect(data["position"], list, "a position"),
            inputs=_expect(data["inputs"], list, "a port list"),
            outputs=_expect(data["outputs"], list, "a port list"),
            params=_expect(data["params"], dict, "hyper-parameters"),
            subgraph=sub,
            definition=_expect(data.get("definition", ""), str, "a definition name"),
            typed=_expect(data.get("typed", []), list, "a list of typed sizes"),
        )
    except TypeError as exc:  # e.g. an unhashable port name
        raise DocumentError(f"A node is malformed: {exc}.") from None


def edge_from_data(data: Any) -> Edge:
    _expect(data, dict, "a connection")
    if set(data) != EDGE_KEYS:
        raise DocumentError(f"A connection has {_keys_problem(set(data), EDGE_KEYS)}.")
    fields = [
        _expect(data[k], str, f"connection '{k}'") for k in ("src", "src_port", "dst", "dst_port")
    ]
    return Edge(*fields, id=_expect(data["id"], str, "a connection id"))


def rename_ids(data: Any, fresh: dict[str, str], new_id) -> Any:
    """A copy of graph data with every node and edge id (at every level) replaced.

    `fresh` collects old → new ids, so callers can carry Parameter values across.
    """

    def node(n: Any, depth: int) -> Any:
        if not isinstance(n, dict):
            return n
        n = dict(n)
        if isinstance(n.get("id"), str):
            n["id"] = fresh.setdefault(n["id"], new_id())
        if "subgraph" in n:
            n["subgraph"] = graph(n["subgraph"], depth + 1)
        return n

    def edge(e: Any) -> Any:
        if not isinstance(e, dict):
            return e
        e = dict(e)
        for key in ("id", "src", "dst"):
            if isinstance(e.get(key), str):
                e[key] = fresh.setdefault(e[key], new_id())
        return e

    def graph(g: Any, depth: int) -> Any:
        if not isinstance(g, dict) or depth > MAX_NESTING:
            return g
        g = dict(g)
        if isinstance(g.get("nodes"), list):
            g["nodes"] = [node(n, depth) for n in g["nodes"]]
        if isinstance(g.get("edges"), list):
            g["edges"] = [edge(e) for e in g["edges"]]
        return g

    return graph(data, 0)


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def _expect(value: Any, kind: type, what: str) -> Any:
    if not isinstance(value, kind):
        raise DocumentError(f"Expected {what}, found {type(value).__name__}.")
    return value


def _keys_problem(found: set, wanted: set) -> str:
    missing, extra = sorted(wanted - found), sorted(str(k) for k in found - wanted)
    parts = []
    if missing:
        parts.append("missing " + ", ".join(f"'{k}'" for k in missing))
    if extra:
        parts.append("unexpected " + ", ".join(f"'{k}'" for k in extra))
    return " and ".join(parts)
