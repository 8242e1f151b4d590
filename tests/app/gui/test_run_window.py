"""Training from the window as a user does it: toolbar clicks, the Run panel, the switch."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLineEdit, QMessageBox, QToolBar

from app.gui.main_window import MainWindow
from app.io.project_file import load_project
from app.resources_path import resource_path
from app.session import PAUSED, READY, RUNNING, STEP_COLUMNS
from tests.app.gui.dialogs import record_dialogs

TIMEOUT = 20_000  # ms
SPIRAL = resource_path("examples", "spiral_mlp.cwproj")
MOONS = resource_path("examples", "moons_bn_dropout.cwproj")


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    win = MainWindow(remember_layout=False)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    yield win
    win.run._stop_and_wait()  # no training thread outlives its test


def click(qtbot, window, name: str) -> None:
    """Click the Run toolbar's button for action `name` as a user would."""
    action = window.run.actions[name]
    assert action.isEnabled(), f"{name} is disabled"
    toolbar = window.findChild(QToolBar, "run_toolbar")
    qtbot.mouseClick(toolbar.widgetForAction(action), Qt.MouseButton.LeftButton)


def open_example(window, qtbot, path=SPIRAL, **training):
    """Open a shipped example as a copy, with settings changed as through the Run panel."""
    assert window.open_example(path)
    for key, value in training.items():
        window.run.panel.setting_changed.emit(key, value)
    qtbot.waitUntil(lambda: window.run.fingerprint() == window.run._fingerprint,
                    timeout=TIMEOUT)  # the session is made for the settings as they now are
    return window.run


def steps_done(run) -> int:
    return run.session.state.step


def drawn_steps(run) -> list[float]:
    """The steps the loss curve shows (what the user sees, read from the plot)."""
    x, _ = run.curves.curves["loss"].getData()
    return [] if x is None else list(x)


def enabled(window) -> set[str]:
    names = ("start", "pause", "resume", "step", "stop")
    return {name for name in names if window.run.actions[name].isEnabled()}


def test_start_pause_step_change_the_learning_rate_and_stop_from_the_toolbar(window, qtbot):
    run = open_example(window, qtbot, epochs=100_000)
    assert enabled(window) == {"start", "step"}
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: run.status == RUNNING and enabled(window) == {"pause", "stop"},
                    timeout=TIMEOUT)
    # The curves fill from the ring buffer, on their own timer.
    qtbot.waitUntil(lambda: len(drawn_steps(run)) > 5, timeout=TIMEOUT)

    click(qtbot, window, "pause")
    qtbot.waitUntil(lambda: run.status == PAUSED and run.bridge.paused.is_set(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: enabled(window) == {"resume", "step", "stop"}, timeout=TIMEOUT)
    paused_at = steps_done(run)
    click(qtbot, window, "step")
    qtbot.waitUntil(lambda: steps_done(run) == paused_at + 1, timeout=TIMEOUT)
    qtbot.wait(300)
    assert steps_done(run) == paused_at + 1 and run.status == PAUSED  # exactly one

    click(qtbot, window, "resume")
    edits = window.undo_stack.count()
    field = run.panel.fields["learning_rate"]
    assert field.isEnabled()  # the one setting open during a run
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, "0.0005")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    rate = STEP_COLUMNS.index("learning_rate")
    qtbot.waitUntil(lambda: run.session.metrics.steps.last()[rate] == pytest.approx(0.0005),
                    timeout=TIMEOUT)
    assert window.undo_stack.count() == edits  # a live change, not an undo step

    click(qtbot, window, "stop")
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: enabled(window) == {"start", "step"}, timeout=TIMEOUT)
    assert window.isWindowModified()  # trained weights are unsaved work
    assert run.progress.bar.format().endswith(f"step {steps_done(run)}")


def test_step_with_no_run_trains_one_batch(window, qtbot):
    run = open_example(window, qtbot)
    click(qtbot, window, "step")
    qtbot.waitUntil(lambda: steps_done(run) == 1 and enabled(window) == {"start", "step"},
                    timeout=TIMEOUT)
    click(qtbot, window, "step")
    qtbot.waitUntil(lambda: steps_done(run) == 2 and enabled(window) == {"start", "step"},
                    timeout=TIMEOUT)


