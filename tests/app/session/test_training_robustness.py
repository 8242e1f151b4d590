"""A run that goes wrong still ends cleanly: nothing non-finite is kept, and every ending is
stored and reported — also Ctrl+C and sys.exit() (issue 13, defects 7 and 10)."""

import numpy as np
import pytest

from app.io.project_file import load_project
from app.resources_path import resource_path
from app.session import (
    STOPPED,
    Progress,
    TrainingFailed,
    TrainingFinished,
    TrainingSession,
)
from tests.app.session.session_samples import bn_dropout_project, weights

TIMEOUT = 30


class Recorder:
    """The ending events a session emitted, and the weights after each good step."""

    def __init__(self, session) -> None:
        self.session = session
        self.endings = []
        self.kept = {session.state.step: weights(session)}
        session.events.subscribe(self)

    def __call__(self, event) -> None:
        if isinstance(event, Progress):
            self.kept[event.step] = weights(self.session)
        elif isinstance(event, TrainingFinished | TrainingFailed):
            self.endings.append(event)


def assert_kept(session, step: int, kept: dict) -> None:
    """The network and the project hold the weights after `step`, and the progress says so."""
    for name, value in weights(session).items():  # moving statistics too
        np.testing.assert_array_equal(value, kept[step][name], err_msg=name)
    assert session.state.step == step
    assert session.project.training["state"]["step"] == step
    owner = session.compiled.parameter_owner
    for name, value in kept[step].items():
        node_id, local = owner[name]
        np.testing.assert_array_equal(session.project.param_values[node_id][local], value,
                                      err_msg=name)  # fmt: skip
    assert session.status == "ready"


def hook_raising(session, node: str, exc: BaseException, at_step: int) -> None:
    """A forward hook on `node` that raises `exc` during step `at_step`."""

    def hook(cell, inputs, outputs):
        if session.captures.step == at_step:
            raise exc

    cell = session.compiled.cells[session.project.graph.node_named(node).id]
    cell.register_forward_hook(hook)


# ---- defect 7: what a step changes beside the optimizer's Parameters ----------------------


@pytest.mark.parametrize("optimizer", ["SGD", "Momentum"])
def test_infinite_moving_statistics_stop_the_run_and_are_not_kept(optimizer):
    project = load_project(resource_path("examples", "moons_bn_dropout.cwproj"))
    project.training.update(optimizer=optimizer, learning_rate=1e6)
    session = TrainingSession(project)
    recorder = Recorder(session)
    result = session.run()
    assert isinstance(result, TrainingFailed) and recorder.endings == [result]
    bad = result.step
    assert f"step {bad}" in result.message and "learning rate" in result.message
    assert "moving_variance" in result.message or "moving_mean" in result.message
    assert f"weights from before step {bad} were kept" in result.message
    assert_kept(session, bad - 1, recorder.kept)
    for values in session.project.param_values.values():
        for name, value in values.items():
            assert np.isfinite(value).all(), name


def test_a_moving_statistic_infinite_from_the_start_is_named_as_such():
    session = TrainingSession(bn_dropout_project())
    recorder = Recorder(session)
    session.network.batchnorm1d1.moving_variance.asnumpy()[3] = np.inf
    recorder.kept[0] = weights(session)
    result = session.run()
    assert isinstance(result, TrainingFailed) and result.step == 1
    assert "batchnorm1d1.moving_variance is infinite or NaN (it was so before" in result.message
    for name, value in weights(session).items():
        np.testing.assert_array_equal(value, recorder.kept[0][name], err_msg=name)


def test_only_what_the_optimizer_does_not_hold_is_checked_again():
    session = TrainingSession(bn_dropout_project())
    checked = [param.name for param, _ in session._trainer._untrainable]
    assert checked == ["batchnorm1d1.moving_mean", "batchnorm1d1.moving_variance"]


# ---- defect 10: SystemExit and KeyboardInterrupt end the run like any other ending ------


