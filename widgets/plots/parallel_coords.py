"""Parallel coordinates of a sweep's runs: one vertical axis per swept setting plus the metric,
each run a line across them coloured by the metric, and brushing to pick runs out.

    view.set_runs([PCAxis("learning_rate", "learning rate", log=True),
                   PCAxis("optimizer", choices=("SGD", "Adam")),
                   PCAxis("best_val_loss", "best val loss", higher_better=False)],
                  [("run-id", {"learning_rate": 0.01, "optimizer": "Adam",
                               "best_val_loss": 0.31}), ...])
    view.brush("learning_rate", 0.005, 0.05)    # as a drag along that axis does
    view.selected()                             # ids of the runs inside every brush

Categorical values (an optimizer's name) sit evenly along their axis; a log axis spaces its
values by decade. Colours run along viridis with the best end bright, whichever way the
metric is better; a run without the metric is grey. A drag along an axis brushes a range of
it (several axes combine: a run must be inside each), lines outside dim, and
`selection_changed` tells the runs selected; a double-click on an axis clears its brush.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import QGraphicsRectItem, QLabel, QVBoxLayout, QWidget

from widgets.plots.colours import plot_colours
from widgets.plots.ownership import adopt_menus
from widgets.plots.parallel_scale import PCAxis, Scale

__all__ = ["PCAxis", "ParallelCoordinates"]

NO_METRIC = QColor("#9e9e9e")
BRUSH_FILL = QColor(255, 152, 0, 70)
BRUSH_EDGE = QColor("#ef6c00")
GRAB_PX = 14  # how near an axis (pixels) a drag or double-click takes it
TOP, BOTTOM = 1.0, 0.0
MARGIN_X = (58.0, 48.0)  # px left of the first axis (tick labels), right of the last (title)
MARGIN_Y = (26.0, 10.0)  # px above the axes (titles), below them
HINT = "Drag along an axis to select runs; double-click the axis to clear it."


class _BrushBox(pg.ViewBox):
    """The plot's view box: a drag along an axis brushes it, a double-click clears it; no
    panning or zooming (the view always shows every run)."""

    def __init__(self, owner: ParallelCoordinates) -> None:
        super().__init__(enableMenu=False)
        self.owner = owner
        self.setMouseEnabled(False, False)

    def _axis_near(self, scene_x: Any) -> int | None:
        x = self.mapToView(scene_x).x()
        return self.owner.axis_at(x, GRAB_PX * self.viewPixelSize()[0])

    def mouseDragEvent(self, ev, axis=None) -> None:  # noqa: N802 (pyqtgraph's name)
        if ev.button() != Qt.MouseButton.LeftButton:
            ev.ignore()
            return
        index = self._axis_near(ev.buttonDownPos())
        if index is None:
            ev.ignore()
            return
        ev.accept()
        start = self.mapToView(ev.buttonDownPos()).y()
        now = self.mapToView(ev.pos()).y()
        self.owner.brush_span(index, start, now, finished=ev.isFinish())

    def mouseClickEvent(self, ev) -> None:  # noqa: N802
        index = self._axis_near(ev.pos()) if ev.double() else None
        if index is None:
            ev.ignore()
            return
        ev.accept()
        self.owner.clear_brush(self.owner.axes[index].name)


class ParallelCoordinates(QWidget):
    """See the module's text."""

    selection_changed = Signal(list)  # ids of the runs inside every brush (all: no brush)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("parallel_coordinates")
        self.axes: list[PCAxis] = []
        self._scales: list[Scale] = []
        self._ids: list[str] = []
        self._rows: dict[str, dict[str, Any]] = {}
        self._positions = np.empty((0, 0))
        self._colours: dict[str, QColor] = {}
        self._lines: dict[str, pg.PlotCurveItem] = {}
        self._brushes: dict[int, tuple[float, float]] = {}  # axis index -> (low, high), 0..1
        self._brush_items: dict[int, QGraphicsRectItem] = {}
        self._decor: list[Any] = []
        self._colour_axis = -1
        self._selected: list[str] = []
        self.colour_map = _ramp(reverse=False)  # the ramp the lines take (bright: best)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setObjectName("parallel_graphics")
        self.graphics.ci.setContentsMargins(4, 4, 4, 4)
        self.plot = pg.PlotItem(viewBox=_BrushBox(self))
        for side in ("left", "bottom"):
            self.plot.hideAxis(side)
        self.plot.hideButtons()
        self.plot.getViewBox().sigResized.connect(self._fit_range)
        self.plot.setMenuEnabled(False)
        self.graphics.addItem(self.plot, 0, 0)
        self.bar = pg.ColorBarItem(values=(0, 1), colorMap=self.colour_map, interactive=False,
                                   width=14, colorMapMenu=False)  # fmt: skip
        self.graphics.addItem(self.bar, 0, 1)
        for plot in (self.plot, self.bar):
            adopt_menus(self, plot)
        self.hint = QLabel(HINT)
        self.hint.setObjectName("parallel_hint")
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: palette(placeholder-text);")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.hint)
        self.setMinimumHeight(160)
        self._restyle()

    # ---- data --------------------------------------------------------------------------------

    def set_runs(self, axes: Sequence[PCAxis], rows: Sequence[tuple[str, Mapping[str, Any]]],
                 colour_by: str | None = None) -> None:  # fmt: skip
        """Show `rows` (run id, axis name -> value) on `axes`; lines are coloured by the
        axis `colour_by` (default: the last). Brushes on axes still shown are kept."""
        old = {self.axes[i].name: span for i, span in self._brushes.items()
               if i < len(self.axes)}  # fmt: skip
        self.axes = list(axes)
        self._ids = [run_id for run_id, _ in rows]
        self._scales = [Scale(a, [values.get(a.name) for _, values in rows]) for a in self.axes]
        self._positions = np.array([[s.place(values.get(s.axis.name)) for s in self._scales]
                                    for _, values in rows], dtype=float).reshape(
                                        len(rows), len(self.axes))  # fmt: skip
        names = [a.name for a in self.axes]
        self._colour_axis = names.index(colour_by) if colour_by in names else len(names) - 1
        self._rows = {run_id: dict(values) for run_id, values in rows}
        self._brushes = {names.index(n): span for n, span in old.items() if n in names}
        self._colour_runs()
        self._draw()
        self._update_selection(force=True)

    def clear(self) -> None:
        self.set_runs([], [])

    def line_count(self) -> int:
        """Runs drawn as a line."""
        return sum(1 for line in self._lines.values() if line.isVisible())

    def colour_of(self, run_id: str) -> QColor:
        """The colour of a run's line (before any dimming)."""
        return QColor(self._colours[run_id])

    def position(self, run_id: str, axis: str) -> float:
        """Where the run crosses `axis`: 0 at its bottom, 1 at its top (NaN: not on it)."""
        return float(self._positions[self._ids.index(run_id), self._axis_index(axis)])

    def dimmed(self, run_id: str) -> bool:
        return bool(self._brushes) and run_id not in self._selected

    # ---- brushing ----------------------------------------------------------------------------

    def brush(self, axis: str, low: Any, high: Any) -> None:
        """Select the runs whose value on `axis` lies between `low` and `high` (axis units;
        on a categorical axis, two of its values)."""
        index = self._axis_index(axis)
        scale = self._scales[index]
        a, b = sorted((scale.place(low), scale.place(high)))
        if not (math.isfinite(a) and math.isfinite(b)):
            raise ValueError(f"{low!r} to {high!r} is not a range of the axis {axis}.")
        margin = 1e-9 + (0.02 if scale.choices else 0.0)
        self._set_brush(index, a - margin, b + margin)

    def brush_span(self, index: int, start: float, end: float, *, finished: bool = True) -> None:
        """A brush on the axis `index` from `start` to `end` (0..1, as dragged)."""
        low, high = sorted((start, end))
        self._set_brush(index, max(low, -0.05), min(high, 1.05))

    def clear_brush(self, axis: str | None = None) -> None:
        """Take the brush off `axis` (every axis if None)."""
        if axis is None:
            self._brushes.clear()
        else:
            self._brushes.pop(self._axis_index(axis), None)
        self._draw_brushes()
        self._update_selection()

    def brushed(self) -> dict[str, tuple[float, float]]:
        """Axis name -> (low, high) of each brush, 0 (bottom) to 1 (top)."""
        return {self.axes[i].name: span for i, span in sorted(self._brushes.items())}

    def selected(self) -> list[str]:
        """Ids of the runs inside every brush, in the rows' order (every run: no brush)."""
        return list(self._selected)

    def axis_at(self, x: float, tolerance: float) -> int | None:
        """The axis at `x` (view units) within `tolerance`, if any."""
        if not self.axes:
            return None
        index = int(round(x))
        if 0 <= index < len(self.axes) and abs(x - index) <= max(tolerance, 1e-9):
            return index
        return None

    def _set_brush(self, index: int, low: float, high: float) -> None:
        self._brushes[index] = (low, high)
        self._draw_brushes()
        self._update_selection()

    def _axis_index(self, axis: str) -> int:
        for i, a in enumerate(self.axes):
            if a.name == axis:
                return i
        raise KeyError(f"There is no axis {axis!r}.")

    def _update_selection(self, *, force: bool = False) -> None:
        inside = np.ones(len(self._ids), dtype=bool)
        for index, (low, high) in self._brushes.items():
            column = self._positions[:, index]
            inside &= np.isfinite(column) & (column >= low) & (column <= high)
        selected = [run_id for run_id, keep in zip(self._ids, inside, strict=True) if keep]
        changed = selected != self._selected
        self._selected = selected
        self._style_lines()
        colour = ""
        if self.axes:
            better = self.axes[self._colour_axis].higher_better
            best = "" if better is None else " (bright: best)"
            colour = f"Colour: {self.axes[self._colour_axis].title}{best}. "
        chosen = (f"{len(selected)} of {len(self._ids)} runs selected. "
                  if self._brushes else "")  # fmt: skip
        self.hint.setText(f"{chosen}{colour}{HINT}")
        if changed or force:
            self.selection_changed.emit(list(selected))

    # ---- drawing -----------------------------------------------------------------------------

    def _colour_runs(self) -> None:
        self._colours = {}
        if not self.axes:
            return
        index = self._colour_axis
        column = self._positions[:, index] if len(self._ids) else np.empty(0)
        better = self.axes[index].higher_better
        scale = self._scales[index]
        low, high = scale.low, scale.high
        if scale.log:
            low, high = 10**low, 10**high
        colour_map = self.colour_map = _ramp(reverse=better is False)  # lower better: low bright
        self.bar.setColorMap(colour_map)
        self.bar.setLevels((low, high))
        # The bar has no title (the hint says what colours mean): a narrow dock keeps room.
        # Values as they are, never "×0.001" (pyqtgraph 0.14 ignores enableAutoSIPrefix).
        self.bar.axis.setSIPrefixEnableRanges(((0.0, 0.0),))
        self.bar.axis.updateAutoSIPrefix()
        for run_id, t in zip(self._ids, column, strict=True):
            self._colours[run_id] = (colour_map.map(float(t), mode="qcolor")
                                     if math.isfinite(t) else QColor(NO_METRIC))  # fmt: skip

    def _draw(self) -> None:
        plot = self.plot
        for item in [*self._lines.values(), *self._decor, *self._brush_items.values()]:
            plot.removeItem(item)
        self._lines, self._decor, self._brush_items = {}, [], {}
        count = len(self.axes)
        self.bar.setVisible(count > 0)
        if not count:
            return
        colours = plot_colours(self.palette())
        x = np.arange(count, dtype=float)
        for run_id, row in zip(self._ids, self._positions, strict=True):
            line = pg.PlotCurveItem(x, row, connect="finite", antialias=True)
            line.setToolTip(self._tip(run_id))
            plot.addItem(line)
            self._lines[run_id] = line
        axis_pen = pg.mkPen(colours.axis, width=1.5)
        spine = pg.PlotCurveItem(np.repeat(x, 2), np.tile([BOTTOM, TOP], count),
                                 connect="pairs", pen=axis_pen)  # fmt: skip
        spine.setZValue(5)
        self._add_decor(spine)
        tick_x, tick_y = [], []
        for i, (axis, scale) in enumerate(zip(self.axes, self._scales, strict=True)):
            title = pg.TextItem(axis.title, color=colours.text, anchor=(0.5, 1.1))
            title.setPos(i, TOP)
            self._add_decor(title)
            values = [self._rows[r].get(axis.name) for r in self._ids]
            for t, text in scale.ticks(values):
                if not math.isfinite(t):
                    continue
                label = pg.TextItem(text + " ", color=colours.text, anchor=(1.0, 0.5))
                label.setPos(i - 0.015, t)
                self._add_decor(label)
                tick_x += [i - 0.03, i]
                tick_y += [t, t]
        ticks = pg.PlotCurveItem(np.array(tick_x), np.array(tick_y), connect="pairs",
                                 pen=axis_pen)  # fmt: skip
        ticks.setZValue(5)
        self._add_decor(ticks)
        self._fit_range()
        self._draw_brushes()

    def _fit_range(self, *_: Any) -> None:
        """Axes spread over the plot with room in pixels for their titles above, tick labels
        left and half a title right, whatever the plot's size."""
        box = self.plot.getViewBox()
        width, height = max(box.width(), 1.0), max(box.height(), 1.0)
        (left, right), (top, bottom) = MARGIN_X, MARGIN_Y
        span_x = max(len(self.axes) - 1, 1) / max(1 - (left + right) / width, 0.2)
        span_y = (TOP - BOTTOM) / max(1 - (top + bottom) / height, 0.2)
        low_x = (-left / width) * span_x if len(self.axes) > 1 else -0.5 * span_x
        box.setRange(xRange=(low_x, low_x + span_x),
                     yRange=(BOTTOM - bottom / height * span_y,
                             BOTTOM - bottom / height * span_y + span_y), padding=0)  # fmt: skip

    def _add_decor(self, item: Any) -> None:
        self.plot.addItem(item)
        self._decor.append(item)

    def _draw_brushes(self) -> None:
        for item in self._brush_items.values():
            self.plot.removeItem(item)
        self._brush_items = {}
        for index, (low, high) in self._brushes.items():
            rect = QGraphicsRectItem(QRectF(index - 0.05, low, 0.1, high - low))
            pen = QPen(BRUSH_EDGE)
            pen.setCosmetic(True)
            rect.setPen(pen)
            rect.setBrush(QBrush(BRUSH_FILL))
            rect.setZValue(4)
            self.plot.addItem(rect)
            self._brush_items[index] = rect

    def _style_lines(self) -> None:
        chosen = set(self._selected)
        brushing = bool(self._brushes)
        for run_id, line in self._lines.items():
            colour = QColor(self._colours.get(run_id, NO_METRIC))
            if brushing and run_id not in chosen:
                colour.setAlpha(70)
                line.setPen(pg.mkPen(colour, width=1))
                line.setZValue(1)
            else:
                line.setPen(pg.mkPen(colour, width=2.5))
                line.setZValue(3)

    def _tip(self, run_id: str) -> str:
        values = self._rows.get(run_id, {})
        return "\n".join(f"{a.title}: {_text(values.get(a.name))}" for a in self.axes)

    def _restyle(self) -> None:
        colours = plot_colours(self.palette())
        self.graphics.setBackground(colours.background)
        self.bar.axis.setPen(colours.axis)
        self.bar.axis.setTextPen(colours.text)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()
            self._draw()
            self._style_lines()


def _ramp(*, reverse: bool) -> pg.ColorMap:
    """Viridis, dark to bright (bright at 0 if `reverse`); a copy of pyqtgraph's shared one."""
    ramp = copy.deepcopy(pg.colormap.get("viridis"))
    if reverse:
        ramp.reverse()
    return ramp


def _text(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
