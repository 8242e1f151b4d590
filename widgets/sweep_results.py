"""A sweep's queue and results: its progress with Stop (or Resume for a sweep left unfinished),
the runs in parallel coordinates, a table of their values and metric with the best marked,
and "Apply the best run's settings".

A pure view fed plain data by app.gui.sweeps: `show_queue` (what the queue is doing),
`show_progress` (the current run), `show_results` (the runs). Brushing the parallel
coordinates filters the table to the runs selected. It asks through signals:
`stop_requested`, `resume_requested`, `apply_requested(run id)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.plots.parallel_coords import ParallelCoordinates, PCAxis

BEST_MARK = "★"
ERROR_STYLE = "color: #b00020;"


@dataclass(frozen=True)
class SweepRow:
    """One run of the sweep as the results show it."""

    run_id: str
    name: str
    values: Mapping[str, Any] = field(default_factory=dict)  # axis name -> value
    metric: float | None = None
    status: str = "finished"


class SweepResults(QWidget):
    """See the module's text."""

    stop_requested = Signal()
    resume_requested = Signal()
    apply_requested = Signal(str)  # the best run's id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sweep_results")
        self.best_id: str | None = None
        self.rows: list[SweepRow] = []
        self.axes: list[PCAxis] = []
        self._build()
        self.show_queue("No sweep yet: Run → Sweep… sets one up.", running=False)

    def _build(self) -> None:
        self.queue_label = QLabel()
        self.queue_label.setObjectName("sweep_queue")
        self.queue_label.setWordWrap(True)
        self.step_bar = QProgressBar()
        self.step_bar.setObjectName("sweep_step_progress")
        self.step_bar.setTextVisible(True)
        self.step_bar.setMaximumWidth(220)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("sweep_stop")
        self.stop_button.setToolTip("End the sweep now; the runs done are kept and it can be "
                                    "resumed later.")  # fmt: skip
        self.stop_button.clicked.connect(self.stop_requested)
        self.resume_button = QPushButton("Resume")
        self.resume_button.setObjectName("sweep_resume")
        self.resume_button.setToolTip("Train the sweep's runs not done yet.")
        self.resume_button.clicked.connect(self.resume_requested)
        queue = QHBoxLayout()
        queue.setContentsMargins(0, 0, 0, 0)
        queue.addWidget(self.queue_label, 1)
        queue.addWidget(self.step_bar)
        queue.addWidget(self.stop_button)
        queue.addWidget(self.resume_button)

        self._parallel: ParallelCoordinates | None = None  # made when first needed
        self.table = QTableWidget()
        self.table.setObjectName("sweep_table")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.setSortingEnabled(True)
        self.table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("sweep_split")
        split.setChildrenCollapsible(False)
        self._parallel_place = QWidget()  # the parallel coordinates go in when first needed
        place = QVBoxLayout(self._parallel_place)
        place.setContentsMargins(0, 0, 0, 0)
        split.addWidget(self._parallel_place)
        split.addWidget(self.table)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self._split = split

        self.best_label = QLabel()
        self.best_label.setObjectName("sweep_best")
        self.best_label.setWordWrap(True)
        self.apply_button = QPushButton("Apply the best run's settings")
        self.apply_button.setObjectName("sweep_apply_best")
        self.apply_button.setToolTip("Set the best run's swept values in the project (one "
                                     "undo step).")  # fmt: skip
        self.apply_button.clicked.connect(self._on_apply_clicked)
        best = QHBoxLayout()
        best.setContentsMargins(0, 0, 0, 0)
        best.addWidget(self.best_label, 1)
        best.addWidget(self.apply_button)
        self.message = QLabel()
        self.message.setObjectName("sweep_message")
        self.message.setWordWrap(True)
        self.message.hide()

        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addLayout(queue)
        column.addWidget(split, 1)
        column.addLayout(best)
        column.addWidget(self.message)

    # ---- what the window shows ---------------------------------------------------------------

    def show_queue(self, text: str, *, running: bool, resume: str = "") -> None:
        """The queue's state: `text`; Stop while `running`; `resume` the Resume button's
        text for a sweep left unfinished ("" hides it)."""
        self.queue_label.setText(text)
        self.stop_button.setVisible(running)
        self.stop_button.setEnabled(running)
        self.step_bar.setVisible(running)
        self.resume_button.setVisible(bool(resume) and not running)
        self.resume_button.setText(resume or "Resume")
        if not running:
            self.step_bar.reset()

    def show_progress(self, index: int, total: int, step: int, steps: int) -> None:
        """Run `index` (from 0) of `total` is at `step` of `steps`."""
        self.queue_label.setText(f"Run {index + 1} of {total}")
        self.step_bar.setRange(0, max(steps, 1))
        self.step_bar.setValue(min(step, max(steps, 1)))
        self.step_bar.setFormat(f"step {step:,} of {steps:,}" if steps else "starting…")

    def show_message(self, text: str, *, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(ERROR_STYLE if error else "")
        self.message.setVisible(bool(text))

    @property
    def parallel(self) -> ParallelCoordinates:
        """The parallel coordinates, made when first needed: a window that never sweeps
        does not pay for the plot as it opens."""
        if self._parallel is None:
            self._parallel = ParallelCoordinates()
            self._parallel.selection_changed.connect(self._on_parallel_selection_changed)
            self._parallel_place.layout().addWidget(self._parallel)
            total = sum(self._split.sizes())  # laid out already: give the plot its share
            if total:
                self._split.setSizes([total * 3 // 5, total - total * 3 // 5])
        return self._parallel

    def show_results(self, axes: Sequence[PCAxis], rows: Sequence[SweepRow],
                     best_id: str | None) -> None:  # fmt: skip
        """The sweep's runs on `axes` (the swept settings, then the metric's axis, last)."""
        self.axes, self.rows, self.best_id = list(axes), list(rows), best_id
        metric = self.axes[-1] if self.axes else None
        if metric is not None or self._parallel is not None:
            self.parallel.set_runs(self.axes, [(r.run_id, {**r.values, metric.name: r.metric})
                                               for r in self.rows] if metric else [])  # fmt: skip
        self._fill_table()
        best = next((r for r in self.rows if r.run_id == best_id), None)
        self.apply_button.setEnabled(best is not None)
        if best is None:
            self.best_label.setText("No run has the metric yet." if self.rows else "")
        else:
            self.best_label.setText(f"Best: {best.name} ({metric.title} "
                                    f"{_text(best.metric)})")  # fmt: skip

    def table_rows_shown(self) -> list[str]:
        """Run ids of the table's rows not filtered out, top to bottom."""
        return [self.table.item(i, 0).data(Qt.ItemDataRole.UserRole)
                for i in range(self.table.rowCount()) if not self.table.isRowHidden(i)]

    # ---- the table ---------------------------------------------------------------------------

    def _fill_table(self) -> None:
        table = self.table
        table.setSortingEnabled(False)
        titles = ["", "Run", *(a.title for a in self.axes)]
        table.clear()
        table.setColumnCount(len(titles))
        table.setHorizontalHeaderLabels(titles)
        table.setRowCount(len(self.rows))
        bold = QFont(table.font())
        bold.setBold(True)
        metric = self.axes[-1].name if self.axes else ""
        for i, row in enumerate(self.rows):
            best = row.run_id == self.best_id
            mark = QTableWidgetItem(BEST_MARK if best else "")
            mark.setData(Qt.ItemDataRole.UserRole, row.run_id)
            mark.setToolTip("The best run" if best else "")
            name = QTableWidgetItem(row.name if row.status == "finished"
                                    else f"{row.name} ({row.status})")  # fmt: skip
            cells = [mark, name]
            for axis in self.axes:
                value = row.metric if axis.name == metric else row.values.get(axis.name)
                cells.append(_cell(value))
            for column, item in enumerate(cells):
                if best:
                    item.setFont(bold)
                if column:
                    item.setData(Qt.ItemDataRole.UserRole, row.run_id)
                table.setItem(i, column, item)
        table.setSortingEnabled(True)
        self._filter_table(self._parallel.selected() if self._parallel is not None
                           else [r.run_id for r in self.rows])  # fmt: skip

    def _filter_table(self, selected: Sequence[str]) -> None:
        chosen = set(selected)
        for i in range(self.table.rowCount()):
            item = self.table.item(i, 0)
            run_id = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
            self.table.setRowHidden(i, run_id not in chosen)

    # ---- slots -------------------------------------------------------------------------------

    def _on_parallel_selection_changed(self, selected: list) -> None:
        self._filter_table(selected)

    def _on_apply_clicked(self) -> None:
        if self.best_id is not None:
            self.apply_requested.emit(self.best_id)


class _Cell(QTableWidgetItem):
    """A value shown short ("0.0123") that sorts by the value itself (missing ones last)."""

    def __init__(self, value: Any) -> None:
        super().__init__(_text(value))
        number = isinstance(value, int | float) and not isinstance(value, bool)
        self.key = (0, float(value), "") if number else (1 if value is None else 0, 0.0,
                                                          str(value))  # fmt: skip
        if number:
            self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _Cell):
            return self.key < other.key
        return super().__lt__(other)


def _cell(value: Any) -> QTableWidgetItem:
    return _Cell(value)


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
