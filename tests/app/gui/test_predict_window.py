"""The Predict dock in the window: rows, both modes, a click on the decision boundary, a run."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QMessageBox

from app.session import PAUSED, RUNNING
from app.session.predict import probabilities_of
from app.undo.commands import ParamValuesCommand, perform
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import DIGITS, MOONS, TIMEOUT, shown_window
from tests.app.gui.window_support import open_example as open_window_example
from widgets.predict_panel import POINT, VALIDATION_ROWS


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def open_example(window, qtbot, path=MOONS, **training):
    open_window_example(window, qtbot, path, **training)
    predict = window.predict
    qtbot.waitUntil(lambda: predict.predictor is not None
                    and predict.predictor.session is window.run.session, timeout=TIMEOUT)
    predict.dock.raise_()
    qtbot.waitUntil(lambda: predict.in_view, timeout=TIMEOUT)
    return predict


def choose_row(qtbot, panel, source: str, row: int) -> None:
    panel.set_source(source)
    panel.row_box.setFocus()
    panel.row_box.selectAll()
    qtbot.keyClicks(panel.row_box, str(row))
    qtbot.keyClick(panel.row_box, Qt.Key.Key_Return)


def test_the_dock_sits_beside_the_run_panel(window):
    dock = window.predict.dock
    assert dock.objectName() == "predict_dock" and dock.widget() is window.predict.panel
    assert dock in window.tabifiedDockWidgets(window.run_dock)


def test_a_validation_row_gives_what_session_predict_gives(window, qtbot):
    predict = open_example(window, qtbot)
    session, panel = window.run.session, predict.panel
    choose_row(qtbot, panel, VALIDATION_ROWS, 3)
    assert (panel.source, panel.row) == (VALIDATION_ROWS, 3)
    shown = panel.outputs["predict"].prediction
    wanted = session.predict(session.val_set.x[3][None])[0]
    np.testing.assert_array_equal(shown.output, wanted)
    probabilities, _ = probabilities_of(wanted, session.targets.loss_name)
    np.testing.assert_allclose(panel.outputs["predict"].heights(), probabilities)
    label = session.dataset.class_names[session.val_set.y[3]]
    assert panel.input_label.text().startswith(f"Label: {label}")


def test_both_modes_shows_two_results_that_differ(window, qtbot):
    predict = open_example(window, qtbot)
    panel = predict.panel
    choose_row(qtbot, panel, VALIDATION_ROWS, 3)
    panel.both_box.click()
    predicted, trained = (panel.outputs[m].prediction for m in ("predict", "train"))
    assert panel.outputs["train"].isVisible() and trained is not None
    assert not np.allclose(predicted.output, trained.output)  # BatchNorm and Dropout
    first = panel.outputs["train"].heights()
    panel.row_box.setValue(4)
    panel.row_box.setValue(3)
    np.testing.assert_array_equal(panel.outputs["train"].heights(), first)  # a fixed seed
    assert "batch of 32" in panel.outputs["train"].title.text()


def test_a_click_on_the_decision_boundary_makes_that_point_the_input(window, qtbot):
    predict = open_example(window, qtbot)
    boundary = window.run.boundary
    qtbot.waitUntil(lambda: boundary.field_version > 0, timeout=TIMEOUT)
    view_box = boundary.plot.getViewBox()
    target = QPointF(0.5, 0.25)
    where = boundary.plot_view.mapFromScene(view_box.mapViewToScene(target))
    qtbot.mouseClick(boundary.plot_view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    panel = predict.panel
    qtbot.waitUntil(lambda: panel.source == POINT, timeout=TIMEOUT)
    x, y = panel.point
    pixel = (view_box.viewPixelSize()[0], view_box.viewPixelSize()[1])
    assert abs(x - 0.5) <= 1.5 * pixel[0] and abs(y - 0.25) <= 1.5 * pixel[1]
    shown = panel.outputs["predict"].prediction
    wanted = window.run.session.predict(np.array([[x, y]], dtype=np.float32))[0]
    np.testing.assert_array_equal(shown.output, wanted)
    assert window.boundary.marker.isVisible()
    marked = window.boundary.marker.getData()
    assert (marked[0][0], marked[1][0]) == pytest.approx((x, y))
    assert "Predict: (" in window.statusBar().currentMessage()
    panel.set_source(VALIDATION_ROWS)
    assert not window.boundary.marker.isVisible()


def test_while_training_it_follows_the_snapshot_and_train_mode_waits_for_a_pause(window, qtbot):
    predict = open_example(window, qtbot, epochs=100_000)
    panel, run = predict.panel, window.run
    choose_row(qtbot, panel, VALIDATION_ROWS, 3)
    panel.both_box.click()
    run.start()
    qtbot.waitUntil(lambda: run.status == RUNNING, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: panel.outputs["predict"].prediction is not None
                    and panel.outputs["predict"].prediction.step > 0, timeout=TIMEOUT)
    first = panel.outputs["predict"].prediction.step
    qtbot.waitUntil(lambda: panel.outputs["predict"].prediction.step > first, timeout=TIMEOUT)
    assert panel.outputs["train"].note_shown
    assert "paused or stopped" in panel.outputs["train"].note.text()
    run.pause()
    qtbot.waitUntil(lambda: run.status == PAUSED and not panel.outputs["train"].note_shown,
                    timeout=TIMEOUT)  # fmt: skip
    session = run.session
    qtbot.waitUntil(lambda: panel.outputs["predict"].prediction.step == session.state.step,
                    timeout=TIMEOUT)  # fmt: skip
    np.testing.assert_array_equal(panel.outputs["predict"].prediction.output,
                                  session.predict(session.val_set.x[3][None])[0])  # fmt: skip


def test_out_of_view_it_rests_during_a_run_and_catches_up_when_shown(window, qtbot):
    predict = open_example(window, qtbot, epochs=100_000)
    panel, run = predict.panel, window.run
    window.run_dock.raise_()  # the Predict tab goes behind the Run tab
    qtbot.waitUntil(lambda: not predict.in_view, timeout=TIMEOUT)
    run.start()
    qtbot.waitUntil(lambda: run.status == RUNNING and run.session.state.step > 20,
                    timeout=TIMEOUT)  # fmt: skip
    assert not predict._timer.isActive()
    assert panel.outputs["predict"].prediction.step == 0  # as shown before the run
    predict.dock.raise_()
    qtbot.waitUntil(lambda: panel.outputs["predict"].prediction.step > 0, timeout=TIMEOUT)
    assert predict._timer.isActive()


def test_an_edit_of_the_weights_is_predicted_with(window, qtbot):
    predict = open_example(window, qtbot)
    panel, session = predict.panel, window.run.session
    choose_row(qtbot, panel, VALIDATION_ROWS, 3)
    before = panel.outputs["predict"].prediction.output.copy()
    project = window.project
    node = project.graph.node_named("dense3").id
    bias = np.array([5.0, -5.0], dtype=np.float32)
    command = ParamValuesCommand(project, node, "bias", [((Ellipsis,), bias)], "Edit bias")
    assert perform(window.undo_stack, command) is None
    qtbot.waitUntil(lambda: not np.array_equal(panel.outputs["predict"].prediction.output,
                                               before), timeout=TIMEOUT)  # fmt: skip
    wanted = session.predict(session.val_set.x[3][None])[0]
    np.testing.assert_array_equal(panel.outputs["predict"].prediction.output, wanted)
    assert panel.outputs["predict"].prediction.predicted == 0  # the bias decides now


def test_digits_show_the_image_and_ten_bars(window, qtbot):
    predict = open_example(window, qtbot, path=DIGITS)
    panel = predict.panel
    choose_row(qtbot, panel, VALIDATION_ROWS, 3)
    assert panel.image_label.isVisible() and not panel.image_label.pixmap().isNull()
    assert len(panel.outputs["predict"].heights()) == 10
    point = panel.source_box.model().item(panel.source_box.findData(POINT))
    assert not point.isEnabled()


def test_a_failure_is_a_message_not_a_crash(window, qtbot, monkeypatch):
    predict = open_example(window, qtbot)

    def broken(x):
        raise RuntimeError("the network fell over")

    monkeypatch.setattr(predict.predictor, "predict", broken)
    predict.panel.row_box.setValue(5)
    assert "the network fell over" in predict.panel.message_shown
    assert "the network fell over" in window.statusBar().currentMessage()


def test_no_session_says_why(window, qtbot):
    predict = open_example(window, qtbot, path=DIGITS)
    window.run.panel.setting_changed.emit("dataset", "moons")  # a CNN on 2-D points
    qtbot.waitUntil(lambda: window.run.session is None and bool(window.run.problem),
                    timeout=TIMEOUT)
    assert predict.predictor is None
    qtbot.waitUntil(lambda: predict.panel.message_shown == window.run.problem, timeout=TIMEOUT)
