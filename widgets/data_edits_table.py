"""The "Data edits" table: every relabelled or excluded sample, with Remove and Clear all.

It shows the project's data edits (app.datasets.edits) and follows them through the
project's events, so an undo or redo anywhere shows at once; Remove and Clear all go
through the undo stack (app.undo.data_edits), one undo step each.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.datasets.edits import SETTING
from app.document import Project
from app.document.events import TrainingChanged
from app.undo import data_edits

COLUMNS = ("Sample", "Change")


class DataEditsTable(QWidget):
    """The project's data edits as rows; `refused(message)` when Remove or Clear is refused."""

    refused = Signal(str)

    def __init__(self, project: Project, stack, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._project = project
        self._stack = stack
        self._class_names: tuple[str, ...] = ()
        self._rows: list[int] = []  # whole-set sample number of each table row
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.note = QLabel()  # why some edits were not applied (set by the session's owner)
        self.note.setWordWrap(True)
        self.note.setVisible(False)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Take back the selected samples' edits")
        self.clear_button = QPushButton("Clear all")
        self.clear_button.setToolTip("Take back every data edit (one undo step)")
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.clear_button.clicked.connect(self._on_clear_clicked)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        buttons = QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(self.remove_button)
        buttons.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.note)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        self._subscription = None
        self.set_project(project, stack)

    def set_project(self, project: Project, stack) -> None:
        """Show another project's edits (e.g. after File → Open)."""
        if self._subscription is not None:
            self._subscription.unsubscribe()
        self._project, self._stack = project, stack
        self._subscription = project.events.subscribe(self._on_project_changed)
        self.refresh()

    def set_class_names(self, names: tuple[str, ...]) -> None:
        """Class names of the data set, so a relabel reads 'cat → dog', not '0 → 1'."""
        self._class_names = tuple(names)
        self.refresh()

    def set_note(self, text: str) -> None:
        """What the last session could not apply (TrainingSession.edits_note); '' hides it."""
        self.note.setText(text)
        self.note.setVisible(bool(text))

    @property
    def rows(self) -> list[int]:
        """The whole-set sample number of each row shown."""
        return list(self._rows)

    def refresh(self) -> None:
        edits, problem = data_edits.edits_of(self._project)
        self._rows = [edit.row for edit in edits]
        self.table.setRowCount(len(edits))
        for i, edit in enumerate(edits):
            for column, text in enumerate((edit.sample, edit.describe(self._class_names))):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, edit.row)
                self.table.setItem(i, column, item)
        damaged = problem and self._project.training.get(SETTING) is not None
        if damaged:
            self.summary.setText(problem)
        else:
            count = len(edits)
            self.summary.setText("No data edits." if not count else
                                 f"{count} sample{'s' if count != 1 else ''} edited.")  # fmt: skip
        self.clear_button.setEnabled(bool(edits) or bool(damaged))
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(bool(self._selected_rows()))

    def _selected_rows(self) -> list[int]:
        picked = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self._rows[i] for i in picked if i < len(self._rows)]

    def _on_project_changed(self, event: object) -> None:
        if isinstance(event, TrainingChanged) and event.key == SETTING:
            self.refresh()

    def _on_remove_clicked(self) -> None:
        message = data_edits.restore(self._stack, self._project, *self._selected_rows())
        if message:
            self.refused.emit(message)

    def _on_clear_clicked(self) -> None:
        message = data_edits.clear(self._stack, self._project)
        if message:
            self.refused.emit(message)
