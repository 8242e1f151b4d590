"""The controls around a hook pane's plot: the bar above it (which view; Pause, Every step,
Clear) and the status line under it (what was captured, the view's legend, a
heatmap's sample and channel selectors). The pane wires them to its capture and settings.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QToolBar,
    QToolButton,
    QWidget,
)

from widgets.form_fields import Combo, IntBox, tool_button
from widgets.plots.hook_views import VIEW_TEXTS, VIEW_TIPS

DEFAULT_SETTINGS = {"channel": 0, "sample": 0, "paused": False, "every_step": False}
ERROR_STYLE = "color: #b00020;"


class PaneBar(QWidget):
    """The row above the plot. Its buttons sit in a tool bar: in a narrow pane (tiled beside
    others) the ones that don't fit go behind its » menu instead of widening the pane."""

    def __init__(self, views: tuple[str, ...], settings: dict) -> None:
        super().__init__()
        self.view_combo = Combo()  # the wheel changes it only once clicked into
        self.view_combo.setObjectName("view_combo")
        # Tiled panes share a row: the combo may shrink to ~12 letters (its list stays wide).
        self.view_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)  # fmt: skip
        self.view_combo.setMinimumContentsLength(12)
        for i, name in enumerate(views):
            self.view_combo.addItem(VIEW_TEXTS[name], name)
            self.view_combo.setItemData(i, VIEW_TIPS[name], Qt.ItemDataRole.ToolTipRole)
        self.view_combo.setToolTip("What to show of the captured tensors")
        self.pause_button = _flat_button(
            "pause_button", "Pause",
            "Stop updating this pane (and stop copying its tensors while training)",
            checkable=True)  # fmt: skip
        self.pause_button.setChecked(settings["paused"])
        self.every_step_button = _flat_button(
            "every_step_button", "Every step", "Capture every step regardless of the capture "
            "budget (this pane then shows what that costs)", checkable=True)  # fmt: skip
        self.every_step_button.setChecked(settings["every_step"])
        self.clear_button = _flat_button("clear_button", "Clear", "Forget what was captured so far")

        bar = QHBoxLayout(self)
        bar.setContentsMargins(2, 0, 2, 0)
        bar.setSpacing(2)
        bar.addWidget(self.view_combo)
        bar.addStretch(1)
        tools = QToolBar()
        tools.setObjectName("pane_tools")
        tools.setStyleSheet("QToolBar { border: none; spacing: 2px; }")
        for button in (self.pause_button, self.every_step_button, self.clear_button):
            tools.addWidget(button)
        bar.addWidget(tools, 0)


class StatusLine(QWidget):
    """The row under the plot. The selectors sit here, not in the bar: the bar then fits a
    500 px dock."""

    def __init__(self, settings: dict) -> None:
        super().__init__()
        self.status_label = QLabel()
        self.status_label.setObjectName("status_label")
        # A long status is cut at the edge rather than widening the dock.
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.legend_label = QLabel()
        self.legend_label.setObjectName("legend_label")
        self.legend_label.setStyleSheet("font-size: 8pt;")
        self.sample_spin = _selector("sample_spin", "sample ", "Which sample of the batch to show")
        self.channel_spin = _selector("channel_spin", "channel ", "Which channel to show")
        self.sample_spin.setValue(settings["sample"])
        self.channel_spin.setValue(settings["channel"])
        self._error: bool | None = None  # the status is styled as an error
        status = QHBoxLayout(self)
        status.setContentsMargins(4, 0, 4, 0)
        status.setSpacing(2)  # as the pane's (a row inside its layout had the pane's spacing)
        status.addWidget(self.status_label, 1)
        status.addWidget(self.legend_label)
        status.addWidget(self.sample_spin)
        status.addWidget(self.channel_spin)

    def show_status(self, text: str | None, *, error: bool, legend: str) -> None:
        """Show `text` (None: empty, the tooltip kept), in the error style if `error`."""
        if error != self._error:
            # Restyled only when it changes: a style sheet is costly to set at every frame.
            self._error = error
            self.status_label.setStyleSheet("font-size: 8pt;" + (ERROR_STYLE if error else ""))
        self.legend_label.setText(legend)
        self.status_label.setText(text or "")
        if text is not None:
            self.status_label.setToolTip(text)  # all of it, where a narrow dock cuts it

    def show_selectors(self, ndim: int) -> None:
        """The selectors a heatmap of an `ndim`-D tensor has (0: none)."""
        self.sample_spin.setVisible(ndim >= 3)
        self.channel_spin.setVisible(ndim >= 4)

    def fit_selectors(self, shape: tuple[int, ...]) -> dict[str, int]:
        """Spin box ranges follow the tensor's shape; a value past a shrunk axis is clamped.
        The settings ({"sample", "channel"}) whose range changed, with their values now."""
        fitted = {}
        for spin, axis, key in ((self.sample_spin, 0, "sample"), (self.channel_spin, 1, "channel")):
            if len(shape) < (3 if axis == 0 else 4):
                continue
            top = max(shape[axis] - 1, 0)
            if spin.maximum() != top:
                blocker = spin.blockSignals(True)
                spin.setMaximum(top)  # clamps the value
                spin.blockSignals(blocker)
                fitted[key] = spin.value()
        return fitted


def status_text(capture: Any, *, paused: bool, last_step: float | None,
                shape: tuple[int, ...] | None, rows: int, every_step: bool,
                cost: str) -> str:  # fmt: skip
    """The status line for what a pane drew of `capture`: paused, its error, the last step
    and tensor shape, the rows, and how often it is captured (or what every step costs)."""
    parts = ["Paused"] if paused else []
    error = getattr(capture, "error", None)
    if error:
        parts.append(error)
    if last_step is None:
        parts.append("waiting for the next training step")
    else:
        parts.append(f"step {last_step:,.0f}")
        if shape is not None:
            parts.append(f"tensor {shape}")
    if rows:
        parts.append(f"{rows:,} rows")
    if every_step:
        parts.append(cost or "every step: measuring what it costs…")
    else:
        stride = int(getattr(capture, "stride", 1) or 1)
        parts.append("every step" if stride == 1 else f"every {_ordinal(stride)} step")
    return " · ".join(parts)


def restored(settings: dict | None) -> dict:
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
    spin = IntBox(0, 1 << 30)  # the wheel changes it only once clicked into
    spin.setObjectName(name)
    spin.setPrefix(prefix)
    spin.setToolTip(tip)
    spin.setRange(0, 1 << 30)  # until a tensor's shape says how many there are
    spin.setKeyboardTracking(False)  # one redraw per number typed, not per digit
    spin.hide()
    return spin


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def _flat_button(name: str, text: str, tip: str, *, checkable: bool = False) -> QToolButton:
    return tool_button(name, text, tip, checkable=checkable, flat=True)
