"""The Find Learning Rate dialog: the search's bounds, Find / Stop, its progress, the loss
against the rate on a log axis with the suggestions marked, and "Use this rate".

A pure view: it says what the user asked (`find_clicked`, `stop_clicked`, `use_clicked`,
`closed`) and shows what it is given; the search itself runs elsewhere
(app.gui.lr_finder). The raw loss of each step is drawn light, its smoothed curve strong;
a green line marks the steepest fall of the smoothed loss, an orange one a tenth of the
rate at its minimum.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.runs.lr_finder import (
    DEFAULT_END,
    DEFAULT_START,
    DEFAULT_STEPS,
    MAX_RATE,
    MAX_STEPS,
    MIN_RATE,
    MIN_STEPS,
    LRFinderError,
    LRFinding,
    check_bounds,
)
from widgets.form_fields import IntBox, NumberBox, clear_refusal, set_tip, show_refusal
from widgets.plots.colours import follow_palette
from widgets.plots.curves import BATCH_COLOUR, TRAIN_COLOUR
from widgets.plots.ownership import adopt_menus

STEEPEST_COLOUR = "#3a8a3a"
MIN_TENTH_COLOUR = "#e8710a"
ERROR_STYLE = "color: #b3261e;"
LEGEND = (f'<span style="color:{BATCH_COLOUR}">&#9473;&#9473;</span>&nbsp;loss per step'
          f'&nbsp;&nbsp;&nbsp;<span style="color:{TRAIN_COLOUR}"><b>&#9473;&#9473;</b></span>'
          "&nbsp;smoothed loss")  # fmt: skip


def rate_text(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


class RateBox(NumberBox):
    """A learning rate: typed exactly; its arrows multiply or divide it by 10."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(MIN_RATE, MAX_RATE, 1.0, parent)

    def stepBy(self, steps: int) -> None:  # noqa: N802 (Qt's name)
        self.interpretText()
        value = min(max(self.value() * 10.0**steps, self.minimum()), self.maximum())
        self.setValue(float(f"{value:.12g}"))


