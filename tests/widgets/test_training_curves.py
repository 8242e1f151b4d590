"""TrainingCurves: draws the ring buffers' rows, redraws only on a new version, polls if shown."""

import time

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.session import EPOCH_COLUMNS, STEP_COLUMNS, EpochMetrics, Metrics
from app.session.history import HISTORY_STEPS
from widgets.plots import TrainingCurves
from widgets.plots.curves import POLL_INTERVAL_MS

pytestmark = pytest.mark.gui

S = {name: i for i, name in enumerate(STEP_COLUMNS)}
E = {name: i for i, name in enumerate(EPOCH_COLUMNS)}


def make_metrics(steps=40, per_epoch=10, accuracy=True, validation=True, **capacity):
    metrics = Metrics(**capacity)
    for step in range(1, steps + 1):
        epoch = (step - 1) // per_epoch + 1
        acc = 0.5 + step / (2 * steps) if accuracy else None
        metrics.add_step(step, epoch, 2.0 / step, acc, 0.1 / epoch)
        if step % per_epoch == 0:
            metrics.add_epoch(EpochMetrics(
                epoch, step, 1.5 / epoch, 0.6 + 0.01 * epoch if accuracy else None,
                1.8 / epoch if validation else None,
                0.55 + 0.01 * epoch if accuracy and validation else None,
            ))  # fmt: skip
    return metrics


@pytest.fixture
def curves(qtbot):
    widget = TrainingCurves()
    qtbot.addWidget(widget)
    widget.resize(1000, 260)
    return widget


def data(curve):
    x, y = curve.getData()
    return (np.empty(0), np.empty(0)) if x is None else (np.asarray(x), np.asarray(y))


def test_a_poll_draws_the_step_rows(curves):
    metrics = make_metrics()
    curves.set_metrics(metrics)
    assert curves.poll()
    rows = metrics.steps.snapshot()
    x, y = data(curves.curves["loss"])
    np.testing.assert_array_equal(x, rows[:, S["step"]])
    np.testing.assert_allclose(y, rows[:, S["loss"]])
    x, y = data(curves.curves["accuracy"])
    np.testing.assert_allclose(y, 100 * rows[:, S["accuracy"]])  # drawn in percent
    x, y = data(curves.curves["learning_rate"])
    np.testing.assert_array_equal(x, rows[:, S["step"]])
    np.testing.assert_allclose(y, rows[:, S["learning_rate"]])


def test_no_redraw_while_the_version_is_unchanged(curves):
    metrics = make_metrics()
    curves.set_metrics(metrics)
    curves.poll()
    assert curves.redraws == 1
    for _ in range(5):
        assert not curves.poll()
    assert curves.redraws == 1


def test_rows_added_after_a_poll_are_drawn_on_the_next(curves):
    metrics = make_metrics(steps=40)
    curves.set_metrics(metrics)
    curves.poll()
    metrics.add_step(41, 5, 0.0123, 0.9, 0.02)
    assert curves.poll()
    assert curves.redraws == 2
    x, y = data(curves.curves["loss"])
    assert len(x) == 41 and x[-1] == 41 and y[-1] == pytest.approx(0.0123)


def test_epoch_points_sit_at_the_step_each_epoch_ended(curves):
    metrics = make_metrics(steps=40, per_epoch=10)
    curves.set_metrics(metrics)
    curves.poll()
    rows = metrics.epochs.snapshot()
    for key, column, scale in (("epoch_loss", "loss", 1), ("val_loss", "val_loss", 1),
                               ("val_accuracy", "val_accuracy", 100)):  # fmt: skip
        x, y = data(curves.curves[key])
        np.testing.assert_array_equal(x, [10, 20, 30, 40])
        np.testing.assert_array_equal(x, rows[:, E["step"]])
        np.testing.assert_allclose(y, scale * rows[:, E[column]])


def test_without_a_validation_split_no_validation_curve(curves):
    curves.set_metrics(make_metrics(validation=False))
    curves.poll()
    assert len(data(curves.curves["val_loss"])[0]) == 0
    assert len(data(curves.curves["epoch_loss"])[0]) == 4


def test_a_regression_shows_a_note_instead_of_accuracy(curves, qtbot):
    curves.show()
    qtbot.waitExposed(curves)
    curves.set_metrics(make_metrics(accuracy=False))
    curves.poll()
    assert not curves.accuracy_shown
    assert curves.no_accuracy_label.isVisible()
    assert "regression" in curves.no_accuracy_label.text()
    assert not curves.accuracy_view.isVisible()
    assert len(data(curves.curves["loss"])[0]) == 40  # the loss is still drawn
    assert len(data(curves.curves["accuracy"])[0]) == 0

    curves.set_metrics(make_metrics(accuracy=True))  # the next session classifies
    curves.poll()
    assert curves.accuracy_shown and curves.accuracy_view.isVisible()


