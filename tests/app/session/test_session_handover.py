"""One writer per thing across the thread boundary: the training thread hands its results over
and never touches the project document; a save gets the weights of one step boundary or says
why it can't; the capture counter has one writer."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from app.document import Hook, Project
from app.io.project_file import load_project, save_project
from app.session import HookCaptures, TrainingFinished, TrainingPaused, TrainingSession
from tests.app.session.session_samples import bn_dropout_project, mlp_project, node_named

TIMEOUT = 20.0
WATCHED = ("param_values", "training", "hook_history", "hooks")


class WatchedProject(Project):
    """A Project that notes every use of its document attributes from another thread."""

    touched: list[tuple[str, str]]

    def __getattribute__(self, name: str):
        if name in WATCHED and threading.current_thread() is not threading.main_thread():
            object.__getattribute__(self, "touched").append((name, threading.current_thread().name))
        return super().__getattribute__(name)

    def __setattr__(self, name: str, value) -> None:
        if name in WATCHED and threading.current_thread() is not threading.main_thread():
            self.touched.append((name, threading.current_thread().name))
        super().__setattr__(name, value)


def watched(project: Project) -> Project:
    object.__setattr__(project, "touched", [])
    project.__class__ = WatchedProject
    return project


def wait_for(condition, timeout: float = TIMEOUT) -> None:
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("timed out")


def test_the_training_thread_never_touches_the_project_document():
    project = mlp_project(epochs=10_000)
    hook = Hook("forward", node_named(project, "tanh1").id)
    project.hooks = [hook]
    project = watched(project)
    session = TrainingSession(project)
    paused = threading.Event()
    session.events.subscribe(lambda e: isinstance(e, TrainingPaused) and paused.set())
    session.start()
    wait_for(lambda: session.state.step >= 5)
    session.pause()
    assert paused.wait(TIMEOUT)
    at_pause = session.state.step
    session.resume()
    wait_for(lambda: session.state.step >= at_pause + 5)
    session.stop()
    result = session.wait(TIMEOUT)
    assert isinstance(result, TrainingFinished)
    # The end of the run was applied here, on the main thread, by wait().
    assert project.training["state"]["step"] == result.step
    assert hook.id in project.hook_history
    assert project.touched == []


def test_a_save_in_a_pause_gets_the_weights_of_the_pause_and_the_pause_goes_on():
    project = watched(mlp_project(epochs=10_000))
    session = TrainingSession(project)
    paused = threading.Event()
    session.events.subscribe(lambda e: isinstance(e, TrainingPaused) and paused.set())
    session.start()
    wait_for(lambda: session.state.step >= 5)
    session.pause()
    assert paused.wait(TIMEOUT)
    assert session.fetch(TIMEOUT) is None  # handed over by the paused thread, applied here
    assert session.status == "paused"
    assert project.training["state"]["step"] == session.state.step
    for name, param in session.compiled.parameters().items():  # the thread waits: safe to read
        node_id, local = session.compiled.parameter_owner[name]
        np.testing.assert_array_equal(project.param_values[node_id][local], param.asnumpy())
    session.stop()
    session.wait(TIMEOUT)
    assert project.touched == []


def test_results_wait_for_the_owner_until_it_takes_them():
    project = mlp_project(epochs=1)
    session = TrainingSession(project)
    at_the_end = []
    session.events.subscribe(
        lambda e: isinstance(e, TrainingFinished) and at_the_end.append("state" in project.training)
    )
    session.start()
    assert session._idle.wait(TIMEOUT)
    # The run ended on its thread: nothing of it is in the project until the owner applies it.
    assert at_the_end == [False]
    assert "state" not in project.training and project.param_values == {}
    assert session.apply_results() is not None
    assert project.training["state"]["step"] == session.state.step > 0


def test_a_save_during_a_run_has_the_weights_of_the_step_it_says(tmp_path):
    """Saved mid-run, between two steps: the same as training that many steps and stopping."""
    project = bn_dropout_project(epochs=10_000)  # Dropout: the RNG position counts too
    session = TrainingSession(project)
    session.start()
    wait_for(lambda: session.state.step >= 15)
    assert session.fetch(TIMEOUT) is None
    assert session.status == "running"  # the run went on
    saved_step = project.training["state"]["step"]
    assert saved_step >= 15
    path = tmp_path / "mid_run.cwproj"
    save_project(project, path)
    session.stop()
    session.wait(TIMEOUT)

    alone = TrainingSession(bn_dropout_project(epochs=10_000))
    alone.run(steps=saved_step)
    again = TrainingSession(load_project(path))  # its network holds the saved weights
    assert again.state.step == saved_step
    for name, param in alone.compiled.parameters().items():
        np.testing.assert_array_equal(again.compiled.parameters()[name].asnumpy(), param.asnumpy())
    # ...and training on from the file goes exactly as training on without a save.
    again.run(steps=5)
    alone.run(steps=5)
    for name, param in alone.compiled.parameters().items():
        np.testing.assert_array_equal(again.compiled.parameters()[name].asnumpy(), param.asnumpy())


def test_a_save_that_cannot_reach_a_step_boundary_says_why_and_keeps_the_project():
    project = mlp_project(epochs=10_000)
    session = TrainingSession(project)
    session.run(steps=3)  # the project holds step 3
    held = {k: {n: a.copy() for n, a in v.items()} for k, v in project.param_values.items()}
    stuck, release = threading.Event(), threading.Event()

    def hold(cell, inputs, outputs):  # a step that takes (far) longer than the save waits
        if session.state.step >= 6 and not release.is_set():
            stuck.set()
            release.wait(TIMEOUT)

    session.compiled.cells[node_named(project, "dense1").id].register_forward_hook(hold)
    session.start()
    assert stuck.wait(TIMEOUT)
    problem = session.fetch(0.3)
    assert problem is not None and "did not finish its current step within 0.3 s" in problem
    assert project.training["state"]["step"] == 3  # not some later, unsaid step
    for node_id, arrays in held.items():
        for name, array in arrays.items():
            np.testing.assert_array_equal(project.param_values[node_id][name], array)
    release.set()
    session.stop()
    session.wait(TIMEOUT)
    assert project.training["state"]["step"] == session.state.step > 6


def test_the_capture_counter_is_written_by_the_training_thread_only():
    writers: set[str] = set()

    class Watched(HookCaptures):
        @property
        def _on(self):
            return self.__dict__["on"]

        @_on.setter
        def _on(self, value):
            writers.add(threading.current_thread().name)
            self.__dict__["on"] = value

    project = mlp_project(epochs=10_000)
    session = TrainingSession(project)
    captures = session.captures
    captures.__dict__["on"] = captures.__dict__.pop("_on")
    captures.__class__ = Watched
    session.start()
    wait_for(lambda: session.state.step >= 5)
    hook = Hook("forward", node_named(project, "tanh1").id)
    project.hooks = [hook]
    capture = captures.attach(hook)  # here, on the main thread, while the run goes on
    wait_for(lambda: capture.captured > 3)
    session.stop()
    session.wait(TIMEOUT)
    assert writers == {"cellwright-training"}


def test_fetching_or_applying_from_another_thread_is_refused():
    session = TrainingSession(mlp_project())
    errors = []

    def other():
        for call in (session.fetch, session.apply_results, session.store):
            try:
                call()
            except RuntimeError as exc:
                errors.append(str(exc))

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(TIMEOUT)
    assert len(errors) == 3 and all("the project belongs to it" in e for e in errors)


@pytest.fixture(autouse=True)
def _no_thread_left():
    yield
    for thread in threading.enumerate():
        if thread.name == "cellwright-training":
            thread.join(TIMEOUT)


# ---- in the window: the Parameter view never writes an older snapshot back ---------------


class OlderSnapshot:
    """A weight snapshot from before the project's last hand-over (its values all zeros)."""

    def __init__(self, shapes: dict, step: int, version: int) -> None:
        self.shapes, self.step, self.version, self.requests = shapes, step, version, 0

    def request(self) -> None:
        self.requests += 1

    def values(self, names=None) -> dict:
        return {name: np.zeros_like(array) for name, array in self.shapes.items()
                if names is None or name in names}  # fmt: skip


