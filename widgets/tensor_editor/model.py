"""The table of one 2-D slice of a Parameter's live array: its model, a cell painter and
a spreadsheet-like view.

The model keeps a NumPy view of the slice shown (never a copy) and reads one element
per call, so a 1024×1024 matrix costs only the cells on screen and an in-place change
is seen at the next paint. It never writes: a typed value is parsed strictly and handed
to `commit` (the editor's apply path), which says whether the owner took it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QItemSelectionModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QWidget,
)

from app.session.param_values import parse_value

# Roles as plain ints: data() runs for every visible cell and role at each paint.
DISPLAY = Qt.ItemDataRole.DisplayRole.value
EDIT = Qt.ItemDataRole.EditRole.value
TOOLTIP = Qt.ItemDataRole.ToolTipRole.value
ALIGNMENT = Qt.ItemDataRole.TextAlignmentRole.value
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
READ_ONLY = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled
EDITABLE = READ_ONLY | Qt.ItemFlag.ItemIsEditable
# Cells drawn by Qt's own delegate: the style paints selection and focus.
STYLED_STATES = (QStyle.StateFlag.State_Selected | QStyle.StateFlag.State_HasFocus).value
TEXT_MARGIN = 4  # px, each side of a cell's text


def slice_of(array: np.ndarray, lead: tuple[int, ...]) -> np.ndarray:
    """The 2-D view of `array` the table shows: rank 0 as 1×1, rank 1 as a column, rank ≥ 3
    the last two axes at the leading indices `lead`. Always a view of `array`'s memory."""
    if array.ndim == 0:
        return array[np.newaxis, np.newaxis]
    if array.ndim == 1:
        return array[:, np.newaxis]
    if any(size == 0 for size in array.shape[:-2]):
        return np.empty((0, 0), dtype=array.dtype)  # no slice to choose
    return array[lead]


def index_text(index: tuple) -> str:
    """`[2, 1, 3, 4]` for an index tuple; empty for a rank-0 array's `()`."""
    return "[" + ", ".join(str(i) for i in index) + "]" if index else ""


def value_text(value: np.generic | float | int) -> str:
    """The shortest text that reads back as the same number in its dtype: 0.1 (not
    0.10000000149011612) for a float32, 2 for 2.0, 1e-8 for 1e-08."""
    text = str(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa.removesuffix('.0')}e{int(exponent)}"
    return text.removesuffix(".0")