def test_a_long_run_draws_its_first_and_last_steps_exactly_and_a_sample_between(curves):
    metrics = make_metrics(steps=1000, per_epoch=5, history_steps=100)
    curves.set_metrics(metrics)
    curves.poll()
    x, _ = data(curves.curves["loss"])
    assert len(x) == 300 and np.all(np.diff(x) > 0)  # in step order
    np.testing.assert_array_equal(x[:100], np.arange(1, 101))  # the start, every step
    np.testing.assert_array_equal(x[-100:], np.arange(901, 1001))  # the end, every step
    assert len(set(x[100:200]) & set(range(101, 901))) == 100  # a sample of the middle


def test_a_new_session_replaces_the_curves_and_none_clears_them(curves):
    curves.set_metrics(make_metrics(steps=40))
    curves.poll()
    second = make_metrics(steps=7, per_epoch=7)
    curves.set_metrics(second)
    curves.poll()
    np.testing.assert_array_equal(data(curves.curves["loss"])[0], np.arange(1, 8))
    curves.set_metrics(None)
    assert curves.metrics is None
    for curve in curves.curves.values():
        assert len(data(curve)[0]) == 0
    assert curves.values_at(3) == ""
    assert not curves.poll()


def test_the_timer_runs_only_while_the_view_is_shown(curves, qtbot):
    assert curves.timer.interval() == POLL_INTERVAL_MS
    assert not curves.timer.isActive()
    curves.show()
    qtbot.waitExposed(curves)
    assert curves.timer.isActive()
    curves.hide()
    assert not curves.timer.isActive()
    curves.show()
    assert curves.timer.isActive()


def test_hiding_the_parent_dock_stops_the_timer(qtbot):
    dock = QWidget()  # stands in for the QDockWidget (hidden when closed or tabbed away)
    qtbot.addWidget(dock)
    curves = TrainingCurves()
    QVBoxLayout(dock).addWidget(curves)
    dock.show()
    qtbot.waitExposed(dock)
    assert curves.timer.isActive()
    dock.hide()
    assert not curves.timer.isActive()
    dock.show()
    assert curves.timer.isActive()


def test_the_timer_draws_what_the_training_thread_appends(curves, qtbot):
    metrics = make_metrics(steps=10)
    curves.set_metrics(metrics)
    curves.show()
    qtbot.waitExposed(curves)
    assert len(data(curves.curves["loss"])[0]) == 10  # shown: drawn at once, no tick needed
    metrics.add_step(11, 2, 0.5, 0.7, 0.05)
    qtbot.waitUntil(lambda: len(data(curves.curves["loss"])[0]) == 11, timeout=2000)