def test_sys_exit_in_a_hook_on_the_worker_thread_fails_the_run_and_stores_it():
    session = TrainingSession(bn_dropout_project())
    recorder = Recorder(session)
    hook_raising(session, "relu1", SystemExit(3), at_step=4)
    session.start()
    result = session.wait(TIMEOUT)
    assert isinstance(result, TrainingFailed) and recorder.endings == [result]
    assert result.step == 4 and "SystemExit: 3" in result.message
    assert "weights from before step 4 were kept" in result.message
    assert isinstance(result.error, SystemExit) and "SystemExit" in result.details
    assert_kept(session, 3, recorder.kept)
    # The session is whole: it runs again (and the hook raises again at step 4).
    session.start(steps=1)
    assert isinstance(session.wait(TIMEOUT), TrainingFailed) and len(recorder.endings) == 2
    assert session.state.step == 3 and session.status == "ready"


def test_sys_exit_in_a_hook_in_the_callers_thread_is_stored_reported_and_raised_again():
    session = TrainingSession(bn_dropout_project())
    recorder = Recorder(session)
    hook_raising(session, "dense2", SystemExit("bye"), at_step=6)
    with pytest.raises(SystemExit, match="bye"):
        session.run()
    assert len(recorder.endings) == 1 and session.result is recorder.endings[0]
    assert isinstance(session.result, TrainingFailed) and session.result.step == 6
    assert "SystemExit: bye" in session.result.message
    assert_kept(session, 5, recorder.kept)


def test_ctrl_c_during_a_step_in_run_stops_keeps_the_last_step_and_is_raised_again():
    session = TrainingSession(bn_dropout_project())
    recorder = Recorder(session)
    hook_raising(session, "batchnorm1d1", KeyboardInterrupt(), at_step=7)
    with pytest.raises(KeyboardInterrupt):
        session.run()
    result = session.result
    assert isinstance(result, TrainingFinished) and recorder.endings == [result]
    assert result.reason == STOPPED and result.step == 6
    assert "interrupt" in result.message and "step 6" in result.message
    assert_kept(session, 6, recorder.kept)  # step 7 undone, moving statistics too


def test_ctrl_c_between_steps_in_run_keeps_every_step_done():
    session = TrainingSession(bn_dropout_project())
    recorder = Recorder(session)

    def interrupt(event):
        if isinstance(event, Progress) and event.step == 9:
            raise KeyboardInterrupt

    session.events.subscribe(interrupt)
    with pytest.raises(KeyboardInterrupt):
        session.run()
    assert recorder.endings == [session.result] and session.result.reason == STOPPED
    assert_kept(session, 9, recorder.kept)
    # Stored like any stop: a new session on the project continues from step 9.
    again = TrainingSession(session.project)
    assert again.state.step == 9
    assert again.run(steps=2).step == 11


def test_ctrl_c_while_the_run_is_stored_stores_it_still(monkeypatch):
    session = TrainingSession(bn_dropout_project())
    recorder = Recorder(session)
    hand_over, calls = session._hand_over_from_run, []

    def interrupted_hand_over():
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        hand_over()

    monkeypatch.setattr(session, "_hand_over_from_run", interrupted_hand_over)
    with pytest.raises(KeyboardInterrupt):
        session.run(steps=4)
    assert len(calls) == 2 and recorder.endings == [session.result]
    assert_kept(session, 4, recorder.kept)


def test_ctrl_c_while_a_failure_is_looked_into_still_ends_and_stores_the_run():
    session = TrainingSession(bn_dropout_project(optimizer="SGD", learning_rate=1e30))
    recorder = Recorder(session)

    def interrupt(cell, inputs, outputs):  # in the failing batch's second look (no captures)
        if not session.captures.enabled and session.state.tally.count:
            raise KeyboardInterrupt

    session.compiled.cells[session.project.graph.node_named("dense2").id].register_forward_hook(
        interrupt
    )
    with pytest.raises(KeyboardInterrupt):
        session.run(epochs=1)
    assert recorder.endings == [session.result] and session.result.reason == STOPPED
    assert_kept(session, session.result.step, recorder.kept)


def test_a_failed_store_is_the_result_the_listeners_and_wait_see(monkeypatch):
    session = TrainingSession(bn_dropout_project())
    recorder = Recorder(session)

    def broken():
        raise OSError("disk full")

    monkeypatch.setattr(session, "_hand_over_from_run", broken)
    session.start(steps=2)
    result = session.wait(TIMEOUT)
    assert isinstance(result, TrainingFailed) and "disk full" in result.message
    assert recorder.endings == [result]

