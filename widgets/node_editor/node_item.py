"""A node on the canvas: title, type, ports and a one-line summary, drawn with level of detail.

A node with several outputs shows the shape leaving each output beside its port.

The item shows a document Node; it never writes the document. Its geometry (port
places) is computed once per change of the node, and the picture is cached by Qt
(DeviceCoordinateCache), so panning does no Python painting at all.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QStyleOptionGraphicsItem,
    QWidget,
)

from app.document import Node
from widgets.node_editor import style

PortKey = tuple[str, bool]  # (port name, is output)


class NodeItem(QGraphicsRectItem):
    """One node; `pos()` is the node's top-left corner, the document's `position`."""

    def __init__(self, node: Node, kind: str, summary: str, category: str) -> None:
        super().__init__()
        self.node_id = node.id
        self.setPos(*node.position)  # before the flags: no position-change calls to Python
        self.setFlags(
            QGraphicsItem.GraphicsItemFlag.ItemIsSelectable
            | QGraphicsItem.GraphicsItemFlag.ItemIsMovable
            | QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges
        )
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setAcceptHoverEvents(False)
        self.setZValue(1.0)
        self.setPen(QPen(Qt.PenStyle.NoPen))
        self.error = ""
        self.frozen_badge = ""  # '❄' (all Parameters frozen) or '❄ 1/2' (some), else ''
        self.mode_badge = ""  # 'train' / 'predict' on nodes whose behaviour depends on it
        self.highlight: dict[PortKey, bool] = {}  # during a connection drag: port -> allowed
        # Output port -> its shape ('(N, 4)'), drawn beside the port on nodes with several
        # outputs (a Split, a composite): each output its own shape, connected or not.
        self.port_shapes: dict[str, str] = {}
        self.snap = 0.0  # grid step while dragging, 0 for none
        self.on_moved: Callable[[NodeItem], None] | None = None  # set by the scene
        self.set_node(node, kind, summary, category)

    # ---- what it shows -------------------------------------------------------------------

    def set_node(self, node: Node, kind: str, summary: str, category: str) -> None:
        """Take the node's current name, ports and summary (after an event)."""
        self.name, self.kind, self.summary = node.name, kind, summary
        self.inputs, self.outputs = node.inputs, node.outputs
        self.is_composite = node.is_composite
        self.colour = style.category_colour(category)
        rows = max(len(self.inputs), len(self.outputs), 1)
        self.height = style.HEADER + rows * style.ROW + (style.FOOTER if summary else 6.0)
        self._layout()

    def set_error(self, reason: str) -> None:
        if reason != self.error:
            self.error = reason
            self.setToolTip(reason)
            self.update()

    def set_port_shapes(self, shapes: dict[str, str]) -> None:
        """The shape leaving each output port (those known); the node widens to show them."""
        if shapes != self.port_shapes:
            self.port_shapes = dict(shapes)
            self._layout()

    def set_mode_badge(self, text: str) -> None:
        if text != self.mode_badge:
            self.mode_badge = text
            self._layout()  # the summary line makes room for it

    def set_frozen_badge(self, text: str) -> None:
        """Mark the node as holding frozen Parameters (training leaves them unchanged)."""
        if text != self.frozen_badge:
            self.frozen_badge = text
            self.setToolTip(self.error or (f"Frozen Parameters: {text.removeprefix('❄').strip()}"
                                           if text else ""))  # fmt: skip
            self._layout()

    def _layout(self) -> None:
        """The width the name, type, badge, summary and port labels need."""
        a = style.advance
        label_width = max((a("port", p) for p in self.inputs), default=0.0)
        label_width += max((a("port", p) + self._shape_width(p) for p in self.outputs),
                           default=0.0)
        width = max(
            style.NODE_MIN_WIDTH,
            style.metrics("title").horizontalAdvance(self.name) + a("type", self.kind) + 36
            + (self._frozen_width() + 6 if self.frozen_badge else 0),
            a("summary", self.summary) + 24 + (self._mode_width() + 6 if self.mode_badge else 0),
            label_width + 48,
        )
        self.width = float(round(width / style.GRID) * style.GRID)
        self.prepareGeometryChange()
        r = style.PORT_RADIUS + 2
        self.setRect(QRectF(-r, -8.0, self.width + 2 * r, self.height + 10.0))
        self.update()

    def _shape_width(self, port: str) -> float:
        """Room the shape pill beside an output port takes (with its gap), 0 for none."""
        shape = self.port_shapes.get(port)
        return style.advance("label", shape) + 16 if shape else 0.0

    def shape_rect(self, port: str) -> QRectF:
        """The pill of an output port's shape, left of the port's name."""
        centre = self.port_pos(port, True)
        right = self.width - 12.0 - style.advance("port", port) - 6
        width = style.advance("label", self.port_shapes.get(port, "")) + 10
        return QRectF(right - width, centre.y() - 8, width, 16)

    def _frozen_width(self) -> float:
        return style.metrics("port").horizontalAdvance(self.frozen_badge) + 10

    def _mode_width(self) -> float:
        return style.advance("port", self.mode_badge) + 12

    def summary_rect(self) -> QRectF:
        """Where the summary line is drawn: left of the mode badge, if there is one."""
        top = self.height - style.FOOTER
        right = self._mode_width() + 6 if self.mode_badge else 0.0
        return QRectF(10.0, top, self.width - 20.0 - right, style.FOOTER - 4)

    def mode_badge_rect(self) -> QRectF:
        """The mode badge's pill, at the footer's right end."""
        width = self._mode_width()
        top = self.height - (style.FOOTER if self.summary else 6.0) - 2
        return QRectF(self.width - width - 6, top + (style.FOOTER - 14) / 2, width, 14)

    def set_highlight(self, highlight: dict[PortKey, bool]) -> None:
        if highlight != self.highlight:
            self.highlight = highlight
            self.update()

    # ---- geometry --------------------------------------------------------------------------

    def port_pos(self, port: str, output: bool) -> QPointF:
        """Where an edge attaches, in item coordinates."""
        names = self.outputs if output else self.inputs
        index = names.index(port) if port in names else 0
        y = style.HEADER + (index + 0.5) * style.ROW
        return QPointF(self.width if output else 0.0, y)

    def port_scene_pos(self, port: str, output: bool) -> QPointF:
        return self.mapToScene(self.port_pos(port, output))

    def port_at(self, scene_pos: QPointF) -> PortKey | None:
        local = self.mapFromScene(scene_pos)
        best, best_d = None, style.PORT_HIT
        for output, names in ((False, self.inputs), (True, self.outputs)):
            for name in names:
                d = (self.port_pos(name, output) - local).manhattanLength() / 1.4
                if d < best_d:
                    best, best_d = (name, output), d
        return best

    def itemChange(self, change: QGraphicsItem.GraphicsItemChange, value):  # noqa: N802
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionChange and self.snap:
            step = self.snap
            return QPointF(round(value.x() / step) * step, round(value.y() / step) * step)
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged and self.on_moved:
            self.on_moved(self)
        return super().itemChange(change, value)

    # ---- painting ------------------------------------------------------------------------

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        selected = self.isSelected()
        body = QRectF(0.0, 0.0, self.width, self.height)
        if lod < style.DETAIL_TEXT:  # far out: a coloured block is all one can see
            painter.fillRect(body, self._border_colour(selected, self.colour))
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        self._paint_body(painter, body, selected)
        self._paint_header(painter, lod)
        self._paint_ports(painter, lod >= style.DETAIL_LABELS)
        if self.mode_badge and lod >= style.DETAIL_LABELS:
            self._paint_mode_badge(painter)
        if lod >= style.DETAIL_LABELS and self.summary:
            painter.setFont(style.font("summary"))
            painter.setPen(style.TEXT_DIM)
            painter.drawText(self.summary_rect(), Qt.AlignmentFlag.AlignVCenter, self.summary)

    def _border_colour(self, selected: bool, fallback: QColor) -> QColor:
        if selected:
            return style.NODE_SELECTED
        return style.NODE_ERROR if self.error else fallback

    def _paint_body(self, painter: QPainter, body: QRectF, selected: bool) -> None:
        width = 2.5 if (selected or self.error) else 1.0
        painter.setPen(QPen(self._border_colour(selected, style.NODE_BORDER), width))
        painter.setBrush(style.NODE_BODY)
        painter.drawRoundedRect(body, 6.0, 6.0)
        header = QPainterPath()
        header.addRoundedRect(QRectF(0.5, 0.5, self.width - 1.0, style.HEADER), 5.5, 5.5)
        square = QPainterPath()
        square.addRect(QRectF(0.5, style.HEADER / 2, self.width - 1.0, style.HEADER / 2))
        painter.fillPath(header.united(square), self.colour)
        if self.is_composite:  # a second outline: there is a network inside
            painter.setPen(QPen(self.colour.lighter(150), 1.0, Qt.PenStyle.DashLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(body.adjusted(3, 3, -3, -3), 4.0, 4.0)

    def _paint_header(self, painter: QPainter, lod: float) -> None:
        painter.setPen(style.TEXT)
        painter.setFont(style.font("title"))
        rect = QRectF(10.0, 0.0, self.width - 20.0, style.HEADER)
        align = Qt.AlignmentFlag.AlignVCenter
        painter.drawText(rect, align | Qt.AlignmentFlag.AlignLeft, self.name)
        if self.frozen_badge:
            self._paint_frozen_badge(painter)
        if lod >= style.DETAIL_LABELS:
            painter.setFont(style.font("type"))
            painter.setPen(QColor(255, 255, 255, 190))
            painter.drawText(rect, align | Qt.AlignmentFlag.AlignRight, self.kind)
        if self.error:
            painter.setBrush(style.NODE_ERROR)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.drawEllipse(QPointF(self.width - 2, 2), 8, 8)
            painter.setPen(style.TEXT)
            painter.setFont(style.font("title"))
            painter.drawText(QRectF(self.width - 10, -6, 16, 16), Qt.AlignmentFlag.AlignCenter, "!")

    def _paint_frozen_badge(self, painter: QPainter) -> None:
        """An ice-blue pill right of the name: some Parameters are frozen."""
        left = 10.0 + style.metrics("title").horizontalAdvance(self.name) + 6
        rect = QRectF(left, (style.HEADER - 14) / 2, self._frozen_width(), 14)
        painter.save()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(style.FROZEN)
        painter.drawRoundedRect(rect, 7, 7)
        painter.setPen(QColor(10, 40, 70))
        painter.setFont(style.font("port"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, self.frozen_badge)
        painter.restore()

    def _paint_mode_badge(self, painter: QPainter) -> None:
        """A small pill at the footer's right end: the mode this node computes in."""
        painter.setFont(style.font("port"))
        text, rect = self.mode_badge, self.mode_badge_rect()
        colour = style.MODE_TRAIN if text == "train" else style.MODE_PREDICT
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(rect, 7, 7)
        painter.setPen(style.TEXT)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

    def _paint_ports(self, painter: QPainter, labels: bool) -> None:
        painter.setFont(style.font("port"))
        r = style.PORT_RADIUS
        for output, names in ((False, self.inputs), (True, self.outputs)):
            for name in names:
                centre = self.port_pos(name, output)
                allowed = self.highlight.get((name, output))
                fill = {True: style.PORT_OK, False: style.PORT_NO}.get(allowed, style.PORT)
                painter.setPen(QPen(style.NODE_BODY.darker(130), 1.5))
                painter.setBrush(QBrush(fill))
                grow = 2.0 if allowed else 0.0
                painter.drawEllipse(centre, r + grow, r + grow)
                if labels:
                    painter.setPen(style.TEXT_DIM)
                    box = QRectF(12.0, centre.y() - style.ROW / 2, self.width - 24, style.ROW)
                    side = Qt.AlignmentFlag.AlignRight if output else Qt.AlignmentFlag.AlignLeft
                    painter.drawText(box, side | Qt.AlignmentFlag.AlignVCenter, name)
                    if output and self.port_shapes.get(name):
                        self._paint_port_shape(painter, name)
                        painter.setFont(style.font("port"))

    def _paint_port_shape(self, painter: QPainter, port: str) -> None:
        """The port's shape on a dark pill, as an edge's shape label looks."""
        rect = self.shape_rect(port)
        painter.setPen(QPen(style.NODE_BORDER, 1.0))
        painter.setBrush(style.LABEL_BG)
        painter.drawRoundedRect(rect, 4, 4)
        painter.setPen(style.LABEL_TEXT)
        painter.setFont(style.font("label"))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, self.port_shapes[port])
