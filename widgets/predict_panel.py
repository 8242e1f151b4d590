"""The Predict panel: choose one input, see what the network answers — in predict mode, and
with "Both modes" in train mode beside it.

The panel runs nothing. The user's choice of input (a training or validation row, a
typed vector, a point of the decision boundary's plane) is emitted as `input_changed`;
whoever owns the network reads `source`, `row`, `vector`, `point` and `both_modes`,
and answers with `show_input` (the label or image of that input) and `show_result`.
A typed vector is checked here: a refused one turns the field red, says why, and
emits nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.session.predict import (
    CLIPPED,
    REFERENCE_ROWS,
    SIGMOID,
    TRAIN_SEED,
    Prediction,
    format_value,
    parse_vector,
)
from widgets.form_fields import Combo, IntBox, clear_refusal, scroll_in, set_tip, show_refusal
from widgets.images import image_pixmap
from widgets.plots.colours import MODE_COLOURS, follow_palette, style_axis
from widgets.plots.ownership import adopt_menus

TRAIN_ROWS, VALIDATION_ROWS, VECTOR, POINT = "train", "validation", "vector", "point"
SOURCES = (
    (TRAIN_ROWS, "Training row"),
    (VALIDATION_ROWS, "Validation row"),
    (VECTOR, "Typed vector"),
    (POINT, "Point on the decision boundary"),
)
IMAGE_SIDE = 80  # px: the input image is drawn at least this large, pixels kept square
SIDE_BY_SIDE_WIDTH = 560  # px: narrower, the two modes' outputs stack
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
            low, high = value_range or _padded_range(values)
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


class PredictPanel(QWidget):
    """Choose an input, see the network's output; `input_changed` asks for a new result."""

    input_changed = Signal()
    message = Signal(str)  # why a typed vector was refused, for the status bar

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("predict_panel")
        self._sizes = {TRAIN_ROWS: 0, VALIDATION_ROWS: 0}
        self._n_features = 0
        self._vector: np.ndarray | None = None
        self._point: tuple[float, float] | None = None
        self._filling = False
        self._build()
        self.configure(0, 0, 0, points=False)

    # ---- building ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.source_box = Combo()
        self.source_box.setObjectName("predict_source")
        for key, text in SOURCES:
            self.source_box.addItem(text, key)
        set_tip(self.source_box, "What to run the network on")
        self.source_box.currentIndexChanged.connect(self._on_source_box_changed)

        self.row_box = IntBox(0, 0)  # keyboard tracking off: typing "12" runs once
        self.row_box.setObjectName("predict_row")
        set_tip(self.row_box, "Which row of the chosen set (0 is the first)")
        self.row_box.valueChanged.connect(self._on_row_box_changed)
        self.vector_edit = QLineEdit()
        self.vector_edit.setObjectName("predict_vector")
        self.vector_edit.setClearButtonEnabled(True)
        self.vector_edit.editingFinished.connect(self._on_vector_edit_finished)
        self.point_label = QLabel()
        self.point_label.setObjectName("predict_point")
        self.point_label.setWordWrap(True)
        self._inputs = QStackedWidget()
        self._inputs.addWidget(self.row_box)
        self._inputs.addWidget(self.vector_edit)
        self._inputs.addWidget(self.point_label)
        self._inputs.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

        self.input_label = QLabel()  # the chosen row's label, or the point
        self.input_label.setObjectName("predict_input")
        self.input_label.setWordWrap(True)
        self.input_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.image_label = QLabel()
        self.image_label.setObjectName("predict_image")
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.image_label.hide()

        self.both_box = QCheckBox("Both modes")
        self.both_box.setObjectName("predict_both_modes")
        self.both_box.setToolTip(
            "Also run in train mode, beside predict mode: Dropout drops (fixed seed, so the "
            "view holds still) and BatchNorm normalises with a batch's own statistics (the "
            "input with training rows)."
        )
        self.both_box.toggled.connect(self._on_both_box_toggled)

        self.message_label = QLabel()
        self.message_label.setObjectName("predict_message")
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: palette(placeholder-text);")
        self.message_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.message_label.hide()

        self.outputs = {
            "predict": OutputView("Predict mode", "predict"),
            "train": OutputView(train_title(TRAIN_SEED, REFERENCE_ROWS + 1), "train"),
        }
        self.outputs["train"].hide()
        self._output_layout = QBoxLayout(QBoxLayout.Direction.TopToBottom)
        self._output_layout.setContentsMargins(0, 0, 0, 0)
        self._output_layout.setSpacing(6)
        for view in self.outputs.values():
            self._output_layout.addWidget(view, 1)
        self._output_host = QWidget()
        self._output_host.setLayout(self._output_layout)

        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Input", self.source_box)
        self._input_caption = QLabel("Row")
        form.addRow(self._input_caption, self._inputs)
        # The image (if any) beside the label and the switch: a narrow dock keeps its height
        # for the bars.
        aside = QVBoxLayout()
        aside.setContentsMargins(0, 0, 0, 0)
        aside.addWidget(self.input_label)
        aside.addStretch(1)
        aside.addWidget(self.both_box)
        details = QHBoxLayout()
        details.setContentsMargins(0, 0, 0, 0)
        details.setSpacing(8)
        details.addWidget(self.image_label)
        details.addLayout(aside, 1)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        layout.addLayout(form)
        layout.addLayout(details)
        layout.addWidget(self.message_label)
        layout.addWidget(self._output_host, 1)
        self._column = layout
        scroll_in(self, content)  # a short dock scrolls the panel, never the Inspector

    # ---- what the panel shows ----------------------------------------------------------------

    def configure(self, train_rows: int, validation_rows: int, n_features: int, *,
                  points: bool) -> None:  # fmt: skip
        """Fit the choices to a data set: rows per split, values per sample, and whether a
        point of the decision boundary's plane is a sample (2 features). Emits nothing."""
        self._filling = True
        try:
            self._sizes = {TRAIN_ROWS: int(train_rows), VALIDATION_ROWS: int(validation_rows)}
            same_samples = int(n_features) == self._n_features  # a typed vector still fits
            self._n_features = int(n_features)
            usable = {TRAIN_ROWS: train_rows > 0, VALIDATION_ROWS: validation_rows > 0,
                      VECTOR: n_features > 0, POINT: points}  # fmt: skip
            model = self.source_box.model()
            for i, (key, _) in enumerate(SOURCES):
                item = model.item(i)
                item.setEnabled(usable[key])
                item.setToolTip("" if usable[key] else _unusable(key))
            if not usable.get(self.source):
                first = next((i for i, (key, _) in enumerate(SOURCES) if usable[key]), 0)
                self.source_box.setCurrentIndex(first)
            if not same_samples:
                self._vector = None
                self.vector_edit.clear()
                clear_refusal(self.vector_edit)
            if not (same_samples and points):
                self._point = None
                self.point_label.setText("Click the decision boundary (Plots) to choose a "
                                         "point.")  # fmt: skip
            example = ", ".join(["0.5", "-1.2", "0"][: min(n_features, 3)])
            more = ", …" if n_features > 3 else ""
            self.vector_edit.setPlaceholderText(f"{example}{more}")
            set_tip(self.vector_edit, f"{n_features} number{'s' if n_features != 1 else ''}, "
                                      "separated by commas or spaces; Enter runs it")  # fmt: skip
            self._show_source()
            self.set_message("")
            if not self.ready:
                self._prompt()
        finally:
            self._filling = False

    def show_input(self, text: str, image: np.ndarray | None = None) -> None:
        """What the chosen input is (its label, or its values) and, for images, the image."""
        self.input_label.setText(text)
        self.input_label.setVisible(bool(text))
        pixmap = image_pixmap(image, _image_side(image)) if image is not None else None
        self.image_label.setVisible(pixmap is not None)
        if pixmap is not None:
            self.image_label.setPixmap(pixmap)

    def show_result(self, predicted: Prediction, trained: Prediction | None = None,
                    train_note: str = "") -> None:  # fmt: skip
        """Show predict mode's answer and, with Both modes, train mode's (or why there is
        none: `train_note`)."""
        self.set_message("")
        value_range = None
        if not predicted.classification:  # one scale for both modes, so bars compare
            both = [predicted.values] + ([trained.values] if trained is not None else [])
            value_range = _padded_range(np.concatenate(both))
        self.outputs["predict"].show_prediction(predicted, value_range)
        train_view = self.outputs["train"]
        if trained is not None:
            train_view.set_title(train_title(trained.seed, trained.batch_size))
            train_view.show_prediction(trained, value_range)
        else:
            train_view.show_note(train_note or "Train mode has no result yet.")
        train_view.setVisible(self.both_modes)

    def set_message(self, text: str) -> None:
        """Show `text` instead of the outputs (no network, an error); empty: the outputs."""
        self.message_label.setText(text or "")
        self.message_label.setVisible(bool(text))
        self._output_host.setVisible(not text)
        # The message takes the outputs' room, so the input fields stay together at the top.
        self._column.setStretchFactor(self.message_label, 1 if text else 0)

    @property
    def message_shown(self) -> str:
        return self.message_label.text() if self.message_label.isVisibleTo(self) else ""

    # ---- the chosen input --------------------------------------------------------------------

    @property
    def source(self) -> str:
        return self.source_box.currentData()

    def set_source(self, source: str) -> None:
        """Choose the kind of input as the user would (emits `input_changed` if it can run)."""
        index = self.source_box.findData(source)
        if index < 0:
            raise ValueError(f"Unknown input source {source!r}.")
        self.source_box.setCurrentIndex(index)

    @property
    def row(self) -> int:
        return self.row_box.value()

    @property
    def vector(self) -> np.ndarray | None:
        """The last typed vector that was accepted (None if none, or it was refused)."""
        return self._vector

    @property
    def point(self) -> tuple[float, float] | None:
        return self._point

    def set_point(self, x: float, y: float) -> None:
        """A point of the decision boundary's plane becomes the input (and the source)."""
        self._point = (float(x), float(y))
        self.point_label.setText(f"({format_value(x)}, {format_value(y)}) — click the decision "
                                 "boundary to choose another.")  # fmt: skip
        if self.source != POINT:
            self.set_source(POINT)  # emits
        else:
            self.input_changed.emit()

    @property
    def both_modes(self) -> bool:
        return self.both_box.isChecked()

    @property
    def ready(self) -> bool:
        """True if the chosen source has an input to run (a valid vector, a chosen point)."""
        source = self.source
        if source == VECTOR:
            return self._vector is not None
        if source == POINT:
            return self._point is not None
        return self._sizes.get(source, 0) > 0

    # ---- slots -------------------------------------------------------------------------------

    def _show_source(self) -> None:
        source = self.source
        if source in (TRAIN_ROWS, VALIDATION_ROWS):
            self._inputs.setCurrentWidget(self.row_box)
            self._input_caption.setText("Row")
            self.row_box.blockSignals(True)
            self.row_box.setRange(0, max(self._sizes[source] - 1, 0))
            self.row_box.blockSignals(False)
        elif source == VECTOR:
            self._inputs.setCurrentWidget(self.vector_edit)
            self._input_caption.setText("Values")
        else:
            self._inputs.setCurrentWidget(self.point_label)
            self._input_caption.setText("Point")
        self.show_input("")

    def _changed(self) -> None:
        if self._filling:
            return
        if self.ready:
            self.input_changed.emit()
        else:
            self._prompt()

    def _prompt(self) -> None:
        """Say what the chosen source still needs."""
        if self.source == POINT:
            self.set_message("Click the decision boundary (Plots) to choose a point.")
        elif self.source == VECTOR and not self.vector_edit.styleSheet():
            self.set_message(f"Type {self._n_features} numbers and press Enter.")

    def _on_source_box_changed(self, index: int) -> None:
        self._show_source()
        if self.source == VECTOR and self.vector_edit.text().strip():
            self._commit_vector(again=True)  # what was typed before counts again
            return
        self._changed()

    def _on_row_box_changed(self, value: int) -> None:
        self._changed()

    def _on_vector_edit_finished(self) -> None:
        self._commit_vector(again=False)

    def _commit_vector(self, again: bool) -> None:
        if self._filling:
            return
        text = self.vector_edit.text()
        try:
            vector = parse_vector(text, self._n_features)
        except ValueError as exc:
            reason = str(exc)
            self._vector = None
            show_refusal(self.vector_edit, reason)
            self.show_input("")
            self.set_message(f"Nothing runs: {reason}")
            self.message.emit(reason)
            return
        clear_refusal(self.vector_edit)
        if not again and self._vector is not None and np.array_equal(vector, self._vector) \
                and not self.message_shown:  # fmt: skip
            return  # Enter, then leaving the field: one run
        self._vector = vector
        self._changed()

    def _on_both_box_toggled(self, checked: bool) -> None:
        self.outputs["train"].setVisible(checked)
        self._changed()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        wide = self.width() >= SIDE_BY_SIDE_WIDTH
        direction = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if self._output_layout.direction() != direction:
            self._output_layout.setDirection(direction)


