"""Shape inference and validation of a graph: a shape on every edge, a reason on every bad node."""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Mapping
from typing import Any

from app.catalogue import CATALOGUE, Catalogue, CatalogueError
from app.catalogue.custom_cells import CUSTOM_CELL, optional_ports, port_problem
from app.compiler import dtypes, kinds, time_axes
from app.compiler.cells import RESERVED_NAMES
from app.compiler.rules import RULES, Shape, ShapeError, same, text  # noqa: F401 - text: re-exported
from app.compiler.shape_report import INSIDE, MISSING, WRONG, ShapeReport
from app.compiler.size import MAX_TOTAL_PARAMETERS, parameter_count, too_many
from app.document import BOUNDARY_TYPES, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Edge, Graph, Node
from app.document.events import (
    EdgeAdded,
    EdgeRemoved,
    NodeAdded,
    NodeMoved,
    NodeRemoved,
    NodeRenamed,
    ParamChanged,
    PortsChanged,
    Subscription,
)


class _Inference:
    def __init__(self, catalogue: Catalogue, extra: tuple[Graph, Edge] | None = None) -> None:
        self.catalogue = catalogue
        self.extra = extra
        self.report = ShapeReport()
        # Numbers in the Parameters of every node seen, at every level, in the order seen.
        self.counts: dict[str, tuple[int, Node]] = {}
        # Number types at the ports of the composite being inferred: in, and out (by name).
        self.dtypes_in: dict[str, str] = {}
        self.dtypes_out: dict[str, str] = {}

    def graph(self, graph: Graph, given: Mapping[str, Shape] | None) -> dict[str, Shape]:
        """Infer one level; returns the shapes reaching its SubgraphOutput nodes, by port."""
        report = self.report
        top = given is None
        edges = list(graph.edges.values())
        if self.extra is not None and self.extra[0] is graph:
            edges.append(self.extra[1])
        into = {(e.dst_node, e.dst_port): e for e in edges}
        names = Counter(n.name for n in graph.nodes.values())
        for node in graph.nodes.values():
            if names[node.name] > 1:
                report._fail(node, f"Another node is also named '{node.name}'; names must differ.")
            elif node.name in RESERVED_NAMES and node.type not in BOUNDARY_TYPES:
                report._fail(node, f"'{node.name}' is a name the engine uses; rename the node.")
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
            report.output_dtypes[node.id] = {"out": self.dtypes_in.get(node.name, dtypes.FLOAT)}
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
        arriving = dtypes.arriving(report, graph, node, into)
        if node.type == SUBGRAPH_OUTPUT:
            found[node.name] = ins["in"]
            self.dtypes_out[node.name] = arriving["in"][0]
            return None
        if node_type is None:  # a composite
            kept, self.dtypes_in = (self.dtypes_in, self.dtypes_out), dtypes.named(arriving)
            self.dtypes_out = {}
            outs = self.graph(node.subgraph, ins)
            report.output_dtypes[node.id] = self.dtypes_out
            self.dtypes_in, self.dtypes_out = kept
            bad = [(n, report.errors[n.id]) for _, n in node.subgraph.walk()
                   if n.id in report.errors]
            if bad:
                inner, message = bad[0]
                report._fail(node, f"Inside, '{inner.name}': {message}", INSIDE)
            return outs
        if node.type == CUSTOM_CELL and (problem := port_problem(node)) is not None:
            report._fail(node, problem)
            return None
        rule = RULES.get(node.type) or kinds.RULES.get(node.type) or node_type.infer
        if rule is None:
            return None  # a user Cell without a shape rule: shapes after it are unknown
        try:
            dtype = dtypes.leaving(node.type, values, arriving, rule is not node_type.infer)
            problem = time_axes.batch_problem(node.type, rule is same, ins)
            if problem is not None:
                raise ShapeError(problem)
            outs = rule(values, ins)
        except ShapeError as exc:
            report._fail(node, str(exc))
            return None
        if node_type.ports is not None and tuple(outs) != node.outputs:  # a hand-edited file
            report._fail(node, f"Its output ports ({', '.join(node.outputs)}) don't match its "
                         f"hyper-parameters ({', '.join(outs)}); edit them again to fix "
                         "the ports.")
            return None
        report.output_dtypes[node.id] = dict.fromkeys(outs, dtype)
        return outs

    def _count(self, node: Node, values: Mapping[str, Any]) -> None:
        self.counts[node.id] = (parameter_count(node.type, values), node)

    def check_total(self) -> str | None:
        """Mark the largest node when the whole network holds too many parameters.

        Returns the id of the node so marked (None when the total is fine, or that node
        already had an error of its own). Of equally large nodes the first seen is marked.
        """
        total = sum(count for count, _ in self.counts.values())
        if total <= MAX_TOTAL_PARAMETERS:
            return None
        count, node = max(self.counts.values(), key=lambda pair: pair[0])
        message = too_many(total, node, count)
        self.report._fail(node, message)
        return node.id if self.report.errors.get(node.id) == message else None

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
    time_axes.mark(graph, inference.report)
    return inference.report


