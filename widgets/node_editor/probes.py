"""Hooks on the canvas: a probe badge with a sparkline per hook, and health indicator chips.

The scene places these items and moves them with their node or edge; the hook controller
(`app/gui/hooks.py`) feeds them values at display rate. Both items are cached by Qt
(DeviceCoordinateCache): new values rebuild one small path and repaint one pixmap,
panning paints nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import shiboken6
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPolygonF
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsSceneMouseEvent,
    QStyleOptionGraphicsItem,
    QWidget,
)

from widgets.node_editor import style

# What each hook kind's probe says in its first few pixels, and what its tooltip says first.
GLYPHS = {"forward_pre": "in", "forward": "out", "backward": "∇", "hook_backward": "∇"}
KIND_TIPS = {
    "forward_pre": "Forward-pre hook (the node's input)",
    "forward": "Forward hook (the node's output)",
    "backward": "Backward hook (the gradient at the node's output)",
    "hook_backward": "HookBackward (the gradient through this connection)",
}
KIND_ORDER = {"forward_pre": 0, "forward": 1, "backward": 2, "hook_backward": 3}


@dataclass(frozen=True)
class Indicator:
    """One health indicator of a node: short text, 'ok'/'warn'/'bad', a tooltip with the range."""

    name: str
    text: str
    status: str  # 'ok' | 'warn' | 'bad'
    tooltip: str


class ProbeItem(QGraphicsItem):
    """A pill on a node or an edge: the hook kind's glyph and a sparkline of recent values.

    `pos()` is the pill's top-left corner (the scene places it). A left click calls
    `on_clicked(hook_id)`; the press is taken, so it neither moves a node nor starts a
    rubber band.
    """

    RECT = QRectF(0.0, 0.0, style.PROBE_WIDTH, style.PROBE_HEIGHT)
    BOUNDS = RECT.adjusted(-1.0, -1.0, 1.0, 1.0)  # with the border's half width
    GLYPH = QRectF(3.0, 0.0, style.PROBE_GLYPH - 3.0, style.PROBE_HEIGHT)
    SPARK = QRectF(  # the sparkline's room, right of the glyph
        style.PROBE_GLYPH + 2.0,
        4.0,
        style.PROBE_WIDTH - style.PROBE_GLYPH - 9.0,
        style.PROBE_HEIGHT - 8.0,
    )

    def __init__(self, hook_id: str, kind: str, target: str) -> None:
        super().__init__()
        self.hook_id, self.kind, self.target = hook_id, kind, target
        self.values = np.empty(0)
        self.path = QPainterPath()  # the sparkline, in item coordinates; rebuilt on new values
        self.last: QPointF | None = None  # the newest finite point, marked with a dot
        self.on_clicked: Callable[[str], None] | None = None  # set by the scene
        colour = style.PROBE_COLOURS.get(kind, style.PROBE_COLOURS["forward"])
        self._line_pen = style.pen(colour.name(), 1.3)
        self._border_pen = style.pen(colour.darker(150).name(), 1.0)
        self._colour, self._dim = colour, colour.darker(160)
        self.setZValue(4.0)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setAcceptedMouseButtons(Qt.MouseButton.LeftButton)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(f"{KIND_TIPS.get(kind, kind)}; click to show its pane")

    def set_values(self, values: np.ndarray, tooltip: str = "") -> None:
        """Newest values last; the sparkline spans their range (NaN and inf left out)."""
        values = np.asarray(values, dtype=np.float64).ravel()
        if tooltip and tooltip != self.toolTip():
            self.setToolTip(tooltip)
        if np.array_equal(values, self.values, equal_nan=True):
            return
        self.values = values.copy()
        self.path, self.last = sparkline(values, self.SPARK)
        self.update()

    # ---- QGraphicsItem -----------------------------------------------------------------------

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self.BOUNDS

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        budget = getattr(self.scene(), "probe_budget", None)
        if budget is None:
            self._paint(painter, option)
        else:  # a sparkline repainted at each new value is part of the hook views' cost
            budget.timed(self._paint, painter, option)

    def _paint(self, painter: QPainter, option: QStyleOptionGraphicsItem) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        radius = style.PROBE_HEIGHT / 2
        if lod < style.DETAIL_LABELS:  # zoomed out: a pill in the kind's colour is enough
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._dim)
            painter.drawRoundedRect(self.RECT, radius, radius)
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(self._border_pen)
        painter.setBrush(style.PROBE_BG)
        painter.drawRoundedRect(self.RECT, radius, radius)
        painter.setFont(style.font("probe"))
        painter.setPen(self._colour)
        painter.drawText(self.GLYPH, Qt.AlignmentFlag.AlignCenter, GLYPHS.get(self.kind, "?"))
        if self.path.isEmpty():
            return
        painter.setPen(self._line_pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path)
        if self.last is not None:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._colour)
            painter.drawEllipse(self.last, 1.8, 1.8)

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            event.accept()  # ours: the node under it stays put, no rubber band starts
        else:
            event.ignore()

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        inside = self.boundingRect().contains(event.pos())
        if event.button() == Qt.MouseButton.LeftButton and inside and self.on_clicked:
            self.on_clicked(self.hook_id)
        event.accept()


def sparkline(values: np.ndarray, area: QRectF) -> tuple[QPainterPath, QPointF | None]:
    """A path through `values` spread over `area`, low values at the bottom.

    Values are spaced evenly in x; NaN and inf are left out (the line joins their
    neighbours). A constant series is a flat line through the middle; no finite value
    gives an empty path.
    """
    path = QPainterPath()
    values = np.asarray(values, dtype=np.float64).ravel()
    finite = np.isfinite(values)
    if not finite.any():
        return path, None
    low, high = float(values[finite].min()), float(values[finite].max())
    middle = area.center().y()
    if len(values) == 1:
        path.moveTo(area.left(), middle)
        path.lineTo(area.right(), middle)
        return path, QPointF(area.right(), middle)
    xs = area.left() + np.arange(len(values)) * (area.width() / (len(values) - 1))
    span = high - low
    if span > 0 and math.isfinite(span):
        ys = area.bottom() - (np.where(finite, values, low) - low) * (area.height() / span)
    else:
        ys = np.full(len(values), middle)
    xs, ys = xs[finite], ys[finite]
    last = QPointF(float(xs[-1]), float(ys[-1]))
    if len(xs) == 1:  # one finite value among NaNs: a dot's worth of line
        path.moveTo(last)
        path.lineTo(last + QPointF(0.01, 0.0))
        return path, last
    path.addPolygon(_polygon(xs, ys))  # (a QPointF per value costs 15 times as much)
    return path, last


def _polygon(xs: np.ndarray, ys: np.ndarray) -> QPolygonF:
    """The points (xs[i], ys[i]) as a QPolygonF, written straight into its memory."""
    polygon = QPolygonF()
    polygon.resize(len(xs))
    memory = shiboken6.VoidPtr(polygon.data(), 16 * len(xs), True)  # QPointF: two doubles
    coordinates = np.frombuffer(memory, dtype=np.float64)
    coordinates[0::2], coordinates[1::2] = xs, ys
    return polygon


class HealthBadge(QGraphicsItem):
    """A row of small coloured chips under a node, one per health indicator.

    `pos()` is the row's top-left corner. Its tooltip lists every indicator's tooltip.
    Clicks go through to whatever is under it.
    """

    def __init__(self, node_id: str) -> None:
        super().__init__()
        self.node_id = node_id
        self.indicators: tuple[Indicator, ...] = ()
        self.chips: list[tuple[QRectF, Indicator]] = []
        self._bounds = QRectF()
        self.setZValue(4.0)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_indicators(self, indicators: Sequence[Indicator]) -> None:
        indicators = tuple(indicators)
        if indicators == self.indicators:
            return
        self.prepareGeometryChange()
        self.indicators = indicators
        metrics = style.metrics("chip")
        self.chips = []
        x = 0.0
        for indicator in indicators:
            width = metrics.horizontalAdvance(indicator.text) + 2 * style.CHIP_PAD
            self.chips.append((QRectF(x, 0.0, width, style.CHIP_HEIGHT), indicator))
            x += width + style.CHIP_GAP
        row = QRectF(0.0, 0.0, max(0.0, x - style.CHIP_GAP), style.CHIP_HEIGHT)
        self._bounds = row.adjusted(-1.0, -1.0, 1.0, 1.0)
        self.setToolTip("\n".join(i.tooltip for i in indicators))
        self.update()

    def colour_of(self, indicator: Indicator):
        """(background, text) colours of one chip."""
        return style.HEALTH_COLOURS.get(indicator.status, style.HEALTH_COLOURS["ok"])

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self._bounds

    def paint(
        self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None
    ) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        painter.setPen(Qt.PenStyle.NoPen)
        if lod < style.DETAIL_LABELS:  # zoomed out: the colours alone
            for rect, indicator in self.chips:
                painter.fillRect(rect, self.colour_of(indicator)[0])
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setFont(style.font("chip"))
        radius = style.CHIP_HEIGHT / 2 - 1
        for rect, indicator in self.chips:
            background, text = self.colour_of(indicator)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(background)
            painter.drawRoundedRect(rect, radius, radius)
            painter.setPen(text)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, indicator.text)
