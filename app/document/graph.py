"""The network graph: nodes and edges, changed only through methods that each emit events."""

from __future__ import annotations

import heapq
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from app.document.changes import Pending, differences, same_kind
from app.document.events import (
    EdgeAdded,
    EdgeRemoved,
    Events,
    NodeAdded,
    NodeMoved,
    NodeRemoved,
    NodeRenamed,
    ParamChanged,
    PortsChanged,
)
from app.document.node import (
    ABSENT,
    BOUNDARY_TYPES,
    MAX_NAME_LENGTH,
    SUBGRAPH_INPUT,
    SUBGRAPH_OUTPUT,
    DocumentError,
    Edge,
    Node,
    check_name,
    param_value,
    position,
    same_value,
)


@dataclass(frozen=True)
class Removal:
    """What `remove_nodes` took out, with the places it took it from, for `reinsert`."""

    nodes: tuple[tuple[int, Node], ...]
    edges: tuple[tuple[int, Edge], ...]


class Graph:
    """A directed acyclic graph of nodes joined output-port → input-port.

    Invariants every edit keeps: names valid and unique, each edge joins a declared
    output to a declared input, an input takes at most one edge, no cycles. An edit
    that would break one raises DocumentError and changes nothing; a real change
    emits small id-carrying events on `events` after it is complete; a no-op emits none.
    """

    def __init__(self) -> None:
        self._nodes = {}  # through the property below: also indexes the names
        self._edges: dict[str, Edge] = {}
        self._into: dict[tuple[str, str], str] = {}  # (node id, input port) -> edge id
        self._out: dict[str, dict[str, str]] = {}  # node id -> {edge id: the node it feeds}
        self._is_subgraph = False  # inside a composite: holds its fixed boundary nodes
        self.events = Events()

    # The nodes by id, and their ids by name (so a name is looked up in constant time, and
    # loading a file of n nodes takes time linear in n). The graph's edits keep both in step;
    # assigning `_nodes` a new dict (as `_take` does) rebuilds the index.

    @property
    def _nodes(self) -> dict[str, Node]:
        return self._node_map

    @_nodes.setter
    def _nodes(self, nodes: dict[str, Node]) -> None:
        self._node_map = nodes
        self._names = {node.name: node_id for node_id, node in nodes.items()}
        self._free_from = {}  # stem -> no free 'stemN' below this N (unique_name's start)

    def _put(self, node: Node) -> None:
        """Store `node` (new, or replacing the node with its id), keeping the name index."""
        old = self._node_map.get(node.id)
        if old is not None and self._names.get(old.name) == node.id:
            self._unname(old.name)
        self._node_map[node.id] = node
        self._names[node.name] = node.id

    def _pop(self, node_id: str) -> None:
        node = self._node_map.pop(node_id)
        if self._names.get(node.name) == node_id:
            self._unname(node.name)

    def _unname(self, name: str) -> None:
        """`name` is free again: unique_name may hand out its number once more."""
        del self._names[name]
        numbered = _NUMBERED.fullmatch(name)
        if numbered is not None:
            stem, number = numbered.group(1), int(numbered.group(2))
            if number < self._free_from.get(stem, 1):
                self._free_from[stem] = number

    # ---- queries -------------------------------------------------------------------------

    @property
    def nodes(self) -> Mapping[str, Node]:
        """Nodes by id, in insertion order (read-only view)."""
        return MappingProxyType(self._nodes)

    @property
    def edges(self) -> Mapping[str, Edge]:
        """Edges by id, in insertion order (read-only view)."""
        return MappingProxyType(self._edges)

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._nodes

    def __iter__(self) -> Iterator[Node]:
        return iter(list(self._nodes.values()))

    def node(self, node_id: str) -> Node:
        try:
            return self._nodes[node_id]
        except (KeyError, TypeError):
            raise DocumentError(f"There is no node with id {node_id!r}.") from None

    def edge(self, edge_id: str) -> Edge:
        try:
            return self._edges[edge_id]
        except (KeyError, TypeError):
            raise DocumentError(f"There is no connection with id {edge_id!r}.") from None

    def node_named(self, name: str) -> Node | None:
        node_id = self._names.get(name) if isinstance(name, str) else None
        return None if node_id is None else self._node_map[node_id]

    def edge_into(self, node_id: str, port: str) -> Edge | None:
        edge_id = self._into.get((node_id, port))
        return None if edge_id is None else self._edges[edge_id]

    def edges_from(self, node_id: str, port: str | None = None) -> list[Edge]:
        """The edges leaving a node (from its adjacency: cost by its edges, not the graph's)."""
        edges = self._edges
        return [
            e
            for e in (edges[edge_id] for edge_id in self._out.get(node_id, ()))
            if port is None or e.src_port == port
        ]

    def edges_of(self, node_id: str) -> list[Edge]:
        return [e for e in self._edges.values() if node_id in (e.src_node, e.dst_node)]

    def boundary(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Input and output port names a composite holding this graph has, in order."""
        ins = tuple(n.name for n in self._nodes.values() if n.type == SUBGRAPH_INPUT)
        outs = tuple(n.name for n in self._nodes.values() if n.type == SUBGRAPH_OUTPUT)
        return ins, outs

    def walk(self) -> Iterator[tuple[Graph, Node]]:
        """Every node at every level as (graph holding it, node); a composite before its inside."""
        stack: list[Iterator[Node]] = [iter(list(self._nodes.values()))]
        graphs = [self]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                graphs.pop()
                continue
            yield graphs[-1], node
            if node.subgraph is not None:
                stack.append(iter(list(node.subgraph._nodes.values())))
                graphs.append(node.subgraph)

    def find(self, node_id: str) -> tuple[Graph, Node] | None:
        """The node with this id at any level, with the graph holding it."""
        return next(((g, n) for g, n in self.walk() if n.id == node_id), None)

    def unique_name(self, stem: str, taken: Iterable[str] | None = None) -> str:
        """`stem` followed by the smallest number ≥ 1 giving a name not in `taken`.

        `taken` defaults to the names in this graph.
        """
        used = self._names if taken is None else set(taken)
        stem = re.sub(r"\W", "", stem)[: MAX_NAME_LENGTH - 6] or "node"
        if not stem.isidentifier():
            stem = "n" + stem
        if taken is not None:
            return next(f"{stem}{i}" for i in itertools.count(1) if f"{stem}{i}" not in used)
        # Numbers below the remembered start are all taken: 10,000 'dense' nodes need not
        # each count up from 1 (that made building a big graph quadratic).
        start = self._free_from.get(stem, 1)
        number = next(i for i in itertools.count(start) if f"{stem}{i}" not in used)
        self._free_from[stem] = number
        return f"{stem}{number}"

    def free_name(self, wanted: str, taken: Iterable[str] | None = None) -> str:
        """`wanted` if it is not in `taken` (default: this graph's names), else a numbered one."""
        used = self._names if taken is None else set(taken)
        if wanted not in used:
            return wanted
        return self.unique_name(wanted.rstrip("0123456789") or wanted, used)

    def topological_order(self) -> list[str]:
        """Node ids, every node after its inputs; ties go by insertion order (iterative)."""
        ids = list(self._nodes)
        rank = {nid: i for i, nid in enumerate(ids)}
        waiting = dict.fromkeys(ids, 0)
        after: dict[str, list[str]] = {nid: [] for nid in ids}
        for e in self._edges.values():
            after[e.src_node].append(e.dst_node)
            waiting[e.dst_node] += 1
        ready = [rank[nid] for nid in ids if waiting[nid] == 0]
        heapq.heapify(ready)
        order: list[str] = []
        while ready:
            nid = ids[heapq.heappop(ready)]
            order.append(nid)
            for nxt in after[nid]:
                waiting[nxt] -= 1
                if waiting[nxt] == 0:
                    heapq.heappush(ready, rank[nxt])
        if len(order) != len(ids):
            raise DocumentError("The graph has a cycle.")
        return order

    # ---- edits ---------------------------------------------------------------------------

    def add_node(self, node: Node, *, index: int | None = None) -> Node:
        """Add `node` (an empty name gets a free one from its type); returns the stored node."""
        if not isinstance(node, Node):
            raise DocumentError(f"Expected a Node, not {type(node).__name__}.")
        if not node.name:
            node = node.replace(name=self.unique_name(node.type.lower()))
        self._check_new_node(node, allow_boundary=False)
        if index is None or index >= len(self._nodes):
            self._put(node)
        else:
            items = list(self._nodes.items())
            items.insert(max(0, index), (node.id, node))
            self._nodes = dict(items)
        self.events.emit(NodeAdded(node.id))
        return node

    def remove_node(self, node_id: str) -> Removal:
        return self.remove_nodes([node_id])

    def remove_nodes(self, node_ids: Iterable[str]) -> Removal:
        """Remove nodes and every edge touching them (delete-selection)."""
        doomed = set()
        for node_id in node_ids:
            node = self.node(node_id)
            if node.type in BOUNDARY_TYPES:
                raise DocumentError(
                    f"'{node.name}' is a port of this composite; ungroup it to change its ports."
                )
            doomed.add(node_id)
        edges = tuple(
            (i, e)
            for i, e in enumerate(self._edges.values())
            if e.src_node in doomed or e.dst_node in doomed
        )
        nodes = tuple((i, n) for i, n in enumerate(self._nodes.values()) if n.id in doomed)
        for _, e in edges:
            self._drop_edge(e)
        for _, n in nodes:
            self._pop(n.id)
        for _, e in edges:
            self.events.emit(EdgeRemoved(e.id, e))
        for _, n in nodes:
            self.events.emit(NodeRemoved(n.id, n))
        return Removal(nodes, edges)

    def reinsert(self, removal: Removal) -> None:
        """Put back what `remove_nodes` removed, at the same places (undo of a delete)."""
        nodes = list(self._nodes.values())
        for i, node in removal.nodes:
            nodes.insert(i, node)
        edges = list(self._edges.values())
        for i, edge in removal.edges:
            edges.insert(i, edge)
        self._adopt(nodes, edges)

    def rename_node(self, node_id: str, name: str) -> None:
        node = self.node(node_id)
        if name == node.name:
            return
        if node.type in BOUNDARY_TYPES:
            raise DocumentError(f"'{node.name}' names a port of this composite; it can't change.")
        self._check_free_name(name)
        self._put(node.replace(name=name))
        self.events.emit(NodeRenamed(node_id, node.name, name))

    def set_param(self, node_id: str, key: str, value: Any) -> None:
        self.set_params(node_id, {key: value})

    def set_params(self, node_id: str, values: Mapping[str, Any], *,
                   typed: Iterable[str] | None = None) -> None:
        """Set hyper-parameters; value ABSENT unsets one. One ParamChanged per real change.

        `typed`, if given, becomes the node's set of sizes the user typed (`Node.typed`).
        """
        node = self.node(node_id)
        params = dict(node.params)
        changes = []
        for key, value in values.items():
            check_name(key, "Hyper-parameter name")
            if value is not ABSENT:
                value = param_value(value, f"Hyper-parameter '{key}'")
            old = params.get(key, ABSENT)
            if same_value(old, value):
                continue
            if value is ABSENT:
                del params[key]
            else:
                params[key] = value
            changes.append(ParamChanged(node_id, key, old, value))
        retyped = typed is not None and frozenset(typed) != node.typed
        if changes or retyped:
            self._put(node.replace(params=params, typed=node.typed if typed is None else typed))
            for change in changes:
                self.events.emit(change)

    def move_node(self, node_id: str, to: tuple[float, float]) -> None:
        self.move_nodes({node_id: to})

    def move_nodes(self, positions: Mapping[str, tuple[float, float]]) -> None:
        """Move several nodes in one edit (a drag); one NodeMoved per node that moved."""
        moves = []
        for node_id, to in positions.items():
            node, to = self.node(node_id), position(to)
            if to != node.position:
                moves.append((node, to))
        for node, to in moves:
            self._put(node.replace(position=to))
        for node, to in moves:
            self.events.emit(NodeMoved(node.id, node.position, to))

    def set_ports(self, node_id: str, inputs: Iterable[str], outputs: Iterable[str]) -> None:
        """Change a node's declared ports (e.g. a Concat growing an input); connected ones stay."""
        node = self.node(node_id)
        if node.is_composite or node.type in BOUNDARY_TYPES:
            raise DocumentError("A composite's ports follow its inside; ungroup to change them.")
        new = node.replace(inputs=tuple(inputs), outputs=tuple(outputs))
        if new.inputs == node.inputs and new.outputs == node.outputs:
            return
        for e in self.edges_of(node_id):
            if (e.dst_node == node_id and e.dst_port not in new.inputs) or (
                e.src_node == node_id and e.src_port not in new.outputs
            ):
                port = e.dst_port if e.dst_node == node_id else e.src_port
                raise DocumentError(
                    f"Port '{port}' of '{node.name}' is connected; disconnect it first."
                )
        self._put(new)
        self.events.emit(PortsChanged(node_id, node.inputs, node.outputs))

    def connect(
        self,
        src_node: str,
        src_port: str,
        dst_node: str,
        dst_port: str,
        *,
        edge_id: str | None = None,
    ) -> Edge:
        """Join an output port to an input port; returns the new edge."""
        edge = (
            Edge(src_node, src_port, dst_node, dst_port)
            if edge_id is None
            else Edge(src_node, src_port, dst_node, dst_port, edge_id)
        )
        self._check_new_edge(edge, check_cycle=True)
        self._store_edge(edge)
        self.events.emit(EdgeAdded(edge.id))
        return edge

    def disconnect(self, edge_id: str) -> Edge:
        edge = self.edge(edge_id)
        self._drop_edge(edge)
        self.events.emit(EdgeRemoved(edge_id, edge))
        return edge

    # ---- internals -----------------------------------------------------------------------

    def _check_free_name(self, name: str, ignore: str | None = None) -> None:
        check_name(name)
        other = self.node_named(name)
        if other is not None and other.id != ignore:
            raise DocumentError(f"Another node is already named '{name}'.")

    def _check_new_node(self, node: Node, *, allow_boundary: bool) -> None:
        if node.id in self._nodes:
            raise DocumentError(f"A node with id {node.id} is already in the graph.")
        self._check_free_name(node.name)
        if node.type in BOUNDARY_TYPES:
            if not allow_boundary:
                raise DocumentError("Composite ports are made by grouping, not added by hand.")
            want = ((), ("out",)) if node.type == SUBGRAPH_INPUT else (("in",), ())
            if (node.inputs, node.outputs) != want or node.params:
                raise DocumentError(f"Composite port '{node.name}' is malformed.")
        if node.subgraph is not None:
            sub = node.subgraph
            if not isinstance(sub, Graph) or not sub._is_subgraph or sub is self:
                raise DocumentError(f"Composite '{node.name}' has no proper inside.")
            if sub.boundary() != (node.inputs, node.outputs):
                raise DocumentError(f"Ports of composite '{node.name}' don't match its inside.")

    def _check_new_edge(self, edge: Edge, *, check_cycle: bool) -> None:
        if not isinstance(edge.id, str) or not edge.id or edge.id in self._edges:
            raise DocumentError(f"A connection with id {edge.id!r} is already in the graph.")
        src, dst = self.node(edge.src_node), self.node(edge.dst_node)
        if edge.src_port not in src.outputs:
            raise DocumentError(
                f"'{src.name}' has no output '{edge.src_port}' (it has: {_list(src.outputs)})."
            )
        if edge.dst_port not in dst.inputs:
            raise DocumentError(
                f"'{dst.name}' has no input '{edge.dst_port}' (it has: {_list(dst.inputs)})."
            )
        if src.id == dst.id:
            raise DocumentError(f"'{src.name}' can't be connected to itself.")
        if (dst.id, edge.dst_port) in self._into:
            raise DocumentError(
                f"Input '{edge.dst_port}' of '{dst.name}' is already connected; "
                "disconnect it first."
            )
        if check_cycle and self.reaches(dst.id, src.id):
            raise DocumentError(
                f"Connecting '{src.name}' to '{dst.name}' would make a loop "
                f"('{dst.name}' already feeds '{src.name}')."
            )

    def reaches(self, start: str, goal: str) -> bool:
        """Whether a path of edges leads from node `start` to node `goal` (or start is goal).

        Follows the kept adjacency from `start` only, and stops at `goal`: a cycle check
        for a new edge visits what lies downstream of it, not every edge of the graph.
        """
        if start == goal:
            return True
        seen, todo = {start}, [start]
        out = self._out
        while todo:
            for nxt in out.get(todo.pop(), {}).values():
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def _store_edge(self, edge: Edge) -> None:
        self._edges[edge.id] = edge
        self._into[(edge.dst_node, edge.dst_port)] = edge.id
        self._out.setdefault(edge.src_node, {})[edge.id] = edge.dst_node

    def _drop_edge(self, edge: Edge) -> None:
        del self._edges[edge.id]
        del self._into[(edge.dst_node, edge.dst_port)]
        after = self._out.get(edge.src_node)
        if after is not None:
            after.pop(edge.id, None)
            if not after:
                del self._out[edge.src_node]

    def _rebuild_out(self) -> None:
        """The adjacency from `_edges` (after they were replaced as a whole)."""
        self._out = {}
        for edge in self._edges.values():
            self._out.setdefault(edge.src_node, {})[edge.id] = edge.dst_node

    @classmethod
    def _build(cls, nodes: Iterable[Node], edges: Iterable[Edge], *, subgraph: bool) -> Graph:
        """A new graph holding exactly these nodes and edges, checked like single edits."""
        graph = cls()
        graph._is_subgraph = subgraph
        for node in nodes:
            if not isinstance(node, Node):
                raise DocumentError(f"Expected a Node, not {type(node).__name__}.")
            graph._check_new_node(node, allow_boundary=subgraph)
            graph._put(node)
        for edge in edges:
            graph._check_new_edge(edge, check_cycle=False)
            graph._store_edge(edge)
        try:
            graph.topological_order()
        except DocumentError:
            raise DocumentError("These connections would make a loop.") from None
        return graph

    def _adopt(self, nodes: list[Node], edges: list[Edge]) -> None:
        """Become exactly `nodes` and `edges` (checked first); emit events for the difference."""
        for bus, event in self._take(Graph._build(nodes, edges, subgraph=self._is_subgraph)):
            bus.emit(event)

    def _take(self, target: Graph) -> Pending:
        """Hold `target`'s (already checked) contents; returns the events to emit.

        The caller emits them once everything, at every level, is in place. Composites
        present on both sides keep their own subgraph object (views may be watching it),
        which takes over the target's subgraph contents in turn.
        """
        pending: Pending = []
        bus = self.events
        old_edges, new_edges = self._edges, target._edges
        for edge_id, edge in old_edges.items():
            if new_edges.get(edge_id) != edge:
                pending.append((bus, EdgeRemoved(edge_id, edge)))
        kept: dict[str, Node] = {}
        for node_id, node in self._nodes.items():
            new = target._nodes.get(node_id)
            if new is None or not same_kind(node, new):
                pending.append((bus, NodeRemoved(node_id, node)))
            else:
                kept[node_id] = node
        nodes: dict[str, Node] = {}
        for node_id, new in target._nodes.items():
            old = kept.get(node_id)
            if old is not None:
                if old.subgraph is not None and new.subgraph is not old.subgraph:
                    pending += old.subgraph._take(new.subgraph)
                    new = new.replace(subgraph=old.subgraph)
                pending += [(bus, e) for e in differences(old, new)]
            nodes[node_id] = new
        pending += [(bus, NodeAdded(nid)) for nid in nodes if nid not in kept]
        pending += [(bus, EdgeAdded(i)) for i, e in new_edges.items() if old_edges.get(i) != e]
        self._nodes, self._edges, self._into = nodes, dict(new_edges), dict(target._into)
        self._rebuild_out()
        return pending


_NUMBERED = re.compile(r"(.*?)(\d+)")


def _list(ports: tuple[str, ...]) -> str:
    return ", ".join(ports) if ports else "none"


def reachable(starts: set[str], links: Mapping[str, list[str]]) -> set[str]:
    """Every node id reachable from `starts` (themselves included) along `links`."""
    seen, todo = set(starts), list(starts)
    while todo:
        for nxt in links.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
