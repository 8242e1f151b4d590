"""The four plots of a hook pane: distribution over steps, mean ± std, latest tensor, norm.

Each view draws arrays it is given (from a capture's summaries) and frames its axes with
`framing`: a range moves in round jumps, set before the paint, so most redraws repaint the
data and not the axes. The pane chooses which one is shown and feeds it.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont

from app.session import STAT_COLUMNS
from widgets.plots.budget import FrameBudget
from widgets.plots.colours import follow_palette, style_axis
from widgets.plots.curves import BudgetedPlotWidget, LogAxis
from widgets.plots.distribution import band_edges, by_step, colour_levels, distribution_image
from widgets.plots.framing import AxisFraming, heatmap_levels, log_bounds
from widgets.plots.ownership import adopt_menus

STAT = {name: i for i, name in enumerate(STAT_COLUMNS)}
MEAN_COLOUR = "#1f5fa8"
BAND_COLOUR = (31, 95, 168, 60)  # the mean's colour, light: the curves stay readable on it
RANGE_COLOUR = "#777777"
NORM_COLOUR = "#c0392b"
# White for "no values here", darker blues for more: the image reads on the white plot.
DENSITY_COLOURS = ("#ffffff", "#c6dbef", "#6baed6", "#2171b5", "#08306b")
DIVERGING_COLOURS = ("#2166ac", "#92c5de", "#f7f7f7", "#f4a582", "#b2182b")  # gradients: ± 0
SEQUENTIAL_MAP = "viridis"

VIEW_TEXTS = {
    "histogram": "Distribution over steps",
    "stats": "Mean ± std, min/max",
    "heatmap": "Latest tensor (heatmap)",
    "norm": "L2 norm",
}
VIEW_TIPS = {
    "histogram": "How the captured values are spread at each step: darker is more values "
    "(each step scaled to its own peak).",
    "stats": "Mean of the captured values with a ± one standard deviation band; dashed: "
    "the smallest and largest value.",
    "heatmap": "The newest captured tensor (its first samples), one cell per number.",
    "norm": "The L2 norm (square root of the sum of squares) of the captured tensor, on a "
    "logarithmic axis.",
}
LEGEND = {
    "stats": (
        f'<span style="color:{MEAN_COLOUR}"><b>&#9473;</b></span> mean&nbsp; '
        '<span style="color:#9fb9d9">&#9608;</span> ± std&nbsp; '
        f'<span style="color:{RANGE_COLOUR}">&#9477;</span> min/max'
    ),
    "histogram": "darker: more values",
}


class HookView(BudgetedPlotWidget):
    """One plot of a pane, its painting charged to the pane's budget."""

    def __init__(self, name: str, budget: FrameBudget) -> None:
        super().__init__(background="w")
        self.budget = budget
        self.framing = AxisFraming()
        adopt_menus(self, self.getPlotItem())
        self.setMinimumSize(120, 90)
        self.setToolTip(VIEW_TIPS[name])
        plot = self.getPlotItem()
        plot.setMenuEnabled(False)
        plot.showGrid(x=False, y=False)  # blended grid lines cost ~10 ms a paint

    def empty(self) -> None:
        """Nothing drawn, and the next data framed afresh. (Not `clear`: pyqtgraph's
        PlotWidget sets its plot's clear(), which removes every item, on each instance.)"""
        self.framing.clear()
        self.getPlotItem().enableAutoRange()

    def _show_ranges(self) -> None:
        moved = self.framing.take_moved()
        if moved:
            box = self.getPlotItem().getViewBox()
            box.setRange(**moved, padding=0.02)
            # pyqtgraph moves the view at its next paint, and moving it during a paint
            # asks for a second one: moved now, one paint shows it.
            box.prepareForPaint()


class HistogramView(HookView):
    """The distribution over steps: one image, placed so the axes read steps and values."""

    def __init__(self, budget: FrameBudget) -> None:
        super().__init__("histogram", budget)
        plot = self.getPlotItem()
        label_axes(plot, "value", "step")
        self.image = pg.ImageItem(axisOrder="row-major")  # [value row, step column]
        self.image.setLookupTable(
            pg.ColorMap(np.linspace(0, 1, len(DENSITY_COLOURS)), DENSITY_COLOURS)
            .getLookupTable(nPts=256, alpha=False))  # fmt: skip
        plot.addItem(self.image)
        follow_palette(self)

    def draw(self, steps: np.ndarray, histograms: np.ndarray, *, streaming: bool) -> None:
        count = min(len(steps), len(histograms))  # aligned rows; the newest if they differ
        found = distribution_image(steps[len(steps) - count:],
                                   histograms[len(histograms) - count:])  # fmt: skip
        if found is None:
            self.image.clear()
            return
        image, (x, width, y, height) = found
        self.image.setImage(image, autoLevels=False, levels=(0.0, 1.0))
        self.image.setRect(QRectF(x, y, width, height))
        self.framing.frame_steps(x, x + width, streaming=streaming)
        self.framing.frame_values(y, y + height)
        self._show_ranges()

    def empty(self) -> None:
        super().empty()
        self.image.clear()


