"""Live training curves (loss, accuracy, learning rate) polled from a session's ring buffers.

The training thread only appends rows and bumps `RingBuffer.version`. This view reads
the buffers on its own ~30 Hz GUI timer, redraws only when a version changed, and
stops polling while hidden — so training never waits for the plots.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.session import EPOCH_COLUMNS, STEP_COLUMNS, Metrics
from widgets.plots.budget import FrameBudget
from widgets.plots.colours import follow_palette, style_axis
from widgets.plots.curve_layout import ROW, STACKED, arrangement_for
from widgets.plots.ownership import adopt_menus

POLL_INTERVAL_MS = 33  # ~30 Hz: a version check; a redraw only when the budget allows
REDRAW_SHARE = 0.04  # of one core, for updating and painting the curves while they stream
STEP = {name: i for i, name in enumerate(STEP_COLUMNS)}
EPOCH = {name: i for i, name in enumerate(EPOCH_COLUMNS)}

BATCH_COLOUR = "#9fb9d9"  # the noisy per-batch line stays light so the epoch points read
TRAIN_COLOUR = "#1f5fa8"
VAL_COLOUR = "#e8710a"
LR_COLOUR = "#3a8a3a"
HOVER_HINT = "Hover over a plot to read its values."
HOVER_POINTS = 8
HOVER_LINES = 3  # a step line and an epoch line, one of them wrapped in a narrow dock
HOVER_STYLE = f"font-size: {HOVER_POINTS}pt;"
NO_ACCURACY = "No accuracy for a regression:\nonly class labels can be right or wrong."
EMPTY_STEPS = (0.0, 10.0)  # the step axis of empty plots (not the last project's steps)

# Legend names say what each number is: a batch's loss is noisy and taken before the
# update; the epoch mean mixes batches from a changing network (with Dropout on); the
# validation loss is one pass over the whole validation set in predict mode.
NAMES = {
    "loss": "train loss (batch)",
    "epoch_loss": "train loss (epoch mean of batches, train mode)",
    "val_loss": "validation loss (whole set, predict mode)",
    "accuracy": "train accuracy (batch)",
    "epoch_accuracy": "train accuracy (epoch mean, train mode)",
    "val_accuracy": "validation accuracy (whole set, predict mode)",
    "learning_rate": "learning rate",
}
# Loss and accuracy share colours and symbols, so one legend row serves both plots and
# no legend covers a curve in a 250 px high dock.
LEGEND = "&nbsp;&nbsp;&nbsp;".join(
    (
        f'<span style="color:{BATCH_COLOUR}">&#9473;&#9473;</span>&nbsp;train, per batch',
        f'<span style="color:{TRAIN_COLOUR}"><b>&#9473;&#9473;</b></span>'
        "&nbsp;train, epoch mean of batches (train mode)",
        f'<span style="color:{VAL_COLOUR}"><b>&#9477;&#9477;</b></span>'
        "&nbsp;validation, whole set (predict mode)",
    )
)


class TrainingCurves(QWidget):
    """Loss, accuracy and learning rate of one training session, side by side.

    Accuracies are drawn in percent; the buffers hold fractions. `cleared` is emitted when
    the curves empty, before the axes are reframed: what others draw on these plots (the
    planned schedule's live dot) empties with them, so it doesn't hold the old range.
    """

    cleared = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("training_curves")
        self.metrics: Metrics | None = None
        self.redraws = 0  # polls that found a new version and set the curves' data
        self._seen: tuple[int | None, int | None] = (None, None)  # (steps, epochs) versions
        self._steps = np.empty((0, len(STEP_COLUMNS)))  # the rows last drawn
        self._epochs = np.empty((0, len(EPOCH_COLUMNS)))

        self.timer = QTimer(self)
        self.timer.setInterval(POLL_INTERVAL_MS)
        self.timer.timeout.connect(self._on_timer_timeout)
        # Live redraws may take this share of one core; the training thread keeps the rest.
        self.budget = FrameBudget(REDRAW_SHARE)

        self.log_scale_toggle = QCheckBox("Log scale (loss)")
        self.log_scale_toggle.setObjectName("log_scale_toggle")
        self.log_scale_toggle.setToolTip("Show the loss on a logarithmic axis.")
        self.log_scale_toggle.toggled.connect(self._on_log_scale_toggle_toggled)
        self.legend_label = QLabel(LEGEND)
        self.legend_label.setObjectName("curves_legend")
        # A narrow window wraps the legend instead of growing past the screen.
        self.legend_label.setWordWrap(True)
        self.legend_label.setMinimumWidth(80)
        # Its height for its width (the policy setWordWrap gave), not a tall narrow sizeHint.
        policy = QSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.legend_label.setSizePolicy(policy)
        self.hover_label = QLabel(HOVER_HINT)
        self.hover_label.setObjectName("hover_label")
        # Steps on one line, the epoch on the next, wrapped rather than cut in a narrow dock;
        # its height stays put, so moving the mouse never lays the dock out again.
        self.hover_label.setWordWrap(True)
        self.hover_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.hover_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        small = QFont(self.font())
        small.setPointSizeF(HOVER_POINTS)
        self.hover_label.setFixedHeight(QFontMetrics(small).lineSpacing() * HOVER_LINES + 2)

        self.loss_view = _plot_widget("loss")
        self.accuracy_view = _plot_widget("accuracy (%)")
        self.lr_view = _plot_widget("learning rate")
        for view in (self.loss_view, self.accuracy_view, self.lr_view):
            view.budget = self.budget
        self.loss_plot = self.loss_view.getPlotItem()
        self.accuracy_plot = self.accuracy_view.getPlotItem()
        self.lr_plot = self.lr_view.getPlotItem()
        self.accuracy_plot.setXLink(self.loss_plot)  # one step axis: zoom one, zoom all
        self.lr_plot.setXLink(self.loss_plot)

        self.curves: dict[str, pg.PlotDataItem] = {}
        for plot, key in ((self.loss_plot, "loss"), (self.accuracy_plot, "accuracy")):
            self._add_curve(plot, key, _batch_curve(NAMES[key], BATCH_COLOUR))
            epoch, val = f"epoch_{key}", f"val_{key}"
            self._add_curve(plot, epoch, _epoch_curve(NAMES[epoch], TRAIN_COLOUR))
            self._add_curve(plot, val, _epoch_curve(NAMES[val], VAL_COLOUR, dashed=True))
        lr_curve = _batch_curve(NAMES["learning_rate"], LR_COLOUR, width=1.5)
        self._add_curve(self.lr_plot, "learning_rate", lr_curve)
        self._lr_top: float | None = None  # the learning-rate axis runs from 0 to this
        self._x_range: tuple[float, float] | None = None  # the steps shown, widened in jumps
        self._last_versions: tuple | None = None  # the buffers' versions at the last tick

        # A dashed line at the hovered step in every plot, so the three can be read together.
        self._cursors = []
        cursor_pen = pg.mkPen("#777777", style=Qt.PenStyle.DashLine)
        for plot in self.plots:
            cursor = pg.InfiniteLine(angle=90, movable=False, pen=cursor_pen)
            cursor.hide()
            plot.addItem(cursor, ignoreBounds=True)
            self._cursors.append(cursor)
        for view in (self.loss_view, self.accuracy_view, self.lr_view):
            view.scene().sigMouseMoved.connect(partial(self._on_scene_mouse_moved, view))

        self.no_accuracy_label = QLabel(NO_ACCURACY)
        self.no_accuracy_label.setObjectName("no_accuracy_label")
        self.no_accuracy_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_accuracy_label.setWordWrap(True)
        self.no_accuracy_label.setStyleSheet("color: palette(placeholder-text);")
        self._accuracy_stack = QStackedWidget()
        self._accuracy_stack.addWidget(self.accuracy_view)
        self._accuracy_stack.addWidget(self.no_accuracy_label)

        # The legend has the top line to itself (a narrow dock wraps it into two, not four);
        # the log switch sits at the end of the hover line.
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 0, 4, 0)
        bar.addWidget(self.hover_label, 1)
        bar.addWidget(self.log_scale_toggle)
        self._grid = QGridLayout()
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setSpacing(4)
        self.arrangement: str | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addWidget(self.legend_label)
        layout.addLayout(self._grid, 1)
        layout.addLayout(bar)
        self._arrange(STACKED)
        self._hide_hover()  # the hint, in its placeholder colour

    def _arrange(self, arrangement: str) -> None:
        """Put the three plots in a row, or the loss on the left and the others stacked
        beside it (what a dock with less width than three readable plots needs)."""
        if arrangement == self.arrangement:
            return
        self.arrangement = arrangement
        grid = self._grid
        for widget in (self.loss_view, self._accuracy_stack, self.lr_view):
            grid.removeWidget(widget)
        for index in range(3):
            grid.setColumnStretch(index, 0)
            grid.setRowStretch(index, 0)
        # The loss is what people watch: it always gets the most room.
        if arrangement == ROW:
            grid.addWidget(self.loss_view, 0, 0)
            grid.addWidget(self._accuracy_stack, 0, 1)
            grid.addWidget(self.lr_view, 0, 2)
            for column, stretch in enumerate((4, 3, 3)):
                grid.setColumnStretch(column, stretch)
            grid.setRowStretch(0, 1)
        else:
            grid.addWidget(self.loss_view, 0, 0, 2, 1)
            grid.addWidget(self._accuracy_stack, 0, 1)
            grid.addWidget(self.lr_view, 1, 1)
            grid.setColumnStretch(0, 5)
            grid.setColumnStretch(1, 3)
            grid.setRowStretch(0, 1)
            grid.setRowStretch(1, 1)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        # A new arrangement only when the size calls for one, not at every resize.
        rect = self._grid.geometry()
        if rect.width() > 0 and rect.height() > 0:
            self._arrange(arrangement_for(rect.width(), rect.height(), self.arrangement))

    def _add_curve(self, plot: pg.PlotItem, key: str, curve: pg.PlotDataItem) -> None:
        plot.addItem(curve)
        self.curves[key] = curve

    @property
    def plots(self) -> tuple[pg.PlotItem, pg.PlotItem, pg.PlotItem]:
        return (self.loss_plot, self.accuracy_plot, self.lr_plot)

    @property
    def accuracy_shown(self) -> bool:
        """False when the data has no accuracy (a regression) and a note stands in its place."""
        return self._accuracy_stack.currentWidget() is self.accuracy_view

    # ---- what to show ----------------------------------------------------------------------

    def set_metrics(self, metrics: Metrics | None) -> None:
        """Show `metrics` (a new training session brings a new object); None empties the plots."""
        self.clear()
        self.metrics = metrics
        if metrics is not None and self.isVisible():
            self.poll()

    def clear(self) -> None:
        """Empty every plot and let go of the metrics; the next session starts autoscaled."""
        self.metrics = None
        self._seen = (None, None)
        self._steps = np.empty((0, len(STEP_COLUMNS)))
        self._epochs = np.empty((0, len(EPOCH_COLUMNS)))
        for curve in self.curves.values():
            curve.setData([], [])
        self.cleared.emit()
        for plot in self.plots:
            # Autoscaling finds nothing to frame in empty plots and would keep the last
            # project's range: the axes start from a small range of their own.
            plot.setRange(xRange=EMPTY_STEPS, yRange=(0.0, 1.0), padding=0.02)
            plot.enableAutoRange()
        self._lr_top = None
        self._x_range = None
        self._hide_hover()
        self._accuracy_stack.setCurrentWidget(self.accuracy_view)

    # ---- polling ---------------------------------------------------------------------------

    def poll(self) -> bool:
        """Redraw if a buffer's version changed since the last look; True if it redrew."""
        metrics = self.metrics
        if metrics is None:
            return False
        seen_steps, seen_epochs = self._seen
        steps_changed = metrics.steps.version != seen_steps
        epochs_changed = metrics.epochs.version != seen_epochs
        if not (steps_changed or epochs_changed):
            return False
        if steps_changed:
            self._steps, seen_steps = metrics.steps.snapshot_with_version()
            self._draw_steps(self._steps)
        if epochs_changed:
            self._epochs, seen_epochs = metrics.epochs.snapshot_with_version()
            self._draw_epochs(self._epochs)
        self._seen = (seen_steps, seen_epochs)
        self._show_accuracy(self._has_accuracy())
        self.redraws += 1
        return True

    @property
    def framed_range(self) -> tuple[float, float] | None:
        """The steps the axis was last widened to show (a user's zoom or pan aside)."""
        return self._x_range

    def _frame_steps(self, steps: np.ndarray) -> None:
        """Widen the shared step axis in jumps, not at every frame: an axis whose range
        stays put keeps its ticks cached, so a redraw repaints curves, not tick labels."""
        finite = steps[np.isfinite(steps)]
        if not len(finite):
            return
        first, last = float(finite.min()), float(finite.max())
        shown = self._x_range
        if shown is not None and shown[0] <= first and last <= shown[1]:
            return
        top = first + _nice_span(max(last - first, 10.0) * 1.25)
        self._x_range = (first, top)
        for plot in self.plots:
            plot.setXRange(first, top, padding=0.02)

    def _draw_steps(self, rows: np.ndarray) -> None:
        # setData only stores the arrays; pyqtgraph's peak downsampling and clipping to the
        # visible range happen at paint time, so 50,000 rows stay cheap to redraw.
        step = rows[:, STEP["step"]]
        self._frame_steps(step)
        for key in ("loss", "accuracy", "learning_rate"):
            values = rows[:, STEP[key]] * (100.0 if key == "accuracy" else 1.0)
            _set_finite(self.curves[key], step, values)
        self._frame_learning_rate(rows[:, STEP["learning_rate"]])

    def _frame_learning_rate(self, rates: np.ndarray) -> None:
        # From 0: a constant rate would otherwise be autoscaled around itself (into
        # negative rates), and a schedule's drop reads truer against zero.
        finite = rates[np.isfinite(rates)]
        top = float(finite.max()) * 1.1 if len(finite) else None
        if top is None or top <= 0:
            self._lr_top = None
            self.lr_plot.enableAutoRange(y=True)
        elif top != self._lr_top:
            self._lr_top = top
            self.lr_plot.setYRange(0.0, top, padding=0)

    def _draw_epochs(self, rows: np.ndarray) -> None:
        step = rows[:, EPOCH["step"]]  # epoch points sit at the step the epoch ended
        for key, column, scale in (
            ("epoch_loss", "loss", 1.0),
            ("val_loss", "val_loss", 1.0),
            ("epoch_accuracy", "accuracy", 100.0),
            ("val_accuracy", "val_accuracy", 100.0),
        ):
            _set_finite(self.curves[key], step, rows[:, EPOCH[column]] * scale)

    def _has_accuracy(self) -> bool:
        """Accuracy exists unless rows arrived and none of them has one (a regression)."""
        step_acc = self._steps[:, STEP["accuracy"]]
        epoch_acc = self._epochs[:, [EPOCH["accuracy"], EPOCH["val_accuracy"]]]
        if not len(step_acc) and not len(epoch_acc):
            return True
        return bool(np.isfinite(step_acc).any() or np.isfinite(epoch_acc).any())

    def _show_accuracy(self, shown: bool) -> None:
        page = self.accuracy_view if shown else self.no_accuracy_label
        if self._accuracy_stack.currentWidget() is not page:
            self._accuracy_stack.setCurrentWidget(page)

    def _on_timer_timeout(self) -> None:
        metrics = self.metrics
        if metrics is None:
            return
        versions = (metrics.steps.version, metrics.epochs.version)
        streaming, self._last_versions = versions != self._last_versions, versions
        if versions == self._seen:
            return  # nothing new: not even the budget is asked
        # While rows stream in, redraws keep to the budget; once they stop (a pause, the
        # end of a run) the last of them is drawn at once.
        if not streaming or self.budget.ready():
            self.budget.timed(self.poll)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.poll()  # catch up at once rather than one tick later
        self.timer.start()

    def hideEvent(self, event: QHideEvent) -> None:
        # Also sent when a parent (the dock, a tab) hides: nothing is polled while unseen.
        super().hideEvent(event)
        self.timer.stop()

    # ---- reading values --------------------------------------------------------------------

    def _on_log_scale_toggle_toggled(self, checked: bool) -> None:
        self.loss_plot.setLogMode(y=checked)

    def values_at(self, step: float) -> str:
        """The drawn numbers nearest to `step`, as the hover line shows them.

        e.g. 'step 120: loss 0.35, accuracy 87.0%, lr 0.01' and, on a second line, 'epoch 2
        (step 100): loss 0.4, accuracy 85.0%, val loss 0.41, val accuracy 84.0%'. Per-step
        values come from the step row nearest `step`, epoch values from the epoch whose end
        is nearest, named with its own step so nothing is misattributed. Empty before any
        data.
        """
        parts = []
        steps = self._steps
        if len(steps) and math.isfinite(step):
            row = steps[int(np.argmin(np.abs(steps[:, STEP["step"]] - step)))]
            text = f"step {row[STEP['step']]:.0f}: loss {_number(row[STEP['loss']])}"
            if math.isfinite(row[STEP["accuracy"]]):
                text += f", accuracy {row[STEP['accuracy']]:.1%}"
            text += f", lr {_number(row[STEP['learning_rate']])}"
            parts.append(text)
        epochs = self._epochs
        if len(epochs) and math.isfinite(step):
            row = epochs[int(np.argmin(np.abs(epochs[:, EPOCH["step"]] - step)))]
            text = (f"epoch {row[EPOCH['epoch']]:.0f} (step {row[EPOCH['step']]:.0f}): "
                    f"loss {_number(row[EPOCH['loss']])}")  # fmt: skip
            if math.isfinite(row[EPOCH["accuracy"]]):
                text += f", accuracy {row[EPOCH['accuracy']]:.1%}"
            if math.isfinite(row[EPOCH["val_loss"]]):
                text += f", val loss {_number(row[EPOCH['val_loss']])}"
            if math.isfinite(row[EPOCH["val_accuracy"]]):
                text += f", val accuracy {row[EPOCH['val_accuracy']]:.1%}"
            parts.append(text)
        return "\n".join(parts)

    def _on_scene_mouse_moved(self, view: pg.PlotWidget, pos: QPointF) -> None:
        box = view.getPlotItem().getViewBox()
        if not box.sceneBoundingRect().contains(pos):
            self._hide_hover()
            return
        step = box.mapSceneToView(pos).x()
        text = self.values_at(step)
        if not text:
            self._hide_hover()
            return
        self.hover_label.setStyleSheet(HOVER_STYLE)
        self.hover_label.setText(text)
        steps = self._steps[:, STEP["step"]]
        if len(steps):  # snap to the sample the text describes
            step = float(steps[int(np.argmin(np.abs(steps - step)))])
        for cursor in self._cursors:
            cursor.setPos(step)
            cursor.show()

    def _hide_hover(self) -> None:
        self.hover_label.setStyleSheet(f"{HOVER_STYLE} color: palette(placeholder-text);")
        self.hover_label.setText(HOVER_HINT)
        for cursor in self._cursors:
            cursor.hide()

    def leaveEvent(self, event: QEvent) -> None:
        super().leaveEvent(event)
        self._hide_hover()


class LogAxis(pg.AxisItem):
    """A y axis whose log mode labels 1, 2, 5 x 10^k first and the other minor ticks only if
    they fit: pyqtgraph puts all of 0.1 ... 0.9 on one level, always labelled, and in a low
    dock those labels overlap."""

    def logTickValues(self, minVal, maxVal, size, stdTicks):  # pyqtgraph's names
        levels = super().logTickValues(minVal, maxVal, size, stdTicks)
        if not levels or levels[-1][0] is not None:
            return levels
        minor = np.asarray(levels[-1][1], dtype=float)
        mantissa = np.round(10 ** (minor - np.floor(minor + 1e-9)))
        first = np.isin(mantissa, (1, 2, 5))
        return [*levels[:-1], (None, list(minor[first])), (None, list(minor[~first]))]


class BudgetedPlotWidget(pg.PlotWidget):
    """A PlotWidget that charges the CPU time of its painting to a frame budget (shared by
    the live plot views: training curves and hook panes)."""

    budget: FrameBudget | None = None

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if self.budget is None:
            super().paintEvent(event)
        else:
            self.budget.timed(super().paintEvent, event)


def _plot_widget(quantity: str) -> pg.PlotWidget:
    axes = {"left": LogAxis("left")} if quantity == "loss" else None
    view = BudgetedPlotWidget(background="w", axisItems=axes)
    adopt_menus(view, view.getPlotItem())
    view.setMinimumSize(100, 80)
    plot = view.getPlotItem()
    plot.showGrid(x=False, y=False)
    plot.setMenuEnabled(False)  # its many options (FFT, averaging...) would only confuse
    # On the plot, not the curves: PlotItem.addItem overwrites a curve's own settings.
    # Epoch curves have too few points to be thinned; per-step ones keep ~10 per pixel.
    plot.setDownsampling(auto=True, mode="peak")
    plot.setClipToView(True)
    font = QFont()
    font.setPointSizeF(8)
    # Axis labels rather than titles: width is plentiful in the bottom dock, height is not.
    for name, label in (("left", quantity), ("bottom", "step")):
        axis = plot.getAxis(name)
        style_axis(axis)
        axis.setLabel(label)  # in the text colour style_axis gave
        axis.label.setFont(font)
        # '0.001', not '1 (x0.001)'; and the label is not set again at every frame.
        axis.enableAutoSIPrefix(False)
    follow_palette(view)
    if quantity == "learning rate":  # the narrowest plot: fewer step labels, none overlapping
        plot.getAxis("bottom").setTickDensity(0.5)
    return view


def _batch_curve(name: str, colour: str, width: float = 1.0) -> pg.PlotDataItem:
    return pg.PlotDataItem(name=name, pen=pg.mkPen(colour, width=width))


def _nice_span(span: float) -> float:
    """The smallest 1, 2 or 5 × 10^k at least `span`."""
    power = 10.0 ** math.floor(math.log10(span))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= span)


def _epoch_curve(name: str, colour: str, dashed: bool = False) -> pg.PlotDataItem:
    # Lines, not symbols: pyqtgraph paints symbols in Python at every frame, which costs
    # the training thread time while it runs.
    style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    return pg.PlotDataItem(name=name, pen=pg.mkPen(colour, width=2.5, style=style))


def _set_finite(curve: pg.PlotDataItem, x: np.ndarray, y: np.ndarray) -> None:
    """Draw only real numbers: NaN means 'not measured' (no split, no accuracy)."""
    keep = np.isfinite(x) & np.isfinite(y)
    curve.setData(x[keep], y[keep])


def _number(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "—"
