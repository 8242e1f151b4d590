"""One mode's answer in the Predict panel: bars (class probabilities or output values)
and the numbers, or a note saying why that mode shows nothing now."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QStackedWidget, QVBoxLayout, QWidget

from app.session.predict import CLIPPED, SIGMOID, Prediction, format_value
from widgets.plots.colours import MODE_COLOURS, follow_palette, style_axis
from widgets.plots.ownership import adopt_menus

MAX_TICK_CHARS = 8
SCALE_NOTES = {SIGMOID: "sigmoid of the output", CLIPPED: "outputs clipped to 0–1"}


class OutputView(QWidget):
    """One mode's answer: a title, bars (class probabilities or values) and the numbers."""

    def __init__(self, title: str, mode: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.mode = mode
        self.prediction: Prediction | None = None
        self._title = title
        self.title = QLabel(f"<b>{escape(title)}</b>")
        self.title.setObjectName(f"{mode}_title")
        self.title.setWordWrap(True)
        self.plot_view = pg.PlotWidget(background="w")
        self.plot_view.setObjectName(f"{mode}_plot")
        self.plot_view.setMinimumSize(120, 110)
        # Its minimum is all it asks for: the bars take the room there is, and only a dock
        # shorter than every minimum scrolls.
        self.plot_view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        plot = self.plot_view.getPlotItem()
        adopt_menus(self.plot_view, plot)
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            style_axis(axis)
        plot.getAxis("left").setWidth(34)
        follow_palette(self.plot_view)
        self.plot = plot
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7)
        plot.addItem(self.bars)
        self.zero_line = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#999999", width=1))
        plot.addItem(self.zero_line)
        self.numbers = QLabel()
        self.numbers.setObjectName(f"{mode}_numbers")
        self.numbers.setWordWrap(True)
        self.numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = QLabel()  # stands in for the plot when this mode can't be shown now
        self.note.setObjectName(f"{mode}_note")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: palette(placeholder-text);")
        self._pages = QStackedWidget()
        plot_page = QWidget()
        page = QVBoxLayout(plot_page)
        page.setContentsMargins(0, 0, 0, 0)
        page.setSpacing(2)
        page.addWidget(self.plot_view, 1)
        page.addWidget(self.numbers)
        self._plot_page = plot_page
        self._pages.addWidget(plot_page)
        self._pages.addWidget(self.note)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self._pages, 1)

    def set_title(self, title: str, step: int | None = None) -> None:
        """The mode's name, and after it the training step its weights are from."""
        self._title = title
        after = f' <span style="color:#777777">· step {step}</span>' if step is not None else ""
        self.title.setText(f"<b>{escape(title)}</b>{after}")

    def show_prediction(self, prediction: Prediction,
                        value_range: tuple[float, float] | None = None) -> None:  # fmt: skip
        """Bars for `prediction`; `value_range` (regression) is shared with the other mode."""
        self.prediction = prediction
        values = prediction.values
        positions = np.arange(len(values), dtype=np.float64)
        strong, light = MODE_COLOURS.get(prediction.mode, MODE_COLOURS["predict"])
        brushes = [pg.mkBrush(strong if i == prediction.predicted or not prediction.classification
                              else light) for i in range(len(values))]  # fmt: skip
        self.bars.setOpts(x=positions, height=values, width=0.7, brushes=brushes,
                          pen=pg.mkPen(None))  # fmt: skip
        self.plot.getAxis("bottom").setTicks([_ticks(prediction.names)])
        if prediction.classification:
            low, high = 0.0, 1.0
            self.plot.setLabel("left", "")
        else:
            low, high = value_range or padded_range(values)
        self.plot.setYRange(low, high, padding=0.05 if prediction.classification else 0)
        self.plot.setXRange(-0.6, len(values) - 0.4, padding=0)
        self.numbers.setText(_numbers_text(prediction))
        self.set_title(self._title, prediction.step)
        self.plot_view.setToolTip(_tooltip(prediction))
        self._pages.setCurrentWidget(self._plot_page)

    def show_note(self, text: str) -> None:
        """Say why this mode shows nothing now (the plot is hidden)."""
        self.prediction = None
        self.set_title(self._title)
        self.note.setText(text)
        self._pages.setCurrentWidget(self.note)

    @property
    def note_shown(self) -> bool:
        return self._pages.currentWidget() is self.note

    def heights(self) -> np.ndarray:
        """The bar heights drawn (tests, and what a reader of the plot sees)."""
        height = self.bars.opts.get("height")
        return np.zeros(0) if height is None else np.asarray(height, dtype=np.float64)


def _ticks(names: Sequence[str]) -> list[tuple[float, str]]:
    every = max(1, -(-len(names) // 12))  # at most ~12 labels: a narrow dock stays legible
    return [(float(i), _short(name)) for i, name in enumerate(names) if i % every == 0]


def _short(name: str) -> str:
    return name if len(name) <= MAX_TICK_CHARS else name[: MAX_TICK_CHARS - 1] + "…"


def padded_range(values: np.ndarray) -> tuple[float, float]:
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    low = min(0.0, float(finite.min())) if finite.size else 0.0
    high = max(0.0, float(finite.max())) if finite.size else 1.0
    pad = (high - low) * 0.08 or 1.0
    return low - (pad if low < 0 else 0.0), high + (pad if high > 0 else 0.0)


def _numbers_text(prediction: Prediction) -> str:
    outputs = ", ".join(format_value(v) for v in np.asarray(prediction.output).reshape(-1))
    if not prediction.classification:
        pairs = zip(prediction.names, prediction.values, strict=False)
        return ", ".join(f"<b>{escape(n)} = {format_value(v)}</b>" for n, v in pairs)
    chosen = prediction.predicted or 0
    share = prediction.values[chosen] if chosen < len(prediction.values) else float("nan")
    name = escape(prediction.predicted_name or "")
    scale = SCALE_NOTES.get(prediction.scale)
    note = f" ({scale})" if scale else ""
    return (f"Predicted <b>{name}</b> · {share:.1%}{note}<br>"
            f"<small>outputs {outputs}</small>")


def _tooltip(prediction: Prediction) -> str:
    lines = [f"{n}: {v:.2%}" if prediction.classification else f"{n}: {format_value(v)}"
             for n, v in zip(prediction.names, prediction.values, strict=False)]  # fmt: skip
    return "\n".join(lines)