class StatsView(HookView):
    """Mean ± std as a band, min and max dashed: lines, no symbols (pyqtgraph paints
    symbols in Python)."""

    def __init__(self, budget: FrameBudget) -> None:
        super().__init__("stats", budget)
        plot = self.getPlotItem()
        label_axes(plot, "value", "step")
        plot.setDownsampling(auto=True, mode="peak")
        plot.setClipToView(True)
        self.band_low = pg.PlotCurveItem()
        self.band_high = pg.PlotCurveItem()
        self.band = pg.FillBetweenItem(self.band_low, self.band_high, brush=pg.mkBrush(BAND_COLOUR))
        range_pen = pg.mkPen(RANGE_COLOUR, width=1, style=Qt.PenStyle.DashLine)
        self.min_curve = pg.PlotDataItem(pen=range_pen)
        self.max_curve = pg.PlotDataItem(pen=range_pen)
        self.mean_curve = pg.PlotDataItem(pen=pg.mkPen(MEAN_COLOUR, width=1))
        plot.addItem(self.band)
        for item in (self.min_curve, self.max_curve, self.mean_curve):
            plot.addItem(item)
        # The band's edges only shape the fill; drawn, they would double the band's cost.
        for edge in (self.band_low, self.band_high):
            plot.addItem(edge)
            edge.hide()
        follow_palette(self)

    def draw(self, stats: np.ndarray, *, streaming: bool) -> None:
        keep = np.isfinite(stats[:, STAT["step"]]) & np.isfinite(stats[:, STAT["mean"]])
        rows = by_step(stats[keep])
        step, mean = rows[:, STAT["step"]], rows[:, STAT["mean"]]
        std = np.nan_to_num(rows[:, STAT["std"]])
        self.mean_curve.setData(step, mean)
        self.min_curve.setData(step, rows[:, STAT["min"]])
        self.max_curve.setData(step, rows[:, STAT["max"]])
        low, high = band_edges(step, mean - std, mean + std)
        # The fill rebuilds its path when either edge changes: once is enough.
        blocker = self.band_low.blockSignals(True)
        self.band_low.setData(*low)
        self.band_low.blockSignals(blocker)
        self.band_high.setData(*high)
        if len(step):
            self.framing.frame_steps(step[0], step[-1], streaming=streaming)
            low_values = np.concatenate([rows[:, STAT["min"]], mean - std])
            high_values = np.concatenate([rows[:, STAT["max"]], mean + std])
            low_values, high_values = (low_values[np.isfinite(low_values)],
                                       high_values[np.isfinite(high_values)])  # fmt: skip
            if len(low_values) and len(high_values):
                self.framing.frame_values(float(low_values.min()), float(high_values.max()))
        self._show_ranges()

    def empty(self) -> None:
        super().empty()
        for curve in (self.mean_curve, self.min_curve, self.max_curve, self.band_low,
                      self.band_high):  # fmt: skip
            curve.setData([], [])


class HeatmapView(HookView):
    """The latest tensor as an image (row 0 at the top, as a matrix is read), with a colour
    bar: diverging about 0 for gradients."""

    def __init__(self, budget: FrameBudget) -> None:
        super().__init__("heatmap", budget)
        plot = self.getPlotItem()
        plot.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        plot.addItem(self.image)
        self.color_bar = pg.ColorBarItem(colorMap=SEQUENTIAL_MAP, interactive=False, width=10,
                                         colorMapMenu=False)  # fmt: skip
        adopt_menus(self, self.color_bar)  # a ColorBarItem is a PlotItem
        self.color_bar.axis.setStyle(autoReduceTextSpace=False)  # as label_axes says
        self.color_bar.setImageItem(self.image)
        plot.layout.addItem(self.color_bar, 2, 5)  # right of the right-hand axis
        label_axes(plot, "", "")
        self._levels: tuple[float, float] | None = None
        self._gradient_map: bool | None = None  # the colour bar's map is the diverging one
        self._shape: tuple[int, ...] | None = None  # of the tensor drawn last
        follow_palette(self)

    def draw(self, tensor: np.ndarray | None, sample: int, channel: int, *,
             gradient: bool) -> None:  # fmt: skip
        """Show `tensor` (sample and channel picked where it has them)."""
        if tensor is None or tensor.size == 0:
            self.image.clear()
            return
        image = heatmap_of(tensor, sample, channel)
        if gradient != self._gradient_map:
            self._gradient_map = gradient
            self.color_bar.setColorMap(
                pg.ColorMap(np.linspace(0, 1, len(DIVERGING_COLOURS)), DIVERGING_COLOURS)
                if gradient else SEQUENTIAL_MAP)  # fmt: skip
        levels = heatmap_levels(self._levels, *colour_levels(image, symmetric=gradient),
                                symmetric=gradient)  # fmt: skip
        self.image.setImage(image, autoLevels=False, levels=levels)
        if levels != self._levels:  # (setting the same levels redraws the bar's labels)
            self._levels = levels
            self.color_bar.setLevels(levels)
        height, width = image.shape
        self.image.setRect(QRectF(0, 0, width, height))
        if tensor.shape != self._shape:  # a new shape: new axes and a fresh frame
            self._shape = tensor.shape
            self._label(min(tensor.ndim, 4))

    def _label(self, ndim: int) -> None:
        plot = self.getPlotItem()
        left, bottom = {0: ("", "index"), 1: ("", "index"), 2: ("sample", "feature"),
                        3: ("axis 1", "axis 2")}.get(ndim, ("row (H)", "column (W)"))  # fmt: skip
        label_axes(plot, left, bottom)
        plot.getAxis("left").setStyle(showValues=ndim >= 2)
        plot.setAspectLocked(ndim >= 4, ratio=1)  # images keep square pixels
        plot.enableAutoRange()

    def empty(self) -> None:
        super().empty()
        self.image.clear()
        self._shape = None
        self._levels = None


