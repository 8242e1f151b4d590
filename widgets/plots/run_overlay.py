"""Past runs drawn over the training curves, to compare them: one colour per run, a legend.

For each run shown, its per-step loss (faint) and its validation loss (dashed, where it
has one) go into the curves' loss plot and its accuracy likewise into the accuracy plot,
in the run's colour; x is the steps since the run's start, so runs that began at different
steps line up. A legend in the loss plot names the runs. The live curves of the current
session stay as they are, drawn over the runs. The runs' curves are fixed arrays (app.document.runs,
at most CURVE_ROWS rows each): nothing is polled, and nothing is redrawn until the runs
shown change.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QColor

from app.document.runs import EPOCH_COLUMNS, STEP_COLUMNS, RunRecord
from widgets.plots.colours import plot_colours
from widgets.plots.curves import TrainingCurves

STEP = {name: i for i, name in enumerate(STEP_COLUMNS)}
EPOCH = {name: i for i, name in enumerate(EPOCH_COLUMNS)}
STEP_WIDTH, EPOCH_WIDTH, LEGEND_WIDTH = 1.0, 2.2, 3.0
STEP_ALPHA = 130  # of 255
OVERLAY_Z = -0.5  # under the live curves, over the grid
LEGEND_ALPHA = 215  # of 255: the legend's paper lets the curves under it show a little


class RunOverlay(QObject):
    """Draws runs into a TrainingCurves' loss and accuracy plots; `show_runs` says which."""

    def __init__(self, curves: TrainingCurves) -> None:
        super().__init__(curves)
        self.curves = curves
        self.runs: list[RunRecord] = []
        self._shown: tuple = ()  # what is drawn: (id, name, colour, rows) per run
        self.items: dict[str, list[tuple[pg.PlotItem, pg.PlotDataItem]]] = {}  # run id -> curves
        self.legend = pg.LegendItem(offset=(-8, 8), verSpacing=-4, horSpacing=6,
                                    labelTextSize="8pt")  # fmt: skip
        self.legend.setParentItem(curves.loss_plot.getViewBox())
        self.legend.anchor(itemPos=(1, 0), parentPos=(1, 0), offset=(-8, 8))
        self.legend.setZValue(10)
        self.legend.hide()
        self._extent: float | None = None  # the last step a run shown reaches
        self._framed_for: object = object()  # the curves' own framing the runs last widened
        curves.loss_plot.getViewBox().sigXRangeChanged.connect(self._on_x_range_changed)
        curves.cleared.connect(self._on_curves_cleared)

    # ---- what to show ----------------------------------------------------------------------

    def show_runs(self, runs: Sequence[RunRecord]) -> bool:
        """Draw these runs (none: take every run's curves away); True if anything changed."""
        shown = tuple((r.id, r.name, r.colour, len(r.steps_curve), len(r.epochs_curve))
                      for r in runs)  # fmt: skip
        if shown == self._shown:
            return False
        self.clear()
        self._shown, self.runs = shown, list(runs)
        extent = 0.0
        for record in self.runs:
            self.items[record.id] = self._draw(record)
            extent = max(extent, _last_step(record))
        self._extent = extent if self.runs else None
        self._style_legend()
        self.legend.setVisible(bool(self.runs))
        self._frame()
        return True

    def clear(self) -> None:
        for items in self.items.values():
            for plot, item in items:
                plot.removeItem(item)
        self.items.clear()
        self.legend.clear()
        self.legend.hide()
        self.runs, self._shown, self._extent = [], (), None

    @property
    def names(self) -> list[str]:
        """The legend's entries, top to bottom."""
        return [html.unescape(label.text) for _sample, label in self.legend.items]

    def _draw(self, record: RunRecord) -> list[tuple[pg.PlotItem, pg.PlotDataItem]]:
        """Per-step lines faint (batches are noisy), epoch validation lines dashed and full:
        the trend of each run reads through the others' noise."""
        colour, faint = QColor(record.colour), QColor(record.colour)
        faint.setAlpha(STEP_ALPHA)
        steps_pen = pg.mkPen(faint, width=STEP_WIDTH)
        dashed = pg.mkPen(colour, width=EPOCH_WIDTH, style=Qt.PenStyle.DashLine)
        steps, epochs = record.steps_curve, record.epochs_curve
        x = steps[:, STEP["step"]] - record.first_step
        ex = epochs[:, EPOCH["step"]] - record.first_step
        loss_plot, accuracy_plot = self.curves.loss_plot, self.curves.accuracy_plot
        lines = (
            (loss_plot, x, steps[:, STEP["loss"]], steps_pen, 0.0),
            (loss_plot, ex, epochs[:, EPOCH["val_loss"]], dashed, 0.1),
            (accuracy_plot, x, steps[:, STEP["accuracy"]] * 100.0, steps_pen, 0.0),
            (accuracy_plot, ex, epochs[:, EPOCH["val_accuracy"]] * 100.0, dashed, 0.1),
        )
        drawn = []
        for index, (plot, xs, ys, pen, above) in enumerate(lines):
            if index and not np.isfinite(ys).any():
                continue  # no validation set, or no accuracy (a regression)
            item = _curve(xs, ys, pen)
            item.setZValue(OVERLAY_Z + above)
            plot.addItem(item)
            drawn.append((plot, item))
        sample = pg.PlotDataItem(pen=pg.mkPen(colour, width=LEGEND_WIDTH))  # full colour
        self.legend.addItem(sample, html.escape(record.name))
        return drawn

    def _style_legend(self) -> None:
        colours = plot_colours(self.curves.loss_view.palette())
        paper = QColor(colours.background)
        paper.setAlpha(LEGEND_ALPHA)
        self.legend.setBrush(pg.mkBrush(paper))
        self.legend.setPen(pg.mkPen(colours.axis))
        self.legend.setLabelTextColor(colours.text)

    # ---- framing ---------------------------------------------------------------------------

    def _frame(self) -> None:
        """Widen the step axis to show every run shown whole (never narrow it)."""
        if self._extent is None:
            return
        box = self.curves.loss_plot.getViewBox()
        left, right = box.viewRange()[0]
        top = max(self._extent, 1.0)
        if right < top or left > 0:
            self.curves.loss_plot.setXRange(min(left, 0.0), max(right, top), padding=0.02)

    def _on_x_range_changed(self, *_args) -> None:
        # The curves widen their step axis in jumps as a run's steps come (to the live steps
        # only); after each such jump the runs shown are put back in view. A zoom or pan of
        # the user's is left alone: the curves' own range did not change for it.
        framed = self.curves.framed_range
        if self._extent is None or framed == self._framed_for:
            return
        self._framed_for = framed
        QTimer.singleShot(0, self, self._frame)  # after the curves set all their ranges

    def _on_curves_cleared(self) -> None:
        # The curves reframe their empty axes after `cleared`: frame the runs after that.
        self._framed_for = object()
        QTimer.singleShot(0, self, self._frame)


def _curve(x: np.ndarray, y: np.ndarray, pen) -> pg.PlotDataItem:
    keep = np.isfinite(x) & np.isfinite(y)
    return pg.PlotDataItem(x[keep], y[keep], pen=pen)


def _last_step(record: RunRecord) -> float:
    steps = record.steps_curve[:, STEP["step"]]
    finite = steps[np.isfinite(steps)]
    last = float(finite.max()) - record.first_step if len(finite) else 0.0
    return max(last, float(record.steps))