def test_the_train_predict_switch_sets_the_network_mode_and_the_badges(window, qtbot):
    run = open_example(window, qtbot, path=MOONS)
    network = run.session.network
    label = window.findChild(QLabel, "mode_label")
    assert not network.training and label.text() == "Predict"
    bn = network.batchnorm1d1
    dropout_item = window.workbench.editor.scene.nodes[
        window.project.graph.node_named("dropout1").id]
    dense_item = window.workbench.editor.scene.nodes[window.project.graph.node_named("dense1").id]
    assert dropout_item.mode_badge == "predict" and dense_item.mode_badge == ""

    toolbar = window.findChild(QToolBar, "run_toolbar")
    qtbot.mouseClick(toolbar.widgetForAction(run.actions["train_mode"]), Qt.MouseButton.LeftButton)
    assert network.training and bn.training and label.text() == "Train"
    assert dropout_item.mode_badge == "train"
    x = run.session.train_set.x[:16]
    import engine

    before = bn.moving_mean.asnumpy().copy()
    network(engine.Tensor(x))  # train mode: BatchNorm moves its statistics
    assert not np.array_equal(before, bn.moving_mean.asnumpy())

    qtbot.mouseClick(toolbar.widgetForAction(run.actions["predict_mode"]),
                     Qt.MouseButton.LeftButton)
    assert not network.training and label.text() == "Predict"
    before = bn.moving_mean.asnumpy().copy()
    network(engine.Tensor(x))
    np.testing.assert_array_equal(before, bn.moving_mean.asnumpy())

    # A run trains in train mode whatever the switch says, and puts the switch's mode back.
    run.panel.setting_changed.emit("epochs", 100_000)
    qtbot.waitUntil(lambda: run._fingerprint == run.fingerprint(), timeout=TIMEOUT)
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: steps_done(run) > 3, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: label.text().startswith("Train ·"), timeout=TIMEOUT)
    assert dropout_item.mode_badge == "train"  # (the network itself goes to predict mode
    # for a moment at each epoch's validation, so its flag is not asserted mid-run)
    click(qtbot, window, "stop")
    qtbot.waitUntil(lambda: run.status == READY and label.text() == "Predict", timeout=TIMEOUT)
    assert not run.session.network.training and dropout_item.mode_badge == "predict"


def test_a_data_set_with_the_wrong_number_of_features_is_refused(window, qtbot, dialogs):
    run = open_example(window, qtbot, dataset="digits")
    assert run.session is None and "(2,)" in run.problem and "(1, 8, 8)" in run.problem
    click(qtbot, window, "start")
    kind, title, text = dialogs.shown[-1]
    assert title == "Can't start training" and "(2,)" in text and "(1, 8, 8)" in text
    assert "(2,)" in window.statusBar().currentMessage()
    window.undo_stack.undo()  # back to spirals: training works again
    qtbot.waitUntil(lambda: run.session is not None, timeout=TIMEOUT)


def test_a_nan_run_shows_the_error_and_keeps_the_last_good_weights(window, qtbot):
    run = open_example(window, qtbot, path=MOONS, optimizer="SGD", learning_rate=1e30)
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: run.failure_dialog is not None and run.failure_dialog.isVisible(),
                    timeout=TIMEOUT)
    box = run.failure_dialog
    assert "Training stopped at step" in box.text() and "smaller learning rate" in box.text()
    assert "Traceback" in box.detailedText()
    assert run.status == READY and window.run.actions["start"].isEnabled()
    for name, param in run.session.compiled.parameters().items():
        assert np.isfinite(param.asnumpy()).all(), name
    box.close()


def test_an_exception_in_a_layer_stops_the_run_with_the_traceback(window, qtbot):
    run = open_example(window, qtbot, epochs=1000)

    def broken(cell, inputs, output):
        raise RuntimeError("the layer broke")

    run.session.network.dense2.register_forward_hook(broken)
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: run.failure_dialog is not None, timeout=TIMEOUT)
    assert "RuntimeError: the layer broke" in run.failure_dialog.text()
    assert "broken" in run.failure_dialog.detailedText()
    run.failure_dialog.close()
    window.workbench.editor.select_all()  # the window still works
    assert window.run.actions["start"].isEnabled()


