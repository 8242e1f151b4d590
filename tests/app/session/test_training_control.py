"""Driving a session from another thread, and every way a run can go wrong."""

import math
import threading

import numpy as np
import pytest

from app.compiler import CompileError
from app.document import Hook
from app.session import (
    STEP_COLUMNS,
    STOPPED,
    Progress,
    TrainingError,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingResumed,
    TrainingSession,
)
from tests.app.session.session_samples import bn_dropout_project, mlp_project, weights

TIMEOUT = 30


class StepGate:
    """Holds the training thread after step `at` until the test lets it go."""

    def __init__(self, session, at: int) -> None:
        self.at = at
        self.reached = threading.Event()
        self.go = threading.Event()
        self.events = []
        session.events.subscribe(self)

    def __call__(self, event) -> None:
        self.events.append(event)
        if isinstance(event, Progress) and event.step == self.at:
            self.reached.set()
            assert self.go.wait(TIMEOUT)


def test_pause_resume_and_stop_from_another_thread():
    session = TrainingSession(mlp_project(epochs=50))
    gate = StepGate(session, at=5)
    session.start()
    assert gate.reached.wait(TIMEOUT)
    assert session.status == "running"
    paused = threading.Event()
    session.events.subscribe(lambda e: isinstance(e, TrainingPaused) and paused.set())
    session.pause()  # asked during step 5: the thread pauses before step 6
    assert session.status == "paused"
    gate.go.set()
    assert paused.wait(TIMEOUT)
    assert session.state.step == 5
    assert session.wait(0.2) is None  # still there, waiting
    assert session.state.step == 5
    session.evaluate()  # allowed while paused: the network is between steps
    session.resume()
    stepping = threading.Event()
    session.events.subscribe(lambda e: isinstance(e, Progress) and e.step >= 8 and stepping.set())
    assert stepping.wait(TIMEOUT)
    session.stop()
    result = session.wait(TIMEOUT)
    assert isinstance(result, TrainingFinished) and result.reason == STOPPED
    assert session.status == "ready"
    kinds = [type(e) for e in gate.events]
    assert kinds.index(TrainingPaused) < kinds.index(TrainingResumed)
    # What was trained is in the project, and training again continues from there.
    assert session.project.training["state"]["step"] == result.step
    assert session.run(steps=1).step == result.step + 1


def test_stop_while_paused_ends_the_run():
    session = TrainingSession(mlp_project(epochs=50))
    gate = StepGate(session, at=2)
    session.start()
    assert gate.reached.wait(TIMEOUT)
    session.pause()
    gate.go.set()
    session.stop()
    result = session.wait(TIMEOUT)
    assert result.reason == STOPPED and result.step == 2


def test_a_learning_rate_change_while_running_takes_effect_at_the_next_step():
    session = TrainingSession(mlp_project(epochs=5, learning_rate=0.02))
    gate = StepGate(session, at=10)
    session.start()
    assert gate.reached.wait(TIMEOUT)
    session.set_learning_rate(0.005)
    gate.go.set()
    result = session.wait(TIMEOUT)
    assert isinstance(result, TrainingFinished)
    steps = session.metrics.steps.snapshot()
    rates = dict(zip(steps[:, 0].astype(int), steps[:, STEP_COLUMNS.index("learning_rate")],
                     strict=True))  # fmt: skip
    assert rates[10] == 0.02 and rates[11] == 0.005 and rates[result.step] == 0.005
    assert session.learning_rate == 0.005
    assert session.project.training["learning_rate"] == 0.005  # kept with the project


def test_starting_twice_is_refused():
    session = TrainingSession(mlp_project(epochs=50))
    gate = StepGate(session, at=1)
    session.start()
    assert gate.reached.wait(TIMEOUT)
    with pytest.raises(TrainingError, match="already running"):
        session.start()
    with pytest.raises(TrainingError, match="already running"):
        session.run()
    with pytest.raises(TrainingError, match="while training runs"):
        session.evaluate()
    session.stop()
    gate.go.set()
    assert session.wait(TIMEOUT).reason == STOPPED


