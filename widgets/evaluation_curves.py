"""The plots of an evaluation: ROC and precision–recall curves with their areas (two
classes), predicted against true values and the residuals' histogram (a regression)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QWidget

from app.session.evaluation import Classification, Regression
from app.session.evaluation_metrics import Curve
from widgets.plots.colours import CLASS_COLOURS, follow_palette
from widgets.plots.ownership import adopt_menus

LINE = CLASS_COLOURS[0]
CHANCE = "#999999"
TITLE_SIZE = "9pt"
MAX_POINTS = 20_000  # scatter points drawn; more are thinned evenly


def _plot(name: str, title: str, x_label: str, y_label: str) -> pg.PlotWidget:
    view = pg.PlotWidget(background="w")
    view.setObjectName(name)
    adopt_menus(view, view.getPlotItem())
    view.setMinimumSize(140, 120)
    plot = view.getPlotItem()
    plot.setMenuEnabled(False)
    plot.setTitle(title, size=TITLE_SIZE)
    plot.setLabel("bottom", x_label)
    plot.setLabel("left", y_label)
    plot.showGrid(x=True, y=True, alpha=0.2)
    follow_palette(view)
    return view


class BinaryCurves(QWidget):
    """ROC and precision–recall of class 1 against class 0, side by side, areas in the titles."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.roc_view = _plot("roc_plot", "ROC", "false positive rate", "true positive rate")
        self.pr_view = _plot("precision_recall_plot", "Precision–recall", "recall", "precision")
        self.roc_curve = self.roc_view.plot(pen=pg.mkPen(LINE, width=2))
        dashed = pg.mkPen(CHANCE, style=Qt.PenStyle.DashLine)
        self.roc_view.plot([0, 1], [0, 1], pen=dashed)  # chance
        self.pr_curve = self.pr_view.plot(pen=pg.mkPen(LINE, width=2))
        for view in (self.roc_view, self.pr_view):
            view.setXRange(0, 1, padding=0.02)
            view.setYRange(0, 1, padding=0.02)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.roc_view)
        layout.addWidget(self.pr_view)
        self.titles = ("", "")

    def show_curves(self, c: Classification, positive: str) -> None:
        """Draw `c`'s curves (class `positive` is class 1); a curve that can't be made (one
        class absent) says so in its title."""
        titles = []
        for view, curve, item, name in ((self.roc_view, c.roc, self.roc_curve, "ROC"),
                                        (self.pr_view, c.precision_recall, self.pr_curve,
                                         "Precision–recall")):  # fmt: skip
            titles.append(self._draw(view, curve, item, name, positive))
        self.titles = tuple(titles)

    @staticmethod
    def _draw(view: pg.PlotWidget, curve: Curve | None, item, name: str, positive: str) -> str:
        if curve is None:
            item.setData([], [])
            title = f"{name}: needs both classes"
        else:
            item.setData(np.asarray(curve.x), np.asarray(curve.y))
            title = f"{name} · AUC {curve.area:.3f}"
        view.getPlotItem().setTitle(title, size=TITLE_SIZE)
        view.setToolTip(f"{name} of class {positive} (class 1) against the other class")
        return title


class RegressionPlots(QWidget):
    """Predicted against true values (every target, with the line y = x) and the histogram of
    the residuals (true − predicted)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scatter_view = _plot("prediction_scatter", "Predicted against true", "true",
                                  "predicted")  # fmt: skip
        self.histogram_view = _plot("residual_histogram", "Residuals (true − predicted)",
                                    "residual", "samples")  # fmt: skip
        self.scatter = pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(LINE + "99"))
        self.scatter_view.addItem(self.scatter)
        self.diagonal = self.scatter_view.plot([], [], pen=pg.mkPen(CHANCE, width=1))
        self.bars = pg.BarGraphItem(x0=[], x1=[], height=[], brush=LINE, pen=pg.mkPen("w"))
        self.histogram_view.addItem(self.bars)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scatter_view)
        layout.addWidget(self.histogram_view)
        self.points = (np.zeros(0), np.zeros(0))

    def show_regression(self, r: Regression) -> None:
        true = np.asarray(r.true, dtype=np.float64).reshape(-1)
        predicted = np.asarray(r.predicted, dtype=np.float64).reshape(-1)
        keep = np.isfinite(true) & np.isfinite(predicted)
        true, predicted = true[keep], predicted[keep]
        self.points = (true, predicted)
        step = max(1, len(true) // MAX_POINTS)
        self.scatter.setData(x=true[::step], y=predicted[::step])
        if len(true):
            low = float(min(true.min(), predicted.min()))
            high = float(max(true.max(), predicted.max()))
            self.diagonal.setData([low, high], [low, high])
        else:
            self.diagonal.setData([], [])
        counts, edges = r.scores.counts, r.scores.edges
        self.bars.setOpts(x0=edges[:-1], x1=edges[1:], height=counts)
        self.scatter_view.getPlotItem().setTitle(f"Predicted against true · R² {r.r2:.3f}",
                                                 size=TITLE_SIZE)  # fmt: skip
        self.histogram_view.getPlotItem().setTitle(
            f"Residuals · MAE {r.mae:.4g} · RMSE {r.rmse:.4g}", size=TITLE_SIZE)
        for view in (self.scatter_view, self.histogram_view):
            view.getPlotItem().enableAutoRange()