def test_structural_edits_wait_for_a_pause_and_are_compiled_on_resume(window, qtbot):
    run = open_example(window, qtbot, epochs=100_000)
    graph = window.project.graph
    dense3, tanh2 = graph.node_named("dense3"), graph.node_named("tanh2")
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: steps_done(run) > 3, timeout=TIMEOUT)
    editor = window.workbench.editor
    editor.scene.select([tanh2.id])
    editor.actions["delete"].trigger()
    assert tanh2.id in graph.nodes  # refused
    assert "pause or stop" in window.statusBar().currentMessage()
    assert not window.undo_action.isEnabled()

    click(qtbot, window, "pause")
    qtbot.waitUntil(lambda: run.status == PAUSED and run.bridge.paused.is_set(), timeout=TIMEOUT)
    step = steps_done(run)
    kept = run.session.network.dense3.weight.asnumpy().copy()
    editor.scene.select([tanh2.id])
    editor.actions["delete"].trigger()  # allowed now; dense2 → dense3 is joined by hand
    assert tanh2.id not in graph.nodes
    dense2 = graph.node_named("dense2")
    editor.connect_ports(dense2.id, "out", dense3.id, "in")
    old = run.session
    click(qtbot, window, "resume")
    qtbot.waitUntil(lambda: run.session is not old and steps_done(run) > step, timeout=TIMEOUT)
    assert not hasattr(run.session.network, "tanh2")
    click(qtbot, window, "pause")
    qtbot.waitUntil(lambda: run.status == PAUSED, timeout=TIMEOUT)
    # dense3 kept its trained weights (it moved on from them by training, not by a restart).
    restarted = np.abs(run.session.network.dense3.weight.asnumpy() - kept).max()
    assert restarted < np.abs(kept).max()
    assert run.session.state.step > step  # the step counter went on


def test_save_during_a_pause_reopen_and_continue(window, qtbot, tmp_path, monkeypatch):
    run = open_example(window, qtbot, epochs=100_000)
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: steps_done(run) > 20, timeout=TIMEOUT)
    click(qtbot, window, "pause")
    qtbot.waitUntil(lambda: run.bridge.paused.is_set(), timeout=TIMEOUT)
    step = steps_done(run)
    rows = len(run.session.metrics.steps)
    path = tmp_path / "spiral.cwproj"
    assert window.save_project(path)
    assert not window.isWindowModified()
    saved = load_project(path)
    assert saved.training["state"]["step"] == step
    click(qtbot, window, "stop")
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)

    assert window.open_project(path)
    qtbot.waitUntil(lambda: run.session is not None, timeout=TIMEOUT)
    assert steps_done(run) == step and len(run.session.metrics.steps) == rows
    qtbot.waitUntil(lambda: drawn_steps(run) and drawn_steps(run)[-1] == step, timeout=TIMEOUT)
    click(qtbot, window, "step")
    qtbot.waitUntil(lambda: steps_done(run) == step + 1, timeout=TIMEOUT)
    assert run.session.metrics.steps.last()[0] == step + 1  # the curve goes on from there


def test_saving_while_running_pauses_for_the_moment_it_takes(window, qtbot, tmp_path):
    run = open_example(window, qtbot, epochs=100_000)
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: steps_done(run) > 10, timeout=TIMEOUT)
    path = tmp_path / "running.cwproj"
    assert window.save_project(path)
    assert load_project(path).training["state"]["step"] > 10
    qtbot.waitUntil(lambda: run.status == RUNNING, timeout=TIMEOUT)  # and on it goes


def test_settings_edits_are_undoable_saved_and_locked_while_running(window, qtbot, tmp_path):
    run = open_example(window, qtbot)
    panel = run.panel
    field = panel.fields["batch_size"]
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, "16") if isinstance(field, QLineEdit) else field.setValue(16)
    if isinstance(field, QLineEdit):
        qtbot.keyClick(field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.project.training["batch_size"] == 16, timeout=TIMEOUT)
    assert window.undo_stack.count() == 1 and window.isWindowModified()
    window.undo_stack.undo()
    assert window.project.training["batch_size"] == 32
    window.undo_stack.redo()
    path = tmp_path / "settings.cwproj"
    assert window.save_project(path)
    assert load_project(path).training["batch_size"] == 16
    panel.setting_changed.emit("epochs", 100_000)
    qtbot.waitUntil(lambda: run._fingerprint == run.fingerprint(), timeout=TIMEOUT)
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: run.status == RUNNING, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not field.isEnabled(), timeout=TIMEOUT)
    assert "locked" in panel.findChild(QLabel, "lock_reason").text()


def test_the_decision_boundary_follows_training(window, qtbot):
    run = open_example(window, qtbot, epochs=100_000)
    boundary = run.boundary
    qtbot.waitUntil(lambda: boundary.field_version > 0, timeout=TIMEOUT)  # before training too
    first = boundary.field_version
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: boundary.field_version >= first + 3, timeout=TIMEOUT)
    assert run.session.snapshot.step > 0  # drawn from weights copied between steps