class NormView(HookView):
    """The norm over steps on a log axis: it spans decades when gradients vanish or explode."""

    def __init__(self, budget: FrameBudget) -> None:
        super().__init__("norm", budget)
        plot = self.getPlotItem()
        plot.setAxisItems({"left": _NormAxis("left")})
        label_axes(plot, "L2 norm", "step")
        plot.setLogMode(y=True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.setClipToView(True)
        self.curve = pg.PlotDataItem(pen=pg.mkPen(NORM_COLOUR, width=1))
        plot.addItem(self.curve)
        follow_palette(self)

    def name_quantity(self, gradient: bool) -> None:
        """Label the value axis for a gradient's norm or an activation's."""
        label_axes(self.getPlotItem(), "gradient norm" if gradient else "L2 norm", "step")

    def draw(self, stats: np.ndarray, *, streaming: bool) -> None:
        stats = by_step(stats)
        step, norm = stats[:, STAT["step"]], stats[:, STAT["norm"]]
        keep = np.isfinite(step) & np.isfinite(norm) & (norm > 0)  # a log axis has no 0
        self.curve.setData(step[keep], norm[keep])
        if keep.any():
            self.framing.frame_steps(step[keep][0], step[keep][-1], streaming=streaming)
            self.framing.frame_values(*log_bounds(norm[keep].min(), norm[keep].max()))
        self._show_ranges()

    def empty(self) -> None:
        super().empty()
        self.curve.setData([], [])


class _NormAxis(LogAxis):
    """The training curves' log axis (1, 2, 5 × 10^k labelled first), with plain numbers
    (50, 0.002) where they are short rather than pyqtgraph's 5·10¹."""

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's names)
        numbers = 10 ** np.asarray(values, dtype=float) * scale
        return [f"{x:g}" if 1e-4 <= abs(x) < 1e5 else f"{x:.0e}" for x in numbers]


def heatmap_of(tensor: np.ndarray, sample: int, channel: int) -> np.ndarray:
    """The 2-D image a heatmap shows of `tensor`: a row for 0-D/1-D, a 2-D tensor whole,
    `sample` of a 3-D one, (`sample`, `channel`) of a 4-D one; trailing axes of (N, C,
    H, W…) side by side."""
    if tensor.ndim > 4:
        tensor = tensor.reshape(*tensor.shape[:3], -1)
    if tensor.ndim <= 1:
        return tensor.reshape(1, -1)
    if tensor.ndim == 2:
        return tensor
    if tensor.ndim == 3:
        return tensor[sample]
    return tensor[sample, channel]


def label_axes(plot: pg.PlotItem, left: str, bottom: str) -> None:
    """Small axis titles, plain numbers and labelled ticks only, in widths that only grow."""
    font = QFont()
    font.setPointSizeF(8)
    for name, label in (("left", left), ("bottom", bottom)):
        axis = plot.getAxis(name)
        style_axis(axis)
        axis.setLabel(label)  # in the text colour style_axis gave
        axis.label.setFont(font)
        axis.enableAutoSIPrefix(False)  # '0.001', not '1 (x0.001)'
        # pyqtgraph works the prefix out even as it turns it off, and keeps the scale it
        # found (a heatmap chosen before any data then read 0 … 8000 for 8 rows).
        axis.autoSIPrefixScale, axis.labelUnitPrefix = 1.0, ""
        # Room for the labels grows and never shrinks back: an axis whose width changes
        # moves the plot, and the whole pane paints again (twice each time the range moves).
        # Labelled ticks only (maxTickLevel=0): a small pane reads as well without
        # pyqtgraph's finer levels, which cost a Python object per tick (most of a new
        # range's paint, on two axes).
        axis.setStyle(autoReduceTextSpace=False, maxTickLevel=0)