@pytest.fixture
def window(qtbot, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from tests.app.gui.dialogs import record_dialogs
    from tests.app.gui.window_support import shown_window

    record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)
    yield from shown_window(qtbot)


def test_the_parameter_view_does_not_write_an_older_snapshot_over_handed_over_weights(
    window, qtbot, tmp_path
):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from tests.app.gui.window_support import SPIRAL, open_example
    from tests.widgets.canvas_support import title_point

    run = open_example(window, qtbot, SPIRAL, epochs=100_000)
    editor = window.workbench.editor
    node = window.project.graph.node_named("dense1")
    editor.view.centerOn(editor.scene.nodes[node.id])
    QTest.mouseClick(editor.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=title_point(editor, node.id))  # fmt: skip
    qtbot.waitUntil(lambda: bool(window.parameters._infos), timeout=20_000)
    window.run.start()
    qtbot.waitUntil(lambda: run.session.state.step >= 10, timeout=20_000)
    assert window.save_project(tmp_path / "mid_run.cwproj")
    held = window.project.param_values[node.id]["weight"].copy()
    saved_step = window.project.training["state"]["step"]
    session = run.session
    real = session.snapshot
    older = OlderSnapshot(real.values(), saved_step - 5, real.version + 1)
    session.snapshot = older  # what the views read; the trainer keeps its own
    try:
        window.parameters.refresh(force=True)
    finally:
        session.snapshot = real
    np.testing.assert_array_equal(window.project.param_values[node.id]["weight"], held)
    assert older.requests >= 1  # a newer one was asked for instead
