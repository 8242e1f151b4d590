"""The planned learning rate in the training curves' learning-rate plot, with the live rate on it.

Before a run the plot shows the whole run's schedule (a dashed line over every step, from
the settings: epochs × steps per epoch), framed to it while no step has been drawn; while
it trains, the solid learning-rate curve of the steps taken runs over it (the curves
frame the steps done, as for the loss) and a dot marks the rate of the last step. The
plan comes from the Run panel (`set_plan`, a SchedulePlan or None for a constant rate);
the dot is read from the curves' metrics on a GUI timer, only while the curves are shown:
the training thread is never asked for anything.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer

from app.session import STEP_COLUMNS
from app.session.settings import SchedulePlan
from widgets.plots.curves import LR_COLOUR, TrainingCurves

POLL_INTERVAL_MS = 100  # the dot: one row read per tick, and only when a step came
PLAN_COLOUR = "#8cc08c"  # the learning-rate green, lighter: planned, not yet happened
STEP, RATE = STEP_COLUMNS.index("step"), STEP_COLUMNS.index("learning_rate")


class ScheduleCurve(QObject):
    """Draws a SchedulePlan into `curves.lr_plot` and marks the live rate on it."""

    def __init__(self, curves: TrainingCurves) -> None:
        super().__init__(curves)
        self.curves = curves
        self.plan: SchedulePlan | None = None
        self._seen: tuple[int, int] | None = None  # (id of the metrics, their version)
        plot = curves.lr_plot
        self.planned = pg.PlotDataItem(
            name="planned learning rate",
            pen=pg.mkPen(PLAN_COLOUR, width=1.5, style=Qt.PenStyle.DashLine))  # fmt: skip
        self.planned.setZValue(-1)  # under the rates that happened
        plot.addItem(self.planned)
        self.marker = pg.ScatterPlotItem(size=9, brush=pg.mkBrush(LR_COLOUR),
                                         pen=pg.mkPen("w", width=1.5))  # fmt: skip
        self.marker.setZValue(2)
        plot.addItem(self.marker)
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_INTERVAL_MS)
        self.timer.timeout.connect(self._on_timer_timeout)
        curves.installEventFilter(self)
        curves.cleared.connect(self._on_curves_cleared)
        if curves.isVisible():
            self.timer.start()

    # ---- what to show ------------------------------------------------------------------------

    def set_plan(self, plan: SchedulePlan | None) -> None:
        """Draw `plan` (None: nothing planned beyond a constant rate)."""
        self.plan = plan
        view = self.curves.lr_view
        if plan is None:
            self.planned.setData([], [])
            view.setToolTip("")
            return
        self.planned.setData(plan.first_step + np.arange(len(plan.rates)), plan.rates)
        view.setToolTip(f"Dashed: the planned learning rate over the whole run "
                        f"({plan.text}; {plan.steps_per_epoch} steps per epoch). The dot: "
                        "the rate of the last step.")  # fmt: skip
        self._frame()

    def _frame(self) -> None:
        """Show the whole plan while no step is drawn (then the curves frame the steps)."""
        plan, metrics = self.plan, self.curves.metrics
        if plan is None or not len(plan.rates) or (metrics is not None and metrics.steps.total):
            return
        # The step axis is the loss plot's (the others follow it); pyqtgraph does not
        # autorange a linked axis, so it is set here.
        first, last = plan.first_step, plan.first_step + len(plan.rates) - 1
        self.curves.loss_plot.setXRange(first, max(last, first + 1), padding=0.02)
        top = float(np.max(plan.rates))
        if top > 0:
            self.curves.lr_plot.setYRange(0.0, top * 1.1, padding=0)

    @property
    def live(self) -> tuple[int, float] | None:
        """(step, rate) the dot marks, or None."""
        points = self.marker.getData()
        if points[0] is None or not len(points[0]):
            return None
        return int(points[0][0]), float(points[1][0])

    # ---- polling -----------------------------------------------------------------------------

    def poll(self) -> bool:
        """Move the dot to the last step's rate if a step came since; True if it moved."""
        metrics = self.curves.metrics
        if metrics is None:
            if self._seen is not None:
                self._seen = None
                self.marker.setData([], [])
            return False
        seen = (id(metrics), metrics.steps.version)
        if seen == self._seen:
            return False
        if self._seen is None or self._seen[0] != seen[0]:
            self._frame()  # another session's metrics: the curves were just cleared
        self._seen = seen
        row = metrics.steps.last()
        if row is None or not (math.isfinite(row[STEP]) and math.isfinite(row[RATE])):
            self.marker.setData([], [])
        else:
            self.marker.setData([row[STEP]], [row[RATE]])
        return True

    def _on_timer_timeout(self) -> None:
        self.poll()

    def _on_curves_cleared(self) -> None:
        # The last project's dot would keep its step in the linked step axis's range.
        self._seen = None
        self.marker.setData([], [])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        # Polled only while the curves are seen (a hidden dock or tab stops the timer).
        if event.type() == QEvent.Type.Show:
            self.poll()
            self.timer.start()
        elif event.type() == QEvent.Type.Hide:
            self.timer.stop()
        return False