class LiveShapes:
    """The ShapeReport of one top-level graph, kept current as the graph is edited.

    It listens to the graph's events; `update()` then infers again only what the edits
    can change: the nodes edited, added or newly (dis)connected, and downstream of them
    only as far as an output shape actually changed. (A node's shapes and errors depend
    on its own hyper-parameters and the shapes reaching it; the few graph-wide rules,
    unique names and the parameter cap, are checked again on their own.) An edit
    inside a composite, or to the Output nodes, infers everything again, as does the
    first `update()`. The result always equals `infer_shapes(graph)`.

    After `update()`, `touched` holds the ids of the nodes and edges whose shapes or
    errors may differ from before (None: all of them). A view redraws from
    `take_touched()` instead: the same ids gathered over every update since it last took
    them, so an update run by someone else in between (a connection check) hides nothing.
    """

    def __init__(self, graph: Graph, *, catalogue: Catalogue = CATALOGUE) -> None:
        self.graph = graph
        self.catalogue = catalogue
        self.report = ShapeReport()
        self.touched: tuple[set[str], set[str]] | None = None  # (node ids, edge ids)
        self._untaken: tuple[set[str], set[str]] | None = None  # for take_touched; None: all
        self._inference = _Inference(catalogue)
        self._everything = True  # infer the whole graph at the next update
        self._dirty: set[str] = set()  # nodes to infer again
        self._new_edges: set[str] = set()
        self._gone_edges: set[str] = set()
        self._gone_nodes: dict[str, Node] = {}  # removed nodes as they were
        self._capped: str | None = None  # the node the parameter cap's error is on
        self._subscription = graph.events.subscribe(self._on_event)
        self._inside: list[Subscription] = []  # every composite's graph, at every depth

    def close(self) -> None:
        """Stop following the graph."""
        self._subscription.unsubscribe()
        for subscription in self._inside:
            subscription.unsubscribe()
        self._inside = []

    def invalidate(self) -> None:
        """Infer everything at the next update (after a change this can't see)."""
        self._everything = True

    def update(self) -> ShapeReport:
        """The report for the graph as it is now (never raises: see `infer_shapes`)."""
        if self._everything:
            self._infer_all()
        elif self._dirty or self._new_edges or self._gone_edges or self._gone_nodes:
            try:
                self._infer_changed()
            except Exception:  # a bug here must not leave stale shapes: start over
                self._infer_all()
        else:
            self.touched = (set(), set())
            return self.report
        marked = time_axes.mark(self.graph, self.report)
        if self.touched is not None:
            self.touched[1].update(marked)
        touched, untaken = self.touched, self._untaken
        if touched is None:
            self._untaken = None
        elif untaken is not None:
            untaken[0].update(touched[0])
            untaken[1].update(touched[1])
        return self.report

    def take_touched(self) -> tuple[set[str], set[str]] | None:
        """The ids of the nodes and edges whose shapes or errors may differ since the last
        call (None: all of them), over every `update()` in between, whoever ran it; then
        starts gathering afresh. Call `update()` first to include the latest edits."""
        untaken, self._untaken = self._untaken, (set(), set())
        return untaken

    # ---- events ------------------------------------------------------------------------------

    def _on_event(self, event: object) -> None:
        if self._everything or isinstance(event, NodeMoved):
            return
        graph = self.graph
        if isinstance(event, ParamChanged | NodeRenamed | PortsChanged):
            self._dirty.add(event.node_id)
        elif isinstance(event, EdgeAdded):
            edge = graph.edges.get(event.edge_id)
            if edge is None:
                self._everything = True
                return
            self._new_edges.add(edge.id)
            self._dirty.add(edge.dst_node)
        elif isinstance(event, EdgeRemoved):
            self._new_edges.discard(event.edge_id)
            self._gone_edges.add(event.edge_id)
            self._dirty.add(event.edge.dst_node)
        elif isinstance(event, NodeAdded):
            node = graph.nodes.get(event.node_id)
            if node is None or node.type == "Output" or node.subgraph is not None:
                self._everything = True  # one Output per network; a composite's inside
                return
            self._dirty.add(node.id)
        elif isinstance(event, NodeRemoved):
            node = getattr(event, "node", None)
            if node is None or node.type == "Output" or node.subgraph is not None:
                self._everything = True
                return
            self._dirty.discard(node.id)
            self._gone_nodes[node.id] = node
        else:
            self._everything = True

    def _on_inside(self, event: object) -> None:
        if not isinstance(event, NodeMoved):
            self._everything = True

    # ---- inference ---------------------------------------------------------------------------

    def _infer_all(self) -> None:
        for subscription in self._inside:
            subscription.unsubscribe()
        self._inside = [sub.events.subscribe(self._on_inside)
                        for sub in _subgraphs(self.graph)]
        self._everything = False
        self._dirty, self._new_edges = set(), set()
        self._gone_edges, self._gone_nodes = set(), {}
        inference = _Inference(self.catalogue)
        inference.graph(self.graph, None)
        self._capped = inference.check_total()
        self._inference, self.report, self.touched = inference, inference.report, None

    def _infer_changed(self) -> None:
        graph, inference, report = self.graph, self._inference, self.report
        nodes_touched: set[str] = set()
        edges_touched: set[str] = set(self._gone_edges) | self._new_edges
        for node in self._gone_nodes.values():
            _forget(report, inference, node)
            nodes_touched.add(node.id)
        for edge_id in self._gone_edges:
            report.edge_shapes.pop(edge_id, None)
        seeds = {n for n in self._dirty if n in graph.nodes}
        self._dirty, self._gone_nodes, self._gone_edges = set(), {}, set()
        new_edges, self._new_edges = self._new_edges, set()
        if self._capped is not None:  # the cap is checked again below, for the new total
            if self._capped in report.errors and self._capped not in seeds:
                del report.errors[self._capped], report.error_kinds[self._capped]
            nodes_touched.add(self._capped)
        changed: set[str] = set()  # nodes whose output shapes differ from before
        into = _Into(graph)
        for node_id in _downstream_order(graph, seeds):
            node = graph.nodes[node_id]
            if node_id not in seeds and not any(
                    e.src_node in changed for e in map(into.get, _ins(node)) if e is not None):
                continue
            before = report.output_shapes.get(node_id), report.output_dtypes.get(node_id)
            _forget(report, inference, node)
            _infer_top_node(inference, graph, node, into)
            nodes_touched.add(node_id)
            if (report.output_shapes.get(node_id), report.output_dtypes.get(node_id)) != before:
                changed.add(node_id)
                for edge in graph.edges_from(node_id):
                    shape = report.shape(node_id, edge.src_port)
                    if shape is None:
                        report.edge_shapes.pop(edge.id, None)
                    else:
                        report.edge_shapes[edge.id] = shape
                    edges_touched.add(edge.id)
        for edge_id in new_edges:
            edge = graph.edges.get(edge_id)
            if edge is not None:
                shape = report.shape(edge.src_node, edge.src_port)
                if shape is not None:
                    report.edge_shapes[edge_id] = shape
        self._capped = inference.check_total()
        if self._capped is not None:
            nodes_touched.add(self._capped)
        self.touched = (nodes_touched, edges_touched)


    def check_connection(self, src_id: str, src_port: str, dst_id: str, dst_port: str, *,
                         fit: Mapping[str, Any] | None = None) -> str | None:
        """`check_connection(self.graph, …)`, answered from the kept report: only the nodes
        downstream of `dst` are inferred, on the side, as if the edge were there (and, with
        `fit`, as if `dst` had those hyper-parameters). The graph is not changed."""
        graph = self.graph
        reason = _structural_problem(graph, src_id, src_port, dst_id, dst_port)
        if reason is not None:
            return reason
        before = self.update()
        edge = Edge(src_id, src_port, dst_id, dst_port)
        trial = _Inference(self.catalogue)
        into = _Into(graph, edge)
        order = _downstream_order(graph, {dst_id})
        inside = set(order)
        nodes = {node_id: graph.nodes[node_id] for node_id in order}
        if fit:
            nodes[dst_id] = nodes[dst_id].replace(params={**nodes[dst_id].params, **fit})
        for node in nodes.values():  # the shapes flowing in from outside
            for into_edge in map(into.get, _ins(node)):
                if into_edge is not None and into_edge.src_node not in inside:
                    found = before.output_shapes.get(into_edge.src_node)
                    if found is not None:
                        trial.report.output_shapes[into_edge.src_node] = found
                        trial.report.output_dtypes[into_edge.src_node] = \
                            before.output_dtypes.get(into_edge.src_node, {})
        for node in nodes.values():
            _infer_top_node(trial, graph, node, into)
        return _first_new_error(graph, before, trial.report, dst_id)


