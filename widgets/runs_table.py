"""The Runs dock's view: the project's runs in a sortable table, with their actions.

A tool bar (Restore Weights, Delete, Rename, Colour…, the history's size cap) over a table
of runs (widgets.runs_model): sorted by any column, several rows selectable, the name
edited in place, a run's changes since the run before shown when it is hovered. The view
changes nothing itself: each action is asked for with a signal its owner (app.gui.runs)
answers, and the history's RunsChanged events come back through `follow`.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableView,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from app.document.runs import CAP_MB_RANGE, DEFAULT_CAP_MB, METRICS, RunHistory, RunsChanged
from widgets.form_fields import NumberBox
from widgets.runs_model import COLUMN, ID_ROLE, RunsModel, RunsSortProxy

EMPTY_TEXT = "No runs yet: each run you train is listed here, to compare and restore."
# Columns hidden while no run has a value in them (a regression has no accuracy).
HIDDEN_WHEN_EMPTY = tuple(METRICS)


class RunsTable(QWidget):
    """The runs of one history; signals ask the owner to act on them."""

    selection_changed = Signal(list)  # the selected runs' ids, in the history's order
    restore_requested = Signal(str)  # run id
    delete_requested = Signal(list)  # run ids
    rename_requested = Signal(str, str)  # run id, new name
    colour_requested = Signal(str)  # run id
    keep_requested = Signal(str, bool)  # run id, keep its weights
    cap_changed = Signal(float)  # MB

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runs_table")
        self.model = RunsModel(self)
        self.proxy = RunsSortProxy(self)
        self.proxy.setSourceModel(self.model)
        self._selected: list[str] = []

        self.view = QTableView()
        self.view.setObjectName("runs_view")
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the history's order at first
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed)  # fmt: skip
        self.view.setAlternatingRowColors(True)
        self.view.setWordWrap(False)
        self.view.setIconSize(QSize(12, 12))  # the colour swatch by the name
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(
            self.view.fontMetrics().height() + 6)  # fmt: skip
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        header.setHighlightSections(False)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)

        self.restore_action = self._action("restore", "Restore Weights",
                                           "Put the selected run's kept weights into the "
                                           "network (one undo step).")  # fmt: skip
        self.delete_action = self._action("delete", "Delete",
                                          "Delete the selected runs (Del; undoable).")
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.rename_action = self._action("rename", "Rename",
                                          "Rename the selected run (F2, or double-click).")
        self.colour_action = self._action("colour", "Colour…",
                                          "Choose the colour the run is drawn in.")
        self.view.addActions([self.restore_action, self.delete_action, self.rename_action,
                              self.colour_action])  # fmt: skip

        self.cap_box = NumberBox(*CAP_MB_RANGE, 1.0)
        self.cap_box.setObjectName("runs_cap_box")
        self.cap_box.setValue(DEFAULT_CAP_MB)
        self.cap_box.setToolTip("How much the run history may take in the project file. "
                                "Beyond it the oldest runs go; named runs and the best run "
                                "always stay. Kept weights come on top.")  # fmt: skip
        self.cap_box.setFixedWidth(self.cap_box.fontMetrics().horizontalAdvance("0000.00") + 30)
        self.cap_box.valueChanged.connect(self._on_cap_box_value_changed)
        cap = QWidget()
        row = QHBoxLayout(cap)
        row.setContentsMargins(8, 0, 0, 0)
        row.setSpacing(4)
        row.addWidget(QLabel("Keep up to"))
        row.addWidget(self.cap_box)
        row.addWidget(QLabel("MB of runs"))
        self.size_label = QLabel()
        self.size_label.setObjectName("runs_size_label")
        row.addWidget(self.size_label)

        # A tool bar folds what does not fit into its ">>" menu: the dock never widens.
        self.toolbar = QToolBar()
        self.toolbar.setObjectName("runs_toolbar")
        self.toolbar.setIconSize(QSize(12, 12))
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        for action in (self.restore_action, self.delete_action, self.rename_action,
                       self.colour_action):  # fmt: skip
            self.toolbar.addAction(action)
        self.toolbar.addWidget(cap)

        self.empty_label = QLabel(EMPTY_TEXT)
        self.empty_label.setObjectName("runs_empty_label")
        self.empty_label.setWordWrap(True)
        self.empty_label.setStyleSheet("color: palette(placeholder-text); padding: 4px;")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(2)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.view, 1)

        self.model.rename_requested.connect(self.rename_requested)
        self.model.keep_requested.connect(self.keep_requested)
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
        self._show_state()

    def _action(self, name: str, text: str, tip: str) -> QAction:
        action = QAction(text, self)
        action.setObjectName(f"runs_{name}_action")
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(getattr(self, f"_on_{name}_action_triggered"))
        return action

    # ---- what to show ----------------------------------------------------------------------

    def set_history(self, history: RunHistory | None) -> None:
        """Show `history`'s runs (None: none), nothing selected."""
        self.model.set_history(history)
        self.set_cap(history.cap_mb if history is not None else DEFAULT_CAP_MB)
        self.view.resizeColumnsToContents()
        self._show_state()

    def set_cap(self, cap_mb: float) -> None:
        """Show the history's size cap (without asking for it)."""
        self.cap_box.blockSignals(True)
        self.cap_box.setValue(cap_mb)
        self.cap_box.blockSignals(False)

    def follow(self, event: RunsChanged) -> None:
        """Follow one change of the history (only the rows it names are redrawn)."""
        rows = self.model.rowCount()
        self.model.follow(event)
        if self.model.rowCount() != rows:
            self.view.resizeColumnsToContents()
        self._show_state()

    def _show_state(self) -> None:
        history = self.model.history
        empty = self.model.empty_columns()
        for key in HIDDEN_WHEN_EMPTY:
            self.view.setColumnHidden(COLUMN[key], key in empty)
        has_runs = bool(self.model.records)
        self.empty_label.setVisible(not has_runs)
        if history is not None and has_runs:
            size = history.size_bytes() / (1 << 20)
            weights = history.weight_bytes() / (1 << 20)
            count = len(history)
            self.size_label.setText(f"({count} run{'s' if count != 1 else ''}: {size:.2f} MB"
                                    f" + {weights:.2f} MB of weights)")  # fmt: skip
        else:
            self.size_label.setText("")
        self._update_actions()
        self._emit_selection()

    # ---- the selection ---------------------------------------------------------------------

    def selected_ids(self) -> list[str]:
        """The selected runs' ids, in the history's order."""
        rows = {self.proxy.mapToSource(i).row()
                for i in self.view.selectionModel().selectedRows()}  # fmt: skip
        return [self.model.records[r].id for r in sorted(rows) if r < len(self.model.records)]

    def select(self, run_ids: list[str]) -> None:
        """Select these runs (the others not)."""
        selection = QItemSelection()
        for run_id in run_ids:
            row = self.model.row_of(run_id)
            if row is not None:
                index = self.proxy.mapFromSource(self.model.index(row, 0))
                selection.select(index, index)
        flags = (QItemSelectionModel.SelectionFlag.ClearAndSelect
                 | QItemSelectionModel.SelectionFlag.Rows)  # fmt: skip
        self.view.selectionModel().select(selection, flags)

    def proxy_row(self, run_id: str) -> int | None:
        """Where the run is shown (the table's row, after sorting)."""
        row = self.model.row_of(run_id)
        return None if row is None else self.proxy.mapFromSource(self.model.index(row, 0)).row()

    def run_at(self, view_row: int) -> str | None:
        index = self.proxy.index(view_row, 0)
        return index.data(ID_ROLE) if index.isValid() else None

    def _single(self) -> str | None:
        ids = self.selected_ids()
        return ids[0] if len(ids) == 1 else None

    def _update_actions(self) -> None:
        ids = self.selected_ids()
        one = self.model.history.get(ids[0]) if len(ids) == 1 and self.model.history else None
        self.restore_action.setEnabled(one is not None and one.kept)
        self.delete_action.setEnabled(bool(ids))
        self.rename_action.setEnabled(one is not None)
        self.colour_action.setEnabled(one is not None)

    def _emit_selection(self) -> None:
        ids = self.selected_ids()
        if ids != self._selected:
            self._selected = ids
            self.selection_changed.emit(ids)

    # ---- slots -----------------------------------------------------------------------------

    def _on_view_selection_changed(self, *_args) -> None:
        self._update_actions()
        self._emit_selection()

    def _on_restore_action_triggered(self) -> None:
        run_id = self._single()
        if run_id is not None:
            self.restore_requested.emit(run_id)

    def _on_delete_action_triggered(self) -> None:
        ids = self.selected_ids()
        if ids:
            self.delete_requested.emit(ids)

    def _on_rename_action_triggered(self) -> None:
        run_id = self._single()
        row = self.proxy_row(run_id) if run_id is not None else None
        if row is not None:
            index = self.proxy.index(row, COLUMN["name"])
            self.view.setCurrentIndex(index)
            self.view.edit(index)

    def _on_colour_action_triggered(self) -> None:
        run_id = self._single()
        if run_id is not None:
            self.colour_requested.emit(run_id)

    def _on_cap_box_value_changed(self, value: float) -> None:
        self.cap_changed.emit(float(value))
