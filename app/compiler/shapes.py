"""Shape inference and validation of a graph: a shape on every edge, a reason on every bad node."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.catalogue import CATALOGUE, Catalogue, CatalogueError
from app.catalogue.custom_cells import CUSTOM_CELL, optional_ports, port_problem
from app.compiler.cells import RESERVED_NAMES
from app.compiler.rules import RULES, Shape, ShapeError, text
from app.compiler.size import MAX_TOTAL_PARAMETERS, parameter_count, too_many
from app.document import BOUNDARY_TYPES, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Edge, Graph, Node

# Kinds of error: something wrong, something missing (a proposed edge never causes that),
# and a composite marked for a bad node inside it (the inner node has the real reason).
WRONG = "wrong"
MISSING = "missing"
INSIDE = "inside"


@dataclass
class ShapeReport:
    """What `infer_shapes` found, at every level of the graph (ids are unique across levels).

    `edge_shapes` and `output_shapes` hold only the shapes that could be worked out (an
    edge after a bad node has none); `errors` holds one readable reason per bad node.
    A composite with a bad node inside gets an error too, naming that node.
    `error_kinds[node_id]` is WRONG, MISSING (an unconnected input) or INSIDE.
    """

    edge_shapes: dict[str, Shape] = field(default_factory=dict)
    output_shapes: dict[str, dict[str, Shape]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    error_kinds: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def describe(self, edge_id: str) -> str:
        """The edge's shape as text, '(N, 256)', or '?' when it is unknown."""
        shape = self.edge_shapes.get(edge_id)
        return "?" if shape is None else text(shape)

    def shape(self, node_id: str, port: str = "out") -> Shape | None:
        return self.output_shapes.get(node_id, {}).get(port)

    def _fail(self, node: Node, message: str, kind: str = WRONG) -> None:
        self.errors.setdefault(node.id, message)
        self.error_kinds.setdefault(node.id, kind)


class _Inference:
    def __init__(self, catalogue: Catalogue, extra: tuple[Graph, Edge] | None = None) -> None:
        self.catalogue = catalogue
        self.extra = extra
        self.report = ShapeReport()
        self.parameters = 0  # numbers in every Parameter seen, at every level
        self.largest: tuple[int, Node | None] = (0, None)

    def graph(self, graph: Graph, given: Mapping[str, Shape] | None) -> dict[str, Shape]:
        """Infer one level; returns the shapes reaching its SubgraphOutput nodes, by port."""
        report = self.report
        top = given is None
        edges = list(graph.edges.values())
        if self.extra is not None and self.extra[0] is graph:
            edges.append(self.extra[1])
        into = {(e.dst_node, e.dst_port): e for e in edges}
        names = Counter(n.name for n in graph.nodes.values())
        outputs = [n for n in graph.nodes.values() if n.type == "Output"]
        for node in graph.nodes.values():
            if names[node.name] > 1:
                report._fail(node, f"Another node is also named '{node.name}'; names must differ.")
            elif node.name in RESERVED_NAMES and node.type not in BOUNDARY_TYPES:
                report._fail(node, f"'{node.name}' is a name the engine uses; rename the node.")
        if top:
            for node in outputs[1:]:
                report._fail(node, "A network has one Output node; this one is extra.")
        found: dict[str, Shape] = {}
        for node in _order(graph, edges, report):
            try:
                outs = self.node(node, graph, into, given or {}, found, top)
            except Exception as exc:  # never raise out of inference: mark the node instead
                report._fail(node, f"{node.type}: {exc}")
                outs = None
            if outs:
                report.output_shapes[node.id] = dict(outs)
        for edge in edges:
            shape = report.shape(edge.src_node, edge.src_port)
            if shape is not None:
                report.edge_shapes[edge.id] = shape
        return found

    def node(self, node: Node, graph: Graph, into: Mapping, given: Mapping[str, Shape],
             found: dict[str, Shape], top: bool) -> dict[str, Shape] | None:
        report = self.report
        if node.type == SUBGRAPH_INPUT:
            shape = given.get(node.name)
            return None if shape is None else {"out": shape}
        node_type = values = None
        if not node.is_composite and node.type not in BOUNDARY_TYPES:
            try:
                node_type = self.catalogue.get(node.type)
                values = node_type.values(node.params)
            except CatalogueError as exc:
                report._fail(node, str(exc)[:1].upper() + str(exc)[1:])
                return None
            self._count(node, values)
            if not top and node.type in ("Input", "Output"):
                report._fail(node, f"{node.type} nodes belong to the whole network, not inside "
                             "a composite; use the composite's ports.")
                return None
        ins = self.inputs(node, into)
        if ins is None:
            return None
        if node.type == SUBGRAPH_OUTPUT:
            found[node.name] = ins["in"]
            return None
        if node_type is None:  # a composite
            outs = self.graph(node.subgraph, ins)
            bad = [(n, report.errors[n.id]) for _, n in node.subgraph.walk()
                   if n.id in report.errors]
            if bad:
                inner, message = bad[0]
                report._fail(node, f"Inside, '{inner.name}': {message}", INSIDE)
            return outs
        if node.type == CUSTOM_CELL and (problem := port_problem(node)) is not None:
            report._fail(node, problem)
            return None
        rule = RULES.get(node.type) or node_type.infer
        if rule is None:
            return None  # a user Cell without a shape rule: shapes after it are unknown
        try:
            return rule(values, ins)
        except ShapeError as exc:
            report._fail(node, str(exc))
            return None

    def _count(self, node: Node, values: Mapping[str, Any]) -> None:
        count = parameter_count(node.type, values)
        self.parameters += count
        if count > self.largest[0] or self.largest[1] is None:
            self.largest = (count, node)

    def check_total(self) -> None:
        """Mark the largest node when the whole network holds too many parameters."""
        count, node = self.largest
        if self.parameters > MAX_TOTAL_PARAMETERS and node is not None:
            self.report._fail(node, too_many(self.parameters, node, count))

    def inputs(self, node: Node, into: Mapping) -> dict[str, Shape] | None:
        """Shapes arriving at each input; None (after marking the node) if one is missing."""
        ins = {}
        for port in node.inputs:
            edge = into.get((node.id, port))
            if edge is None:
                if self._optional(node, port):
                    continue
                what = "Output port" if node.type == SUBGRAPH_OUTPUT else "Input"
                self.report._fail(node, f"{what} '{port}' is not connected.", MISSING)
                return None
            shape = self.report.shape(edge.src_node, edge.src_port)
            if shape is None:
                return None  # unknown upstream (that node carries the error): nothing to add
            ins[port] = shape
        return ins

    def _optional(self, node: Node, port: str) -> bool:
        if node.type == CUSTOM_CELL:
            return port in optional_ports(node)
        if node.type not in self.catalogue:
            return False
        specs = self.catalogue.get(node.type).inputs
        return any(p.name == port and p.optional for p in specs)