def _infer_top_node(inference: _Inference, graph: Graph, node: Node, into: Any) -> None:
    """Infer one node of the top level from the shapes already known upstream of it."""
    report = inference.report
    if node.name in RESERVED_NAMES and node.type not in BOUNDARY_TYPES:
        report._fail(node, f"'{node.name}' is a name the engine uses; rename the node.")
    try:
        outs = inference.node(node, graph, into, {}, {}, True)
    except Exception as exc:  # never raise out of inference: mark the node instead
        report._fail(node, f"{node.type}: {exc}")
        outs = None
    if outs:
        report.output_shapes[node.id] = dict(outs)


class _Into:
    """`(node id, input port) -> Edge` of a graph, from its own index (no copy), with
    perhaps one proposed edge more."""

    def __init__(self, graph: Graph, extra: Edge | None = None) -> None:
        self.graph = graph
        self.extra = extra

    def get(self, key: tuple[str, str]) -> Edge | None:
        extra = self.extra
        if extra is not None and key == (extra.dst_node, extra.dst_port):
            return extra
        return self.graph.edge_into(*key)


def _ins(node: Node) -> list[tuple[str, str]]:
    return [(node.id, port) for port in node.inputs]


def _forget(report: ShapeReport, inference: _Inference, node: Node) -> None:
    """Drop what an earlier inference found for a node (and, for a composite, inside it)."""
    inference.counts.pop(node.id, None)
    for store in (report.output_shapes, report.output_dtypes, report.errors, report.error_kinds):
        store.pop(node.id, None)
    if node.subgraph is None:
        return
    for graph in (node.subgraph, *_subgraphs(node.subgraph)):
        for inner in graph.nodes:
            inference.counts.pop(inner, None)
            for store in (report.output_shapes, report.output_dtypes, report.errors,
                          report.error_kinds):
                store.pop(inner, None)
        for edge_id in graph.edges:
            report.edge_shapes.pop(edge_id, None)


