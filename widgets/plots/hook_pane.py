"""HookPane: the live plot of what one hook captures — its distribution, statistics, latest
tensor or norm over the training steps (the four views are in `hook_views`).

The pane only reads a capture's summaries (`stats`, `histograms`, `latest`), which the
window's controller refreshes at display rate; it never summarises. Like the training
curves it polls the capture's `version` a few times a second (its owner calls `tick()`
on one timer for all panes: every wakeup of the GUI thread takes the interpreter from
the training thread), redraws only the view shown and only when the version changed,
and keeps its redraws (paint included) within a `FrameBudget` shared with the other
panes. The dock that holds it floats and closes it.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QStackedWidget, QVBoxLayout, QWidget

from widgets.plots.budget import FrameBudget
from widgets.plots.framing import StreamWatch
from widgets.plots.hook_controls import PaneBar, StatusLine, restored, status_text
from widgets.plots.hook_views import (
    LEGEND,
    STAT,
    HeatmapView,
    HistogramView,
    HookView,
    NormView,
    StatsView,
)


class HookPane(QWidget):
    """One hook's capture drawn as a distribution image, statistics, a heatmap or a norm."""

    settings_changed = Signal(str, dict)  # (view, settings) after the user changed one
    VIEWS = ("histogram", "stats", "heatmap", "norm")

    def __init__(self, capture: Any = None, *, budget: FrameBudget, view: str = "histogram",
                 settings: dict | None = None, parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setObjectName("hook_pane")
        self.capture: Any = None
        self.redraws = 0  # polls that found a new version and redrew
        self.budget = budget  # shared by the panes of a window
        self._view = view if view in self.VIEWS else "histogram"
        self._settings = restored(settings)
        self._seen: int | None = None  # the capture's version last drawn
        self.stream = StreamWatch()  # is training still copying captures?
        self._streaming = False  # while a redraw during training runs: axes leave room
        self._roomy = False  # the last redraw was one of those
        self._latest: np.ndarray | None = None  # the tensor of the heatmap, kept for selectors
        self._rows = 0
        self._last_step: float | None = None
        self._message = ""
        self._cost = ""
        self._error: str | None = None  # the capture's error the status line shows

        self._build_controls()
        self._build_plots()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addWidget(self.bar)
        layout.addWidget(self._pages, 1)
        layout.addWidget(self.status_line)

        self.view_combo.setCurrentIndex(self.VIEWS.index(self._view))  # before connecting
        self.view_combo.currentIndexChanged.connect(self._on_view_combo_changed)
        self._show_view()
        self.set_capture(capture)

    # ---- building ----------------------------------------------------------------------------

    def _build_controls(self) -> None:
        self.bar = bar = PaneBar(self.VIEWS, self._settings)
        self.view_combo, self.pause_button = bar.view_combo, bar.pause_button
        self.every_step_button, self.clear_button = bar.every_step_button, bar.clear_button
        self.pause_button.toggled.connect(self._on_pause_button_toggled)
        self.every_step_button.toggled.connect(self._on_every_step_button_toggled)
        self.clear_button.clicked.connect(self._on_clear_button_clicked)
        self.status_line = line = StatusLine(self._settings)
        self.status_label, self.legend_label = line.status_label, line.legend_label
        self.sample_spin, self.channel_spin = line.sample_spin, line.channel_spin
        self.sample_spin.valueChanged.connect(self._on_sample_spin_value_changed)
        self.channel_spin.valueChanged.connect(self._on_channel_spin_value_changed)

    def _build_plots(self) -> None:
        self.histogram_view = HistogramView(self.budget)
        self.stats_view = StatsView(self.budget)
        self.heatmap_view = HeatmapView(self.budget)
        self.norm_view = NormView(self.budget)
        self.plot_views: dict[str, HookView] = {
            "histogram": self.histogram_view, "stats": self.stats_view,
            "heatmap": self.heatmap_view, "norm": self.norm_view}  # fmt: skip
        self.message_label = QLabel()
        self.message_label.setObjectName("message_label")
        self.message_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: palette(placeholder-text);")
        self._pages = QStackedWidget()
        for view in self.plot_views.values():
            self._pages.addWidget(view)
        self._pages.addWidget(self.message_label)

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
        self.norm_view.name_quantity(gradient)
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
        heatmap = self._view == "heatmap" and not self._message and self._latest is not None
        self.status_line.show_selectors(self._latest.ndim if heatmap else 0)

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

    def tick(self) -> None:
        """Redraw if there is something new and the budget allows (the owner's timer's work)."""
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
        streaming = self.stream.streaming(written, time.monotonic())
        if self.paused:
            return
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
        self.poll()  # catch up at once rather than one tick later

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
            self.histogram_view.draw(stats[:, STAT["step"]], histograms,
                                     streaming=self._streaming)  # fmt: skip
        elif view == "stats":
            self.stats_view.draw(stats, streaming=self._streaming)
        elif view == "heatmap":
            self._draw_heatmap()
        else:
            self.norm_view.draw(stats, streaming=self._streaming)
        self._show_selectors()
        self._update_status()

    def _draw_heatmap(self) -> None:
        tensor = self._latest
        if tensor is not None and tensor.size:
            self._settings.update(self.status_line.fit_selectors(tensor.shape))
        self.heatmap_view.draw(
            tensor, self.sample_spin.value(), self.channel_spin.value(),
            gradient=_is_gradient(self.capture))  # fmt: skip

    def _empty(self) -> None:
        """Every plot empty, and the next data framed afresh."""
        self._seen = None
        self.stream.forget()
        self._latest = None
        self._rows, self._last_step = 0, None
        for view in self.plot_views.values():
            view.empty()
        self._show_selectors()

    def _update_status(self) -> None:
        capture = self.capture
        self._error = getattr(capture, "error", None) if capture is not None else None
        text = None if capture is None else status_text(
            capture, paused=self.paused, last_step=self._last_step,
            shape=None if self._latest is None else tuple(self._latest.shape), rows=self._rows,
            every_step=self._settings["every_step"], cost=self._cost)  # fmt: skip
        # The legend gives way to a message or an error: the status line needs the room.
        legend = "" if self._message or self._error else LEGEND.get(self._view, "")
        self.status_line.show_status(text, error=bool(self._error), legend=legend)

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


def _is_gradient(capture: Any) -> bool:
    hook = getattr(capture, "hook", None)
    return bool(getattr(hook, "gradient", False))
