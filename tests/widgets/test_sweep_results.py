"""The sweep's results view: the queue's Stop and Resume, the runs' table with the best
marked and filtered by brushing, sorting by value, and asking to apply the best run."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from widgets.plots.parallel_coords import PCAxis
from widgets.sweep_results import BEST_MARK, SweepResults, SweepRow

pytestmark = pytest.mark.gui

AXES = [PCAxis("learning_rate", "learning rate", log=True),
        PCAxis("best_val_loss", "best val loss", higher_better=False)]  # fmt: skip
ROWS = [SweepRow("a", "sweep 1", {"learning_rate": 0.001}, 0.9),
        SweepRow("b", "sweep 2", {"learning_rate": 0.01}, 0.2),
        SweepRow("c", "sweep 3", {"learning_rate": 0.1}, 0.5),
        SweepRow("d", "sweep 4", {"learning_rate": 1.0}, None, "failed")]  # fmt: skip


@pytest.fixture
def view(qtbot):
    widget = SweepResults()
    qtbot.addWidget(widget)
    widget.resize(700, 520)
    widget.show()
    qtbot.waitExposed(widget)
    widget.show_results(AXES, ROWS, "b")
    return widget


def test_the_table_lists_every_run_with_the_best_marked(view):
    table = view.table
    assert table.rowCount() == 4 and view.parallel.line_count() == 4
    marks = {table.item(i, 0).data(Qt.ItemDataRole.UserRole): table.item(i, 0).text()
             for i in range(4)}  # fmt: skip
    assert marks == {"a": "", "b": BEST_MARK, "c": "", "d": ""}
    names = [table.item(i, 1).text() for i in range(4)]
    assert "sweep 4 (failed)" in names
    assert view.best_label.text() == "Best: sweep 2 (best val loss 0.2)"
    assert view.apply_button.isEnabled()


def test_sorting_by_the_metric_orders_by_value_missing_last(view):
    view.table.sortItems(3, Qt.SortOrder.AscendingOrder)
    assert view.table_rows_shown() == ["b", "c", "a", "d"]


def test_brushing_filters_the_table(qtbot, view):
    view.parallel.brush("best_val_loss", 0.1, 0.6)
    assert view.table_rows_shown() == ["b", "c"]
    view.parallel.clear_brush()
    assert len(view.table_rows_shown()) == 4


def test_apply_asks_for_the_best_run(qtbot, view):
    with qtbot.waitSignal(view.apply_requested) as signal:
        qtbot.mouseClick(view.apply_button, Qt.MouseButton.LeftButton)
    assert signal.args == ["b"]
    view.show_results(AXES, ROWS[3:], None)
    assert not view.apply_button.isEnabled()
    assert view.best_label.text() == "No run has the metric yet."


def test_the_queue_offers_stop_while_running_and_resume_when_left_unfinished(qtbot, view):
    view.show_queue("Run 1 of 4", running=True)
    view.show_progress(1, 4, 30, 120)
    assert view.stop_button.isVisible() and not view.resume_button.isVisible()
    assert view.queue_label.text() == "Run 2 of 4"
    assert view.step_bar.text() == "step 30 of 120"
    with qtbot.waitSignal(view.stop_requested):
        qtbot.mouseClick(view.stop_button, Qt.MouseButton.LeftButton)
    view.show_queue("Stopped with 2 of 4 runs done.", running=False,
                    resume="Resume (2 of 4 done)")  # fmt: skip
    assert not view.stop_button.isVisible() and view.resume_button.isVisible()
    assert view.resume_button.text() == "Resume (2 of 4 done)"
    with qtbot.waitSignal(view.resume_requested):
        qtbot.mouseClick(view.resume_button, Qt.MouseButton.LeftButton)