def _subgraphs(graph: Graph) -> list[Graph]:
    """The graphs of every composite in `graph`, at every depth."""
    return [node.subgraph for _, node in graph.walk() if node.subgraph is not None]


def _downstream_order(graph: Graph, seeds: set[str]) -> list[str]:
    """`seeds` and every node they feed, directly or not, in topological order."""
    after = {}
    todo, seen = list(seeds), set(seeds)
    while todo:
        node_id = todo.pop()
        nexts = after[node_id] = [e.dst_node for e in graph.edges_from(node_id)]
        for nxt in nexts:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    waiting = dict.fromkeys(seen, 0)
    for nexts in after.values():
        for nxt in nexts:
            waiting[nxt] += 1
    ready = [n for n in seen if waiting[n] == 0]
    order = []
    while ready:
        node_id = ready.pop()
        order.append(node_id)
        for nxt in after[node_id]:
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                ready.append(nxt)
    return order


def check_connection(graph: Graph, src_id: str, src_port: str, dst_id: str, dst_port: str, *,
                     root: Graph | None = None, catalogue: Catalogue = CATALOGUE) -> str | None:
    """Why connecting src.src_port → dst.dst_port in `graph` would be wrong, or None if fine.

    Refuses what the document refuses (unknown ports, an input already connected, a loop)
    and an edge that would cause a shape error. Pass the top-level graph as `root` when
    `graph` is inside a composite, so the shapes coming into the composite are known.
    """
    reason = _structural_problem(graph, src_id, src_port, dst_id, dst_port)
    if reason is not None:
        return reason
    whole = graph if root is None else root
    before = infer_shapes(whole, catalogue=catalogue)
    inference = _Inference(catalogue, (graph, Edge(src_id, src_port, dst_id, dst_port)))
    inference.graph(whole, None)
    return _first_new_error(whole, before, inference.report, dst_id)


def _structural_problem(graph: Graph, src_id: str, src_port: str, dst_id: str,
                        dst_port: str) -> str | None:
    """What the document itself would refuse about this edge, or None."""
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
    return None


def _first_new_error(whole: Graph, before: ShapeReport, after: ShapeReport,
                     dst_id: str) -> str | None:
    """The first wrong thing `after` finds that `before` did not, as a refusal."""
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
    fit = kinds.FITTING.get(type_name)
    return {} if fit is None else fit(shape)