def test_a_huge_learning_rate_stops_at_the_first_bad_step_with_the_last_good_weights():
    session = TrainingSession(bn_dropout_project(optimizer="SGD", learning_rate=1e30))
    kept = {}

    def remember(event):  # after each good step, its weights
        if isinstance(event, Progress):
            kept[event.step] = weights(session)

    session.events.subscribe(remember)
    result = session.run()
    assert isinstance(result, TrainingFailed)
    bad = result.step
    assert bad == session.state.step + 1 and bad >= 2
    assert f"step {bad}" in result.message and "learning rate" in result.message
    assert "inf" in result.message or "nan" in result.message.lower()
    for name, value in weights(session).items():
        assert np.isfinite(value).all(), name
        np.testing.assert_array_equal(value, kept[bad - 1][name], err_msg=name)
    # The project holds those weights, and the progress up to the last good step.
    assert session.project.training["state"]["step"] == bad - 1
    dense = session.project.graph.node_named("dense1").id
    np.testing.assert_array_equal(session.project.param_values[dense]["weight"],
                                  kept[bad - 1]["dense1.weight"])  # fmt: skip


def test_a_nan_loss_from_the_first_step_keeps_the_starting_weights():
    session = TrainingSession(mlp_project())
    start = weights(session)
    session.network.dense1.weight.asnumpy()[0, 0] = np.nan
    start["dense1.weight"][0, 0] = np.nan
    result = session.run()
    assert isinstance(result, TrainingFailed) and result.step == 1
    assert "the loss became nan" in result.message
    for name, value in weights(session).items():
        np.testing.assert_array_equal(value, start[name])


def test_an_exception_in_a_hook_ends_the_run_with_an_error_event():
    session = TrainingSession(bn_dropout_project())
    failures = []
    session.events.subscribe(lambda e: isinstance(e, TrainingFailed) and failures.append(e))

    def broken(cell, inputs, outputs):
        if session.state.step >= 3:
            raise ValueError("the hook is broken")

    session.compiled.cells[session.project.graph.node_named("relu1").id].register_forward_hook(
        broken
    )
    before = {}
    session.events.subscribe(lambda e: isinstance(e, Progress) and before.update(weights(session)))
    session.start()
    result = session.wait(TIMEOUT)
    assert isinstance(result, TrainingFailed) and failures == [result]
    assert result.step == 4 and "the hook is broken" in result.message
    assert "ValueError" in result.details
    for name, value in weights(session).items():  # moving statistics too
        np.testing.assert_array_equal(value, before[name])
    assert session.status == "ready"


def test_even_an_error_outside_the_loop_reaches_the_listeners(monkeypatch):
    session = TrainingSession(mlp_project())
    failures = []
    session.events.subscribe(lambda e: isinstance(e, TrainingFailed) and failures.append(e))

    def broken(*args, **kwargs):
        raise RuntimeError("the trainer is broken")

    monkeypatch.setattr(session._trainer, "run", broken)
    session.start()
    result = session.wait(TIMEOUT)
    assert failures == [result] and "the trainer is broken" in result.message
    assert session.status == "ready"


def test_a_failing_listener_does_not_stop_training(caplog):
    session = TrainingSession(mlp_project(epochs=1))
    session.events.subscribe(lambda e: 1 / 0)
    assert session.run().reason == "completed"
    assert "ZeroDivisionError" in caplog.text  # reported, not swallowed


