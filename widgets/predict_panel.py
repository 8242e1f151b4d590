"""The Predict panel: choose one input, see what the network answers — in predict mode, and
with "Both modes" in train mode beside it.

The panel runs nothing. The user's choice of input (a training or validation row, a
typed vector, a point of the decision boundary's plane, typed text) is emitted as
`input_changed`; whoever owns the network reads `source`, `row`, `vector`, `point`,
`prompt` and `both_modes`, and answers with `show_input` (the label or image of that
input), `show_sequence` (a sample drawn over time) and `show_result` — or, for a text
data set, `show_next` (the next character's likeliest choices, in `text_view`, which
also samples continuations). A typed vector is checked here: a refused one turns the
field red, says why, and emits nothing.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
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

from app.session.predict import REFERENCE_ROWS, TRAIN_SEED, Prediction, format_value, parse_vector
from app.session.predict_sequence import SequencePicture
from app.session.predict_text import NextCharacters
from widgets.form_fields import Combo, IntBox, clear_refusal, scroll_in, set_tip, show_refusal
from widgets.images import image_pixmap
from widgets.plots.colours import MODE_COLOURS  # noqa: F401 (the bars' colours, read here)
from widgets.predict_output import OutputView, padded_range
from widgets.predict_sequence import SequencePlot
from widgets.predict_text import PromptEdit, TextPredictView

TRAIN_ROWS, VALIDATION_ROWS, VECTOR, POINT, TEXT = "train", "validation", "vector", "point", "text"
SOURCES = (
    (TRAIN_ROWS, "Training row"),
    (VALIDATION_ROWS, "Validation row"),
    (VECTOR, "Typed vector"),
    (POINT, "Point on the decision boundary"),
    (TEXT, "Typed text"),
)
PROMPT_DELAY_MS = 150  # typing: one prediction once the keys rest
IMAGE_SIDE = 80  # px: the input image is drawn at least this large, pixels kept square
SIDE_BY_SIDE_WIDTH = 560  # px: narrower, the two modes' outputs stack


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
        self._text_mode = False
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
        self.prompt_edit = PromptEdit()
        self._prompt_timer = QTimer(self)
        self._prompt_timer.setSingleShot(True)
        self._prompt_timer.setInterval(PROMPT_DELAY_MS)
        self._prompt_timer.timeout.connect(self._changed)
        self.prompt_edit.textChanged.connect(self._on_prompt_edit_text_changed)
        self._inputs = QStackedWidget()
        self._inputs.addWidget(self.row_box)
        self._inputs.addWidget(self.vector_edit)
        self._inputs.addWidget(self.point_label)
        self._inputs.addWidget(self.prompt_edit)
        self._inputs.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

        self.input_label = QLabel()  # the chosen row's label, or the point
        self.input_label.setObjectName("predict_input")
        self.input_label.setWordWrap(True)
        self.input_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.image_label = QLabel()
        self.image_label.setObjectName("predict_image")
        self.image_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.image_label.hide()
        self.sequence_view = SequencePlot()  # a sample over time, in place of an image
        self.sequence_view.hide()
        self.text_view = TextPredictView()  # a text set's next characters, in place of bars
        self.text_view.hide()

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
        layout.addWidget(self.sequence_view)
        layout.addWidget(self.message_label)
        layout.addWidget(self._output_host, 1)
        layout.addWidget(self.text_view, 1)
        self._column = layout
        scroll_in(self, content)  # a short dock scrolls the panel, never the Inspector

    # ---- what the panel shows ----------------------------------------------------------------

    def configure(self, train_rows: int, validation_rows: int, n_features: int, *,
                  points: bool, text: bool = False) -> None:  # fmt: skip
        """Fit the choices to a data set: rows per split, values per sample, whether a
        point of the decision boundary's plane is a sample (2 features), and whether it is
        text (typed text is a sample; the next character's choices replace the bars; a
        typed vector of token ids is not offered). Emits nothing."""
        self._filling = True
        try:
            self._sizes = {TRAIN_ROWS: int(train_rows), VALIDATION_ROWS: int(validation_rows)}
            same_samples = int(n_features) == self._n_features  # a typed vector still fits
            self._n_features = int(n_features)
            self._text_mode = bool(text)
            usable = {TRAIN_ROWS: train_rows > 0, VALIDATION_ROWS: validation_rows > 0,
                      VECTOR: n_features > 0 and not text, POINT: points, TEXT: bool(text)}
            self.text_view.setVisible(self._text_mode)
            self.both_box.setVisible(not self._text_mode)
            if self._text_mode and self.both_box.isChecked():
                self.both_box.setChecked(False)
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
            value_range = padded_range(np.concatenate(both))
        self.outputs["predict"].show_prediction(predicted, value_range)
        train_view = self.outputs["train"]
        if trained is not None:
            train_view.set_title(train_title(trained.seed, trained.batch_size))
            train_view.show_prediction(trained, value_range)
        else:
            train_view.show_note(train_note or "Train mode has no result yet.")
        train_view.setVisible(self.both_modes)

    def show_sequence(self, picture: SequencePicture | None) -> None:
        """Draw the chosen sample over time (None: it is no sequence, or there is none)."""
        self.sequence_view.setVisible(picture is not None)
        if picture is not None:
            self.sequence_view.show_picture(picture)

    def show_next(self, next_characters: NextCharacters, actual: int | None = None) -> None:
        """A text set's answer: the likeliest next characters (`actual`: the true one)."""
        self.set_message("")
        self.text_view.show_next(next_characters, actual)

    @property
    def text_mode(self) -> bool:
        return self._text_mode

    def set_message(self, text: str) -> None:
        """Show `text` instead of the outputs (no network, an error); empty: the outputs."""
        self.message_label.setText(text or "")
        self.message_label.setVisible(bool(text))
        self._output_host.setVisible(not text and not self._text_mode)
        self.text_view.show_chart(not text)
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
    def prompt(self) -> str:
        """The typed text (source TEXT)."""
        return self.prompt_edit.toPlainText()

    def set_prompt(self, text: str) -> None:
        """Type `text` as the prompt and choose typed text (emits `input_changed` at once)."""
        self.prompt_edit.setPlainText(text)
        self._prompt_timer.stop()
        if self.source != TEXT:
            self.set_source(TEXT)
        else:
            self._changed()

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
        if source == TEXT:
            return self._text_mode  # short text is padded; what is refused, says why
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
        elif source == TEXT:
            self._inputs.setCurrentWidget(self.prompt_edit)
            self._input_caption.setText("Text")
        else:
            self._inputs.setCurrentWidget(self.point_label)
            self._input_caption.setText("Point")
        page = self._inputs.currentWidget()  # the stack is as tall as the page shown
        self._inputs.setFixedHeight(min(page.sizeHint().height(), page.maximumHeight()))
        self.show_input("")
        self.show_sequence(None)

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

    def _on_prompt_edit_text_changed(self) -> None:
        if self.source == TEXT and not self._filling:
            self._prompt_timer.start()

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
        TEXT: "Only for a text data set (one with a vocabulary of characters).",
    }[key]


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
