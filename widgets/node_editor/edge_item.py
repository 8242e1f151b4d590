"""Edges on the canvas: a curve from an output port to an input port, labelled with its shape
('(N, 256)'; a sequence names its time axis and features, '(N, T 20, F 8)').

Edges are painted by Qt's own path item (no Python per frame); the shape label is a
child item the scene hides when zoomed out. The rubber edge follows the mouse while
the user drags a new connection.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QPainterPath, QPainterPathStroker, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsSimpleTextItem,
)

from widgets.node_editor import style


def curve(start: QPointF, end: QPointF) -> QPainterPath:
    """A left-to-right S curve; bends further when the edge runs backwards."""
    dx = max(40.0, abs(end.x() - start.x()) * 0.5)
    if end.x() < start.x():
        dx = max(dx, 80.0)
    path = QPainterPath(start)
    path.cubicTo(start + QPointF(dx, 0.0), end - QPointF(dx, 0.0), end)
    return path


def tooltip(text: str) -> str:
    """The edge's tooltip for its shape label; a sequence's also says what T and F are."""
    if not text:
        return ""
    if "T " not in text:
        return f"Shape {text}"
    where = "first" if text.startswith("(T ") else "after the batch N"
    return (f"Shape {text}: a sequence. T is its time axis (steps, {where}), F the features "
            "of each step.")


class ShapeLabel(QGraphicsRectItem):
    """The inferred tensor shape, e.g. '(N, 256)', on a dark pill in the edge's middle."""

    def __init__(self, parent: QGraphicsItem) -> None:
        super().__init__(parent)
        self.setBrush(QBrush(style.LABEL_BG))
        self.setPen(QPen(style.NODE_BORDER, 1.0))
        self.text = QGraphicsSimpleTextItem(self)
        self.text.setFont(style.font("label"))
        self.text.setBrush(QBrush(style.LABEL_TEXT))
        self.setZValue(3.0)

    def set_text(self, text: str, centre: QPointF) -> None:
        if text != self.text.text():
            self.text.setText(text)
        size = style.metrics("label").boundingRect(text).size() if text else None
        if size is None:
            self.setVisible(False)
            return
        w, h = size.width() + 10.0, size.height() + 4.0
        self.setRect(QRectF(-w / 2, -h / 2, w, h))
        self.text.setPos(-w / 2 + 5.0, -h / 2 + 2.0)
        self.setPos(centre)


class EdgeItem(QGraphicsPathItem):
    """One document edge; the scene moves its ends when the nodes move."""

    def __init__(self, edge_id: str, src: str, src_port: str, dst: str, dst_port: str) -> None:
        super().__init__()
        self.edge_id = edge_id
        self.src, self.src_port, self.dst, self.dst_port = src, src_port, dst, dst_port
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable, True)
        self._pen = QPen(style.EDGE, 2.2)
        self._selected_pen = QPen(style.EDGE_SELECTED, 3.0)
        self.setPen(self._pen)
        self._label: ShapeLabel | None = None  # made when first shown (see `label`)
        self._shape_text = ""
        self._details = True
        self._span = 0.0
        self._hit: QPainterPath | None = QPainterPath()

    def set_ends(self, start: QPointF, end: QPointF) -> None:
        path = curve(start, end)
        self.setPath(path)
        self._hit = None  # made when first asked for (hit tests happen near the mouse only)
        if self._label is not None:
            self._label.set_text(self._shape_text, path.pointAtPercent(0.5))
        self._span = abs(end.x() - start.x()) + abs(end.y() - start.y())
        self._show_label()

    def midpoint(self) -> QPointF:
        """Halfway along the curve (where the shape label and the edge's probes sit)."""
        return self.path().pointAtPercent(0.5)

    def set_shape_text(self, text: str, visible: bool) -> None:
        if text == self._shape_text and visible == self._details:
            return  # after an edit most labels are what they were: nothing to lay out
        self._shape_text, self._details = text, visible
        if self._label is not None:
            self._label.set_text(text, self.path().pointAtPercent(0.5))
        self._show_label()
        self.setToolTip(tooltip(text))

    def set_details(self, visible: bool) -> None:
        """Labels on or off with the zoom (level of detail)."""
        self._details = visible
        self._show_label()

    @property
    def label(self) -> ShapeLabel:
        """The shape label, made on first use: a zoomed-out canvas of 10,000 edges shows
        none, and three items per edge instead of one made opening it slow."""
        if self._label is None:
            self._label = ShapeLabel(self)
            self._label.setVisible(False)
            self._label.set_text(self._shape_text, self.midpoint())
        return self._label

    def _show_label(self) -> None:
        if not (self._shape_text and self._details):
            if self._label is not None:
                self._label.setVisible(False)
            return
        # A label wider than its edge would hide the ports it joins; the tooltip still tells.
        label = self.label
        label.setVisible(self._span > label.rect().width() + 30)

    def shape(self) -> QPainterPath:
        if self._hit is None:
            stroker = QPainterPathStroker()
            stroker.setWidth(12.0)  # easy to click, though drawn thin
            self._hit = stroker.createStroke(self.path())
        return self._hit

    def show_selected(self, selected: bool) -> None:
        """Drawn thicker and in the accent colour while selected (the scene calls this on
        its selectionChanged: no itemChange override, which would make every change of
        every edge, 9 while it is made, a call into Python)."""
        self.setPen(self._selected_pen if selected else self._pen)


class RubberEdge(QGraphicsPathItem):
    """The edge that follows the mouse while a connection is being dragged."""

    def __init__(self, anchor: QPointF, from_output: bool) -> None:
        super().__init__()
        self.anchor, self.from_output = anchor, from_output
        pen = QPen(style.EDGE_RUBBER, 2.2, Qt.PenStyle.DashLine)
        self.setPen(pen)
        self.setZValue(5.0)
        self.follow(anchor)

    def follow(self, point: QPointF, ok: bool | None = None) -> None:
        start, end = (self.anchor, point) if self.from_output else (point, self.anchor)
        self.setPath(curve(start, end))
        colour = {True: style.EDGE_RUBBER, False: style.NODE_ERROR}.get(ok, style.EDGE)
        if self.pen().color() != colour:
            pen = self.pen()
            pen.setColor(colour)
            self.setPen(pen)
