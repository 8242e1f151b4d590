"""Text in the Predict panel: the prompt a user types, the next character's likeliest
choices as bars (space and newline drawn visibly), and a continuation sampled at a
temperature.

The view runs nothing: typing emits `prompt_changed`, the Sample button `sample_requested`
(the settings are read from `length`, `temperature`, `seed`), Stop `stop_requested`;
whoever owns the network answers with `show_next`, `show_continuation` and
`set_sampling`.
"""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.session.predict_text import (
    MAX_LENGTH,
    MAX_SEED,
    MAX_TEMPERATURE,
    TOP_K,
    NextCharacters,
    readable,
    readable_text,
)
from widgets.form_fields import IntBox, NumberBox, set_tip
from widgets.plots.colours import MODE_COLOURS, follow_palette, style_axis
from widgets.plots.ownership import adopt_menus

PROMPT_LINES = 3
DEFAULT_LENGTH, DEFAULT_TEMPERATURE = 200, 1.0
PLOT_HEIGHT = 240  # px at most for the bars
SHOWN_WINDOW = 48  # characters of the window fed shown (its end)
TRUE_COLOUR = "#2e7d32"


def mono_font() -> QFont:
    return QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)


class PromptEdit(QPlainTextEdit):
    """The prompt: a few lines of plain text (Enter is a newline, as in the text)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("predict_prompt")
        self.setPlaceholderText("Type the start of a text…")
        self.setTabChangesFocus(True)
        self.setFont(mono_font())
        lines = self.fontMetrics().lineSpacing() * PROMPT_LINES
        self.setFixedHeight(lines + 2 * self.frameWidth() + 8)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        set_tip(self, "The text the model continues; it reads the last characters of it")


class TextPredictView(QWidget):
    """The next character's likeliest choices, and sampling a continuation."""

    sample_requested = Signal()
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("predict_text")
        self.next: NextCharacters | None = None
        self.top_k = TOP_K
        self._continuation = ""
        self._build()
        self.set_sampling(False)

    def _build(self) -> None:
        self.window_label = QLabel()  # what the model reads
        self.window_label.setObjectName("predict_window")
        self.window_label.setWordWrap(True)
        self.window_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.plot_view = pg.PlotWidget(background="w")
        self.plot_view.setObjectName("predict_next_plot")
        self.plot_view.setMinimumSize(160, 130)
        self.plot_view.setMaximumHeight(PLOT_HEIGHT)  # the rest goes to the continuation
        self.plot_view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        plot = self.plot_view.getPlotItem()
        adopt_menus(self.plot_view, plot)
        plot.setMenuEnabled(False)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        for name in ("left", "bottom"):
            style_axis(plot.getAxis(name))
        plot.getAxis("left").setWidth(34)
        tick_font = mono_font()
        tick_font.setPointSizeF(max(tick_font.pointSizeF(), 10.0))
        plot.getAxis("bottom").setStyle(tickFont=tick_font)
        plot.setYRange(0.0, 1.0, padding=0.05)
        follow_palette(self.plot_view)
        self.plot = plot
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.7)
        plot.addItem(self.bars)
        self.numbers = QLabel()
        self.numbers.setObjectName("predict_next_numbers")
        self.numbers.setWordWrap(True)
        self.numbers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.length_box = IntBox(1, MAX_LENGTH)
        self.length_box.setObjectName("predict_length")
        self.length_box.setValue(DEFAULT_LENGTH)
        set_tip(self.length_box, f"How many characters to add (1 to {MAX_LENGTH})")
        self.temperature_box = NumberBox(0.0, MAX_TEMPERATURE, 0.1)
        self.temperature_box.setObjectName("predict_temperature")
        self.temperature_box.setValue(DEFAULT_TEMPERATURE)
        set_tip(self.temperature_box, "How freely to choose: 1 draws by the model's "
                                      "probabilities, lower keeps to the likeliest characters "
                                      f"(0: always the likeliest), higher (up to "
                                      f"{MAX_TEMPERATURE:g}) dares more")  # fmt: skip
        self.seed_box = IntBox(0, MAX_SEED)
        self.seed_box.setObjectName("predict_seed")
        set_tip(self.seed_box, "The same seed draws the same text from the same weights")
        self.sample_button = QPushButton("Sample")
        self.sample_button.setObjectName("predict_sample")
        self.sample_button.clicked.connect(self._on_sample_button_clicked)
        self.progress = QLabel()
        self.progress.setObjectName("predict_sample_progress")
        self.progress.setStyleSheet("color: palette(placeholder-text);")
        self.output = QTextEdit()
        self.output.setObjectName("predict_continuation")
        self.output.setReadOnly(True)
        self.output.setFont(mono_font())
        self.output.setMinimumHeight(self.fontMetrics().lineSpacing() * 4)
        self.output.setPlaceholderText("Press Sample to continue the text.")

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Length"))
        row.addWidget(self.length_box, 1)
        row.addWidget(QLabel("Temperature"))
        row.addWidget(self.temperature_box, 1)
        row.addWidget(QLabel("Seed"))
        row.addWidget(self.seed_box, 1)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.sample_button)
        buttons.addWidget(self.progress, 1)
        self.chart = QWidget()  # what comes next: hidden while a message stands in for it
        chart = QVBoxLayout(self.chart)
        chart.setContentsMargins(0, 0, 0, 0)
        chart.setSpacing(2)
        chart.addWidget(self.window_label)
        chart.addWidget(self.plot_view, 1)
        chart.addWidget(self.numbers)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.chart, 1)
        layout.addWidget(QLabel("<b>Continue the text</b>"))
        layout.addLayout(row)
        layout.addLayout(buttons)
        layout.addWidget(self.output, 3)

    # ---- what it shows -----------------------------------------------------------------------

    def show_next(self, next_characters: NextCharacters, actual: int | None = None) -> None:
        """Bars for the likeliest next characters; `actual` (a data set row's next
        character) is drawn in green and named."""
        self.next = next_characters
        top = next_characters.top(self.top_k)
        strong, light = MODE_COLOURS["predict"]
        brushes = [pg.mkBrush(TRUE_COLOUR if i == actual else strong if rank == 0 else light)
                   for rank, (i, _, _) in enumerate(top)]  # fmt: skip
        heights = [p for _, _, p in top]
        self.bars.setOpts(x=np.arange(len(top), dtype=np.float64), height=heights, width=0.7,
                          brushes=brushes, pen=pg.mkPen(None))  # fmt: skip
        self.plot.getAxis("bottom").setTicks([[(float(k), readable(c))
                                               for k, (_, c, _) in enumerate(top)]])  # fmt: skip
        self.plot.setXRange(-0.6, max(len(top), 1) - 0.4, padding=0)
        self.plot.setYRange(0.0, 1.0, padding=0.05)
        window = next_characters.window
        shown = readable_text(window[-SHOWN_WINDOW:])
        cut = "…" if len(window) > SHOWN_WINDOW else ""
        padding = next_characters.padded
        what = "space" if " " in window[:padding] else "newline"
        padded = (f" · padded on the left with {padding} {what}{'s' if padding != 1 else ''}"
                  if padding else "")  # fmt: skip
        step = f" · step {next_characters.step}"
        self.window_label.setText(
            f"Reads the last {len(window)} characters{padded}{step}:<br>"
            f"<code>{cut}{escape(shown)}</code>"
        )
        lines = [f"<b>{escape(readable(c))}</b> {p:.1%}" for _, c, p in top[:5]]
        note = ""
        if actual is not None:
            p = float(next_characters.probabilities[actual])
            name = escape(readable(next_characters.vocabulary[actual]))
            note = f'<br><span style="color:{TRUE_COLOUR}">True next: <b>{name}</b> {p:.1%}</span>'
        self.numbers.setText("Likeliest next: " + " · ".join(lines) + note)
        self.plot_view.setToolTip("\n".join(f"{readable(c)}  {p:.2%}" for _, c, p in top))

    def show_chart(self, shown: bool) -> None:
        self.chart.setVisible(shown)

    def heights(self) -> np.ndarray:
        height = self.bars.opts.get("height")
        return np.zeros(0) if height is None else np.asarray(height, dtype=np.float64)

    def tick_labels(self) -> list[str]:
        ticks = self.plot.getAxis("bottom")._tickLevels
        return [label for _, label in ticks[0]] if ticks else []

    def show_continuation(self, prompt: str, text: str, note: str = "") -> None:
        """The prompt (grey) and the characters drawn after it (bold); `note` says how far."""
        def html(part: str) -> str:  # a newline shows as ⏎, then breaks the line
            return escape(part).replace("\n", "⏎<br>")

        self._continuation = prompt + text

        self.output.setHtml(
            '<div style="white-space: pre-wrap;">'
            f'<span style="color:#888888">{html(prompt)}</span><b>{html(text)}</b></div>'
        )
        self.output.moveCursor(self.output.textCursor().MoveOperation.End)
        self.progress.setText(note)

    @property
    def continuation(self) -> str:
        """The text shown: the prompt and the characters drawn after it."""
        return self._continuation

    def set_sampling(self, sampling: bool) -> None:
        """While a continuation is drawn the button stops it and the settings wait."""
        self._sampling = sampling
        self.sample_button.setText("Stop" if sampling else "Sample")
        self.sample_button.setToolTip("Stop drawing characters" if sampling else
                                      "Continue the text by drawing characters one at a time "
                                      "from the model's probabilities")  # fmt: skip
        for box in (self.length_box, self.temperature_box, self.seed_box):
            box.setEnabled(not sampling)

    @property
    def sampling(self) -> bool:
        return self._sampling

    # ---- settings ----------------------------------------------------------------------------

    @property
    def length(self) -> int:
        return self.length_box.value()

    @property
    def temperature(self) -> float:
        return float(self.temperature_box.value())

    @property
    def seed(self) -> int:
        return self.seed_box.value()

    def _on_sample_button_clicked(self) -> None:
        for box in (self.length_box, self.temperature_box, self.seed_box):
            box.interpretText()  # a value typed but not yet entered counts
        if self._sampling:
            self.stop_requested.emit()
        else:
            self.sample_requested.emit()