def train_title(seed: int | None, batch_size: int) -> str:
    return f"Train mode (seed {seed}, batch of {batch_size})"


def _unusable(key: str) -> str:
    return {
        TRAIN_ROWS: "The training set is empty.",
        VALIDATION_ROWS: "There is no validation set (the validation fraction is 0).",
        VECTOR: "There is no network to run.",
        POINT: "Only for data with 2 input features.",
    }[key]


def _ticks(names: Sequence[str]) -> list[tuple[float, str]]:
    every = max(1, -(-len(names) // 12))  # at most ~12 labels: a narrow dock stays legible
    return [(float(i), _short(name)) for i, name in enumerate(names) if i % every == 0]


def _short(name: str) -> str:
    return name if len(name) <= MAX_TICK_CHARS else name[: MAX_TICK_CHARS - 1] + "…"


def _padded_range(values: np.ndarray) -> tuple[float, float]:
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


def point_marker() -> pg.ScatterPlotItem:
    """A cross marking the chosen point on the decision boundary's plot."""
    marker = pg.ScatterPlotItem(symbol="+", size=18, pen=pg.mkPen("#111111", width=2.5),
                                brush=pg.mkBrush("#111111"))  # fmt: skip
    marker.setZValue(20)  # over the points
    marker.setObjectName("predict_point_marker")
    return marker


def _image_side(image: np.ndarray) -> int:
    """At least IMAGE_SIDE pixels, a whole number of screen pixels per image pixel."""
    longest = max(np.shape(image)[:2], default=1) or 1
    return longest * max(1, -(-IMAGE_SIDE // longest))
