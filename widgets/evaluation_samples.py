"""Samples of an evaluation, each with its label, the prediction and the probabilities: image
thumbnails in a grid for image data, a table of feature values for any other data. A chosen
sample can be relabelled ("Relabel as…", a class chooser) or excluded, from the buttons
under the samples or the context menu; the view only asks (`relabel_requested`,
`exclude_requested`), its owner makes the data edit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPoint, QSize, Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
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
    with a sample's row when one is clicked; `relabel_requested(row, class)` and
    `exclude_requested(row)` when the user asks to fix the chosen sample's data."""

    sample_chosen = Signal(int)
    relabel_requested = Signal(int, int)  # the row of the evaluated split, the new class
    exclude_requested = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[SampleRow] = []
        self.class_names: tuple[str, ...] = ()  # the classes a sample can be relabelled as
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
        self.relabel_button = QPushButton("Relabel as…")
        self.relabel_button.setObjectName("relabel_sample")
        self.relabel_button.setToolTip("Give the chosen sample another class (an undoable data "
                                       "edit; the data's files are not changed)")  # fmt: skip
        self.relabel_menu = QMenu(self.relabel_button)  # the class chooser
        self.relabel_menu.setObjectName("relabel_menu")
        self.relabel_button.setMenu(self.relabel_menu)
        self.exclude_button = QPushButton("Exclude")
        self.exclude_button.setObjectName("exclude_sample")
        self.exclude_button.setToolTip("Leave the chosen sample out of training and evaluation "
                                       "(an undoable data edit)")  # fmt: skip
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.relabel_button)
        buttons.addWidget(self.exclude_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self._pages, 1)
        layout.addLayout(buttons)
        self.grid.itemClicked.connect(self._on_grid_item_clicked)
        self.table.cellClicked.connect(self._on_table_cell_clicked)
        for view in (self.grid, self.table):
            view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            view.customContextMenuRequested.connect(
                lambda pos, v=view: self._on_context_menu_requested(v, pos))
            view.itemSelectionChanged.connect(self._update_buttons)
        self.relabel_menu.aboutToShow.connect(self._on_relabel_menu_about_to_show)
        self.exclude_button.clicked.connect(self._on_exclude_button_clicked)
        self._update_buttons()

    @property
    def images_shown(self) -> bool:
        return self._pages.currentWidget() is self.grid

    def shown_indices(self) -> list[int]:
        return [row.index for row in self.rows]

    def chosen(self) -> SampleRow | None:
        """The sample selected in the grid or the table, if any."""
        if self.images_shown:
            items = self.grid.selectedItems()
            r = self.grid.row(items[0]) if items else -1
        else:
            picked = self.table.selectionModel().selectedRows()
            r = picked[0].row() if picked else -1
        return self.rows[r] if 0 <= r < len(self.rows) else None

    def choose(self, index: int) -> None:
        """Select the sample of row `index` of the evaluated split (as a click does)."""
        for r, row in enumerate(self.rows):
            if row.index == index:
                if self.images_shown:
                    self.grid.setCurrentRow(r)
                else:
                    self.table.selectRow(r)
                return
        raise KeyError(index)

    def relabel_actions(self, row: SampleRow, menu: QMenu) -> None:
        """Fill `menu` with a class per entry; the sample's own label is not offered."""
        menu.clear()
        for k, name in enumerate(self.class_names):
            action = menu.addAction(name)
            action.setObjectName(f"relabel_as_{k}")
            action.setEnabled(name != row.label)
            action.triggered.connect(
                lambda checked=False, i=row.index, c=k: self.relabel_requested.emit(i, c))

    def clear(self, note: str = "") -> None:
        self.rows = []
        self.grid.clear()
        self.table.setRowCount(0)
        self.table.setColumnCount(len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setColumnHidden(COLUMNS.index("Probabilities"), False)
        self._pages.setCurrentWidget(self.table)
        self.note.setText(note)
        self._update_buttons()

    def show_samples(self, rows: list[SampleRow], title: str, total: int | None = None,
                     feature_names: tuple[str, ...] = (),
                     class_names: tuple[str, ...] = ()) -> None:  # fmt: skip
        """List `rows` under `title`; `total` samples in all (more than are listed);
        `class_names`: the classes a sample can be relabelled as (none: a regression)."""
        self.class_names = tuple(class_names)
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
        self._update_buttons()

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

    def _update_buttons(self) -> None:
        row = self.chosen()
        self.relabel_button.setEnabled(row is not None and len(self.class_names) > 1)
        self.relabel_button.setVisible(bool(self.class_names))  # not for a regression
        self.exclude_button.setEnabled(row is not None)
        hint = "" if row is not None else "Choose a sample first."
        self.exclude_button.setStatusTip(hint)

    def _on_relabel_menu_about_to_show(self) -> None:
        row = self.chosen()
        if row is not None:
            self.relabel_actions(row, self.relabel_menu)
        else:
            self.relabel_menu.clear()

    def _on_exclude_button_clicked(self) -> None:
        row = self.chosen()
        if row is not None:
            self.exclude_requested.emit(row.index)

    def _on_context_menu_requested(self, view: QAbstractItemView, pos: QPoint) -> None:
        index = view.indexAt(pos)
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return
        view.setCurrentIndex(index)  # the sample under the pointer is the one edited
        self.context_menu(self.rows[index.row()]).exec(view.viewport().mapToGlobal(pos))

    def context_menu(self, row: SampleRow) -> QMenu:
        """The menu a right click on `row` opens: Relabel as ▸ (classes), Exclude."""
        menu = QMenu(self)
        menu.setObjectName("sample_menu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        if self.class_names:
            self.relabel_actions(row, menu.addMenu("Relabel as"))
        exclude = menu.addAction("Exclude")
        exclude.setObjectName("exclude_sample_action")
        exclude.triggered.connect(lambda checked=False, i=row.index: self.exclude_requested.emit(i))
        return menu

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