class LRFinderView(QDialog):
    """The non-modal dialog of Run → Find Learning Rate…."""

    find_clicked = Signal(float, float, int)  # start, end, steps (checked)
    stop_clicked = Signal()
    use_clicked = Signal(float)
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("lr_finder_dialog")
        self.setWindowTitle("Find Learning Rate")
        self.setModal(False)
        self.suggestion: float | None = None
        self.start_field = self._field(RateBox(), "start_field",
                                       "The rate of the first step.")  # fmt: skip
        self.end_field = self._field(RateBox(), "end_field",
                                     "The rate of the last step: the rate grows by the "
                                     "same factor every step up to it.")  # fmt: skip
        self.steps_field = self._field(IntBox(MIN_STEPS, MAX_STEPS), "steps_field",
                                       "The most steps (one batch each); the search stops "
                                       "earlier when the loss blows up.")  # fmt: skip
        self.set_values(DEFAULT_START, DEFAULT_END, DEFAULT_STEPS)
        self.find_button = self._button("find_button", "Find", self._on_find_button_clicked)
        self.stop_button = self._button("stop_button", "Stop", self.stop_clicked.emit)
        self.stop_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setObjectName("progress")
        self.progress.setRange(0, DEFAULT_STEPS)
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m steps")
        self.status_label = QLabel(
            "Trains a copy of the network with a growing learning rate; the project's "
            "weights are not touched.")  # fmt: skip
        self.status_label.setObjectName("status_label")
        self.status_label.setWordWrap(True)
        self.plot_view = self._plot()
        legend = QLabel(LEGEND)
        legend.setObjectName("legend_label")
        self.suggestion_label = QLabel("")
        self.suggestion_label.setObjectName("suggestion_label")
        self.suggestion_label.setWordWrap(True)
        self.suggestion_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.use_button = self._button("use_button", "Use this rate",
                                       self._on_use_button_clicked)  # fmt: skip
        self.use_button.setEnabled(False)
        self.use_button.setToolTip("Set the suggested rate as the project's learning rate "
                                   "(one undo step).")  # fmt: skip
        close = self._button("close_button", "Close", self.close)
        self._lay_out(legend, close)
        self.resize(640, 520)

    # ---- building ----------------------------------------------------------------------------

    def _field(self, field, name: str, tip: str):
        field.setObjectName(name)
        set_tip(field, tip)
        field.on_refused = lambda text, f=field: self._refuse(f, text)
        field.valueChanged.connect(lambda _value, f=field: clear_refusal(f))
        return field

    def _button(self, name: str, text: str, slot) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAutoDefault(False)
        button.clicked.connect(slot)
        return button

    def _plot(self) -> pg.PlotWidget:
        view = pg.PlotWidget(background="w")
        view.setObjectName("lr_plot")
        adopt_menus(view, view.getPlotItem())
        view.setMinimumSize(320, 220)
        plot = view.getPlotItem()
        plot.setMenuEnabled(False)
        plot.setLogMode(x=True, y=False)
        plot.setLabel("bottom", "learning rate (log scale)")
        plot.setLabel("left", "training loss (batch)")
        plot.showGrid(x=True, y=True, alpha=0.2)
        self.raw_curve = plot.plot([], [], pen=pg.mkPen(BATCH_COLOUR, width=1))
        self.smooth_curve = plot.plot([], [], pen=pg.mkPen(TRAIN_COLOUR, width=2.5))
        self.markers = {
            name: pg.InfiniteLine(angle=90, movable=False,
                                  pen=pg.mkPen(colour, width=1.5, style=Qt.PenStyle.DashLine),
                                  label="", labelOpts={"position": position, "color": colour,
                                                       "fill": (255, 255, 255, 200)})
            for name, colour, position in (("steepest", STEEPEST_COLOUR, 0.92),
                                           ("min_tenth", MIN_TENTH_COLOUR, 0.78))
        }  # fmt: skip
        for marker in self.markers.values():
            marker.setVisible(False)
            plot.addItem(marker, ignoreBounds=True)
        follow_palette(view)
        return view

    def _lay_out(self, legend: QLabel, close: QPushButton) -> None:
        form = QFormLayout()
        form.addRow("Start rate", self.start_field)
        form.addRow("End rate", self.end_field)
        form.addRow("Steps", self.steps_field)
        buttons = QHBoxLayout()
        buttons.addWidget(self.find_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.progress, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.suggestion_label, 1)
        bottom.addWidget(self.use_button)
        bottom.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.status_label)
        layout.addWidget(self.plot_view, 1)
        layout.addWidget(legend)
        layout.addLayout(bottom)

    # ---- what it shows -----------------------------------------------------------------------

    def set_values(self, start: float, end: float, steps: int) -> None:
        self.start_field.show_value(start, DEFAULT_START)
        self.end_field.show_value(end, DEFAULT_END)
        self.steps_field.show_value(steps, DEFAULT_STEPS)

    def values(self) -> tuple[float, float, int]:
        for field in (self.start_field, self.end_field, self.steps_field):
            field.interpretText()
        return self.start_field.value(), self.end_field.value(), self.steps_field.value()

    def set_running(self, running: bool) -> None:
        for widget in (self.start_field, self.end_field, self.steps_field, self.find_button):
            widget.setEnabled(not running)
        self.stop_button.setEnabled(running)
        self.use_button.setEnabled(not running and self.suggestion is not None)

    def start_search(self, steps: int) -> None:
        """A search of up to `steps` steps begins: the last one's curve and marks go."""
        self.suggestion = None
        self.progress.setRange(0, steps)
        self.progress.setValue(0)
        self._draw(np.empty(0), np.empty(0), np.empty(0))
        for marker in self.markers.values():
            marker.setVisible(False)
        self.suggestion_label.setText("")
        self.show_message("Searching…")
        self.set_running(True)

    def show_progress(self, rates: np.ndarray, losses: np.ndarray,
                      smoothed: np.ndarray) -> None:  # fmt: skip
        self.progress.setValue(len(rates))
        self._draw(rates, losses, smoothed)
        if len(rates):
            self.show_message(f"Step {len(rates)}: rate {rates[-1]:.3g}, loss "
                              f"{losses[-1]:.4g}.")  # fmt: skip

    def show_finding(self, finding: LRFinding, current: float | None) -> None:
        """The search ended with `finding`; `current` is the project's learning rate now."""
        self._draw(finding.rates, finding.losses, finding.smoothed)
        self.progress.setValue(finding.steps)
        self.suggestion = finding.suggestion
        for name, rate, text in (("steepest", finding.steepest, "steepest"),
                                 ("min_tenth", finding.min_tenth, "min/10")):  # fmt: skip
            marker = self.markers[name]
            marker.setVisible(rate is not None)
            if rate is not None:
                marker.setPos(math.log10(rate))  # the axis is log: items sit at log10(x)
                marker.label.setFormat(f"{text}: {rate:.3g}")
        stopped = finding.stopped_early or "it reached the end rate"
        self.show_message(f"{finding.steps} steps in {finding.seconds:.2f} s; stopped: "
                          f"{stopped}.")  # fmt: skip
        if finding.suggestion is None:
            self.suggestion_label.setText(
                "<b>No rate to suggest</b>: the loss blew up at once. Try a lower start rate.")
        else:
            which = "steepest descent" if finding.suggestion == finding.steepest else \
                "a tenth of the minimum"
            now = "" if current is None else f" &nbsp;(now {current:.3g})"
            self.suggestion_label.setText(
                f"Suggested rate: <b>{finding.suggestion:.3g}</b> ({which}){now}<br>"
                f"Steepest descent {rate_text(finding.steepest)}, a tenth of the minimum "
                f"{rate_text(finding.min_tenth)}.")  # fmt: skip
        self.set_running(False)

    def show_message(self, text: str) -> None:
        self.status_label.setStyleSheet("")
        self.status_label.setText(text)

    def show_error(self, text: str) -> None:
        self.status_label.setStyleSheet(ERROR_STYLE)
        self.status_label.setText(text)

    def _draw(self, rates: np.ndarray, losses: np.ndarray, smoothed: np.ndarray) -> None:
        self.raw_curve.setData(rates, losses)
        self.smooth_curve.setData(rates, smoothed)
        plot = self.plot_view.getPlotItem()
        finite = smoothed[np.isfinite(smoothed)]
        if not len(finite):
            plot.enableAutoRange()
            return
        # Framed to the smoothed loss: the raw loss's blow-up at the end (many times
        # higher) would flatten the part that tells where to train.
        low, high = float(finite.min()), float(finite.max())
        low = min(low, float(np.nanmin(losses)) if len(losses) else low)
        pad = max(high - low, abs(high) * 0.05, 1e-6) * 0.08
        plot.enableAutoRange(x=True)
        plot.setYRange(low - pad, high + pad, padding=0)

    # ---- slots -------------------------------------------------------------------------------

    def _refuse(self, field, text: str) -> None:
        if field is self.steps_field:
            reason = f"{text!r} is not a number of steps: {MIN_STEPS} to {MAX_STEPS:,}."
        else:
            reason = f"{text!r} is not a rate: a number from {MIN_RATE:g} to {MAX_RATE:g}."
        show_refusal(field, reason)
        self.show_error(reason)

    def _on_find_button_clicked(self) -> None:
        start, end, steps = self.values()
        try:
            check_bounds(start, end, steps)
        except LRFinderError as exc:
            show_refusal(self.start_field if start >= end else self.end_field, str(exc))
            self.show_error(str(exc))
            return
        for field in (self.start_field, self.end_field, self.steps_field):
            clear_refusal(field)
        self.find_clicked.emit(start, end, steps)

    def _on_use_button_clicked(self) -> None:
        if self.suggestion is not None:
            self.use_clicked.emit(self.suggestion)

    def done(self, result: int) -> None:
        """Closed — its window's close button, Close, Esc: `closed` (a search stops)."""
        super().done(result)
        self.closed.emit()
