"""A confusion matrix drawn as a heat map: counts (or row shares) in coloured cells, class names
on both axes, and a click on a cell to ask for its samples."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetrics, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

HOT = QColor("#08519c")  # the colour of a full cell; an empty one is white
WRONG = QColor("#c0392b")  # outline of the chosen cell
MIN_CELL, MAX_CELL = 20, 64  # pixels; below MIN_CELL the matrix scrolls (many classes)
NAME_CHARS = 14  # class names are cut to this many characters on the axes


def _mix(share: float) -> QColor:
    """White to HOT by `share` (0–1)."""
    share = min(max(float(share), 0.0), 1.0)
    r, g, b = HOT.red(), HOT.green(), HOT.blue()
    return QColor(round(255 + (r - 255) * share), round(255 + (g - 255) * share),
                  round(255 + (b - 255) * share))  # fmt: skip


def _short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


class ConfusionMatrixView(QWidget):
    """Rows are the true classes, columns the predicted ones; `cell_clicked(true, predicted)`."""

    cell_clicked = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("confusion_matrix")
        self.counts = np.zeros((0, 0), dtype=np.int64)
        self.names: tuple[str, ...] = ()
        self.normalised = False
        self.chosen: tuple[int, int] | None = None
        self.setMouseTracking(True)
        self.setMinimumSize(160, 140)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    # ---- data ------------------------------------------------------------------------------

    def set_matrix(self, counts: np.ndarray, names: tuple[str, ...] | list[str]) -> None:
        """Show `counts` (C, C) with the classes `names` (padded with numbers if short)."""
        self.counts = np.asarray(counts, dtype=np.int64)
        size = len(self.counts)
        names = [str(n) for n in names][:size]
        self.names = tuple(names + [str(i) for i in range(len(names), size)])
        if self.chosen is not None and max(self.chosen) >= size:
            self.chosen = None
        left, top = self._margins()
        self.setMinimumSize(max(160, left + size * MIN_CELL + 4),
                            max(140, top + size * MIN_CELL + 4))  # fmt: skip
        self.updateGeometry()
        self.update()

    def set_normalised(self, normalised: bool) -> None:
        """Show each row's shares (of its true class) instead of the counts."""
        self.normalised = bool(normalised)
        self.update()

    def set_chosen(self, cell: tuple[int, int] | None) -> None:
        self.chosen = cell
        self.update()

    def shares(self) -> np.ndarray:
        """Each row divided by its sum (0 for an empty row)."""
        counts = self.counts.astype(np.float64)
        totals = counts.sum(axis=1, keepdims=True)
        return np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)

    def cell_text(self, i: int, j: int) -> str:
        """What cell (i, j) shows: its count, or its share of the row in percent."""
        if self.normalised:
            return f"{self.shares()[i, j]:.0%}"
        return str(int(self.counts[i, j]))

    # ---- geometry --------------------------------------------------------------------------

    def _margins(self) -> tuple[int, int]:
        """Room for the names: (left, top) in pixels."""
        metrics = QFontMetrics(self.font())
        widest = max((metrics.horizontalAdvance(_short(n)) for n in self.names), default=0)
        return widest + metrics.height() + 12, widest + metrics.height() + 12

    def _cell_side(self) -> int:
        size = max(len(self.counts), 1)
        left, top = self._margins()
        side = min((self.width() - left - 4) // size, (self.height() - top - 4) // size)
        return int(min(max(side, MIN_CELL), MAX_CELL))

    def cell_rect(self, i: int, j: int) -> QRect:
        """Where cell (true i, predicted j) is drawn, in widget coordinates."""
        left, top = self._margins()
        side = self._cell_side()
        return QRect(left + j * side, top + i * side, side, side)

    def cell_at(self, point: QPoint) -> tuple[int, int] | None:
        size = len(self.counts)
        left, top = self._margins()
        side = self._cell_side()
        if side <= 0 or point.x() < left or point.y() < top:
            return None
        j, i = (point.x() - left) // side, (point.y() - top) // side
        return (int(i), int(j)) if i < size and j < size else None

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        left, top = self._margins()
        side = 34 * max(len(self.counts), 1)
        return QSize(left + side + 8, top + side + 8)

    # ---- drawing and clicks ----------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        try:
            self._paint(painter)
        finally:
            painter.end()

    def _paint(self, painter: QPainter) -> None:
        size = len(self.counts)
        text_colour = self.palette().color(self.foregroundRole())
        if not size:
            painter.setPen(text_colour)
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No evaluation yet.")
            return
        shares = self.shares()
        left, top = self._margins()
        side = self._cell_side()
        metrics = QFontMetrics(self.font())
        font = QFont(self.font())
        if side < 30:
            font.setPointSizeF(max(font.pointSizeF() * 0.8, 6.0))
        for i in range(size):
            for j in range(size):
                rect = self.cell_rect(i, j)
                colour = _mix(shares[i, j])
                painter.fillRect(rect, colour)
                painter.setPen(QPen(QColor("#bbbbbb")))
                painter.drawRect(rect.adjusted(0, 0, -1, -1))
                painter.setFont(font)
                painter.setPen(QColor("white") if colour.lightness() < 140 else QColor("black"))
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, self.cell_text(i, j))
        if self.chosen is not None:
            painter.setPen(QPen(WRONG, 3))
            painter.drawRect(self.cell_rect(*self.chosen).adjusted(1, 1, -2, -2))
        painter.setFont(self.font())
        painter.setPen(text_colour)
        line = metrics.height()
        for k, name in enumerate(self.names):  # true classes down the left
            rect = self.cell_rect(k, 0)
            painter.drawText(QRect(line + 2, rect.top(), left - line - 6, side),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             _short(name))  # fmt: skip
        for k, name in enumerate(self.names):  # predicted classes across the top, upright
            rect = self.cell_rect(0, k)
            painter.save()
            painter.translate(rect.left(), top - 4)
            painter.rotate(-90)
            painter.drawText(QRect(0, 0, top - line - 6, side),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             _short(name))  # fmt: skip
            painter.restore()
        grid = size * side
        painter.drawText(QRect(left, 0, grid, line), Qt.AlignmentFlag.AlignCenter, "Predicted")
        painter.save()
        painter.translate(0, top + grid)
        painter.rotate(-90)
        painter.drawText(QRect(0, 0, grid, line), Qt.AlignmentFlag.AlignCenter, "True")
        painter.restore()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        if event.button() == Qt.MouseButton.LeftButton:
            cell = self.cell_at(event.position().toPoint())
            if cell is not None:
                self.set_chosen(cell)
                self.cell_clicked.emit(*cell)
                return
        super().mouseReleaseEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        cell = self.cell_at(event.position().toPoint())
        if cell is None:
            self.setToolTip("")
        else:
            i, j = cell
            count = int(self.counts[i, j])
            share = self.shares()[i, j]
            self.setToolTip(f"True {self.names[i]}, predicted {self.names[j]}: {count} "
                            f"sample{'s' if count != 1 else ''} ({share:.1%} of "
                            f"{self.names[i]}). Click to see them.")  # fmt: skip
        super().mouseMoveEvent(event)