class TensorTableModel(QAbstractTableModel):
    """Rows and columns of the current 2-D slice of a live array; edits go to `commit`."""

    refused = Signal(str)  # a typed value that was not taken, and why

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.array: np.ndarray | None = None
        self.title = ""
        self.lead: tuple[int, ...] = ()  # indices of the leading axes (rank ≥ 3)
        self.editable = False
        # Called with (index into the full array, value as a 0-d array of its dtype);
        # True if the value was applied. The editor sets it.
        self.commit: Callable[[tuple, np.ndarray], bool] | None = None
        self._view = np.empty((0, 0), dtype=np.float32)
        self._float = True

    # ---- what is shown ----------------------------------------------------------------------

    def set_array(self, array: np.ndarray | None, title: str = "") -> None:
        """Show `array` (its first slice if rank ≥ 3); None shows nothing."""
        self.beginResetModel()
        self.array = array
        self.title = title
        self.lead = (0,) * max(array.ndim - 2, 0) if array is not None else ()
        self._view = (slice_of(array, self.lead) if array is not None
                      else np.empty((0, 0), dtype=np.float32))  # fmt: skip
        self._float = self._view.dtype.kind == "f"
        self.endResetModel()

    def set_lead(self, lead: tuple[int, ...]) -> None:
        """Show the slice at leading indices `lead` (same shape: cells repaint, no reset)."""
        if self.array is None or tuple(lead) == self.lead:
            return
        self.lead = tuple(int(i) for i in lead)
        self._view = slice_of(self.array, self.lead)
        self.refresh()

    def set_editable(self, editable: bool) -> None:
        self.editable = editable

    @property
    def view(self) -> np.ndarray:
        """The 2-D view of the live array shown now."""
        return self._view

    def full_index(self, row: int, column: int) -> tuple:
        """The index into the full array of the cell at (`row`, `column`)."""
        ndim = self.array.ndim if self.array is not None else 2
        if ndim == 0:
            return ()
        if ndim == 1:
            return (row,)
        return (*self.lead, row, column)

    def region(self, top: int, bottom: int, left: int, right: int) -> tuple:
        """The index into the full array of the rectangle of cells `top`..`bottom`,
        `left`..`right` (inclusive) of the current slice."""
        ndim = self.array.ndim if self.array is not None else 2
        if ndim == 0:
            return ()
        if ndim == 1:
            return (slice(top, bottom + 1),)
        return (*self.lead, slice(top, bottom + 1), slice(left, right + 1))

    def refresh(self) -> None:
        """Values changed in place: repaint the cells (the view itself repaints what is seen)."""
        rows, columns = self._view.shape
        if rows and columns:
            self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, columns - 1),
                                  [DISPLAY, EDIT, TOOLTIP])  # fmt: skip

    # ---- QAbstractTableModel ----------------------------------------------------------------

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802, B008 (Qt's names)
        return 0 if parent.isValid() else self._view.shape[0]

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802, B008
        return 0 if parent.isValid() else self._view.shape[1]

    def cell_text(self, row: int, column: int) -> str:
        """The compact text of a cell: six significant digits."""
        value = self._view.item(row, column)
        return f"{value:.6g}" if self._float else str(value)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = DISPLAY):
        if role == DISPLAY:
            return self.cell_text(index.row(), index.column())
        if role == ALIGNMENT:
            return RIGHT
        if role == EDIT:
            return value_text(self._view[index.row(), index.column()])
        if role == TOOLTIP:
            where = self.full_index(index.row(), index.column())
            value = value_text(self._view[index.row(), index.column()])
            return f"{self.title}{index_text(where)} = {value}"
        return None

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = DISPLAY):  # noqa: N802
        if role != DISPLAY:
            return None
        ndim = self.array.ndim if self.array is not None else 2
        if orientation == Qt.Orientation.Horizontal and ndim < 2:
            return "value"
        if orientation == Qt.Orientation.Vertical and ndim == 0:
            return ""
        return str(section)

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        return EDITABLE if self.editable else READ_ONLY

    def setData(self, index: QModelIndex | QPersistentModelIndex, value, role: int = EDIT) -> bool:  # noqa: N802
        """Parse the typed text strictly and hand it to `commit`; a refusal is emitted."""
        if role != EDIT or not index.isValid() or self.array is None:
            return False
        if not self.editable or self.commit is None:
            self.refused.emit(f"{self.title or 'This Parameter'} can't be edited now.")
            return False
        dtype = self.array.dtype
        try:
            number = parse_value(value, dtype)
        except ValueError as exc:
            self.refused.emit(str(exc))
            return False
        new = np.asarray(number, dtype=dtype)
        if new == self._view[index.row(), index.column()]:
            return True  # the same value: no edit (and no undo step)
        return self.commit(self.full_index(index.row(), index.column()), new)


class TensorCellDelegate(QStyledItemDelegate):
    """Paints a plain cell's number in one call rather than Qt's seven `data()` calls
    per cell (a third less time per frame); selected and focused cells, and editing,
    are Qt's own."""

    def __init__(self, model: TensorTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:  # fmt: skip
        if option.state.value & STYLED_STATES:
            super().paint(painter, option, index)
            return
        painter.setPen(option.palette.text().color())
        painter.drawText(option.rect.adjusted(TEXT_MARGIN, 0, -TEXT_MARGIN, 0), RIGHT,
                         self.model.cell_text(index.row(), index.column()))  # fmt: skip


class TensorTable(QTableView):
    """The table as a spreadsheet: type over a cell, Enter commits and moves down."""

    def closeEditor(self, editor: QWidget, hint: QAbstractItemDelegate.EndEditHint) -> None:  # noqa: N802
        if hint != QAbstractItemDelegate.EndEditHint.SubmitModelCache:
            super().closeEditor(editor, hint)
            return
        super().closeEditor(editor, QAbstractItemDelegate.EndEditHint.NoHint)
        current = self.currentIndex()
        below = current.siblingAtRow(current.row() + 1)
        if below.isValid():
            self.selectionModel().setCurrentIndex(
                below, QItemSelectionModel.SelectionFlag.ClearAndSelect)
