"""What the window refuses, and what it never hides: an output that does not fit the classes is
refused at Start with the reason; a graph that can't be built (a stray node, code not run)
refuses training and prediction but keeps the curves, the boundary and the step trained to
in view; a save that can't take a run's weights says why and writes nothing."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.io.project_file import load_project, save_project
from app.resources_path import resource_path
from app.session import READY, RUNNING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import (
    MOONS,
    SPIRAL,
    TIMEOUT,
    open_example,
    select_node,
    shown_window,
    type_into_inspector,
)

CTRL = Qt.KeyboardModifier.ControlModifier
CUSTOM = resource_path("examples", "custom_threshold.cwproj")


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)






def press(window, qtbot, key, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press on the canvas, as a user at the keyboard makes it."""
    view = window.workbench.editor.view
    window.activateWindow()
    view.setFocus()
    qtbot.keyClick(view, key, modifiers)


def train_a_little(window, qtbot, steps: int = 25) -> int:
    run = window.run
    press(window, qtbot, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: run.session is not None and run.session.state.step >= steps,
                    timeout=TIMEOUT)  # fmt: skip
    press(window, qtbot, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window.project.training.get("state", {}).get("step")
                    == run.session.state.step, timeout=TIMEOUT)  # fmt: skip
    return run.session.state.step


def curve_steps(run) -> list[float]:
    x, _ = run.curves.curves["loss"].getData()
    return [] if x is None else list(x)


def refusals(dialogs) -> list[tuple[str, str, str]]:
    return [shown for shown in dialogs.shown if shown[0] == "warning"]


# ---- the output's width against the classes ------------------------------------------------


def test_an_output_wider_than_the_classes_is_refused_at_start_with_the_reason(
        window, qtbot, dialogs):  # fmt: skip
    run = open_example(window, qtbot, MOONS)
    select_node(window, qtbot, "dense3")
    type_into_inspector(window, qtbot, "out_channels", "8")
    assert window.project.graph.node_named("dense3").params["out_channels"] == 8
    qtbot.waitUntil(lambda: run.session is None and run.problem is not None, timeout=TIMEOUT)
    press(window, qtbot, Qt.Key.Key_F5)
    shown = refusals(dialogs)
    assert len(shown) == 1 and shown[0][1] == "Can't start training"
    reason = shown[0][2]
    assert "(8,)" in reason and "2 classes" in reason and "exactly 2 values" in reason
    assert reason in run.progress.status.text()  # said in the Run dock too
    qtbot.wait(300)
    assert run.session is None and run.status == READY  # nothing trains
    assert "state" not in window.project.training
    # Back to 2: it trains.
    window.undo_stack.undo()
    qtbot.waitUntil(lambda: run.session is not None, timeout=TIMEOUT)
    press(window, qtbot, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: run.status == RUNNING or run.session.state.step > 0,
                    timeout=TIMEOUT)  # fmt: skip


# ---- an invalid graph hides no history ------------------------------------------------------


def test_a_stray_node_keeps_curves_boundary_and_step_in_view_and_refuses_start(
        window, qtbot, dialogs):  # fmt: skip
    run = open_example(window, qtbot, SPIRAL, epochs=100_000)
    step = train_a_little(window, qtbot)
    boundary = run.boundary
    qtbot.waitUntil(lambda: boundary.extent is not None and not boundary.message_shown,
                    timeout=TIMEOUT)  # fmt: skip
    qtbot.waitUntil(lambda: len(curve_steps(run)) > 0 and curve_steps(run)[-1] == step,
                    timeout=TIMEOUT)  # fmt: skip
    drawn = curve_steps(run)
    trained = run.progress.bar.format()
    assert f"step {step}" in trained

    select_node(window, qtbot, "dense2")  # a copy pasted on its own: connected to nothing
    press(window, qtbot, Qt.Key.Key_C, CTRL)
    press(window, qtbot, Qt.Key.Key_V, CTRL)
    assert len(window.project.graph.nodes) == 8
    qtbot.waitUntil(lambda: run.session is None and run.problem is not None, timeout=TIMEOUT)
    qtbot.wait(300)  # the views have had their ticks

    assert curve_steps(run) == drawn  # the curves keep their data
    assert not boundary.message_shown and boundary.extent is not None  # the boundary shows
    assert run.progress.bar.format() == trained  # "… done · step N"
    assert "not connected" in run.progress.status.text()
    press(window, qtbot, Qt.Key.Key_F5)
    shown = refusals(dialogs)
    assert len(shown) == 1 and "not connected" in shown[0][2]
    assert window.project.training["state"]["step"] == step  # nothing trained
    # Prediction is refused with the reason too.
    assert "not connected" in window.predict.panel.message_label.text()


