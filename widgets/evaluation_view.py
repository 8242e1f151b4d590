"""The Evaluation dock's view: a whole split measured in predict mode — a confusion matrix,
per-class figures and (two classes) ROC and precision–recall curves, or a regression's
scatter and residuals — down to the samples of a cell and the most confidently wrong.

It never runs a network: the controller hands it an `Evaluation` (app.session.evaluation)
and hears which set to evaluate, when to evaluate again and which samples are shown.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.session.evaluation import TRAINING, VALIDATION, WORST, Evaluation
from widgets.evaluation_curves import BinaryCurves, RegressionPlots
from widgets.evaluation_matrix import ConfusionMatrixView
from widgets.evaluation_samples import MAX_SHOWN, SampleView, sample_rows
from widgets.form_fields import Combo

SPLIT_TITLES = {VALIDATION: "Validation set", TRAINING: "Training set"}
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
SCORE_COLUMNS = ("Class", "Precision", "Recall", "F1", "Support")
CELL_TAB, WORST_TAB = 0, 1


class EvaluationView(QWidget):
    """What a network gets right and wrong on one set, for the Evaluation dock."""

    split_changed = Signal(str)  # VALIDATION or TRAINING
    refresh_requested = Signal()
    samples_shown = Signal(object)  # the rows (np.ndarray) of the evaluated set now listed
    # From any sample view: fix the data of a sample (its row in `evaluation.data`).
    relabel_requested = Signal(int, int)  # row, new class
    exclude_requested = Signal(int)  # row

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("evaluation_view")
        self.evaluation: Evaluation | None = None
        self.image_shape: tuple[int, ...] | None = None
        self.cell: tuple[int, int] | None = None  # the confusion-matrix cell listed

        self.split_box = Combo()  # the wheel changes it only once clicked into
        self.split_box.setObjectName("evaluation_split")
        for split, title in SPLIT_TITLES.items():
            self.split_box.addItem(title, split)
        self.split_box.setToolTip("The set to evaluate, whole, in predict mode")
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setObjectName("evaluation_refresh")
        self.refresh_button.setToolTip("Evaluate again with the current weights")
        self.summary = QLabel("")
        self.summary.setObjectName("evaluation_summary")
        self.summary.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(self.split_box)
        bar.addWidget(self.refresh_button)
        bar.addWidget(self.summary, 1)
        self.message = QLabel("")
        self.message.setObjectName("evaluation_message")
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: palette(placeholder-text);")

        self.matrix = ConfusionMatrixView()
        self.normalised_box = QCheckBox("Row-normalised")
        self.normalised_box.setObjectName("evaluation_normalised")
        self.normalised_box.setToolTip("Each row as shares of its true class")
        self.class_table = QTableWidget(0, len(SCORE_COLUMNS))
        self.class_table.setObjectName("class_scores")
        self.class_table.setHorizontalHeaderLabels(list(SCORE_COLUMNS))
        self.class_table.verticalHeader().setVisible(False)
        header = self.class_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.class_table.verticalHeader().setDefaultSectionSize(
            self.class_table.fontMetrics().height() + 6)
        self.class_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.curves = BinaryCurves()
        self.cell_samples = SampleView()
        self.worst_samples = SampleView()
        self.wrong_only_box = QCheckBox("Wrong predictions only")
        self.wrong_only_box.setObjectName("evaluation_wrong_only")
        self.regression = RegressionPlots()
        self.regression_worst = SampleView()
        self.sample_tabs = QTabWidget()
        self.sample_tabs.setObjectName("evaluation_sample_tabs")
        self.sample_tabs.addTab(self.cell_samples, "Cell samples")
        self.sample_tabs.addTab(self._with_header(self.worst_samples, self.wrong_only_box),
                                "Most confidently wrong")  # fmt: skip

        self.pages = QStackedWidget()
        self.pages.addWidget(self._classification_page())
        self.pages.addWidget(self._regression_page())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.message)
        layout.addWidget(self.pages, 1)
        self.pages.hide()
        self.set_message("No evaluation yet: it is made when a network can be trained.")

        self.split_box.currentIndexChanged.connect(self._on_split_box_changed)
        self.refresh_button.clicked.connect(self.refresh_requested)
        self.normalised_box.toggled.connect(self.matrix.set_normalised)
        self.matrix.cell_clicked.connect(self.show_cell)
        self.wrong_only_box.toggled.connect(self._on_wrong_only_box_toggled)
        self.sample_tabs.currentChanged.connect(self._on_sample_tabs_changed)
        for view in (self.cell_samples, self.worst_samples, self.regression_worst):
            view.relabel_requested.connect(self.relabel_requested)
            view.exclude_requested.connect(self.exclude_requested)

    def _with_header(self, widget: QWidget, header: QWidget) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(header)
        layout.addWidget(widget, 1)
        return box

    def _classification_page(self) -> QWidget:
        scroller = QScrollArea()  # many classes: the cells keep a readable size and scroll
        scroller.setObjectName("confusion_matrix_scroller")
        scroller.setWidgetResizable(True)
        scroller.setFrameShape(QFrame.Shape.NoFrame)
        scroller.setWidget(self.matrix)
        matrix_box = self._with_header(scroller, self.normalised_box)
        figures = QWidget()
        column = QVBoxLayout(figures)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.class_table, 1)
        column.addWidget(self.curves, 2)
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setObjectName("evaluation_classification")
        page.setChildrenCollapsible(False)
        for widget in (matrix_box, figures, self.sample_tabs):
            page.addWidget(widget)
        page.setSizes([300, 380, 440])
        return page

    def _regression_page(self) -> QWidget:
        page = QSplitter(Qt.Orientation.Horizontal)
        page.setObjectName("evaluation_regression")
        page.addWidget(self.regression)
        page.addWidget(self.regression_worst)
        page.setSizes([700, 400])
        return page

    # ---- state -----------------------------------------------------------------------------

    @property
    def split(self) -> str:
        return self.split_box.currentData()

    def set_split(self, split: str) -> None:
        self.split_box.setCurrentIndex(self.split_box.findData(split))

    def set_message(self, text: str) -> None:
        """A line over the figures (why there are none, or that they are being made)."""
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def clear(self, text: str, keep_cell: bool = False) -> None:
        """No evaluation to show, and why; with `keep_cell`, the cell listed is listed again
        in the next evaluation shown (the same data, changed by a data edit)."""
        self.evaluation = None
        if not keep_cell:
            self.cell = None
        self.pages.hide()
        self.summary.setText("")
        self.set_message(text)
        self.samples_shown.emit(np.zeros(0, dtype=np.int64))

    # ---- showing ---------------------------------------------------------------------------

    def show_evaluation(self, evaluation: Evaluation,
                        image_shape: tuple[int, ...] | None = None) -> None:  # fmt: skip
        """Show `evaluation`; samples are drawn as (H, W) images if `image_shape` is given.
        The cell listed stays listed, with its samples as they now are."""
        self.evaluation, self.image_shape = evaluation, image_shape
        self.set_message("")
        self.summary.setText(_summary(evaluation))
        self.pages.show()
        c = evaluation.classification
        if c is None:
            self.pages.setCurrentIndex(1)
            self.regression.show_regression(evaluation.regression)
            rows = sample_rows(evaluation, evaluation.worst(WORST), None)
            self.regression_worst.show_samples(rows, f"The {WORST} largest losses",
                                               feature_names=evaluation.data.feature_names)
            self.samples_shown.emit(np.zeros(0, dtype=np.int64))
            return
        self.pages.setCurrentIndex(0)
        self.matrix.set_matrix(c.confusion, evaluation.names)
        self._fill_scores(evaluation)
        self.curves.setVisible(c.binary)
        if c.binary:
            self.curves.show_curves(c, self.matrix.names[1])
        self._show_worst(emit=False)
        if self.cell is not None and max(self.cell) < c.num_classes:
            tab = self.sample_tabs.currentIndex()
            self.show_cell(*self.cell)
            self.sample_tabs.setCurrentIndex(tab)  # the list the user was looking at
        else:
            self.cell = None
            self.matrix.set_chosen(None)
            self.cell_samples.clear("Click a cell of the confusion matrix to see its samples.")
            self._emit_shown()

    def show_cell(self, true_class: int, predicted_class: int) -> None:
        """List the samples of class `true_class` predicted as `predicted_class`."""
        evaluation = self.evaluation
        if evaluation is None or evaluation.classification is None:
            return
        self.cell = (true_class, predicted_class)
        self.matrix.set_chosen(self.cell)
        indices = evaluation.classification.cell(true_class, predicted_class)
        names = self.matrix.names
        rows = sample_rows(evaluation, indices[:MAX_SHOWN], self.image_shape)
        self.cell_samples.show_samples(
            rows, f"True {names[true_class]}, predicted {names[predicted_class]}",
            total=len(indices), feature_names=evaluation.data.feature_names,
            class_names=names)
        self.sample_tabs.setCurrentIndex(CELL_TAB)
        self._emit_shown()

    def _show_worst(self, emit: bool = True) -> None:
        evaluation = self.evaluation
        if evaluation is None or evaluation.classification is None:
            return
        wrong_only = self.wrong_only_box.isChecked()
        indices = evaluation.worst(WORST, wrong_only=wrong_only)
        what = "wrong predictions" if wrong_only else "samples"
        rows = sample_rows(evaluation, indices, self.image_shape)
        self.worst_samples.show_samples(rows, f"The {what} of highest loss",
                                        feature_names=evaluation.data.feature_names,
                                        class_names=self.matrix.names)  # fmt: skip
        if emit:
            self._emit_shown()

    def _fill_scores(self, evaluation: Evaluation) -> None:
        s = evaluation.classification.scores
        names = self.matrix.names
        table = self.class_table
        rows = [(names[k], s.precision[k], s.recall[k], s.f1[k], int(s.support[k]))
                for k in range(len(names))]  # fmt: skip
        rows.append(("Macro average", s.macro_precision, s.macro_recall, s.macro_f1,
                     int(s.support.sum())))  # fmt: skip
        table.setRowCount(len(rows) + 1)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                text = value if isinstance(value, str) else (
                    str(value) if isinstance(value, int) else _share(value))
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(RIGHT)
                table.setItem(r, c, item)
        last = len(rows)
        table.setItem(last, 0, QTableWidgetItem("Accuracy"))
        accuracy = QTableWidgetItem(_share(s.accuracy))
        accuracy.setTextAlignment(RIGHT)
        table.setItem(last, 3, accuracy)
        for c in (1, 2, 4):
            table.setItem(last, c, QTableWidgetItem(""))

    def score_text(self, row: str, column: str) -> str:
        """The text of the per-class table at the row named `row`, column `column`."""
        table = self.class_table
        c = SCORE_COLUMNS.index(column)
        for r in range(table.rowCount()):
            if table.item(r, 0) is not None and table.item(r, 0).text() == row:
                item = table.item(r, c)
                return item.text() if item is not None else ""
        raise KeyError(row)

    def _emit_shown(self) -> None:
        view = self.worst_samples if self.sample_tabs.currentIndex() == WORST_TAB else (
            self.cell_samples)
        self.samples_shown.emit(np.asarray(view.shown_indices(), dtype=np.int64))

    # ---- slots -----------------------------------------------------------------------------

    def _on_split_box_changed(self, index: int) -> None:
        self.cell = None
        self.split_changed.emit(self.split)

    def _on_wrong_only_box_toggled(self, checked: bool) -> None:
        self._show_worst()

    def _on_sample_tabs_changed(self, index: int) -> None:
        if self.evaluation is not None:
            self._emit_shown()


def _share(value: float) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.3f}"


def _summary(evaluation: Evaluation) -> str:
    parts = [SPLIT_TITLES.get(evaluation.split, evaluation.split),
             f"{len(evaluation)} samples", f"step {evaluation.step}",
             f"loss {evaluation.loss:.4g}"]  # fmt: skip
    if evaluation.classification is not None:
        parts.append(f"accuracy {evaluation.accuracy:.1%}")
        parts.append(f"macro F1 {evaluation.classification.scores.macro_f1:.3f}")
    else:
        r = evaluation.regression
        parts += [f"R² {r.r2:.3f}", f"MAE {r.mae:.4g}", f"RMSE {r.rmse:.4g}"]
    return " · ".join(parts) + " (predict mode)"
