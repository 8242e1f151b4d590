"""What the canvas asks the catalogue and the shape checker, answered without ever raising.

Drawing a node must not fail because its type is unknown (a file from a newer
version, a composite, a composite's port), and an exception inside shape inference
must not break the canvas: both fall back to plain answers.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from app.catalogue import CATALOGUE, Catalogue, NodeType
from app.catalogue.registry import Entry
from app.document import COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Graph, Node
from app.document.data import graph_from_data, graph_to_data
from engine import nn

log = logging.getLogger(__name__)

BOUNDARY_CATEGORY = "Composites"
# Cells whose forward depends on the network's mode: they get a Train/Predict badge.
MODE_CELLS = (nn.Dropout, nn.BatchNorm1d, nn.BatchNorm2d)


@dataclass
class Shapes:
    """Inferred shapes of one graph: a label per edge id, an error per node id, and for
    nodes with several outputs the shape of each output port (node id -> port -> label)."""

    labels: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    ports: dict[str, dict[str, str]] = field(default_factory=dict)


class NodeTypes:
    """The catalogue as the canvas sees it: labels, summaries, categories, new nodes."""

    def __init__(self, catalogue: Catalogue | None = None) -> None:
        self.catalogue = catalogue if catalogue is not None else CATALOGUE

    def node_type(self, type_name: str) -> NodeType | None:
        try:
            return self.catalogue.get(type_name)
        except Exception:
            return None

    def kind(self, node: Node) -> str:
        """The type as shown on the node: a composite shows its definition name."""
        if node.type == COMPOSITE:
            return node.definition
        if node.type == SUBGRAPH_INPUT:
            return "input port"
        if node.type == SUBGRAPH_OUTPUT:
            return "output port"
        return node.type

    def summary(self, node: Node) -> str:
        if node.subgraph is not None:
            inner = sum(1 for n in node.subgraph.nodes.values() if n.type not in _BOUNDARY)
            return f"{node.definition} · {inner} node{'s' if inner != 1 else ''}"
        if node.type in _BOUNDARY:
            return ""
        node_type = self.node_type(node.type)
        return node_type.describe(node.params) if node_type is not None else node.type

    def category(self, node: Node) -> str:
        if node.type in (COMPOSITE, *_BOUNDARY):
            return BOUNDARY_CATEGORY
        node_type = self.node_type(node.type)
        return node_type.category if node_type is not None else ""

    def mode_dependent(self, node: Node) -> bool:
        """True if the node computes differently in train and predict mode (Dropout,
        BatchNorm), or is a composite holding such a node."""
        if node.subgraph is not None:
            return any(self.mode_dependent(n) for n in node.subgraph.nodes.values())
        node_type = self.node_type(node.type)
        cell = getattr(node_type, "cell", None)
        return isinstance(cell, type) and issubclass(cell, MODE_CELLS)

    def description(self, node: Node) -> str:
        node_type = self.node_type(node.type)
        return node_type.description if node_type is not None else ""

    def new_node(
        self, type_name: str, position: tuple[float, float], params: dict | None = None
    ) -> Node:
        """A fresh node of a palette type (CatalogueError for unknown types or bad params)."""
        return self.catalogue.new_node(type_name, position=position, params=params)


_BOUNDARY = (SUBGRAPH_INPUT, SUBGRAPH_OUTPUT)


def payload_of(entry: Entry) -> str:
    """What adding a palette entry asks the canvas for: 'type:Dense', or 'preset:<label>'
    for a type with some values preset (the payloads `CanvasEdits.add` takes)."""
    if entry.preset is not None:
        return f"preset:{entry.preset.label}"
    return f"type:{entry.node_type.name}"


def _shapes_module() -> Any:
    try:
        from app.compiler import shapes
    except ImportError:
        return None
    return shapes


def infer_shapes(graph: Graph, root: Graph | None = None) -> Shapes:
    """Shape labels and node errors for `graph` (inside `root`); empty if inference fails."""
    module = _shapes_module()
    if module is None:
        return Shapes()
    try:
        report = module.infer_shapes(root if root is not None else graph)
        labels = {edge_id: report.describe(edge_id) for edge_id in graph.edges}
        errors = {nid: report.errors[nid] for nid in graph.nodes if nid in report.errors}
        ports = {nid: port_labels(report, node) for nid, node in graph.nodes.items()
                 if len(node.outputs) > 1}
        return Shapes({k: v for k, v in labels.items() if v}, errors, ports)
    except Exception:
        log.exception("shape inference failed")
        return Shapes()


def port_labels(report: Any, node: Node) -> dict[str, str]:
    """The shape leaving each output port of `node` as text ('(N, 4)'), those known."""
    module = _shapes_module()
    found = report.output_shapes.get(node.id, {})
    return {port: module.text(found[port]) for port in node.outputs if port in found}


class LiveShapeLabels:
    """The shapes of one level of a graph, kept current across edits without ever raising.

    Follows `root` (default: `graph` itself) through `app.compiler.shapes.LiveShapes`,
    so after an edit only what lies downstream of it is inferred again. `update()`
    returns the level's `Shapes` (the same object each time, brought up to date) and the
    ids of the nodes and edges whose label or error may have changed (None: all).
    """

    def __init__(self, graph: Graph, root: Graph | None = None) -> None:
        self.graph = graph
        self.root = root if root is not None else graph
        self.shapes = Shapes()
        module = _shapes_module()
        self._live = None
        if module is not None:
            try:
                self._live = module.LiveShapes(self.root)
            except Exception:
                log.exception("shape inference failed")

    def update(self) -> tuple[Shapes, tuple[set[str], set[str]] | None]:
        if self._live is None:
            self.shapes = infer_shapes(self.graph, self.root)
            return self.shapes, None
        graph, shapes = self.graph, self.shapes
        try:
            report = self._live.update()
            touched = self._live.take_touched()  # also what other updates since saw change
            if touched is None:
                shapes.labels = {edge_id: report.describe(edge_id) for edge_id in graph.edges}
                shapes.errors = {nid: report.errors[nid] for nid in graph.nodes
                                 if nid in report.errors}
                shapes.ports = {nid: port_labels(report, node)
                                for nid, node in graph.nodes.items() if len(node.outputs) > 1}
                return shapes, None
            node_ids, edge_ids = touched
            for edge_id in edge_ids:
                if edge_id in graph.edges:
                    shapes.labels[edge_id] = report.describe(edge_id)
                else:
                    shapes.labels.pop(edge_id, None)
            for node_id in node_ids:
                node = graph.nodes.get(node_id)
                if node is not None and node_id in report.errors:
                    shapes.errors[node_id] = report.errors[node_id]
                else:
                    shapes.errors.pop(node_id, None)
                if node is not None and len(node.outputs) > 1:
                    shapes.ports[node_id] = port_labels(report, node)
                else:
                    shapes.ports.pop(node_id, None)
            return shapes, touched
        except Exception:
            log.exception("shape inference failed")
            self._live.invalidate()
            self.shapes = infer_shapes(graph, self.root)
            return self.shapes, None

    def _top(self, graph: Graph) -> Any:
        """The kept shapes (`LiveShapes`) if `graph` is the top level they follow, else None."""
        return self._live if graph is self.root and self._live is not None else None

    def invalidate(self) -> None:
        """Infer everything at the next update."""
        if self._live is not None:
            self._live.invalidate()

    def close(self) -> None:
        if self._live is not None:
            self._live.close()


def check_connection(
    graph: Graph,
    src: str,
    src_port: str,
    dst: str,
    dst_port: str,
    root: Graph | None = None,
    *,
    structural_only: bool = False,
    live: LiveShapeLabels | None = None,
) -> str | None:
    """Why connecting these ports would be refused, or None if it is allowed.

    A shape mismatch that fitting the receiving node's hyper-parameters would cure
    (a Dense fed 784 features gets in_channels=784) counts as allowed: `fitting()`
    gives the values the connection then sets. Pass the canvas's `live` shapes of the
    top level and only what lies downstream of `dst` is inferred (not the whole graph).
    """
    reason = _structural_problem(graph, src, src_port, dst, dst_port)
    module = _shapes_module()
    if reason is not None or module is None or structural_only:
        return reason
    kept = live._top(graph) if live is not None else None
    if kept is not None:
        try:
            reason = kept.check_connection(src, src_port, dst, dst_port)
            fit = fitting(graph, src, src_port, dst, root, live=live) if reason else {}
            if fit:
                reason = kept.check_connection(src, src_port, dst, dst_port, fit=fit)
            return _after_following(module, graph, (src, src_port, dst, dst_port), root, fit,
                                    reason)
        except Exception:
            log.exception("connection check failed")
            return None
    try:
        reason = module.check_connection(graph, src, src_port, dst, dst_port, root=root)
        fit = fitting(graph, src, src_port, dst, root) if reason is not None else {}
        if not fit:
            return reason
        # Try it on a copy with the receiving node refitted (the document stays untouched).
        copy_root = graph_from_data(graph_to_data(root if root is not None else graph))
        found = copy_root.find(dst)
        if found is None:
            return reason
        found[0].set_params(dst, fit)
        reason = module.check_connection(
            found[0], src, src_port, dst, dst_port, root=copy_root if root is not None else None
        )
        return _after_following(module, graph, (src, src_port, dst, dst_port), root, fit, reason)
    except Exception:
        log.exception("connection check failed")
        return None


def _after_following(module: Any, graph: Graph, ends: tuple[str, str, str, str],
                     root: Graph | None, fit: dict, reason: str | None) -> str | None:
    """`reason` unless it is a node after `dst` that breaks and the sizes nobody typed,
    following the new input (as the connection makes them), would mend it."""
    if reason is None or not reason.startswith("That would break"):
        return reason
    from app.compiler.size_flow import follow

    whole = root if root is not None else graph
    before = module.infer_shapes(whole)
    trial = graph_from_data(graph_to_data(whole))
    src, src_port, dst, dst_port = ends
    level = trial.find(dst)[0]
    level.set_params(dst, fit)
    level.connect(src, src_port, dst, dst_port)
    for change in follow(trial, before):
        trial.find(change.node_id)[0].set_params(change.node_id, change.new)
    return module._first_new_error(trial, before, module.infer_shapes(trial), dst)


def fitting(graph: Graph, src: str, src_port: str, dst: str, root: Graph | None = None, *,
            live: LiveShapeLabels | None = None) -> dict:
    """Hyper-parameters of `dst` to change so it accepts what `src.src_port` gives."""
    module = _shapes_module()
    fit = getattr(module, "fitting_params", None)
    if fit is None:
        return {}
    try:
        kept = live._top(graph) if live is not None else None
        report = (kept.update() if kept is not None
                  else module.infer_shapes(root if root is not None else graph))
        shape = report.shape(src, src_port)
        if shape is None:
            return {}
        node = graph.node(dst)
        wanted = fit(node.type, shape)
        return {k: v for k, v in wanted.items() if node.params.get(k) != v}
    except Exception:
        log.exception("fitting hyper-parameters failed")
        return {}


def shapes_now(root: Graph, live: LiveShapeLabels | None = None) -> Any:
    """The edge shapes of the whole network as it is now (a copy: later edits leave it be),
    from the canvas's kept shapes when they follow `root`; None if inference fails."""
    module = _shapes_module()
    if module is None:
        return None
    try:
        kept = live._top(root) if live is not None else None
        report = kept.update() if kept is not None else module.infer_shapes(root)
        return module.ShapeReport(edge_shapes=dict(report.edge_shapes))
    except Exception:
        log.exception("shape inference failed")
        return None


def _structural_problem(
    graph: Graph, src: str, src_port: str, dst: str, dst_port: str
) -> str | None:
    """The document's own rules, checked without editing it (fast enough per port)."""
    a, b = graph.nodes.get(src), graph.nodes.get(dst)
    if a is None or b is None:
        return "That node is no longer in the network."
    if src == dst:
        return f"'{a.name}' can't be connected to itself."
    if src_port not in a.outputs or dst_port not in b.inputs:
        return "Connect an output (right side) to an input (left side)."
    if graph.edge_into(dst, dst_port) is not None:
        return f"Input '{dst_port}' of '{b.name}' is already connected; disconnect it first."
    return None
