"""The canvas scene: one item per node and edge of a graph, kept in step by document events.

The scene reads the document and listens to it through a weak subscription; it
never writes it. Shape labels and node errors are re-inferred once per burst of
events (a timer coalesces the hundreds of events a paste or an undo may emit).
Hook probes and health badges are given for the whole network and kept across
levels: the scene draws those whose node or edge is on the level shown.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QTimer, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QGraphicsScene

from app.document import (
    EdgeAdded,
    EdgeRemoved,
    Graph,
    NodeAdded,
    NodeMoved,
    NodeRemoved,
    NodeRenamed,
    ParamChanged,
    PortsChanged,
    Subscription,
)
from widgets.node_editor import style
from widgets.node_editor.edge_item import EdgeItem
from widgets.node_editor.node_item import NodeItem, PortKey
from widgets.node_editor.node_types import LiveShapeLabels, NodeTypes, Shapes
from widgets.node_editor.probes import HealthBadge, Indicator, ProbeItem

MARGIN = 4000.0  # room to pan around the network
EDGE_SLACK = 2.0  # a point this near an edge's (12-unit wide) hit stroke is on the edge
PROBE_LIFT = 10.0  # room between a probe and its node's top
EDGE_PROBE_LIFT = 14.0  # between a probe and its edge's midpoint: clear of the shape label


class GraphScene(QGraphicsScene):
    """Shows one Graph (the root or a composite's inside)."""

    shapes_changed = Signal()
    probe_clicked = Signal(str)  # a hook's id

    def __init__(self, types: NodeTypes | None = None, parent=None) -> None:
        super().__init__(parent)
        self.types = types or NodeTypes()
        self.graph: Graph | None = None
        self.root: Graph | None = None
        self.nodes: dict[str, NodeItem] = {}
        self.frozen: dict[str, str] = {}  # node id -> its frozen badge (see set_frozen)
        self.edges: dict[str, EdgeItem] = {}
        self._edges_of: dict[str, set[str]] = {}
        self._subscription: Subscription | None = None
        self._insides: dict[str, Subscription] = {}  # composite id -> its subgraph's events
        self.shapes = Shapes()
        self._live_shapes: LiveShapeLabels | None = None
        # Charged with the CPU time of the probes' painting (anything with `timed(work,
        # *args)`, e.g. the hook views' FrameBudget), or None.
        self.probe_budget: Any = None
        self.details = True  # labels shown (False when zoomed out)
        self.snap = style.GRID
        self.network_mode: bool | None = None  # None: no badges; else True for train mode
        self._probe_specs: dict[str, tuple[str, str]] = {}  # hook id -> (kind, target), any level
        self._probe_targets: set[str] = set()
        self._probe_values: dict[str, tuple[np.ndarray, str]] = {}  # kept while not shown
        self.probes: dict[str, ProbeItem] = {}  # hook id -> its item, on the level shown
        self._probes_of: dict[str, list[str]] = {}  # node or edge id -> its probes, in order
        self.health: dict[str, list[Indicator]] | None = None  # None: the overlay is off
        self.badges: dict[str, HealthBadge] = {}  # node id -> its chips, on the level shown
        self.setBackgroundBrush(QBrush(style.BACKGROUND))
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self._selected_edges: set[str] = set()  # drawn selected (see _on_selection_changed)
        self.selectionChanged.connect(self._on_selection_changed)
        self._shape_timer = QTimer(self)
        self._shape_timer.setSingleShot(True)
        self._shape_timer.setInterval(0)
        self._shape_timer.timeout.connect(self._on_shape_timer_timeout)

    # ---- the graph shown ---------------------------------------------------------------------

    def set_graph(self, graph: Graph | None, root: Graph | None = None, *,
                  details: bool | None = None) -> None:
        """Show `graph` (None: nothing), a level of `root` (default: itself); new items.

        `details` says whether labels show from the start (default: as before); a view
        about to fit the graph passes False and lets its zoom decide, so a graph seen
        zoomed out never makes the labels it would hide at once.
        """
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        for subscription in self._insides.values():
            subscription.unsubscribe()
        self._insides = {}
        self.clearSelection()
        self.clear()
        self.nodes, self.edges, self._edges_of = {}, {}, {}
        self._selected_edges = set()
        self.probes, self._probes_of, self.badges = {}, {}, {}  # cleared with the rest
        self.graph = graph
        self.root = root if root is not None else graph
        if details is not None:
            self.details = details
        if self._live_shapes is not None:
            self._live_shapes.close()
            self._live_shapes = None
        if graph is None:
            return
        self._shape_timer.stop()
        self._live_shapes = LiveShapeLabels(graph, self.root)
        self.shapes, _ = self._live_shapes.update()  # first, so each item is made with its shape
        for node in graph.nodes.values():
            self._add_node_item(node.id)
        for edge_id in graph.edges:
            self._add_edge_item(edge_id)
        self._place_probes()
        self._place_badges()
        self._subscription = graph.events.subscribe(self._on_graph_changed)
        # Deleted by Qt before Python lets go of it: stop hearing events at once.
        self.destroyed.connect(self._subscription.unsubscribe)
        self.shapes_changed.emit()
        self.fit_scene_rect()

    @property
    def live_shapes(self) -> LiveShapeLabels | None:
        """The shapes kept current across edits (for connection checks), None if no graph."""
        return self._live_shapes

    def _on_selection_changed(self) -> None:
        selected = {item.edge_id for item in self.selectedItems() if isinstance(item, EdgeItem)}
        for edge_id in self._selected_edges ^ selected:
            item = self.edges.get(edge_id)
            if item is not None:
                item.show_selected(edge_id in selected)
        self._selected_edges = selected

    def refresh_shapes(self, everything: bool = True) -> None:
        """Infer the shapes now: all of them, or (`everything=False`, as the timer does
        after edits) only what the edits since the last time can have changed. Call it
        when something outside the graph changes its shapes (custom code now trusted)."""
        self._shape_timer.stop()
        if self.graph is None:
            return
        if everything:
            self._live_shapes.invalidate()
        self.shapes, touched = self._live_shapes.update()
        labels, errors = self.shapes.labels, self.shapes.errors
        if touched is None:
            edges, nodes = self.edges.items(), self.nodes.items()
        else:  # after an edit: only what it changed (at 10,000 nodes, a few of them)
            edges = [(i, self.edges[i]) for i in touched[1] if i in self.edges]
            nodes = [(i, self.nodes[i]) for i in touched[0] if i in self.nodes]
        for edge_id, item in edges:
            item.set_shape_text(labels.get(edge_id, ""), self.details)
        for node_id, item in nodes:
            item.set_error(errors.get(node_id, ""))
            self._show_port_shapes(node_id, item)
        self.shapes_changed.emit()

    def _show_port_shapes(self, node_id: str, item: NodeItem) -> None:
        """Each output's shape beside its port (nodes with several outputs); the node may
        widen for them, and its edges follow its ports."""
        shapes = self.shapes.ports.get(node_id, {})
        if shapes != item.port_shapes:
            width = item.width
            item.set_port_shapes(shapes)
            if item.width != width:
                self._on_item_moved(item)

    def _on_shape_timer_timeout(self) -> None:
        self.refresh_shapes(everything=False)

    def fit_scene_rect(self) -> None:
        rect = self.itemsBoundingRect() if self.nodes else QRectF(0, 0, 1, 1)
        self.setSceneRect(rect.adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN))

    def set_snap(self, on: bool) -> None:
        """Whether dragged nodes land on the grid (kept when the graph shown changes)."""
        self.snap = style.GRID if on else 0.0
        for item in self.nodes.values():
            item.snap = self.snap

    def set_details(self, shown: bool) -> None:
        """Show or hide the edge shape labels (level of detail, on a zoom threshold)."""
        if shown == self.details:
            return
        self.details = shown
        for item in self.edges.values():
            item.set_details(shown)

    # ---- queries -------------------------------------------------------------------------

    def selected_node_ids(self) -> list[str]:
        """Selected nodes in document order."""
        chosen = {i.node_id for i in self.selectedItems() if isinstance(i, NodeItem)}
        return [nid for nid in self.nodes if nid in chosen]

    def selected_edge_ids(self) -> list[str]:
        return [i.edge_id for i in self.selectedItems() if isinstance(i, EdgeItem)]

    def select(self, node_ids) -> None:
        self.clearSelection()
        for node_id in node_ids:
            item = self.nodes.get(node_id)
            if item is not None:
                item.setSelected(True)

    def port_at(self, scene_pos: QPointF) -> tuple[NodeItem, PortKey] | None:
        """The port under `scene_pos` (a little slack around the dot), if any."""
        slack = style.PORT_HIT
        area = QRectF(scene_pos.x() - slack, scene_pos.y() - slack, 2 * slack, 2 * slack)
        for item in self.items(area):
            if isinstance(item, NodeItem):
                port = item.port_at(scene_pos)
                if port is not None:
                    return item, port
        return None

    def node_at(self, scene_pos: QPointF) -> NodeItem | None:
        for item in self.items(scene_pos):
            if isinstance(item, NodeItem):
                return item
        return None

    def edge_at(self, scene_pos: QPointF) -> EdgeItem | None:
        """The edge under `scene_pos` or a few units from it (None where a node covers it)."""
        slack = EDGE_SLACK
        area = QRectF(scene_pos.x() - slack, scene_pos.y() - slack, 2 * slack, 2 * slack)
        for item in self.items(area):  # the index's answer, topmost first
            while item is not None and not isinstance(item, EdgeItem):
                item = item.parentItem()  # its shape label counts as the edge
            if item is not None:
                return None if self.node_at(scene_pos) is not None else item
        return None

    # ---- items -------------------------------------------------------------------------

    def _describe(self, node_id: str) -> tuple:
        node = self.graph.node(node_id)
        t = self.types
        return node, t.kind(node), t.summary(node), t.category(node)

    def set_network_mode(self, training: bool | None) -> None:
        """Badge every node whose behaviour depends on the mode with 'train' or 'predict'."""
        if training == self.network_mode:
            return
        self.network_mode = training
        for node_id in self.nodes:
            self._badge(node_id)

    def set_frozen(self, marks: dict[str, str]) -> None:
        """Badge nodes holding frozen Parameters: node id -> badge text ('❄', '❄ 1/2')."""
        self.frozen = dict(marks)
        for node_id, item in self.nodes.items():
            if item.frozen_badge != self.frozen.get(node_id, ""):
                item.set_frozen_badge(self.frozen.get(node_id, ""))
                self._on_item_moved(item)  # the width changed: edges follow the ports

    def _badge(self, node_id: str) -> None:
        item, node = self.nodes.get(node_id), self.graph.nodes.get(node_id)
        if item is None or node is None:
            return
        dependent = self.network_mode is not None and self.types.mode_dependent(node)
        width = item.width
        item.set_mode_badge(("train" if self.network_mode else "predict") if dependent else "")
        if item.width != width:
            self._on_item_moved(item)  # wider for the badge: edges follow the ports

    def _add_node_item(self, node_id: str) -> None:
        item = NodeItem(*self._describe(node_id))
        item.set_error(self.shapes.errors.get(node_id, ""))
        item.set_port_shapes(self.shapes.ports.get(node_id, {}))
        if node_id in self.frozen:
            item.set_frozen_badge(self.frozen[node_id])
        item.snap = self.snap
        item.on_moved = self._on_item_moved
        self.nodes[node_id] = item
        self._edges_of.setdefault(node_id, set())
        inside = self.graph.node(node_id).subgraph
        if inside is not None:  # an edit inside (an undo from out here) changes its summary
            self._insides[node_id] = inside.events.subscribe(self._on_inside_changed)
            self.destroyed.connect(self._insides[node_id].unsubscribe)
        self.addItem(item)
        self._badge(node_id)

    def _add_edge_item(self, edge_id: str) -> None:
        e = self.graph.edge(edge_id)
        item = EdgeItem(edge_id, e.src_node, e.src_port, e.dst_node, e.dst_port)
        self.edges[edge_id] = item
        self._edges_of.setdefault(e.src_node, set()).add(edge_id)
        self._edges_of.setdefault(e.dst_node, set()).add(edge_id)
        self._place_edge(item)
        item.set_shape_text(self.shapes.labels.get(edge_id, ""), self.details)
        self.addItem(item)

    def _place_edge(self, item: EdgeItem) -> None:
        src, dst = self.nodes.get(item.src), self.nodes.get(item.dst)
        if src is not None and dst is not None:
            item.set_ends(
                src.port_scene_pos(item.src_port, True), dst.port_scene_pos(item.dst_port, False)
            )
            if item.edge_id in self._probes_of:
                self._arrange_probes(item.edge_id)

    def _remove(self, item) -> None:
        if item is not None:
            self.removeItem(item)

    def _on_item_moved(self, item: NodeItem) -> None:
        for edge_id in self._edges_of.get(item.node_id, ()):
            self._place_edge(self.edges[edge_id])
        self._follow(item.node_id)
        self._take_in(item)

    def _take_in(self, item: NodeItem) -> None:
        """Grow the scene rectangle to hold `item` (added or moved through the document), so
        the view can scroll to it; it never shrinks under the user's feet."""
        rect = self.sceneRect()
        wanted = item.sceneBoundingRect().adjusted(-MARGIN, -MARGIN, MARGIN, MARGIN)
        if not rect.contains(wanted):
            self.setSceneRect(rect.united(wanted))

    def _follow(self, node_id: str) -> None:
        """Keep the node's probes and health badge at its corners (moved or resized)."""
        if node_id in self._probes_of:
            self._arrange_probes(node_id)
        if node_id in self.badges:
            self._place_badge(node_id)

    # ---- probes and the health overlay -----------------------------------------------------

    def set_probes(self, probes: list[tuple[str, str, str]]) -> None:
        """The hooks to show: (hook id, kind, target node or edge id), at any level.

        Kept across `set_graph`; a probe is drawn while its target is on the level shown.
        """
        self._probe_specs = {hook_id: (kind, target) for hook_id, kind, target in probes}
        self._probe_targets = {target for _, target in self._probe_specs.values()}
        for hook_id in set(self._probe_values) - set(self._probe_specs):
            del self._probe_values[hook_id]
        self._place_probes()

    def set_probe_values(self, hook_id: str, values: np.ndarray, tooltip: str) -> None:
        """A probe's recent values (newest last) for its sparkline, and its tooltip."""
        if hook_id not in self._probe_specs:
            return
        self._probe_values[hook_id] = (values, tooltip)
        item = self.probes.get(hook_id)
        if item is not None:
            item.set_values(values, tooltip)

    def shown_probe_ids(self) -> set[str]:
        """Probes on the level shown that a visible view has in sight, zoomed in enough to read.

        With no view on the scene: every probe on the level shown.
        """
        views = self.views()
        if not views or not self.probes:
            return set(self.probes)
        if not self.details:  # zoomed out: the probes are drawn without their sparklines
            return set()
        sights = [v.mapToScene(v.viewport().rect()).boundingRect() for v in views if v.isVisible()]
        return {hook_id for hook_id, item in self.probes.items()
                if any(s.intersects(item.sceneBoundingRect()) for s in sights)}  # fmt: skip

    def set_health(self, health: dict[str, list[Indicator]] | None) -> None:
        """Indicator chips under the nodes named in `health` (None: the overlay is off)."""
        self.health = health
        self._place_badges()

    def _place_probes(self) -> None:
        """Items for the probes whose target is on this level, none for the others."""
        wanted = {hook_id: spec for hook_id, spec in self._probe_specs.items()
                  if spec[1] in self.nodes or spec[1] in self.edges}  # fmt: skip
        for hook_id in [h for h, i in self.probes.items() if (i.kind, i.target) != wanted.get(h)]:
            self._remove(self.probes.pop(hook_id))
        self._probes_of = {}
        for hook_id, (kind, target) in wanted.items():  # in the order the hooks were given
            item = self.probes.get(hook_id)
            if item is None:
                item = self.probes[hook_id] = ProbeItem(hook_id, kind, target)
                item.on_clicked = self.probe_clicked.emit
                if hook_id in self._probe_values:
                    item.set_values(*self._probe_values[hook_id])
                self.addItem(item)
            self._probes_of.setdefault(target, []).append(hook_id)
        for target in self._probes_of:
            self._arrange_probes(target)

    def _arrange_probes(self, target: str) -> None:
        """Side by side above the node's top-right corner, or above the edge's midpoint."""
        ids = self._probes_of.get(target, [])
        width, gap = style.PROBE_WIDTH, style.PROBE_GAP
        node, edge = self.nodes.get(target), self.edges.get(target)
        if node is not None:
            anchor = node.mapToScene(QPointF(node.width, 0.0))
            left = anchor.x() - len(ids) * (width + gap) + gap  # the first one at the corner
            top = anchor.y() - PROBE_LIFT - style.PROBE_HEIGHT
        elif edge is not None:
            anchor = edge.midpoint()
            left = anchor.x() - (len(ids) * (width + gap) - gap) / 2
            top = anchor.y() - EDGE_PROBE_LIFT - style.PROBE_HEIGHT
        else:
            return
        for index, hook_id in enumerate(reversed(ids) if node is not None else ids):
            self.probes[hook_id].setPos(left + index * (width + gap), top)

    def _follow_target(self, target: str) -> None:
        """A node or edge came or went: its probes and badge come or go with it."""
        if target in self._probe_targets:
            self._place_probes()
        if (self.health and target in self.health) or target in self.badges:
            self._place_badges()

    def _place_badges(self) -> None:
        """A badge under each node of this level that `health` has indicators for."""
        found = self.health or {}
        for node_id in [n for n in self.badges if not found.get(n) or n not in self.nodes]:
            self._remove(self.badges.pop(node_id))
        for node_id, indicators in found.items():
            if not indicators or node_id not in self.nodes:
                continue
            badge = self.badges.get(node_id)
            if badge is None:
                badge = self.badges[node_id] = HealthBadge(node_id)
                self.addItem(badge)
            badge.set_indicators(indicators)
            self._place_badge(node_id)

    def _place_badge(self, node_id: str) -> None:
        """Under the node, from its left edge."""
        node = self.nodes[node_id]
        self.badges[node_id].setPos(node.mapToScene(QPointF(0.0, node.height + 5.0)))

    # ---- document events ---------------------------------------------------------------------

    def _on_inside_changed(self, event: object) -> None:
        for node_id in self._insides:
            item = self.nodes.get(node_id)
            if item is not None:
                item.set_node(*self._describe(node_id))
                self._badge(node_id)
                self._follow(node_id)  # its width may have changed
        self._shape_timer.start()  # shapes out of a composite follow its inside

    def _on_graph_changed(self, event: object) -> None:
        if isinstance(event, NodeMoved):
            item = self.nodes.get(event.node_id)
            if item is not None and (item.pos().x(), item.pos().y()) != event.new:
                item.setPos(*event.new)
            return
        if isinstance(event, NodeAdded):
            self._add_node_item(event.node_id)
            self._take_in(self.nodes[event.node_id])
            self._follow_target(event.node_id)
        elif isinstance(event, NodeRemoved):
            inside = self._insides.pop(event.node_id, None)
            if inside is not None:
                inside.unsubscribe()
            self._remove(self.nodes.pop(event.node_id, None))
            self._edges_of.pop(event.node_id, None)
            self._follow_target(event.node_id)
        elif isinstance(event, EdgeAdded):
            self._add_edge_item(event.edge_id)
            self._follow_target(event.edge_id)
        elif isinstance(event, EdgeRemoved):
            self._remove(self.edges.pop(event.edge_id, None))
            for node_id in (event.edge.src_node, event.edge.dst_node):
                self._edges_of.get(node_id, set()).discard(event.edge_id)
            self._follow_target(event.edge_id)
        elif isinstance(event, NodeRenamed | ParamChanged | PortsChanged):
            item = self.nodes.get(event.node_id)
            if item is not None:
                item.set_node(*self._describe(event.node_id))
                self._badge(event.node_id)
                self._on_item_moved(item)
        self._shape_timer.start()