def test_open_example_opens_an_untitled_copy(window, qtbot, monkeypatch):
    action = window.findChild(type(window.new_action), "example_spiral_mlp_action")
    action.trigger()
    assert window.project_path is None
    asked = []
    monkeypatch.setattr("PySide6.QtWidgets.QFileDialog.getSaveFileName",
                        lambda *a, **k: (asked.append(a) or "", ""))  # fmt: skip
    before = SPIRAL.read_bytes()
    window.save_action.trigger()
    assert asked and SPIRAL.read_bytes() == before  # Save asks where; the example is intact


def test_restart_asks_first_then_trains_again_from_the_same_initial_weights(
        window, qtbot, dialogs):  # fmt: skip
    run = open_example(window, qtbot)
    initial = run.session.network.dense1.weight.asnumpy().copy()
    click(qtbot, window, "step")
    qtbot.waitUntil(lambda: steps_done(run) == 1 and run.status == READY, timeout=TIMEOUT)
    dialogs.answer = QMessageBox.StandardButton.Cancel
    click(qtbot, window, "restart")
    assert dialogs.shown[-1][1] == "Restart from initial weights"
    assert steps_done(run) == 1  # cancelled: nothing changed
    dialogs.answer = QMessageBox.StandardButton.Yes
    run.panel.setting_changed.emit("epochs", 100_000)
    qtbot.waitUntil(lambda: run._fingerprint == run.fingerprint(), timeout=TIMEOUT)
    old = run.session
    click(qtbot, window, "restart")
    qtbot.waitUntil(lambda: run.session is not old and steps_done(run) > 2, timeout=TIMEOUT)
    click(qtbot, window, "pause")
    qtbot.waitUntil(lambda: run.bridge.paused.is_set(), timeout=TIMEOUT)
    history = run.session.metrics.steps.snapshot()
    assert history[0, 0] == 1  # the curves started over with the run
    run.stop()
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)
    fresh = open_example(window, qtbot)  # a new copy: its untrained weights
    np.testing.assert_array_equal(fresh.session.network.dense1.weight.asnumpy(), initial)


def test_the_progress_says_which_numbers_are_which(window, qtbot):
    run = open_example(window, qtbot, epochs=3)
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: run.status == READY and steps_done(run) == 30, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: "Validation after epoch 3" in run.progress.val_numbers.text(),
                    timeout=TIMEOUT)
    assert "(predict mode, whole set)" in run.progress.val_numbers.text()
    train = run.progress.train_numbers.text()
    assert train.startswith("Train-mode loss") and "running mean of this epoch's batches" in train
    assert run.progress.bar.format() == "3 epochs done · step 30"


def test_choosing_another_optimizer_is_one_undo_step(window, qtbot):
    run = open_example(window, qtbot)
    training = window.project.training
    run.panel.setting_changed.emit("optimizer_options", {"weight_decay": 0.01})
    edits = window.undo_stack.count()
    # The panel sends the options the new optimizer keeps, then its name.
    run.panel.setting_changed.emit("optimizer_options", {})
    run.panel.setting_changed.emit("optimizer", "SGD")
    assert training["optimizer"] == "SGD" and training["optimizer_options"] == {}
    assert window.undo_stack.count() == edits + 1
    window.undo_stack.undo()
    assert training["optimizer"] == "Adam" and training["optimizer_options"] == {
        "weight_decay": 0.01}
    window.undo_stack.redo()
    assert training["optimizer"] == "SGD" and training["optimizer_options"] == {}


def test_f5_starts_and_shift_f5_stops_from_the_keyboard(window, qtbot):
    run = open_example(window, qtbot, epochs=100_000)
    view = window.workbench.editor.view
    window.activateWindow()
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: steps_done(run) > 3, timeout=TIMEOUT)
    qtbot.keyClick(view, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)


def test_a_run_counts_as_unsaved_work_and_closing_stops_it(window, qtbot, dialogs, tmp_path):
    run = open_example(window, qtbot, epochs=100_000)
    path = tmp_path / "x.cwproj"
    assert window.save_project(path) and not window.isWindowModified()
    click(qtbot, window, "start")
    qtbot.waitUntil(lambda: steps_done(run) > 3 and window.isWindowModified(), timeout=TIMEOUT)
    assert window.save_project(path)
    assert window.isWindowModified()  # saved, and training on: behind again at once
    session = run.session
    dialogs.answer = QMessageBox.StandardButton.Discard
    window.close()
    assert dialogs.shown[-1][1] == "Unsaved changes"
    assert session.status == READY  # the run ended with the window
