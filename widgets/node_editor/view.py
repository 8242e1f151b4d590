"""The canvas view: zoom around the cursor, pan, fit, drag a connection from a port, drops.

The view turns mouse and keyboard gestures into requests (signals); the editor turns
those into undo commands. Nodes move freely while dragged (view state only) and the
whole drag becomes one move request on release.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QLineF, QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QContextMenuEvent, QCursor, QKeyEvent, QMouseEvent, QPainter, QWheelEvent
from PySide6.QtWidgets import QGraphicsView

from widgets.node_editor import style
from widgets.node_editor.edge_item import RubberEdge
from widgets.node_editor.node_item import NodeItem
from widgets.node_editor.node_types import check_connection
from widgets.node_editor.scene import GraphScene

NODE_MIME = "application/x-cellwright-node"  # palette drags carry a payload like "type:Dense"
MIN_SCALE, MAX_SCALE = 0.08, 4.0
# Shape-checking every port in sight takes ~10 ms a port on a 1,000-node graph: the
# highlight gets this long, then falls back to the cheap rules for the rest.
SHAPE_CHECK_SECONDS = 0.1

Ends = tuple[str, str, str, str]  # src node, src port, dst node, dst port


class GraphView(QGraphicsView):
    connect_requested = Signal(object, str)  # Ends, id of the edge being moved ('' if none)
    disconnect_requested = Signal(str)  # edge id, dropped on empty canvas
    move_finished = Signal(dict)  # node id -> ((x, y) before, (x, y) after)
    drop_requested = Signal(str, QPointF)  # payload, scene position
    quick_add_requested = Signal(QPointF, QPoint)  # scene position, global position
    open_requested = Signal(str)  # composite node id
    context_requested = Signal(str, str, QPointF, QPoint)  # node/edge/canvas, id, scene, global
    message = Signal(str)

    def __init__(self, scene: GraphScene, parent=None) -> None:
        super().__init__(scene, parent)
        self.graph_scene = scene
        self.min_scale = MIN_SCALE  # lower after Fit All on a graph too big for MIN_SCALE
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing)
        # Every item sets the pen, brush and font it draws with, and turns antialiasing on
        # only where the view has it on (see set_zoom): saving and restoring the painter
        # around each of 19,000 items was 15 % of a zoomed-out frame at 10,000 nodes.
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState)
        self.setAcceptDrops(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._pan_from: QPointF | None = None
        self._space = False
        self._rubber: RubberEdge | None = None
        self._drag_from: tuple[str, str, bool] | None = None  # node, port, is output
        self._moving_edge = ""
        self._allowed: dict[tuple[str, str, bool], str | None] = {}

    # ---- zoom, pan, fit ----------------------------------------------------------------------

    @property
    def zoom(self) -> float:
        return self.transform().m11()

    def set_zoom(self, scale: float) -> None:
        scale = min(MAX_SCALE, max(self.min_scale, scale))
        self.scale(scale / self.zoom, scale / self.zoom)
        self.graph_scene.set_details(self.zoom >= style.DETAIL_LABELS)
        # Far out an edge is a hair: smoothing thousands of them costs more than it shows.
        self.setRenderHint(QPainter.RenderHint.Antialiasing, self.zoom >= style.DETAIL_TEXT)

    def fit_all(self) -> None:
        items = list(self.graph_scene.nodes.values())
        if not items:
            self.graph_scene.set_details(self.zoom >= style.DETAIL_LABELS)
            return
        rect = QRectF()
        # Edges too: a curve between two rows can bulge past the nodes it joins.
        for item in [*items, *self.graph_scene.edges.values()]:
            rect = rect.united(item.sceneBoundingRect())
        rect = rect.adjusted(-40, -40, 40, 40)
        port = self.viewport().rect()
        fit = min(port.width() / max(rect.width(), 1.0), port.height() / max(rect.height(), 1.0))
        zoom = min(fit * 0.97, 1.25)  # a little room for scroll bars coming and going
        # A graph too big to show at MIN_SCALE still fits: the floor follows it down.
        self.min_scale = min(MIN_SCALE, zoom)
        self.set_zoom(zoom)
        self.centerOn(rect.center())

    def zoom_at(self, scale: float, anchor: QPointF) -> None:
        """Zoom to `scale` keeping the scene point under viewport pixel `anchor` in place."""
        before = self.mapToScene(anchor.toPoint())
        self.set_zoom(scale)
        after = self.mapToScene(anchor.toPoint())
        centre = self.mapToScene(self.viewport().rect().center())
        self.centerOn(centre + (before - after))

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom_at(self.zoom * 1.18**steps, event.position())
        event.accept()

    def pan_by(self, dx: float, dy: float) -> None:
        """Scroll the canvas by (dx, dy) viewport pixels (content follows the mouse)."""
        h, v = self.horizontalScrollBar(), self.verticalScrollBar()
        h.setValue(h.value() - round(dx))
        v.setValue(v.value() - round(dy))

    def drawBackground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802
        painter.fillRect(rect, style.BACKGROUND)
        if self.zoom < 0.3:
            return
        step = style.GRID
        for colour, every in ((style.GRID_MINOR, step), (style.GRID_MAJOR, step * 5)):
            if every * self.zoom < 8:
                continue
            left = int(rect.left() // every) * every
            top = int(rect.top() // every) * every
            lines = [
                QLineF(x, rect.top(), x, rect.bottom()) for x in _range(left, rect.right(), every)
            ]
            lines += [
                QLineF(rect.left(), y, rect.right(), y) for y in _range(top, rect.bottom(), every)
            ]
            painter.setPen(colour)
            painter.drawLines(lines)

    # ---- mouse -----------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        button = event.button()
        if button == Qt.MouseButton.MiddleButton or (
            button == Qt.MouseButton.LeftButton and self._space
        ):
            self._pan_from = event.position()
            self.viewport().setCursor(Qt.CursorShape.ClosedHandCursor)
            event.accept()
            return
        if button == Qt.MouseButton.LeftButton:
            hit = self.graph_scene.port_at(self.mapToScene(event.position().toPoint()))
            if hit is not None:
                item, (port, output) = hit
                self._start_connection(item, port, output)
                event.accept()
                return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.pan_by(delta.x(), delta.y())
            event.accept()
            return
        if self._rubber is not None:
            target = self._target_at(self.mapToScene(event.position().toPoint()))
            ok = None if target not in self._allowed else self._allowed[target] is None
            self._rubber.follow(self.mapToScene(event.position().toPoint()), ok)
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._pan_from is not None:
            self._pan_from = None
            self.viewport().setCursor(
                Qt.CursorShape.OpenHandCursor if self._space else Qt.CursorShape.ArrowCursor
            )
            event.accept()
            return
        if self._rubber is not None:
            self._finish_connection(self.mapToScene(event.position().toPoint()))
            event.accept()
            return
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton:
            self._report_moves()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        item = self.graph_scene.node_at(self.mapToScene(event.position().toPoint()))
        if item is not None and item.is_composite:
            self.open_requested.emit(item.node_id)
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        at = self.mapToScene(event.pos())
        scene = self.graph_scene
        item = scene.node_at(at)
        if item is not None:
            if not item.isSelected():
                scene.select([item.node_id])
            self.context_requested.emit("node", item.node_id, at, event.globalPos())
        else:
            edge = scene.edge_at(at)
            if edge is not None:
                self.context_requested.emit("edge", edge.edge_id, at, event.globalPos())
            else:
                self.context_requested.emit("canvas", "", at, event.globalPos())
        event.accept()

    def _report_moves(self) -> None:
        graph = self.graph_scene.graph
        if graph is None:
            return
        moves = {}
        for node_id, item in self.graph_scene.nodes.items():
            node = graph.nodes.get(node_id)
            now = (item.pos().x(), item.pos().y())
            if node is not None and now != node.position:
                moves[node_id] = (node.position, now)
        if moves:
            self.move_finished.emit(moves)

    # ---- connecting ------------------------------------------------------------------------

    def _start_connection(self, item: NodeItem, port: str, output: bool) -> None:
        scene, graph = self.graph_scene, self.graph_scene.graph
        self._moving_edge = ""
        if not output and graph is not None:
            edge = graph.edge_into(item.node_id, port)
            if edge is not None:  # pick up the existing edge by its input end
                self._moving_edge = edge.id
                scene.edges[edge.id].setVisible(False)
                item = scene.nodes[edge.src_node]
                port, output = edge.src_port, True
        self._drag_from = (item.node_id, port, output)
        self._rubber = RubberEdge(item.port_scene_pos(port, output), output)
        scene.addItem(self._rubber)
        self._mark_compatible_ports()

    def _mark_compatible_ports(self) -> None:
        """Highlight the ports in sight the dragged connection may end on (refused dimmed)."""
        scene, graph = self.graph_scene, self.graph_scene.graph
        node, port, output = self._drag_from
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        self._allowed = {}
        moving = graph.edges.get(self._moving_edge) if self._moving_edge else None
        deadline = time.perf_counter() + SHAPE_CHECK_SECONDS
        for item in scene.items(visible):
            if not isinstance(item, NodeItem):
                continue
            marks = {}
            for other in item.outputs if not output else item.inputs:
                ends = (
                    (node, port, item.node_id, other)
                    if output
                    else (item.node_id, other, node, port)
                )
                full = time.perf_counter() < deadline
                if moving is not None and (ends[2], ends[3]) == (moving.dst_node, moving.dst_port):
                    reason = None  # dropping it back where it was
                else:
                    # Past the deadline only the cheap rules; the drop then checks shapes too.
                    reason = check_connection(graph, *ends, scene.root, structural_only=not full,
                                              live=scene.live_shapes)
                if full:
                    self._allowed[(item.node_id, other, not output)] = reason
                marks[(other, not output)] = reason is None
            item.set_highlight(marks)

    def _target_at(self, scene_pos: QPointF) -> tuple[str, str, bool] | None:
        hit = self.graph_scene.port_at(scene_pos)
        if hit is None:
            return None
        item, (port, output) = hit
        return item.node_id, port, output

    def _finish_connection(self, scene_pos: QPointF) -> None:
        scene = self.graph_scene
        node, port, output = self._drag_from
        target = self._target_at(scene_pos)
        scene.removeItem(self._rubber)
        self._rubber, self._drag_from = None, None
        for item in scene.nodes.values():
            item.set_highlight({})
        moving, self._moving_edge = self._moving_edge, ""
        if moving and moving in scene.edges:
            scene.edges[moving].setVisible(True)
        if target is None:
            if moving:
                self.disconnect_requested.emit(moving)
            return
        other, other_port, other_output = target
        if other_output == output:
            side = "an input" if output else "an output"
            self.message.emit(f"Can't connect: drag from an output to {side}.")
            return
        ends = (node, port, other, other_port) if output else (other, other_port, node, port)
        reason = self._allowed.get(target)
        if target not in self._allowed:  # out of sight or past the deadline when the drag began
            reason = check_connection(scene.graph, *ends, scene.root, live=scene.live_shapes)
        if reason is not None:
            self.message.emit(f"Can't connect: {reason}")
            return
        self.connect_requested.emit(ends, moving)

    # ---- keys and drops ----------------------------------------------------------------------

    def event(self, event: QEvent) -> bool:
        # Tab would move focus away; on the canvas it opens the quick-add search.
        if event.type() == QEvent.Type.KeyPress and event.key() == Qt.Key.Key_Tab:
            cursor = self.viewport().mapFromGlobal(QCursor.pos())
            if not self.viewport().rect().contains(cursor):
                cursor = self.viewport().rect().center()
            self.quick_add_requested.emit(
                self.mapToScene(cursor), self.viewport().mapToGlobal(cursor)
            )
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = True
            self.viewport().setCursor(Qt.CursorShape.OpenHandCursor)
            self.setDragMode(QGraphicsView.DragMode.NoDrag)
            return
        if event.key() == Qt.Key.Key_F and not event.modifiers():
            self.fit_all()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == Qt.Key.Key_Space and not event.isAutoRepeat():
            self._space = False
            self.viewport().setCursor(Qt.CursorShape.ArrowCursor)
            self.setDragMode(QGraphicsView.DragMode.RubberBandDrag)
            return
        super().keyReleaseEvent(event)

    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if event.mimeData().hasFormat(NODE_MIME):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:  # noqa: N802
        self.dragEnterEvent(event)

    def dropEvent(self, event) -> None:  # noqa: N802
        if not event.mimeData().hasFormat(NODE_MIME):
            event.ignore()
            return
        payload = bytes(event.mimeData().data(NODE_MIME)).decode("utf-8", "replace")
        event.acceptProposedAction()
        self.drop_requested.emit(payload, self.mapToScene(event.position().toPoint()))


def _range(start: float, stop: float, step: float):
    value = start
    while value <= stop:
        yield value
        value += step