def test_code_not_run_keeps_the_step_trained_to_and_the_curves(window, qtbot, tmp_path,
                                                               dialogs):  # fmt: skip
    from app.catalogue.custom_cells import READY_MADE
    from app.session import TrainingSession

    project = load_project(CUSTOM)  # ready-made code: it may run here
    session = TrainingSession(project, folder=CUSTOM.parent)
    session.run(steps=40)
    code = READY_MADE["Threshold"] + f"\n# {tmp_path.name}: code of this file only\n"
    for node in project.graph.nodes.values():
        if node.type == "CustomCell":
            project.graph.set_params(node.id, {"code": code})
    path = tmp_path / "trained_custom.cwproj"
    save_project(project, path)

    window.custom_cells._ask_trust = lambda codes: False  # "Don't Run"
    assert window.open_project(path, interactive=False)
    run = window.run
    qtbot.waitUntil(lambda: run.problem is not None, timeout=TIMEOUT)
    assert run.session is None
    assert "Not trained yet" not in run.progress.bar.format()
    assert "step 40" in run.progress.bar.format()
    qtbot.waitUntil(lambda: len(curve_steps(run)) == 40, timeout=TIMEOUT)
    press(window, qtbot, Qt.Key.Key_F5)
    shown = refusals(dialogs)
    assert len(shown) == 1 and "Not run" in shown[0][2]


# ---- a save that can't take the run's weights ---------------------------------------------


def test_a_save_that_cannot_take_the_runs_weights_says_why_and_writes_nothing(
        window, qtbot, tmp_path, monkeypatch, dialogs):  # fmt: skip
    import app.gui.run as run_module

    monkeypatch.setattr(run_module, "WAIT_SECONDS", 0.5)
    run = open_example(window, qtbot, SPIRAL, epochs=100_000)
    session = run.session
    stuck, release = threading.Event(), threading.Event()

    def hold(cell, inputs, outputs):  # one step that takes longer than a save waits
        if session.state.step >= 10 and not release.is_set():
            stuck.set()
            release.wait(TIMEOUT / 1000)

    dense = session.compiled.cells[window.project.graph.node_named("dense1").id]
    dense.register_forward_hook(hold)
    press(window, qtbot, Qt.Key.Key_F5)
    qtbot.waitUntil(stuck.is_set, timeout=TIMEOUT)
    path = tmp_path / "never.cwproj"
    try:
        assert not window.save_project(path)
    finally:
        release.set()
    assert not path.exists()  # no file with weights of some other step
    errors = [shown for shown in dialogs.shown if shown[0] == "critical"]
    assert len(errors) == 1 and "did not finish its current step" in errors[0][2]
    assert "Nothing was saved" in errors[0][2]
    assert window.isWindowModified()
    # Once the step is done, a save takes the weights of the step it says.
    assert window.save_project(path)
    saved = load_project(path)
    assert saved.training["state"]["step"] >= 10



def test_a_refusal_on_the_status_line_carries_the_whole_reason(window, qtbot, dialogs):
    """The status line said only "Can't start training: The network can't be built:" (the
    reason's first line), then cut by the width: it now holds every line of the reason, and
    its tooltip the whole message."""
    run = open_example(window, qtbot, SPIRAL)
    window.resize(900, 700)
    select_node(window, qtbot, "dense2")  # a copy pasted on its own: connected to nothing
    press(window, qtbot, Qt.Key.Key_C, CTRL)
    press(window, qtbot, Qt.Key.Key_V, CTRL)
    qtbot.waitUntil(lambda: run.problem is not None, timeout=TIMEOUT)
    press(window, qtbot, Qt.Key.Key_F5)
    bar = window.statusBar()
    reason = [line for line in run.problem.splitlines() if line.strip()][-1].strip()
    assert "not connected" in reason
    assert reason in bar.currentMessage()
    assert bar.toolTip() == bar.currentMessage()
