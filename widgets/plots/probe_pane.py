"""What the panes looking inside sequence layers share: polling a probe capture, a labelled
heatmap with a colour bar, the selector row and the status line.

A probe pane reads a `ProbeCapture`'s `latest` (the newest copy of each array, which the
window's controller takes at display rate for visible panes only); it never summarises.
As a `HookPane`, it polls the capture's `version` when its owner calls `tick()`, redraws
only when it changed, keeps its redraws within the shared `FrameBudget`, and says what
the user changed with `settings_changed(view, settings)` so the hook saves it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QStackedWidget, QVBoxLayout, QWidget

from widgets.form_fields import IntBox, tool_button
from widgets.plots.budget import FrameBudget
from widgets.plots.colours import follow_palette
from widgets.plots.curves import BudgetedPlotWidget
from widgets.plots.hook_controls import status_text
from widgets.plots.hook_views import DIVERGING_COLOURS, SEQUENTIAL_MAP, label_axes
from widgets.plots.ownership import adopt_menus

MAX_LABELS = 80  # token labels on an axis; past that, every k-th
SHOWN_CHARS = {" ": "␣", "\n": "⏎", "\t": "⇥", "\r": "␍"}


def token_labels(tokens: np.ndarray | None, vocabulary: Sequence[str], length: int) -> list[str]:
    """One label per position of an axis `length` long: the sample's characters when the
    tokens fit the axis and the data has a vocabulary, else the position numbers."""
    if tokens is not None and len(tokens) == length and vocabulary:
        size = len(vocabulary)
        return [SHOWN_CHARS.get(vocabulary[i], vocabulary[i]) if 0 <= i < size else f"#{i}"
                for i in np.asarray(tokens, dtype=np.int64).tolist()]  # fmt: skip
    return [str(i) for i in range(length)]


class LabelledHeatmap(BudgetedPlotWidget):
    """An image (row 0 at the top) whose axes name each row and column, with a colour bar."""

    def __init__(self, budget: FrameBudget, left: str, bottom: str, tip: str) -> None:
        super().__init__(background="w")
        self.budget = budget
        plot = self.getPlotItem()
        adopt_menus(self, plot)
        plot.setMenuEnabled(False)
        plot.invertY(True)
        self.setMinimumSize(160, 120)
        self.setToolTip(tip)
        self.image = pg.ImageItem(axisOrder="row-major")
        plot.addItem(self.image)
        self.color_bar = pg.ColorBarItem(colorMap=SEQUENTIAL_MAP, interactive=False, width=10,
                                         colorMapMenu=False)  # fmt: skip
        adopt_menus(self, self.color_bar)
        self.color_bar.axis.setStyle(autoReduceTextSpace=False)
        self.color_bar.setImageItem(self.image)
        plot.layout.addItem(self.color_bar, 2, 5)
        label_axes(plot, left, bottom)
        self._labels: dict[str, list[str]] = {}
        self._levels: tuple[float, float] | None = None
        self._diverging: bool | None = None
        self._size: tuple[int, int] | None = None
        follow_palette(self)

    def draw(self, image: np.ndarray, levels: tuple[float, float], *, diverging: bool,
             rows: list[str], columns: list[str]) -> None:  # fmt: skip
        if diverging != self._diverging:
            self._diverging = diverging
            self.color_bar.setColorMap(
                pg.ColorMap(np.linspace(0, 1, len(DIVERGING_COLOURS)), DIVERGING_COLOURS)
                if diverging else SEQUENTIAL_MAP)  # fmt: skip
        self.image.setImage(image, autoLevels=False, levels=levels)
        if levels != self._levels:
            self._levels = levels
            self.color_bar.setLevels(levels)
        height, width = image.shape
        self.image.setRect(QRectF(0, 0, width, height))
        self._label("left", rows)
        self._label("bottom", columns)
        if (height, width) != self._size:
            self._size = (height, width)
            self.getPlotItem().getViewBox().setRange(xRange=(0, width), yRange=(0, height),
                                                     padding=0)  # fmt: skip

    def _label(self, side: str, labels: list[str]) -> None:
        if self._labels.get(side) == labels:
            return  # ticks rebuilt only when the labels change
        self._labels[side] = labels
        every = max(1, -(-len(labels) // MAX_LABELS))
        numbers = all(label.isdigit() for label in labels)
        if numbers:  # position numbers: round ones, as an axis would
            every = max(every, 1 if len(labels) <= 20 else 5 if len(labels) <= 100 else 10)
        ticks = [(i + 0.5, labels[i]) for i in range(0, len(labels), every)]
        self.getPlotItem().getAxis(side).setTicks([ticks])

    def empty(self) -> None:
        self.image.clear()
        self._labels, self._levels, self._size = {}, None, None


class ProbePane(QWidget):
    """A pane on one probe capture: selectors above, a plot, a status line under it.

    Subclasses build `self.plot_area` and the selectors (`_build`), and draw from the
    capture's `latest` (`_draw`). `settings` holds what the hook saves for the pane.
    """

    settings_changed = Signal(str, dict)
    VIEW = ""
    DEFAULTS: dict[str, Any] = {}

    def __init__(self, capture: Any = None, *, budget: FrameBudget, settings: dict | None = None,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.capture: Any = None
        self.budget = budget
        self.redraws = 0
        self.vocabulary: tuple[str, ...] = ()
        self._settings = _restored(settings, {**self.DEFAULTS, "paused": False, "sample": 0})
        self._seen: int | None = None
        self._message = ""
        self._cost = ""
        self._step: int | None = None
        self._shape: tuple[int, ...] | None = None
        self.selectors = QHBoxLayout()
        self.selectors.setContentsMargins(2, 0, 2, 0)
        self.selectors.setSpacing(4)
        self.sample_spin = IntBox(0, 0)
        self.sample_spin.setObjectName("sample_spin")
        self.sample_spin.setPrefix("sample ")
        self.sample_spin.setToolTip("Which sample of the batch to show (the first few are copied)")
        self.pause_button = tool_button("pause_button", "Pause", "Stop updating this pane (and "
                                        "stop copying while training)", checkable=True, flat=True)
        self.pause_button.setChecked(self._settings["paused"])
        self.plot_area = QStackedWidget()
        self.message_label = QLabel()
        self.message_label.setObjectName("message_label")
        self.message_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message_label.setWordWrap(True)
        self.status_label = QLabel()
        self.status_label.setObjectName("status_label")
        self.status_label.setStyleSheet("font-size: 8pt;")
        self.status_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._build()
        self.selectors.addWidget(self.sample_spin)
        self.selectors.addStretch(1)
        self.selectors.addWidget(self.pause_button)
        self.plot_area.addWidget(self.message_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addLayout(self.selectors)
        layout.addWidget(self.plot_area, 1)
        layout.addWidget(self.status_label)
        self.sample_spin.valueChanged.connect(self._on_sample_spin_value_changed)
        self.pause_button.toggled.connect(self._on_pause_button_toggled)
        self.set_capture(capture)

    # ---- what subclasses give ------------------------------------------------------------

    def _build(self) -> None:
        raise NotImplementedError

    def _draw(self) -> None:
        raise NotImplementedError

    def _empty(self) -> None:
        raise NotImplementedError

    # ---- state ----------------------------------------------------------------------------

    @property
    def view(self) -> str:
        return self.VIEW

    @property
    def settings(self) -> dict:
        return dict(self._settings)

    @property
    def paused(self) -> bool:
        return self._settings["paused"]

    def set_capture(self, capture: Any) -> None:
        if capture is self.capture:
            return
        self.capture = capture
        self._seen, self._step, self._shape = None, None, None
        self._empty()
        if capture is not None:
            self.set_message("")
            if self.isVisible():
                self.poll()
        self._update_status()

    def set_message(self, text: str) -> None:
        self._message = text or ""
        self.message_label.setText(self._message)
        self._show_page()
        self._update_status()

    def set_cost(self, text: str) -> None:
        self._cost = text or ""

    def set_vocabulary(self, vocabulary: Sequence[str]) -> None:
        """The characters of the token ids (a text data set's), for the axis labels."""
        vocabulary = tuple(vocabulary or ())
        if vocabulary != self.vocabulary:
            self.vocabulary = vocabulary
            self._redraw()

    def _show_page(self) -> None:
        self.plot_area.setCurrentIndex(self.plot_area.count() - 1 if self._message else 0)

    # ---- polling ----------------------------------------------------------------------------

    def poll(self) -> bool:
        capture = self.capture
        if capture is None or self.paused or capture.version == self._seen:
            return False
        self._seen = capture.version
        self._draw()
        self._update_status()
        self.redraws += 1
        return True

    def tick(self) -> None:
        """Redraw if there is something new, the budget allows and the pane can be seen."""
        capture = self.capture
        if capture is None or self.paused or capture.version == self._seen:
            return
        if not self.budget.ready() or self.visibleRegion().isEmpty():
            return
        self.budget.timed(self.poll)

    def _redraw(self) -> None:
        if self.capture is not None:
            self.budget.timed(self._draw)
            self._update_status()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self.poll()

    # ---- helpers for subclasses -----------------------------------------------------------------

    def _latest(self, name: str) -> tuple[int, np.ndarray] | None:
        latest = getattr(self.capture, "latest", None) or {}
        return latest.get(name)

    def _fit_samples(self, count: int) -> int:
        """The sample spin's range follows the samples copied; the sample shown."""
        top = max(count - 1, 0)
        if self.sample_spin.maximum() != top:
            blocker = self.sample_spin.blockSignals(True)
            self.sample_spin.setMaximum(top)
            self.sample_spin.setValue(min(self._settings["sample"], top))
            self.sample_spin.blockSignals(blocker)
        return self.sample_spin.value()

    def _shown(self, step: int, shape: tuple[int, ...]) -> None:
        self._step, self._shape = step, shape

    def _update_status(self) -> None:
        capture = self.capture
        if capture is None:
            self.status_label.setText("")
            return
        text = status_text(capture, paused=self.paused, last_step=self._step, shape=self._shape,
                           rows=0, every_step=False, cost=self._cost)  # fmt: skip
        self.status_label.setText(text)
        self.status_label.setToolTip(text)

    def _emit_settings(self) -> None:
        self.settings_changed.emit(self.VIEW, self.settings)

    def _set(self, key: str, value: Any) -> None:
        if self._settings.get(key) == value:
            return
        self._settings[key] = value
        self._redraw()  # from the copy at hand: no new capture needed
        self._emit_settings()

    def _on_sample_spin_value_changed(self, value: int) -> None:
        self._set("sample", value)

    def _on_pause_button_toggled(self, paused: bool) -> None:
        self._settings["paused"] = paused
        if self.capture is not None:
            self.capture.paused = paused
        self._update_status()
        if not paused:
            self.poll()
        self._emit_settings()


def _restored(settings: dict | None, defaults: dict) -> dict:
    """The pane's settings from a saved hook's, each of its default's type; others left out."""
    found = dict(defaults)
    for key, default in defaults.items():
        value = (settings or {}).get(key, default)
        if type(value) is type(default) and not (isinstance(value, int) and value < -1):
            found[key] = value
    return found
