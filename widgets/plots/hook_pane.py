"""HookPane: the live plot of what one hook captures — its distribution, statistics, latest
tensor or norm over the training steps.

The pane only reads a capture's summaries (`stats`, `histograms`, `latest`), which the
window's controller refreshes at display rate; it never summarises. Like the training
curves it polls the capture's `version` a few times a second (its own timer, or its
owner's calling `tick()`), redraws only the view shown and only when the version
changed, keeps its redraws (paint included) within a shared `FrameBudget`, and stops
polling while hidden.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.session import STAT_COLUMNS
from widgets.form_fields import tool_button
from widgets.plots.budget import FrameBudget
from widgets.plots.colours import follow_palette, style_axis
from widgets.plots.curves import BudgetedPlotWidget, LogAxis
from widgets.plots.distribution import (
    band_edges,
    by_step,
    colour_levels,
    distribution_image,
)
from widgets.plots.ownership import adopt_menus

POLL_INTERVAL_MS = 100  # on its own timer: a version check; a redraw when budgeted
QUIET_SECONDS = 0.3  # a capture whose version held this long has stopped streaming
STREAMING_HEADROOM = 2.0  # a step axis leaves room for this many times its steps, streaming
SETTLED_HEADROOM = 1.1  # … and this much once the stream stopped, kept while the steps
SETTLED_FILL = 0.55  # fill this share of it (a fresh frame fills at least 1 / (1.1 × 1.5))
REDRAW_SHARE = 0.04  # of one core, for a pane given no shared budget
STAT = {name: i for i, name in enumerate(STAT_COLUMNS)}
DEFAULT_SETTINGS = {"channel": 0, "sample": 0, "paused": False, "every_step": False}

MEAN_COLOUR = "#1f5fa8"
BAND_COLOUR = (31, 95, 168, 60)  # the mean's colour, light: the curves stay readable on it
RANGE_COLOUR = "#777777"
NORM_COLOUR = "#c0392b"
ERROR_STYLE = "color: #b00020;"
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


class HookPane(QWidget):
    """One hook's capture drawn as a distribution image, statistics, a heatmap or a norm."""

    close_requested = Signal()  # the Close button: the controller removes the hook
    float_requested = Signal()  # the Float/Dock button: the controller floats its dock
    settings_changed = Signal(str, dict)  # (view, settings) after the user changed one
    VIEWS = ("histogram", "stats", "heatmap", "norm")

    def __init__(self, capture: Any = None, *, title: str = "", view: str = "histogram",
                 settings: dict | None = None, budget: FrameBudget | None = None,
                 own_timer: bool = True, parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        # Without its own timer the owner calls tick() (one timer for many panes: every
        # wakeup of the GUI thread takes the interpreter from the training thread).
        self.own_timer = own_timer
        self.setObjectName("hook_pane")
        self.setWindowTitle(title)
        self.title = title
        self.capture: Any = None
        self.redraws = 0  # polls that found a new version and redrew
        self.budget = budget if budget is not None else FrameBudget(REDRAW_SHARE)
        self._view = view if view in self.VIEWS else "histogram"
        self._settings = _restored(settings)
        self._seen: int | None = None  # the capture's version last drawn
        self._last_version: int | None = None  # captures copied, at the last tick
        self._changed_at = 0.0  # when that count was first seen (time.monotonic)
        self._streaming = False  # while a redraw during training runs: axes leave room
        self._roomy = False  # the last redraw was one of those
        self._latest: np.ndarray | None = None  # the tensor of the heatmap, kept for selectors
        self._rows = 0
        self._last_step: float | None = None
        self._message = ""
        self._cost = ""
        self._x_ranges: dict[str, tuple[float, float]] = {}
        self._y_ranges: dict[str, tuple[float, float]] = {}
        self._levels: tuple[float, float] | None = None  # the heatmap's colour levels
        self._new_ranges: dict[str, dict] = {}  # view -> axis ranges to set after drawing
        self._gradient_map: bool | None = None
        self._heatmap_shape: tuple[int, ...] | None = None
        self._dock: QDockWidget | None = None
        self._error: str | None = None  # the capture's error the status line shows

        self.timer = QTimer(self)
        self.timer.setInterval(POLL_INTERVAL_MS)
        self.timer.timeout.connect(self._on_timer_timeout)

        self._build_bar()
        self._build_plots()
        self.status_label = QLabel()
        self.status_label.setObjectName("status_label")
        # A long status is cut at the edge rather than widening the dock.
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.legend_label = QLabel()
        self.legend_label.setObjectName("legend_label")
        self.legend_label.setStyleSheet("font-size: 8pt;")
        status = QHBoxLayout()
        status.setContentsMargins(4, 0, 4, 0)
        status.addWidget(self.status_label, 1)
        status.addWidget(self.legend_label)
        # The selectors sit by the status, not in the bar: the bar then fits a 500 px dock.
        status.addWidget(self.sample_spin)
        status.addWidget(self.channel_spin)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addLayout(self._bar)
        layout.addWidget(self._pages, 1)
        layout.addLayout(status)

        self.view_combo.setCurrentIndex(self.VIEWS.index(self._view))  # before connecting
        self.view_combo.currentIndexChanged.connect(self._on_view_combo_changed)
        self._show_view()
        self.set_capture(capture)

    # ---- building ----------------------------------------------------------------------------

    def _build_bar(self) -> None:
        self.view_combo = QComboBox()
        self.view_combo.setObjectName("view_combo")
        # Tiled panes share a row: the combo may shrink to ~12 letters (its list stays wide).
        self.view_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.view_combo.setMinimumContentsLength(12)
        for i, name in enumerate(self.VIEWS):
            self.view_combo.addItem(VIEW_TEXTS[name], name)
            self.view_combo.setItemData(i, VIEW_TIPS[name], Qt.ItemDataRole.ToolTipRole)
        self.view_combo.setToolTip("What to show of the captured tensors")
        self.sample_spin = _selector("sample_spin", "sample ", "Which sample of the batch to show")
        self.channel_spin = _selector("channel_spin", "channel ", "Which channel to show")
        self.sample_spin.setValue(self._settings["sample"])
        self.channel_spin.setValue(self._settings["channel"])
        self.sample_spin.valueChanged.connect(self._on_sample_spin_value_changed)
        self.channel_spin.valueChanged.connect(self._on_channel_spin_value_changed)

        self.pause_button = _flat_button(
            "pause_button",
            "Pause",
            "Stop updating this pane (and stop copying its tensors while training)",
            checkable=True,
        )
        self.pause_button.setChecked(self._settings["paused"])
        self.pause_button.toggled.connect(self._on_pause_button_toggled)
        self.every_step_button = _flat_button(
            "every_step_button", "Every step", "Capture every step regardless of the capture "
            "budget (this pane then shows what that costs)", checkable=True)  # fmt: skip
        self.every_step_button.setChecked(self._settings["every_step"])
        self.every_step_button.toggled.connect(self._on_every_step_button_toggled)
        self.clear_button = _flat_button("clear_button", "Clear", "Forget what was captured so far")
        self.clear_button.clicked.connect(self._on_clear_button_clicked)
        self.float_button = _flat_button(
            "float_button", "Float", "Float this pane as its own window, or dock it back"
        )
        self.float_button.clicked.connect(self.float_requested)
        self.close_button = _flat_button("close_button", "Close",
                                         "Close this pane and remove its hook")
        self.close_button.clicked.connect(self.close_requested)

        bar = QHBoxLayout()
        bar.setContentsMargins(2, 0, 2, 0)
        bar.setSpacing(2)
        bar.addWidget(self.view_combo)
        bar.addStretch(1)
        # A tool bar: in a narrow pane (tiled beside others) the buttons that don't fit
        # go behind its » menu instead of widening the pane.
        tools = QToolBar()
        tools.setObjectName("pane_tools")
        tools.setStyleSheet("QToolBar { border: none; spacing: 2px; }")
        self._tools = {button.objectName(): tools.addWidget(button)
                       for button in (self.pause_button, self.every_step_button,
                                      self.clear_button, self.float_button,
                                      self.close_button)}  # fmt: skip
        bar.addWidget(tools, 0)
        self._bar = bar

    def show_window_buttons(self, shown: bool) -> None:
        """Show or hide Float and Close (a dock's title bar has its own)."""
        for name in ("float_button", "close_button"):
            self._tools[name].setVisible(shown)

    def _build_plots(self) -> None:
        self.plot_views: dict[str, pg.PlotWidget] = {}
        for name in self.VIEWS:
            view = BudgetedPlotWidget(background="w")
            view.budget = self.budget
            adopt_menus(view, view.getPlotItem())
            view.setMinimumSize(120, 90)
            view.setToolTip(VIEW_TIPS[name])
            plot = view.getPlotItem()
            plot.setMenuEnabled(False)
            plot.showGrid(x=False, y=False)  # blended grid lines cost ~10 ms a paint
            self.plot_views[name] = view
        # Distribution over steps: one image, placed so the axes read steps and values.
        plot = self._plot("histogram")
        _label_axes(plot, "value", "step")
        self.histogram_image = pg.ImageItem(axisOrder="row-major")  # [value row, step column]
        self.histogram_image.setLookupTable(
            pg.ColorMap(np.linspace(0, 1, len(DENSITY_COLOURS)), DENSITY_COLOURS)
            .getLookupTable(nPts=256, alpha=False))  # fmt: skip
        plot.addItem(self.histogram_image)
        # Statistics: lines, no symbols (pyqtgraph paints symbols in Python).
        plot = self._plot("stats")
        _label_axes(plot, "value", "step")
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
        # The latest tensor: an image with a colour bar.
        plot = self._plot("heatmap")
        plot.invertY(True)  # row 0 at the top, as a matrix or an image is read
        self.heatmap_image = pg.ImageItem(axisOrder="row-major")
        plot.addItem(self.heatmap_image)
        self.color_bar = pg.ColorBarItem(colorMap=SEQUENTIAL_MAP, interactive=False, width=10,
                                         colorMapMenu=False)  # fmt: skip
        adopt_menus(self.plot_views["heatmap"], self.color_bar)  # a ColorBarItem is a PlotItem
        self.color_bar.axis.setStyle(autoReduceTextSpace=False)  # as _label_axes says
        self.color_bar.setImageItem(self.heatmap_image)
        plot.layout.addItem(self.color_bar, 2, 5)  # right of the right-hand axis
        _label_axes(plot, "", "")
        # The norm, on a log axis: it spans decades when gradients vanish or explode.
        plot = self._plot("norm")
        plot.setAxisItems({"left": _NormAxis("left")})
        _label_axes(plot, "L2 norm", "step")
        plot.setLogMode(y=True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.setClipToView(True)
        self.norm_curve = pg.PlotDataItem(pen=pg.mkPen(NORM_COLOUR, width=1))
        plot.addItem(self.norm_curve)
        for view in self.plot_views.values():
            follow_palette(view)

        self.message_label = QLabel()
        self.message_label.setObjectName("message_label")
        self.message_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: palette(placeholder-text);")
        self._pages = QStackedWidget()
        for view in self.plot_views.values():
            self._pages.addWidget(view)
        self._pages.addWidget(self.message_label)

    def _plot(self, view: str) -> pg.PlotItem:
        return self.plot_views[view].getPlotItem()

    # ---- state -------------------------------------------------------------------------------

    @property
    def view(self) -> str:
        return self._view

    @property
    def settings(self) -> dict:
        """{"channel", "sample", "paused", "every_step"}: what the hook saves for its pane."""
        return dict(self._settings)

    @property
    def paused(self) -> bool:
        return self._settings["paused"]

    def set_capture(self, capture: Any) -> None:
        """Show `capture` (a new session brings a new one); None empties the plots and keeps
        the message. A capture replaces the message with its plots."""
        if capture is self.capture:
            return  # the controller resets a missing capture at each sync: nothing to do
        self.capture = capture
        self._empty()
        gradient = _is_gradient(capture)
        self.view_combo.setItemText(self.VIEWS.index("norm"),
                                    "Gradient norm" if gradient else "L2 norm")  # fmt: skip
        _label_axes(self._plot("norm"), "gradient norm" if gradient else "L2 norm", "step")
        if capture is not None:
            self.set_message("")
            if self.isVisible():
                self.poll()
        self._update_status()

    def set_message(self, text: str) -> None:
        """Show `text` instead of the plot (e.g. why nothing is captured); empty: the plot."""
        self._message = text or ""
        self.message_label.setText(self._message)
        self._show_view()
        self._update_status()

    @property
    def message(self) -> str:
        return self._message

    def set_cost(self, text: str) -> None:
        """What capturing every step costs, shown while Every step is on."""
        self._cost = text or ""
        self._update_status()

    def set_view(self, view: str) -> None:
        """Show another kind of view (no settings_changed: the caller chose it)."""
        if view not in self.VIEWS:
            raise ValueError(f"A hook pane shows one of {', '.join(self.VIEWS)}, not {view!r}.")
        blocker = self.view_combo.blockSignals(True)
        self.view_combo.setCurrentIndex(self.VIEWS.index(view))
        self.view_combo.blockSignals(blocker)
        self._change_view(view)

    def _change_view(self, view: str) -> None:
        if view == self._view:
            return
        self._view = view
        self._show_view()
        self._redraw()  # the new view from the data at hand, also while paused
        self._update_status()

    def _show_view(self) -> None:
        page = self.message_label if self._message else self.plot_views[self._view]
        if self._pages.currentWidget() is not page:
            self._pages.setCurrentWidget(page)
        self._show_selectors()

    def _show_selectors(self) -> None:
        ndim = self._latest.ndim if self._latest is not None else 0
        heatmap = self._view == "heatmap" and not self._message
        self.sample_spin.setVisible(heatmap and ndim >= 3)
        self.channel_spin.setVisible(heatmap and ndim >= 4)

    def _emit_settings(self) -> None:
        self.settings_changed.emit(self._view, self.settings)

    # ---- polling -----------------------------------------------------------------------------

    def poll(self) -> bool:
        """Redraw if the capture's version changed since the last look; True if it redrew."""
        capture = self.capture
        if capture is None or self.paused:
            return False
        version = capture.version
        if version == self._seen:
            return False
        self._seen = version
        self._draw(capture)
        self.redraws += 1
        return True

    def _redraw(self) -> None:
        """Draw the view shown from the capture as it is now, whatever its version."""
        capture = self.capture
        if capture is None:
            self._empty()
            return
        self._seen = capture.version
        self.budget.timed(self._draw, capture)

    def _on_timer_timeout(self) -> None:
        self.tick()

    def tick(self) -> None:
        """Redraw if there is something new and the budget allows (the timer's work)."""
        capture = self.capture
        if capture is None:
            return
        if getattr(capture, "error", None) != self._error:
            self._update_status()  # capturing stopped: the version may never change again
        # Streaming: training is still copying captures (counted by `captured`; the
        # summaries that change `version` come a few times a second, fewer when their
        # own budget is short). While it streams, redraws keep to the budget; once it has
        # been quiet for a while (a pause, the end of a run) the last rows are drawn at once.
        # (captures dropped while the history's head waits for the reader count too).
        written = getattr(capture, "captured", capture.version) + getattr(capture, "dropped", 0)
        now = time.monotonic()
        if written != self._last_version:
            self._last_version, self._changed_at = written, now
        if self.paused:
            return
        streaming = now - self._changed_at < QUIET_SECONDS
        if capture.version == self._seen:
            # Nothing new: not even the budget (or what is visible) is asked — unless the
            # stream stopped with the step axis still leaving room: it closes in once.
            if not streaming and self._roomy and not self.visibleRegion().isEmpty():
                self._roomy = False
                self.budget.timed(self._redraw)
                self.redraws += 1
            return
        # The budget before what is visible: working out a widget's visible region costs
        # more than the question, and most ticks while streaming find the budget spent.
        if streaming and not self.budget.ready():
            return
        if self.visibleRegion().isEmpty():
            return  # a tab behind another is moved out of sight, not hidden
        self._streaming = self._roomy = streaming
        try:
            self.budget.timed(self.poll)
        finally:
            self._streaming = False

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self._follow_dock()
        self.poll()  # catch up at once rather than one tick later
        if self.own_timer:
            self.timer.start()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 (Qt override)
        # Also sent when a parent (the dock, a tab) hides: nothing is polled while unseen.
        super().hideEvent(event)
        self.timer.stop()

    # ---- drawing -----------------------------------------------------------------------------

    def _draw(self, capture: Any) -> None:
        stats = np.asarray(capture.stats.snapshot(), dtype=np.float64).reshape(-1, len(STAT))
        latest = capture.latest.snapshot()
        self._latest = None if latest is None else np.asarray(latest)
        self._rows = len(stats)
        self._last_step = float(stats[-1, STAT["step"]]) if len(stats) else None
        view = self._view  # only the view shown is computed
        if view == "histogram":
            histograms = np.asarray(capture.histograms.snapshot(), dtype=np.float64)
            self._draw_histogram(stats[:, STAT["step"]], histograms)
        elif view == "stats":
            self._draw_stats(stats)
        elif view == "heatmap":
            self._draw_heatmap()
        else:
            self._draw_norm(stats)
        # Both axes in one call: moved one after the other, they cost two full repaints.
        for name, ranges in self._new_ranges.items():
            box = self._plot(name).getViewBox()
            box.setRange(**ranges, padding=0.02)
            # pyqtgraph moves the view at its next paint, and moving it during a paint
            # asks for a second one: moved now, one paint shows it.
            box.prepareForPaint()
        self._new_ranges.clear()
        self._show_selectors()
        self._update_status()

    def _draw_histogram(self, steps: np.ndarray, histograms: np.ndarray) -> None:
        count = min(len(steps), len(histograms))  # aligned rows; the newest if they differ
        found = distribution_image(steps[len(steps) - count:],
                                   histograms[len(histograms) - count:])  # fmt: skip
        if found is None:
            self.histogram_image.clear()
            return
        image, (x, width, y, height) = found
        self.histogram_image.setImage(image, autoLevels=False, levels=(0.0, 1.0))
        self.histogram_image.setRect(QRectF(x, y, width, height))
        self._frame_steps("histogram", x, x + width)
        self._frame_values("histogram", y, y + height)

    def _draw_stats(self, stats: np.ndarray) -> None:
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
            self._frame_steps("stats", step[0], step[-1])
            low_values = np.concatenate([rows[:, STAT["min"]], mean - std])
            high_values = np.concatenate([rows[:, STAT["max"]], mean + std])
            low_values, high_values = (low_values[np.isfinite(low_values)],
                                       high_values[np.isfinite(high_values)])  # fmt: skip
            if len(low_values) and len(high_values):
                self._frame_values("stats", float(low_values.min()), float(high_values.max()))

    def _draw_norm(self, stats: np.ndarray) -> None:
        stats = by_step(stats)
        step, norm = stats[:, STAT["step"]], stats[:, STAT["norm"]]
        keep = np.isfinite(step) & np.isfinite(norm) & (norm > 0)  # a log axis has no 0
        self.norm_curve.setData(step[keep], norm[keep])
        if keep.any():
            self._frame_steps("norm", step[keep][0], step[keep][-1])
            logs = np.log10(norm[keep])  # the log axis's own coordinates
            self._frame_values("norm", math.floor(logs.min()), math.ceil(logs.max()))

    def _draw_heatmap(self) -> None:
        tensor = self._latest
        if tensor is None or tensor.size == 0:
            self.heatmap_image.clear()
            return
        shape = tensor.shape
        if tensor.ndim > 4:  # (N, C, H, W…): the trailing axes side by side
            tensor = tensor.reshape(*shape[:3], -1)
        self._fit_selectors(tensor.shape)
        ndim = tensor.ndim
        if ndim <= 1:
            image = tensor.reshape(1, -1)
        elif ndim == 2:
            image = tensor
        elif ndim == 3:
            image = tensor[self.sample_spin.value()]
        else:
            image = tensor[self.sample_spin.value(), self.channel_spin.value()]
        gradient = _is_gradient(self.capture)
        if gradient != self._gradient_map:
            self._gradient_map = gradient
            self.color_bar.setColorMap(
                pg.ColorMap(np.linspace(0, 1, len(DIVERGING_COLOURS)), DIVERGING_COLOURS)
                if gradient else SEQUENTIAL_MAP)  # fmt: skip
        # In round numbers, kept while the values fill at least half of them: the colour
        # bar's labels stay cached, and the colours don't flicker from frame to frame.
        low, high = colour_levels(image, symmetric=gradient)
        kept = self._levels
        if gradient:  # ±M about 0 (the diverging map's middle), M a round number
            fits = kept is not None and kept[0] == -kept[1] and kept[1] / 2 <= high <= kept[1]
            levels = kept if fits else (-_nice_span(high), _nice_span(high))
        else:
            levels = _round_range(kept, low, high, fill=0.5) or kept
        self.heatmap_image.setImage(image, autoLevels=False, levels=levels)
        if levels != self._levels:  # (setting the same levels redraws the bar's labels)
            self._levels = levels
            self.color_bar.setLevels(levels)
        height, width = image.shape
        self.heatmap_image.setRect(QRectF(0, 0, width, height))
        if shape != self._heatmap_shape:  # a new shape: new axes and a fresh frame
            self._heatmap_shape = shape
            self._label_heatmap(ndim)

    def _label_heatmap(self, ndim: int) -> None:
        plot = self._plot("heatmap")
        left, bottom = {0: ("", "index"), 1: ("", "index"), 2: ("sample", "feature"),
                        3: ("axis 1", "axis 2")}.get(ndim, ("row (H)", "column (W)"))  # fmt: skip
        _label_axes(plot, left, bottom)
        plot.getAxis("left").setStyle(showValues=ndim >= 2)
        plot.setAspectLocked(ndim >= 4, ratio=1)  # images keep square pixels
        plot.enableAutoRange()

    def _fit_selectors(self, shape: tuple[int, ...]) -> None:
        """Spin box ranges follow the tensor's shape; a value past a shrunk axis is clamped."""
        for spin, axis, key in ((self.sample_spin, 0, "sample"), (self.channel_spin, 1, "channel")):
            if len(shape) < (3 if axis == 0 else 4):
                continue
            top = max(shape[axis] - 1, 0)
            if spin.maximum() != top:
                blocker = spin.blockSignals(True)
                spin.setMaximum(top)  # clamps the value
                spin.blockSignals(blocker)
                self._settings[key] = spin.value()

    def _frame_steps(self, view: str, first: float, last: float) -> None:
        """Widen a step axis in jumps, not at every frame: an axis whose range stays put
        keeps its ticks cached, so a redraw repaints the data, not the tick labels.

        While training streams, the axis leaves room for as many steps again as are
        shown, so it widens about once per doubling of the steps (a widening repaints
        the whole pane, several times the cost of a redraw that keeps the axes); once
        the stream stops, it closes in on the data (the steps fill more than half of it).
        """
        shown = self._x_ranges.get(view)
        # (within the 2 % padding: the distribution image's first column, half a column
        # left of the first step, moves left a little as its columns widen)
        if shown is not None and shown[0] - 0.02 * (shown[1] - shown[0]) <= first \
                and last <= shown[1] \
                and (self._streaming
                     or last - first >= SETTLED_FILL * (shown[1] - shown[0])):  # fmt: skip
            return
        headroom = STREAMING_HEADROOM if self._streaming else SETTLED_HEADROOM
        top = first + _nice_span(max(last - first, 10.0) * headroom)
        self._x_ranges[view] = (first, top)
        self._new_ranges.setdefault(view, {})["xRange"] = (first, top)

    def _frame_values(self, view: str, low: float, high: float) -> None:
        """The value axis as the step axis: set in round numbers, moved only when the data
        leaves it or fills less than a quarter of it. An axis that keeps its range keeps
        its tick labels cached (they are most of a frame's cost), and pyqtgraph has no
        bounds to work out again at each paint."""
        framed = _round_range(self._y_ranges.get(view), low, high, fill=0.25)
        if framed is not None:
            self._y_ranges[view] = framed
            self._new_ranges.setdefault(view, {})["yRange"] = framed

    def _empty(self) -> None:
        """Every plot empty, and the next data framed afresh."""
        self._seen = self._last_version = None
        self._latest = None
        self._rows, self._last_step = 0, None
        self._heatmap_shape = None
        self._x_ranges.clear()
        self._y_ranges.clear()
        self._levels = None
        self.histogram_image.clear()
        self.heatmap_image.clear()
        for curve in (self.mean_curve, self.min_curve, self.max_curve, self.band_low,
                      self.band_high, self.norm_curve):  # fmt: skip
            curve.setData([], [])
        for view in self.plot_views.values():
            view.getPlotItem().enableAutoRange()
        self._show_selectors()

    def _update_status(self) -> None:
        capture = self.capture
        error = getattr(capture, "error", None) if capture is not None else None
        if bool(error) != bool(self._error) or not self.status_label.styleSheet():
            # Restyled only when it changes: a style sheet is costly to set at every frame.
            self.status_label.setStyleSheet("font-size: 8pt;" + (ERROR_STYLE if error else ""))
        self._error = error
        # The legend gives way to a message or an error: the status line needs the room.
        shown = not (self._message or error)
        self.legend_label.setText(LEGEND.get(self._view, "") if shown else "")
        if capture is None:
            self.status_label.setText("")
            return
        parts = ["Paused"] if self.paused else []
        if error:
            parts.append(error)
        if self._last_step is None:
            parts.append("waiting for the next training step")
        else:
            parts.append(f"step {self._last_step:,.0f}")
            if self._latest is not None:
                parts.append(f"tensor {tuple(self._latest.shape)}")
        if self._rows:
            parts.append(f"{self._rows:,} rows")
        if self._settings["every_step"]:
            parts.append(self._cost or "every step: measuring what it costs…")
        else:
            stride = int(getattr(capture, "stride", 1) or 1)
            parts.append("every step" if stride == 1 else f"every {_ordinal(stride)} step")
        text = " · ".join(parts)
        self.status_label.setText(text)
        self.status_label.setToolTip(text)  # all of it, where a narrow dock cuts it

    # ---- slots -------------------------------------------------------------------------------

    def _on_view_combo_changed(self, index: int) -> None:
        self._change_view(self.VIEWS[index])
        self._emit_settings()

    def _on_sample_spin_value_changed(self, value: int) -> None:
        self._settings["sample"] = value
        self._on_selector_changed()

    def _on_channel_spin_value_changed(self, value: int) -> None:
        self._settings["channel"] = value
        self._on_selector_changed()

    def _on_selector_changed(self) -> None:
        if self._view == "heatmap":  # the tensor at hand, sliced anew: no new capture needed
            self.budget.timed(self._draw_heatmap)
        self._emit_settings()

    def _on_pause_button_toggled(self, paused: bool) -> None:
        self._settings["paused"] = paused
        self._update_status()
        if not paused:
            self.poll()  # what arrived while paused, at once
        self._emit_settings()

    def _on_every_step_button_toggled(self, on: bool) -> None:
        self._settings["every_step"] = on
        if not on:
            self._cost = ""
        self._update_status()
        self._emit_settings()

    def _on_clear_button_clicked(self) -> None:
        capture = self.capture
        if capture is not None:
            capture.clear()
        self._empty()
        if capture is not None:
            self._seen = capture.version  # drawn: nothing
        self._update_status()

    def _follow_dock(self) -> None:
        """Name the float button after what it does in the dock that holds the pane now."""
        dock = self.parentWidget()
        if not isinstance(dock, QDockWidget) or dock is self._dock:
            return
        self._dock = dock
        dock.topLevelChanged.connect(self._on_dock_top_level_changed)
        self._on_dock_top_level_changed(dock.isFloating())

    def _on_dock_top_level_changed(self, floating: bool) -> None:
        self.float_button.setText("Dock" if floating else "Float")


class _NormAxis(LogAxis):
    """The training curves' log axis (1, 2, 5 × 10^k labelled first), with plain numbers
    (50, 0.002) where they are short rather than pyqtgraph's 5·10¹."""

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's names)
        numbers = 10 ** np.asarray(values, dtype=float) * scale
        return [f"{x:g}" if 1e-4 <= abs(x) < 1e5 else f"{x:.0e}" for x in numbers]


def _is_gradient(capture: Any) -> bool:
    hook = getattr(capture, "hook", None)
    return bool(getattr(hook, "gradient", False))


def _restored(settings: dict | None) -> dict:
    """The pane's settings from a saved hook's, each checked; other keys are left out."""
    restored = dict(DEFAULT_SETTINGS)
    for key, default in DEFAULT_SETTINGS.items():
        value = (settings or {}).get(key, default)
        if isinstance(default, bool):
            restored[key] = value if isinstance(value, bool) else default
        else:
            valid = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            restored[key] = value if valid else default
    return restored


def _selector(name: str, prefix: str, tip: str) -> QSpinBox:
    spin = QSpinBox()
    spin.setObjectName(name)
    spin.setPrefix(prefix)
    spin.setToolTip(tip)
    spin.setRange(0, 1 << 30)  # until a tensor's shape says how many there are
    spin.setKeyboardTracking(False)  # one redraw per number typed, not per digit
    spin.hide()
    return spin


def _label_axes(plot: pg.PlotItem, left: str, bottom: str) -> None:
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


def _nice_span(span: float) -> float:
    """The smallest of 1, 1.5, 2, 3, 4, 5, 7.5 × 10^k at least `span`: a finished run then
    fills most of the axis, and the axis still widens only a few times per decade."""
    power = 10.0 ** math.floor(math.log10(span))
    return next(m * power for m in (1, 1.5, 2, 3, 4, 5, 7.5, 10) if m * power >= span)


def _round_range(shown: tuple[float, float] | None, low: float, high: float, *,
                 fill: float) -> tuple[float, float] | None:  # fmt: skip
    """A range in round numbers around [low, high], or None to keep `shown`: it holds them
    and they fill at least `fill` of it (a range moved at every frame costs its labels)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    if shown is not None and shown[0] <= low and high <= shown[1] \
            and high - low >= fill * (shown[1] - shown[0]):  # fmt: skip
        return None
    span = high - low
    if span <= 0:  # a single value: room around it
        span = max(abs(high), 1.0) * 0.1
    unit = _nice_span(span * 1.25) / 10
    bottom, top = math.floor(low / unit) * unit, math.ceil(high / unit) * unit
    if top - bottom < unit:
        bottom, top = bottom - unit, top + unit
    return bottom, top


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def _flat_button(name: str, text: str, tip: str, *, checkable: bool = False) -> QToolButton:
    return tool_button(name, text, tip, checkable=checkable, flat=True)