@pytest.mark.parametrize(
    "change, message",
    [
        ({"dataset": None}, "Choose a data set"),
        ({"dataset": "no such set"}, "no built-in data set"),
        ({"dataset": {"csv": "missing.csv"}}, "missing.csv"),
        ({"dataset": {"builtin": "moons", "csv": "x.csv"}}, "exactly one"),
        ({"learning_rate": -1}, "learning rate"),
        ({"learning_rate": math.inf}, "learning rate"),
        ({"batch_size": 0}, "batch size"),
        ({"epochs": 2.5}, "number of epochs"),
        ({"validation_fraction": 1.0}, "validation fraction"),
        ({"optimizer": "Newton"}, "Unknown optimizer"),
        ({"loss": "HingeLoss"}, "Unknown loss"),
        ({"optimizer": "SGD", "optimizer_options": {"momentum": -1}}, "SGD optimizer"),
        ({"dataset": "sine"}, "Input node input1 takes samples of shape (2,)"),
        ({"dataset": "digits"}, "shape (1, 8, 8)"),
        ({"state": {"step": -4}}, "saved training progress is damaged"),
        ({"state": "garbage"}, "saved training progress is damaged"),
        ({"state": {"rng": {"bit_generator": "MT19937"}}}, "random generator state"),
        ({"state": {"rng": {"bit_generator": "PCG64", "state": 5}}}, "random generator state"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(tmp_path, change, message):
    project = mlp_project()
    project.training.update(change)
    with pytest.raises(TrainingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TrainingSession(project, folder=tmp_path)


def test_a_network_that_does_not_fit_the_data_is_refused():
    too_many = mlp_project(outputs=3)  # a score for a class the data never has
    with pytest.raises(TrainingError, match="exactly 2 values"):
        TrainingSession(too_many)
    regression_loss = mlp_project(inputs=1, dataset="sine")
    with pytest.raises(TrainingError, match="regression"):
        TrainingSession(regression_loss)
    no_loss = mlp_project(loss="none")
    with pytest.raises(TrainingError, match="no loss"):
        TrainingSession(no_loss)


def test_a_graph_that_does_not_compile_raises_compile_error():
    project = mlp_project()
    dense = project.graph.node_named("dense2")
    project.graph.set_param(dense.id, "in_channels", 5)
    with pytest.raises(CompileError, match="dense2"):
        TrainingSession(project)


def test_bad_step_counts_are_refused():
    session = TrainingSession(mlp_project())
    for bad in (0, -1, 1.5, True):
        with pytest.raises(TrainingError):
            session.run(steps=bad)
        with pytest.raises(TrainingError):
            session.run(epochs=bad)
    with pytest.raises(TrainingError):
        session.set_learning_rate(0)
    assert session.status == "ready"


def test_hooks_of_the_project_fill_their_buffers_while_training():
    project = mlp_project(epochs=2)
    graph = project.graph
    dense1, tanh1 = graph.node_named("dense1"), graph.node_named("tanh1")
    edge = graph.edge_into(graph.node_named("dense2").id, "in")
    project.hooks = [
        Hook("forward", dense1.id),
        Hook("forward_pre", tanh1.id, settings={"every": 2}),
        Hook("backward", dense1.id),
        Hook("hook_backward", edge.id),
    ]
    session = TrainingSession(project)
    session.captures.pace.budget = None  # every step, however slow this machine copies
    assert not session.captures.skipped
    captures = [session.captures.captures[h.id] for h in project.hooks]
    versions = [c.version for c in captures]
    result = session.run()
    steps = result.step
    assert [c.captured for c in captures] == [steps, steps // 2, steps, steps]
    # The run's end summarised what no reader had, so the saved histories hold it.
    assert session.captures.summarise() == 0
    assert [len(c.stats) for c in captures] == [steps, steps // 2, steps, steps]
    assert all(c.version > v for c, v in zip(captures, versions, strict=True))
    forward = captures[0]
    assert forward.latest.snapshot().shape == (16, 16)  # the last batch's activations
    stats = forward.stats.snapshot()
    assert (stats[:, 0] == np.arange(1, steps + 1)).all()  # one row per step, numbered
    assert np.isfinite(stats[:, 1:]).all() and (stats[:, 5] > 0).all()
    assert forward.histograms.snapshot()[:, 2:].sum(axis=1).tolist() == [16 * 16] * steps
    assert (captures[3].stats.snapshot()[:, 5] > 0).all()  # gradients flowed on the edge
    session.captures.detach(project.hooks[0].id)
    added = session.captures.attach(Hook("forward", graph.node_named("dense2").id))
    session.run(steps=1)
    session.captures.summarise()
    assert captures[0].captured == steps and captures[0].summarise() == 0
    assert len(captures[0].stats) == steps  # detached: nothing more recorded
    assert len(captures[2].stats) == steps + 1 and len(added.stats) == 1
    session.captures.remove()
    session.run(steps=1)
    assert captures[2].summarise() == 0
    assert len(captures[2].stats) == steps + 1 and not session.captures.captures


def test_a_hook_on_a_node_without_a_cell_is_skipped_with_the_reason():
    project = mlp_project()
    project.hooks = [Hook("forward", project.graph.node_named("input1").id)]
    session = TrainingSession(project)
    assert session.captures.skipped == {project.hooks[0].id: "the node has no Cell to hook"}
    assert session.run(steps=2).step == 2
