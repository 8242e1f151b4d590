"""The run history as a Qt table model, and the proxy that sorts it: numbers as numbers,
runs without a value last in either order.

The model shows the records of a `RunHistory` (app.document.runs) as they are; it never
changes them. An edit of a name or of the "kept" box is asked for with a signal, and the
owner (the Runs controller) answers with an undo command or `runs.set_keep`, whose
RunsChanged event comes back here through `follow`.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFont

from app.document.run_diff import change_text
from app.document.runs import METRICS, RunHistory, RunRecord, RunsChanged

SORT_ROLE = Qt.ItemDataRole.UserRole + 1  # a number, text, or None (missing: sorted last)
ID_ROLE = Qt.ItemDataRole.UserRole + 2  # the run's id
BEST_MARK = "★ "

# key, header, header tooltip
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("name", "Run", "The run's name (double-click or F2 to rename) in its colour; "
                    "★ marks the best run (lowest validation loss, else loss)."),
    # The figures runs are compared by come first: a narrow dock shows them without scrolling.
    *((key, title[0].upper() + title[1:], f"The run's {title} (from its epochs where it has "
       "any, else its steps).") for key, (title, _higher) in METRICS.items()),
    ("steps", "Steps", "Steps trained in the run."),
    ("duration", "Time", "How long the run took."),
    ("rate", "Steps/s", "Steps per second over the whole run."),
    ("changes", "Changes", "What changed since the run before (hover a run for the list)."),
    ("kept", "Weights", "The run's weights, to restore. Ticked: kept whatever comes. "
                        "Partly ticked: held for now, as the best or the last run (they go "
                        "when it is neither). Unticking lets them go for good."),
    ("status", "Status", "How the run ended: finished, stopped or failed."),
    ("origin", "From", "Where it was trained: the window, the command line or a sweep."),
    ("started", "Started", "When the run started."),
)  # fmt: skip
KEYS = tuple(key for key, _title, _tip in COLUMNS)
COLUMN = {key: i for i, key in enumerate(KEYS)}
PERCENT = {key for key in METRICS if "accuracy" in key}
NUMERIC = {"steps", "duration", "rate", *METRICS}


def diff_lines(record: RunRecord, first: bool) -> list[str]:
    """What changed since the run before, a line each ("the first run", "no changes")."""
    if record.diff:
        return [change_text(change) for change in record.diff]
    return ["the first run"] if first else ["no changes"]


def changes_text(record: RunRecord, first: bool) -> str:
    count = len(record.diff)
    if not count:
        return "first run" if first else "no changes"
    return f"{count} change" if count == 1 else f"{count} changes"


def tooltip(record: RunRecord, first: bool) -> str:
    lines = [f"{record.name}: changes since the run before"]
    lines += [f"  {line}" for line in diff_lines(record, first)]
    if record.message:
        lines += ["", record.message]
    return "\n".join(lines)


def keep_state(record: RunRecord) -> Qt.CheckState:
    """Checked: kept whatever comes; partly: held for now by default (as the best or the
    last run; it goes when it is neither); unchecked: let go."""
    if not record.kept:
        return Qt.CheckState.Unchecked
    return Qt.CheckState.Checked if record.keep else Qt.CheckState.PartiallyChecked


def keep_text(record: RunRecord, best: bool, last: bool) -> str:
    if not record.kept:
        return "let go" if record.keep is False else ""
    if record.keep:
        return "kept"
    return "for now: " + ("best" if best else "last" if last else "held")


def duration_text(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def started_text(started: str, now: datetime | None = None) -> str:
    """The start in local time: "14:05" today, else "2026-11-24 14:05"."""
    try:
        when = datetime.fromisoformat(started.replace("Z", "+00:00"))
    except ValueError:
        return started
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    local = when.astimezone()
    now = now or datetime.now().astimezone()
    return local.strftime("%H:%M" if local.date() == now.date() else "%Y-%m-%d %H:%M")


def number_text(key: str, value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return ""
    if key in PERCENT:
        return f"{value:.1%}"
    if key == "rate":
        return f"{value:.1f}" if value < 100 else f"{value:.0f}"
    return f"{value:.4g}"


class RunsModel(QAbstractTableModel):
    """One row per run of a RunHistory, oldest first; columns as COLUMNS."""

    rename_requested = Signal(str, str)  # run id, the name typed
    keep_requested = Signal(str, bool)  # run id, keep its weights

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.history: RunHistory | None = None
        self.records: list[RunRecord] = []
        self._best: RunRecord | None = None
        self._bold = QFont()
        self._bold.setBold(True)

    # ---- following the history -------------------------------------------------------------

    def set_history(self, history: RunHistory | None) -> None:
        self.beginResetModel()
        self.history = history
        self.records = list(history.records) if history is not None else []
        self._best = history.best() if history is not None else None
        self.endResetModel()

    def follow(self, event: RunsChanged) -> None:
        """Follow one RunsChanged: only the rows it names change (and, when runs come or go,
        the columns that follow the whole history: the best run's mark, kept weights)."""
        history = self.history
        if history is None or event.what == "sweep":
            return
        if event.what == "changed":
            for run_id in event.ids:
                row = self.row_of(run_id)
                if row is not None:
                    self._changed(row, row)
            return
        if event.what == "removed":
            for run_id in event.ids:
                row = self.row_of(run_id)
                if row is not None:
                    self.beginRemoveRows(QModelIndex(), row, row)
                    del self.records[row]
                    self.endRemoveRows()
        elif event.what == "added":
            for index, record in enumerate(history.records):
                if index >= len(self.records) or self.records[index] is not record:
                    if record in self.records:
                        break  # moved: not something the history does; reset below
                    self.beginInsertRows(QModelIndex(), index, index)
                    self.records.insert(index, record)
                    self.endInsertRows()
        if self.records != history.records:  # out of step (a change without an event)
            self.set_history(history)
            return
        self._best = history.best()
        if self.records:
            self._changed(0, len(self.records) - 1)

    def _changed(self, first: int, last: int) -> None:
        self.dataChanged.emit(self.index(first, 0), self.index(last, len(KEYS) - 1))

    def row_of(self, run_id: str) -> int | None:
        return next((i for i, r in enumerate(self.records) if r.id == run_id), None)

    def record(self, row: int) -> RunRecord:
        return self.records[row]

    def is_best(self, record: RunRecord) -> bool:
        return record is self._best

    def empty_columns(self) -> set[str]:
        """The metric columns no run has a value in."""
        return {key for key in METRICS if all(r.metric(key) is None for r in self.records)}

    # ---- QAbstractTableModel ---------------------------------------------------------------

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008, N802 (Qt's names)
        return 0 if parent.isValid() else len(self.records)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(KEYS)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][1]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMNS[section][2]
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        key = KEYS[index.column()]
        if key == "name":
            flags |= Qt.ItemFlag.ItemIsEditable
        elif key == "kept" and self.records[index.row()].kept:
            flags |= Qt.ItemFlag.ItemIsUserCheckable  # once let go, weights can't come back
        return flags

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # fmt: skip
        if not index.isValid():
            return None
        record, key = self.records[index.row()], KEYS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(record, key, index.row())
        if role == SORT_ROLE:
            return self._sort_value(record, key)
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(record, index.row() == 0)
        if role == ID_ROLE:
            return record.id
        if role == Qt.ItemDataRole.EditRole and key == "name":
            return record.name
        if role == Qt.ItemDataRole.DecorationRole and key == "name":
            return QColor(record.colour)
        if role == Qt.ItemDataRole.CheckStateRole and key == "kept":
            return keep_state(record)
        if role == Qt.ItemDataRole.FontRole and key == "name" and self.is_best(record):
            return self._bold
        if role == Qt.ItemDataRole.TextAlignmentRole and key in NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any,  # noqa: N802
                role: int = Qt.ItemDataRole.EditRole) -> bool:  # fmt: skip
        if not index.isValid():
            return False
        record, key = self.records[index.row()], KEYS[index.column()]
        if key == "name" and role == Qt.ItemDataRole.EditRole:
            name = str(value).strip()
            if name != record.name:
                self.rename_requested.emit(record.id, name)  # empty: refused with the reason
            return False  # the history's event redraws the row once it is renamed
        if key == "kept" and role == Qt.ItemDataRole.CheckStateRole:
            state = Qt.CheckState(value)
            if state != keep_state(record):  # ticked: kept for good; unticked: let go
                self.keep_requested.emit(record.id, state == Qt.CheckState.Checked)
            return False
        return False

    def _text(self, record: RunRecord, key: str, row: int) -> str:
        if key == "name":
            return BEST_MARK + record.name if self.is_best(record) else record.name
        if key in ("status", "origin"):
            return getattr(record, key)
        if key == "started":
            return started_text(record.started)
        if key == "steps":
            return f"{record.steps:,}"
        if key == "duration":
            return duration_text(record.duration)
        if key == "rate":
            return number_text(key, record.steps_per_second)
        if key in METRICS:
            return number_text(key, record.metric(key))
        if key == "kept":
            return keep_text(record, self.is_best(record), row == len(self.records) - 1)
        if key == "changes":
            return changes_text(record, row == 0)
        return ""

    def _sort_value(self, record: RunRecord, key: str) -> Any:
        if key == "name":
            return record.name.casefold()
        if key in ("status", "origin", "started"):
            return getattr(record, key)
        if key == "steps":
            return float(record.steps)
        if key == "duration":
            return float(record.duration)
        if key == "rate":
            return record.steps_per_second
        if key in METRICS:
            return record.metric(key)
        if key == "kept":
            return 2.0 if record.keep and record.kept else 1.0 if record.kept else 0.0
        if key == "changes":
            return float(len(record.diff))
        return None


class RunsSortProxy(QSortFilterProxyModel):
    """Sorts by SORT_ROLE: numbers as numbers, text as text, missing values last whichever
    way the column is sorted; equal values keep the history's order."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSortRole(SORT_ROLE)
        self.setDynamicSortFilter(True)

    def lessThan(self, left: QModelIndex | QPersistentModelIndex,  # noqa: N802 (Qt's name)
                 right: QModelIndex | QPersistentModelIndex) -> bool:  # fmt: skip
        a, b = left.data(SORT_ROLE), right.data(SORT_ROLE)
        descending = self.sortOrder() == Qt.SortOrder.DescendingOrder
        if (a is None) != (b is None):
            # Qt reverses the comparison to sort descending: a missing value must then be
            # "less" to end up last.
            return descending if a is None else not descending
        if a == b:  # (both None too)
            return left.row() < right.row() if not descending else left.row() > right.row()
        return a < b