def _order(graph: Graph, edges: list[Edge], report: ShapeReport) -> list[Node]:
    """Nodes in topological order; nodes on a loop are marked and left out."""
    nodes = graph.nodes
    waiting = dict.fromkeys(nodes, 0)
    after: dict[str, list[str]] = {nid: [] for nid in nodes}
    for e in edges:
        if e.src_node in nodes and e.dst_node in nodes:
            after[e.src_node].append(e.dst_node)
            waiting[e.dst_node] += 1
    ids = list(nodes)
    rank = {nid: i for i, nid in enumerate(ids)}
    ready = [rank[nid] for nid in ids if waiting[nid] == 0]
    order = []
    while ready:  # ties go by insertion order, as Graph.topological_order
        nid = ids[heapq.heappop(ready)]
        order.append(nid)
        for nxt in after[nid]:
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                heapq.heappush(ready, rank[nxt])
    for nid in nodes:
        if waiting[nid] > 0:
            report._fail(nodes[nid], f"'{nodes[nid].name}' is part of a loop.")
    return [nodes[nid] for nid in order]


def infer_shapes(graph: Graph, *, catalogue: Catalogue = CATALOGUE) -> ShapeReport:
    """Shapes on every edge and errors on every bad node of `graph` and its composites.

    Never raises: whatever is wrong ends up in `errors` with a readable reason.
    """
    inference = _Inference(catalogue)
    inference.graph(graph, None)
    inference.check_total()
    return inference.report


def check_connection(graph: Graph, src_id: str, src_port: str, dst_id: str, dst_port: str, *,
                     root: Graph | None = None, catalogue: Catalogue = CATALOGUE) -> str | None:
    """Why connecting src.src_port → dst.dst_port in `graph` would be wrong, or None if fine.

    Refuses what the document refuses (unknown ports, an input already connected, a loop)
    and an edge that would cause a shape error. Pass the top-level graph as `root` when
    `graph` is inside a composite, so the shapes coming into the composite are known.
    """
    nodes = graph.nodes
    if src_id not in nodes or dst_id not in nodes:
        return "One of these nodes is no longer in the graph."
    src, dst = nodes[src_id], nodes[dst_id]
    if src_port not in src.outputs:
        return f"'{src.name}' has no output '{src_port}'."
    if dst_port not in dst.inputs:
        return f"'{dst.name}' has no input '{dst_port}'."
    if src_id == dst_id:
        return f"'{src.name}' can't be connected to itself."
    if graph.edge_into(dst_id, dst_port) is not None:
        return f"Input '{dst_port}' of '{dst.name}' is already connected; disconnect it first."
    if graph.reaches(dst_id, src_id):
        return (f"Connecting '{src.name}' to '{dst.name}' would make a loop "
                f"('{dst.name}' already feeds '{src.name}').")
    whole = graph if root is None else root
    before = infer_shapes(whole, catalogue=catalogue)
    inference = _Inference(catalogue, (graph, Edge(src_id, src_port, dst_id, dst_port)))
    inference.graph(whole, None)
    after = inference.report
    for node_id, message in after.errors.items():
        if after.error_kinds[node_id] != WRONG or before.errors.get(node_id) == message:
            continue
        if node_id == dst_id:
            return message
        found = whole.find(node_id)
        name = found[1].name if found else "a node"
        return f"That would break '{name}': {message}"
    return None


def fitting_params(type_name: str, shape: Shape) -> dict[str, Any]:
    """Hyper-parameters that make a node of this type accept `shape` (for auto-fill on connect).

    E.g. Dense fed (N, 784) → {'in_channels': 784}; empty when nothing depends on the shape.
    """
    if type_name == "Dense" and len(shape) >= 2 and isinstance(shape[-1], int):
        return {"in_channels": shape[-1]}
    if len(shape) >= 2 and isinstance(shape[1], int):
        key = {"Conv2d": "in_channels", "BatchNorm1d": "num_features",
               "BatchNorm2d": "num_features"}.get(type_name)
        if key is not None:
            return {key: shape[1]}
    return {}