def test_the_log_scale_toggle_switches_the_loss_axis(curves, qtbot):
    curves.show()
    qtbot.waitExposed(curves)
    toggle = curves.findChild(type(curves.log_scale_toggle), "log_scale_toggle")
    assert toggle is curves.log_scale_toggle and toggle.isCheckable()
    assert not curves.loss_plot.getAxis("left").logMode
    qtbot.mouseClick(toggle, Qt.MouseButton.LeftButton, pos=QPoint(8, toggle.height() // 2))
    assert toggle.isChecked()
    assert curves.loss_plot.getAxis("left").logMode
    assert curves.curves["loss"].opts["logMode"][1]
    assert not curves.accuracy_plot.getAxis("left").logMode  # only the loss
    qtbot.mouseClick(toggle, Qt.MouseButton.LeftButton, pos=QPoint(8, toggle.height() // 2))
    assert not curves.loss_plot.getAxis("left").logMode


def test_values_at_reports_the_nearest_step_and_epoch(curves):
    metrics = Metrics()
    for step, loss in ((100, 0.5), (110, 0.42), (120, 0.35)):
        metrics.add_step(step, 2, loss, 0.875, 0.01)
    metrics.add_epoch(EpochMetrics(1, 100, 0.6, 0.8, 0.41, 0.79))
    metrics.add_epoch(EpochMetrics(2, 200, 0.3, 0.9, 0.38, 0.88))
    curves.set_metrics(metrics)
    curves.poll()
    text = curves.values_at(118.7)
    assert text.startswith("step 120: loss 0.35, accuracy 87.5%, lr 0.01")
    assert "epoch 1 (step 100): loss 0.6, accuracy 80.0%, val loss 0.41, val accuracy 79.0%" in text
    assert curves.values_at(104).startswith("step 100: loss 0.5,")
    assert "epoch 2 (step 200)" in curves.values_at(190)


def test_values_at_leaves_out_what_was_not_measured(curves):
    curves.set_metrics(make_metrics(steps=10, accuracy=False, validation=False))
    curves.poll()
    text = curves.values_at(10)
    assert text.startswith("step 10: loss 0.2, lr 0.1")
    assert "accuracy" not in text and "val" not in text


def test_hovering_a_plot_shows_the_values_under_the_mouse(curves, qtbot):
    curves.set_metrics(make_metrics(steps=40))
    curves.show()
    qtbot.waitExposed(curves)
    qtbot.wait(50)  # let the layout settle: the view range moves while it does
    view = curves.loss_view
    box = curves.loss_plot.getViewBox()
    scene_pos = box.mapViewToScene(QPointF(23.0, 0.5))
    QTest.mouseMove(view.viewport(), view.mapFromScene(scene_pos))
    qtbot.waitUntil(lambda: curves.hover_label.text().startswith("step 23:"), timeout=2000)
    assert curves.hover_label.text() == curves.values_at(23)
    assert all(cursor.isVisible() and cursor.value() == 23 for cursor in curves._cursors)


def test_fifty_thousand_rows_redraw_without_stalling(curves, qtbot, qapp):
    metrics = Metrics()
    steps = np.arange(1, 50_001, dtype=float)
    noise = np.random.default_rng(0).normal(0, 0.05, len(steps)) ** 2
    metrics.steps.extend(np.column_stack(
        (steps, steps // 500 + 1, np.exp(-steps / 1e4) + noise, np.full(len(steps), 0.8),
         np.full(len(steps), 0.01))))  # fmt: skip
    curves.set_metrics(metrics)
    curves.show()
    qtbot.waitExposed(curves)
    qtbot.wait(50)  # the first paint sets the autoscaled view range
    started = time.perf_counter()
    for i in range(10):
        metrics.add_step(50_001 + i, 101, 0.1, 0.8, 0.01)
        assert curves.poll()
        curves.repaint()
        qapp.processEvents()
    per_redraw = (time.perf_counter() - started) / 10
    assert per_redraw < 0.5  # sanity only: ~5 ms here; a stall would be seconds
    x, _ = curves.curves["loss"].getOriginalDataset()
    assert len(x) == 3 * HISTORY_STEPS  # the first and last steps, a sample between
    assert x[0] == 1 and x[-1] == 50_010
    shown, _ = data(curves.curves["loss"])
    assert len(shown) < len(x)  # drawn downsampled to the plot's width


def test_a_new_session_with_no_history_does_not_keep_the_last_step_range(curves):
    curves.set_metrics(make_metrics(steps=800))
    curves.poll()
    assert curves.loss_plot.getViewBox().viewRange()[0][1] >= 800
    curves.set_metrics(Metrics())  # the next project: nothing trained yet
    curves.poll()
    for plot in curves.plots:
        low, high = plot.getViewBox().viewRange()[0]
        assert high < 100, (low, high)
    curves.set_metrics(None)  # or no session at all
    assert curves.loss_plot.getViewBox().viewRange()[0][1] < 100


def test_a_new_session_frames_its_own_history(curves):
    curves.set_metrics(make_metrics(steps=800))
    curves.poll()
    curves.set_metrics(make_metrics(steps=30))
    curves.poll()
    low, high = curves.loss_plot.getViewBox().viewRange()[0]
    assert low < 1 and 30 <= high < 100


def test_a_low_wide_dock_puts_the_plots_in_a_row_and_a_tall_one_stacks_them(curves, qtbot):
    curves.show()
    qtbot.waitExposed(curves)
    curves.resize(1500, 240)
    qtbot.waitUntil(lambda: curves.arrangement == "row")
    loss, accuracy = curves.loss_view.geometry(), curves._accuracy_stack.geometry()
    assert loss.top() == accuracy.top() and loss.right() < accuracy.left()
    curves.resize(520, 340)
    qtbot.waitUntil(lambda: curves.arrangement == "stacked")
    qtbot.wait(20)
    loss, lr = curves.loss_view.geometry(), curves.lr_view.geometry()
    accuracy = curves._accuracy_stack.geometry()
    assert accuracy.bottom() < lr.top() and loss.right() < lr.left()
    assert loss.width() >= 300 and loss.height() >= 180  # the loss reads at a glance


def test_the_hover_line_wraps_instead_of_cutting_the_values(curves, qtbot):
    curves.set_metrics(make_metrics(steps=40))
    curves.show()
    qtbot.waitExposed(curves)
    curves.resize(500, 300)  # the curves' width in the Plots dock at 1280 x 800
    qtbot.wait(20)
    label = curves.hover_label
    label.setText(curves.values_at(23))
    assert label.wordWrap() and "\n" in label.text()  # the epoch on a line of its own
    assert label.heightForWidth(label.width()) <= label.height()
