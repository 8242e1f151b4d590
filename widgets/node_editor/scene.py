"""The canvas scene: one item per node and edge of a graph, kept in step by document events.

The scene reads the document and listens to it through a weak subscription; it
never writes it. Shape labels and node errors are re-inferred once per burst of
events (a timer coalesces the hundreds of events a paste or an undo may emit).
"""

from __future__ import annotations

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
from widgets.node_editor.node_types import NodeTypes, Shapes, infer_shapes

MARGIN = 4000.0  # room to pan around the network


class GraphScene(QGraphicsScene):
    """Shows one Graph (the root or a composite's inside)."""

    shapes_changed = Signal()

    def __init__(self, types: NodeTypes | None = None, parent=None) -> None:
        super().__init__(parent)
        self.types = types or NodeTypes()
        self.graph: Graph | None = None
        self.root: Graph | None = None
        self.nodes: dict[str, NodeItem] = {}
        self.edges: dict[str, EdgeItem] = {}
        self._edges_of: dict[str, set[str]] = {}
        self._subscription: Subscription | None = None
        self._insides: dict[str, Subscription] = {}  # composite id -> its subgraph's events
        self.shapes = Shapes()
        self.details = True  # labels shown (False when zoomed out)
        self.snap = style.GRID
        self.network_mode: bool | None = None  # None: no badges; else True for train mode
        self.setBackgroundBrush(QBrush(style.BACKGROUND))
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self._shape_timer = QTimer(self)
        self._shape_timer.setSingleShot(True)
        self._shape_timer.setInterval(0)
        self._shape_timer.timeout.connect(self._on_shape_timer_timeout)

    # ---- the graph shown ---------------------------------------------------------------------

    def set_graph(self, graph: Graph | None, root: Graph | None = None) -> None:
        """Show `graph` (None: nothing), a level of `root` (default: itself); new items."""
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        for subscription in self._insides.values():
            subscription.unsubscribe()
        self._insides = {}
        self.clearSelection()
        self.clear()
        self.nodes, self.edges, self._edges_of = {}, {}, {}
        self.graph = graph
        self.root = root if root is not None else graph
        if graph is None:
            return
        for node in graph.nodes.values():
            self._add_node_item(node.id)
        for edge_id in graph.edges:
            self._add_edge_item(edge_id)
        self._subscription = graph.events.subscribe(self._on_graph_changed)
        # Deleted by Qt before Python lets go of it: stop hearing events at once.
        self.destroyed.connect(self._subscription.unsubscribe)
        self.refresh_shapes()
        self.fit_scene_rect()

    def refresh_shapes(self) -> None:
        """Re-infer now (the timer does it after edits)."""
        self._shape_timer.stop()
        if self.graph is None:
            return
        self.shapes = infer_shapes(self.graph, self.root)
        for edge_id, item in self.edges.items():
            item.set_shape_text(self.shapes.labels.get(edge_id, ""), self.details)
        for node_id, item in self.nodes.items():
            item.set_error(self.shapes.errors.get(node_id, ""))
        self.shapes_changed.emit()

    def _on_shape_timer_timeout(self) -> None:
        self.refresh_shapes()

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

    def _badge(self, node_id: str) -> None:
        item, node = self.nodes.get(node_id), self.graph.nodes.get(node_id)
        if item is None or node is None:
            return
        dependent = self.network_mode is not None and self.types.mode_dependent(node)
        item.set_mode_badge(("train" if self.network_mode else "predict") if dependent else "")

    def _add_node_item(self, node_id: str) -> None:
        item = NodeItem(*self._describe(node_id))
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

    def _remove(self, item) -> None:
        if item is not None:
            self.removeItem(item)

    def _on_item_moved(self, item: NodeItem) -> None:
        for edge_id in self._edges_of.get(item.node_id, ()):
            self._place_edge(self.edges[edge_id])

    # ---- document events ---------------------------------------------------------------------

    def _on_inside_changed(self, event: object) -> None:
        for node_id in self._insides:
            item = self.nodes.get(node_id)
            if item is not None:
                item.set_node(*self._describe(node_id))
                self._badge(node_id)
        self._shape_timer.start()  # shapes out of a composite follow its inside

    def _on_graph_changed(self, event: object) -> None:
        if isinstance(event, NodeMoved):
            item = self.nodes.get(event.node_id)
            if item is not None and (item.pos().x(), item.pos().y()) != event.new:
                item.setPos(*event.new)
            return
        if isinstance(event, NodeAdded):
            self._add_node_item(event.node_id)
        elif isinstance(event, NodeRemoved):
            inside = self._insides.pop(event.node_id, None)
            if inside is not None:
                inside.unsubscribe()
            self._remove(self.nodes.pop(event.node_id, None))
            self._edges_of.pop(event.node_id, None)
        elif isinstance(event, EdgeAdded):
            self._add_edge_item(event.edge_id)
        elif isinstance(event, EdgeRemoved):
            self._remove(self.edges.pop(event.edge_id, None))
            for node_id in (event.edge.src_node, event.edge.dst_node):
                self._edges_of.get(node_id, set()).discard(event.edge_id)
        elif isinstance(event, NodeRenamed | ParamChanged | PortsChanged):
            item = self.nodes.get(event.node_id)
            if item is not None:
                item.set_node(*self._describe(event.node_id))
                self._badge(event.node_id)
                self._on_item_moved(item)
        self._shape_timer.start()
