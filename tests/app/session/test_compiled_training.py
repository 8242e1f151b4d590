"""Training by compiled steps (app.session.compiled_step) gives what the eager steps give:
weights, messages, captures, pauses, rates, clipping, frozen Parameters (issue 32)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np
import pytest

from app.document import Hook
from app.io.project_file import load_project
from app.session import Progress, TrainingFailed, TrainingPaused, TrainingSession, compiled_step
from tests.app.session.session_samples import bn_dropout_project, mlp_project, weights

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"
SLOW_EXAMPLES = sorted(p.stem for p in EXAMPLES.glob("*.cwproj") if p.stem != "spiral_mlp")
TIMEOUT = 30


def session_of(project_or_path, compiled: bool) -> TrainingSession:
    """A session on a fresh copy of the project (a path: loaded), compiled or forced eager."""
    project = (load_project(project_or_path) if isinstance(project_or_path, Path)
               else project_or_path())  # fmt: skip
    before = compiled_step.ENABLED
    compiled_step.ENABLED = compiled
    try:
        session = TrainingSession(project, folder=EXAMPLES)
    finally:
        compiled_step.ENABLED = before
    assert (session._trainer.compiled_step is not None) == compiled
    return session


def plan_steps(session) -> int:
    return session._trainer.compiled_step.plan_steps


def assert_same_weights(eager, compiled) -> None:
    a, b = weights(eager), weights(compiled)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(b[name], a[name], rtol=1e-6, atol=1e-7, err_msg=name)


def losses(session) -> np.ndarray:
    return session.metrics.steps.snapshot()[:, :3]  # step, epoch, loss


def both(project_or_path, drive) -> tuple[TrainingSession, TrainingSession]:
    """The same `drive(session)` on an eager and a compiled session; both end alike."""
    eager, compiled = session_of(project_or_path, False), session_of(project_or_path, True)
    drive(eager)
    drive(compiled)
    assert_same_weights(eager, compiled)
    np.testing.assert_allclose(losses(compiled), losses(eager), rtol=1e-6)
    assert compiled.result.message == eager.result.message
    return eager, compiled


def hundred_steps(session) -> None:
    session.run(steps=100, record=False)


# ---- every example ---------------------------------------------------------------------


def test_the_spiral_example_trains_as_eager_in_100_steps():
    _, compiled = both(EXAMPLES / "spiral_mlp.cwproj", hundred_steps)
    assert plan_steps(compiled) >= 95


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW_EXAMPLES)
def test_every_example_trains_as_eager_in_100_steps(name):
    def small_batches():  # the example's network and data, at a batch of 16 at most
        project = load_project(EXAMPLES / f"{name}.cwproj")
        project.training["batch_size"] = min(project.training.get("batch_size", 32), 16)
        return project

    _, compiled = both(small_batches, hundred_steps)
    assert plan_steps(compiled) >= 95


# ---- failures, pauses, rates ---------------------------------------------------------------


def nan_gradient_at_step_15(session) -> None:
    tanh1 = session.compiled.cells[session.project.graph.node_named("tanh1").id]
    tanh1.register_backward_hook(lambda cell, grad_in, grad_out: (
        (grad_out[0] * np.float32(np.nan),) if session.captures.step == 15 else None))
    session.run(record=False)


def nan_update_at_step_15(session) -> None:
    optimizer = session.optimizer
    update = optimizer._update  # what the eager optimizer and a plan both call

    def spoiled(bucket, grad, lr, step):
        update(bucket, grad, lr, step)
        if step == 15:
            bucket.data[-1] = np.nan

    optimizer.__dict__["_update"] = spoiled
    session.run(record=False)


@pytest.mark.parametrize("project, drive, said", [
    (lambda: mlp_project(loss="MSELoss", learning_rate=10.0, optimizer="SGD", epochs=20),
     None, "the loss became inf"),
    (lambda: bn_dropout_project(learning_rate=1e6, optimizer="Momentum", epochs=20),
     None, "moving_"),
    (lambda: mlp_project(epochs=20), nan_gradient_at_step_15,
     "the gradient of dense1.weight became infinite or NaN"),
    (lambda: mlp_project(epochs=20), nan_update_at_step_15,
     "the update made dense2.bias infinite or NaN"),
], ids=["loss", "moving-statistics", "gradient", "update"])
def test_a_non_finite_step_stops_with_the_eager_message_and_the_weights_kept(project, drive,
                                                                             said):
    eager, compiled = both(project, drive or (lambda session: session.run(record=False)))
    assert isinstance(compiled.result, TrainingFailed) and said in compiled.result.message
    assert compiled.result.step > 2 and plan_steps(compiled) > 0  # the plan took that step
    assert compiled.state.step == eager.state.step == compiled.result.step - 1


@pytest.mark.filterwarnings("ignore:overflow encountered", "ignore:invalid value encountered")
def test_the_first_non_finite_array_is_found_as_one_by_one():
    flat = np.zeros(10, np.float32)
    arrays = [flat[:4].reshape(2, 2), None, flat[4:], np.ones(3)]
    assert compiled_step.first_not_finite(arrays) is None
    flat[:] = 3e38  # the sum overflows, but every number is finite
    assert compiled_step.first_not_finite(arrays) is None
    flat[7] = np.nan
    assert compiled_step.first_not_finite(arrays) == 2
    arrays[0][1, 1] = -np.inf
    assert compiled_step.first_not_finite(arrays) == 0
    assert compiled_step.first_not_finite([np.zeros(2), np.array([1.0, np.inf])]) == 1


def test_a_weight_made_infinite_between_runs_is_found_as_by_the_eager_step():
    def drive(session):
        session.run(steps=20, record=False)
        session.network.dense1.weight.asnumpy()[0, 0] = np.inf
        session.run(steps=20, record=False)

    _, compiled = both(lambda: mlp_project(epochs=20), drive)
    assert compiled.result.step == 21 and "dense" in compiled.result.message


def pause_step_stop_resume(session) -> None:
    """Paused after step 3 on the worker thread, two Steps, a stop, then 10 more steps."""
    reached, paused, go = threading.Event(), threading.Event(), threading.Event()

    def listen(event):
        if isinstance(event, Progress) and event.step == 3:
            reached.set()
            assert go.wait(TIMEOUT)
        if isinstance(event, TrainingPaused):
            paused.set()

    session.events.subscribe(listen)
    session.start(record=False)
    assert reached.wait(TIMEOUT)
    session.pause()
    go.set()
    assert paused.wait(TIMEOUT)
    for _ in range(2):
        session.step()
    for _ in range(TIMEOUT * 100):
        if session.state.step == 5:
            break
        threading.Event().wait(0.01)
    session.stop()
    session.wait(TIMEOUT)
    assert session.state.step == 5
    session.run(steps=10, record=False)


def test_pause_step_stop_and_resume_train_as_eager():
    _, compiled = both(lambda: mlp_project(epochs=50), pause_step_stop_resume)
    assert compiled.state.step == 15 and plan_steps(compiled) >= 12


def change_rate_at_step_12(session) -> None:
    session.events.subscribe(lambda event: session.set_learning_rate(0.2)
                             if isinstance(event, Progress) and event.step == 12 else None)
    session.run(steps=30, record=False)


def test_a_learning_rate_changed_mid_run_is_used_from_the_next_step():
    _, compiled = both(lambda: mlp_project(epochs=50), change_rate_at_step_12)
    rates = compiled.metrics.steps.snapshot()[:, 4]
    assert rates[11] == pytest.approx(0.02) and rates[12] == pytest.approx(0.2)
    unchanged = session_of(lambda: mlp_project(epochs=50), True)
    unchanged.run(steps=30, record=False)
    assert not np.allclose(weights(unchanged)["dense1.weight"], weights(compiled)["dense1.weight"])


@pytest.mark.parametrize("settings", [
    {"lr_schedule": {"kind": "cosine", "warmup_steps": 5}},
    {"grad_clip": {"mode": "norm", "value": 0.05}},
    {"grad_clip": {"mode": "value", "value": 0.01}},
    {"augmentation": {"noise": 0.1}},
], ids=["schedule", "clip-norm", "clip-value", "augmentation"])
def test_schedules_clipping_and_augmentation_train_as_eager(settings):
    _, compiled = both(lambda: mlp_project(epochs=50, **settings),
                       lambda session: session.run(steps=40, record=False))
    assert plan_steps(compiled) >= 35


# ---- hooks, frozen Parameters, the log ---------------------------------------------------


def hooked_mid_run(session) -> list:
    """Ten steps, then an engine hook and two captures on tanh1, ten steps more; what the
    engine hook saw, in order."""
    session.run(steps=10, record=False)
    tanh1 = session.project.graph.node_named("tanh1").id
    seen: list = []
    session.compiled.cells[tanh1].register_forward_hook(
        lambda cell, inputs, output: seen.append(output.asnumpy().copy()))
    session.captures.pace.budget = None  # a capture every step
    for kind in ("forward", "backward"):
        session.captures.attach(Hook(kind, tanh1, id=f"{kind}-hook"))
    session.run(steps=10, record=False)
    session.captures.summarise()
    return seen


def test_a_hook_attached_mid_run_sees_the_eager_values_and_the_plan_follows():
    results = {}
    eager, compiled = both(lambda: mlp_project(epochs=50),
                           lambda session: results.setdefault(id(session),
                                                              hooked_mid_run(session)))
    seen_eager, seen = results[id(eager)], results[id(compiled)]
    assert len(seen) == len(seen_eager) == 11  # steps 11 to 20, and the validation at 20
    for a, b in zip(seen_eager, seen, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    for hook_id in ("forward-hook", "backward-hook"):
        a = eager.captures.captures[hook_id].stats.snapshot()
        b = compiled.captures.captures[hook_id].stats.snapshot()
        assert a[:, 0].tolist() == b[:, 0].tolist() == list(range(11, 21))
        np.testing.assert_allclose(b, a, rtol=1e-5)
    step = compiled._trainer.compiled_step
    assert step.builds >= 2 and plan_steps(compiled) >= 18  # a new plan, hooked Cell eager
    assert any("tanh1 runs eagerly: it has hooks" in note for note in step.notes)


def test_while_a_hook_is_on_an_edge_steps_run_eagerly_with_the_same_captures():
    def drive(session):
        session.run(steps=5, record=False)
        graph = session.project.graph
        edge = graph.edge_into(graph.node_named("dense2").id, "in").id
        session.captures.pace.budget = None
        session.captures.attach(Hook("hook_backward", edge, id="edge-hook"))
        session.run(steps=5, record=False)
        session.captures.summarise()
        rows.append(session.captures.captures["edge-hook"].stats.snapshot())
        session.captures.detach("edge-hook")
        session.run(steps=5, record=False)

    rows: list = []
    _, compiled = both(lambda: mlp_project(epochs=50), drive)
    step = compiled._trainer.compiled_step
    assert step.eager_steps == 6 and step.plan_steps == 9  # the first, and 5 with the hook
    assert rows[0][:, 0].tolist() == rows[1][:, 0].tolist() == [6, 7, 8, 9, 10]
    np.testing.assert_allclose(rows[1], rows[0], rtol=1e-5)


def test_a_frozen_parameter_stays_as_it_was_also_when_frozen_mid_run():
    def drive(session):
        project = session.project
        dense1, dense2 = (project.graph.node_named(n).id for n in ("dense1", "dense2"))
        project.set_frozen(dense1, ["weight"], True)
        session.compiled.apply_frozen(project)
        session.run(steps=10, record=False)
        project.set_frozen(dense2, ["bias"], True)
        session.compiled.apply_frozen(project)
        before = weights(session)
        session.run(steps=10, record=False)
        after = weights(session)
        for name in ("dense1.weight", "dense2.bias"):
            np.testing.assert_array_equal(after[name], before[name])
        assert not np.array_equal(after["dense2.weight"], before["dense2.weight"])

    _, compiled = both(lambda: mlp_project(epochs=50, grad_clip={"mode": "value", "value": 0.1}),
                       drive)
    assert compiled._trainer.compiled_step.builds >= 2 and plan_steps(compiled) >= 17


def test_with_a_frozen_parameter_clipping_by_norm_steps_run_eagerly_as_the_norm_counts_it():
    def drive(session):
        project = session.project
        project.set_frozen(project.graph.node_named("dense1").id, ["weight"], True)
        session.compiled.apply_frozen(project)
        session.run(steps=10, record=False)

    _, compiled = both(lambda: mlp_project(epochs=50, grad_clip={"mode": "norm", "value": 0.1}),
                       drive)
    step = compiled._trainer.compiled_step
    assert step.plan_steps == 0 and step.eager_steps == 10
    assert step.notes == ["Steps run eagerly while a Parameter is frozen and gradients are "
                          "clipped by their global norm."]  # fmt: skip


def test_cells_that_run_eagerly_are_logged_once_per_session(caplog):
    caplog.set_level(logging.INFO, logger=compiled_step.__name__)
    session = session_of(EXAMPLES / "custom_threshold.cwproj", True)
    session.run(steps=60, record=False)
    session.run(steps=60, record=False)
    notes = [r.getMessage() for r in caplog.records if r.name == compiled_step.__name__]
    assert len(notes) == 1 and notes == session._trainer.compiled_step.notes
    assert "customcell1 runs eagerly: no compiled rule for its type" in notes[0]
    assert plan_steps(session) >= 110


def test_a_network_that_does_not_compile_trains_eagerly_and_says_why_once(caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger=compiled_step.__name__)
    monkeypatch.setattr(compiled_step, "compile_step", lambda *args: None)
    monkeypatch.setattr(compiled_step.engine.plan, "last_reason", "no Cell compiles")
    session = session_of(lambda: mlp_project(epochs=50), True)
    session.run(steps=30, record=False)
    step = session._trainer.compiled_step
    assert step.plan_steps == 0 and step.eager_steps == 30 and step.builds == 1
    notes = [r.getMessage() for r in caplog.records if r.name == compiled_step.__name__]
    assert notes == ["The compiled training step is not used (no Cell compiles); steps run "
                     "eagerly."]  # fmt: skip


def test_the_environment_variable_keeps_every_step_eager(monkeypatch):
    monkeypatch.setenv(compiled_step.EAGER_VARIABLE, "1")
    assert not compiled_step.wanted() and compiled_step.wanted(True)
    monkeypatch.setenv(compiled_step.EAGER_VARIABLE, "0")
    assert compiled_step.wanted() and not compiled_step.wanted(False)


def test_captures_on_a_stride_reuse_two_plans_and_see_the_eager_values(monkeypatch):
    def drive(session):
        graph = session.project.graph
        for kind, node in (("forward", "tanh1"), ("backward", "dense1")):
            session.captures.attach(Hook(kind, graph.node_named(node).id, id=f"{kind}-hook"))
        monkeypatch.setattr(session.captures.pace, "step_started", lambda: None)
        session.captures.pace.stride = 8  # hooks on for one step in 8, then off again
        session.run(steps=64, record=False)
        session.captures.summarise()

    eager, compiled = both(lambda: mlp_project(epochs=50), drive)
    step = compiled._trainer.compiled_step
    assert step.builds == 2 and plan_steps(compiled) == 63  # not one build per change
    for hook_id in ("forward-hook", "backward-hook"):
        a = eager.captures.captures[hook_id].stats.snapshot()
        b = compiled.captures.captures[hook_id].stats.snapshot()
        assert a[:, 0].tolist() == b[:, 0].tolist()
        assert len(b) >= 6 and all(step % 8 == 0 for step in b[:, 0])
        np.testing.assert_allclose(b, a, rtol=1e-5)
