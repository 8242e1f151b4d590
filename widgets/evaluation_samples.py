"""Samples of an evaluation, each with its label, the prediction and the probabilities: image
thumbnails in a grid for image data, a table of feature values for any other data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.session.evaluation import Evaluation
from app.session.predict import format_value
from widgets.images import image_pixmap

MAX_SHOWN = 200  # samples listed at once; the note says how many more there are
TOP_CLASSES = 3  # probabilities listed per sample (all of them in its tooltip)
THUMB = 56  # pixels
MAX_FEATURES = 32  # feature columns in the table; the note says when more are left out
SHOWN_VALUES = 4  # a regression's targets and outputs listed per sample (all in the tooltip)
COLUMNS = ("Row", "Label", "Predicted", "Probabilities", "Loss")


@dataclass(frozen=True)
class SampleRow:
    """One sample as a sample view shows it."""

    index: int  # row of the split evaluated
    label: str
    predicted: str
    probabilities: str  # the likeliest classes with their probabilities, or the outputs
    details: str  # every probability, for the tooltip
    loss: float
    correct: bool | None  # None: a regression
    image: np.ndarray | None  # (H, W) or (H, W, 3)
    features: np.ndarray | None  # flat values, for the table


def sample_rows(evaluation: Evaluation, indices: np.ndarray,
                image_shape: tuple[int, ...] | None) -> list[SampleRow]:  # fmt: skip
    """What the view shows of the samples `indices` (rows of the evaluated split); images
    when `image_shape` (H, W) is given."""
    data, c = evaluation.data, evaluation.classification
    names = list(evaluation.names)
    rows = []
    for index in (int(i) for i in indices):
        x = np.asarray(data.x[index])
        image = features = None
        if image_shape is not None:
            image = _image(x, image_shape)
        if image is None:
            features = x.reshape(-1)
        if c is not None:
            p = c.probabilities[index]
            label, predicted = int(c.true[index]), int(c.predicted[index])
            order = np.argsort(-p, kind="stable")
            top = ", ".join(f"{_name(names, k)} {p[k]:.0%}" for k in order[:TOP_CLASSES])
            details = "\n".join(f"{_name(names, k)}: {p[k]:.3f}" for k in order)
            rows.append(SampleRow(index, _name(names, label), _name(names, predicted), top,
                                  details, float(evaluation.losses[index]),
                                  label == predicted, image, features))  # fmt: skip
            continue
        r = evaluation.regression
        true, out = _values(r.true[index]), _values(r.predicted[index])
        whole = ", ".join(format_value(v) for v in r.predicted[index])
        rows.append(SampleRow(index, true, out, out, f"Output: {whole}",
                              float(evaluation.losses[index]), None, image, features))  # fmt: skip
    return rows


def _values(values: np.ndarray) -> str:
    """Up to SHOWN_VALUES numbers, then how many more there are."""
    values = np.asarray(values).reshape(-1)
    text = ", ".join(format_value(v) for v in values[:SHOWN_VALUES])
    return text + (f", … ({len(values)} values)" if len(values) > SHOWN_VALUES else "")


def _name(names: list[str], k: int) -> str:
    return names[k] if 0 <= k < len(names) else str(k)


def _image(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    if x.ndim == 3 and x.shape[0] == 3:
        return np.moveaxis(x, 0, -1)
    return x.reshape(shape) if x.size == int(np.prod(shape)) else None


class SampleView(QWidget):
    """A grid of thumbnails (image data) or a table (other data) of samples; `sample_chosen`
    with a sample's row when one is clicked."""

    sample_chosen = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[SampleRow] = []
        self.note = QLabel("Click a cell of the confusion matrix to see its samples.")
        self.note.setObjectName("sample_note")
        self.note.setWordWrap(True)
        self.grid = QListWidget()
        self.grid.setObjectName("sample_grid")
        self.grid.setViewMode(QListView.ViewMode.IconMode)
        self.grid.setIconSize(QSize(THUMB, THUMB))
        self.grid.setResizeMode(QListView.ResizeMode.Adjust)
        self.grid.setMovement(QListView.Movement.Static)
        line = self.grid.fontMetrics().height()
        self.grid.setGridSize(QSize(THUMB + 40, THUMB + 3 * line + 10))
        self.grid.setWordWrap(True)
        self.grid.setUniformItemSizes(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("sample_table")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self._pages = QStackedWidget()
        self._pages.addWidget(self.table)
        self._pages.addWidget(self.grid)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self._pages, 1)
        self.grid.itemClicked.connect(self._on_grid_item_clicked)
        self.table.cellClicked.connect(self._on_table_cell_clicked)

    @property
    def images_shown(self) -> bool:
        return self._pages.currentWidget() is self.grid

    def shown_indices(self) -> list[int]:
        return [row.index for row in self.rows]

    def clear(self, note: str = "") -> None:
        self.rows = []
        self.grid.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setColumnHidden(COLUMNS.index("Probabilities"), False)
        self._pages.setCurrentWidget(self.table)
        self.note.setText(note)

    def show_samples(self, rows: list[SampleRow], title: str, total: int | None = None,
                     feature_names: tuple[str, ...] = ()) -> None:  # fmt: skip
        """List `rows` under `title`; `total` samples in all (more than are listed)."""
        total = len(rows) if total is None else total
        rows = rows[:MAX_SHOWN]
        self.rows = rows
        note = f"{title}: {total} sample{'s' if total != 1 else ''}"
        if total > len(rows):
            note += f", the first {len(rows)} listed"
        images = bool(rows) and all(r.image is not None for r in rows)
        if images:
            self._fill_grid(rows)
        else:
            note += self._fill_table(rows, feature_names)
        self.note.setText(note + ".")
        self._pages.setCurrentWidget(self.grid if images else self.table)

    def _fill_grid(self, rows: list[SampleRow]) -> None:
        self.grid.clear()
        for row in rows:
            item = QListWidgetItem(_caption(row))
            pixmap = image_pixmap(row.image, THUMB)
            if pixmap is not None:
                item.setIcon(QIcon(pixmap))
            item.setToolTip(_tooltip(row))
            item.setData(Qt.ItemDataRole.UserRole, row.index)
            if row.correct is False:
                item.setForeground(Qt.GlobalColor.darkRed)
            self.grid.addItem(item)

    def _fill_table(self, rows: list[SampleRow], feature_names: tuple[str, ...]) -> str:
        width = max((len(r.features) for r in rows if r.features is not None), default=0)
        shown = min(width, MAX_FEATURES)
        names = list(feature_names[:shown])
        names += [f"x{k + 1}" for k in range(len(names), shown)]
        self.table.clear()
        self.table.setColumnCount(len(COLUMNS) + shown)
        regression = bool(rows) and all(r.correct is None for r in rows)
        headers = list(COLUMNS)
        if regression:
            headers[1] = "True"  # the outputs are in Predicted: no Probabilities column
        self.table.setHorizontalHeaderLabels(headers + names)
        self.table.setColumnHidden(COLUMNS.index("Probabilities"), regression)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            cells = [str(row.index), row.label, row.predicted, row.probabilities,
                     format_value(row.loss)]  # fmt: skip
            if row.features is not None:
                cells += [format_value(float(v)) for v in row.features[:shown]]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(_tooltip(row))
                if row.correct is False and c == 2:
                    item.setForeground(Qt.GlobalColor.darkRed)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        return f"; {width - shown} more features not shown" if width > shown else ""

    def _on_grid_item_clicked(self, item: QListWidgetItem) -> None:
        self.sample_chosen.emit(int(item.data(Qt.ItemDataRole.UserRole)))

    def _on_table_cell_clicked(self, r: int, c: int) -> None:
        if 0 <= r < len(self.rows):
            self.sample_chosen.emit(self.rows[r].index)


def _caption(row: SampleRow) -> str:
    """Row number, then label → prediction, then the likeliest class's probability."""
    return f"#{row.index}\n{row.label}→{row.predicted}\n{row.probabilities.split(',')[0]}"


def _tooltip(row: SampleRow) -> str:
    return (f"Row {row.index} · label {row.label} · predicted {row.predicted} · loss "
            f"{format_value(row.loss)}\n{row.details}")  # fmt: skip
