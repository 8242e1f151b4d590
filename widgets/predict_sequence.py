"""A sequence sample in the Predict panel: the input window over time, one line per
feature, and for a forecast the predicted values after it beside the true ones."""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from app.session.predict import format_value
from app.session.predict_sequence import SequencePicture
from widgets.plots.colours import CLASS_COLOURS, MODE_COLOURS, follow_palette, style_axis
from widgets.plots.ownership import adopt_menus

TARGET_COLOUR = "#555555"


class SequencePlot(QWidget):
    """Draws a `SequencePicture`; `legend` says what each line is."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("predict_sequence")
        self.picture: SequencePicture | None = None
        self.plot_view = pg.PlotWidget(background="w")
        self.plot_view.setObjectName("predict_sequence_plot")
        self.plot_view.setMinimumSize(160, 120)
        self.plot_view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.plot_view.setFixedHeight(150)
        plot = self.plot_view.getPlotItem()
        adopt_menus(self.plot_view, plot)
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        for name in ("left", "bottom"):
            style_axis(plot.getAxis(name))
        plot.getAxis("left").setWidth(34)
        plot.setLabel("bottom", "time step")
        follow_palette(self.plot_view)
        self.plot = plot
        self.legend = QLabel()
        self.legend.setObjectName("predict_sequence_legend")
        self.legend.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.plot_view)
        layout.addWidget(self.legend)

    def show_picture(self, picture: SequencePicture) -> None:
        self.picture = picture
        plot = self.plot
        plot.clear()
        steps = picture.steps
        parts = []
        for i, name in enumerate(picture.features):
            colour = CLASS_COLOURS[i % len(CLASS_COLOURS)]
            pen = pg.mkPen(colour, width=1.5)
            plot.addItem(pg.PlotDataItem(steps, picture.window[:, i], pen=pen))
            parts.append(f'<span style="color:{colour}">━</span> {escape(name)}')
        if picture.forecast is not None:
            end = len(steps) - 0.5
            edge = pg.mkPen("#999999", style=Qt.PenStyle.DashLine)
            plot.addItem(pg.InfiniteLine(pos=end, angle=90, pen=edge))
            strong = MODE_COLOURS["predict"][0]
            if picture.target is not None:
                plot.addItem(pg.PlotDataItem(picture.forecast_steps, picture.target,
                                             pen=pg.mkPen(TARGET_COLOUR, width=1.5,
                                                          style=Qt.PenStyle.DashLine),
                                             symbol="o", symbolSize=6, symbolBrush=None,
                                             symbolPen=pg.mkPen(TARGET_COLOUR)))  # fmt: skip
                parts.append(f'<span style="color:{TARGET_COLOUR}">┅</span> true')
            plot.addItem(pg.PlotDataItem(picture.forecast_steps, picture.forecast,
                                         pen=pg.mkPen(strong, width=2), symbol="o",
                                         symbolSize=6, symbolBrush=strong,
                                         symbolPen=pg.mkPen(strong)))  # fmt: skip
            values = ", ".join(format_value(v) for v in picture.forecast[:6])
            more = ", …" if len(picture.forecast) > 6 else ""
            parts.append(f'<span style="color:{strong}">●</span> forecast {values}{more}')
        plot.enableAutoRange()
        self.legend.setText(" &nbsp; ".join(parts))

    def lines(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The (x, y) of every line drawn (tests, and what a reader of the plot sees)."""
        return [item.getData() for item in self.plot.listDataItems()]
