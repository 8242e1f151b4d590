"""Learning-rate schedules and gradient clipping in training: the settings and their refusals,
the rate of every step (warmup then cosine, …), clipping before each update, and the weights
after N steps against the same training written in torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from app.datasets import Dataset
from app.io.project_file import load_project, save_project
from app.session import STEP_COLUMNS, TrainingError, TrainingSession, TrainingSettings
from app.session.run_control import RunControl
from app.session.settings import (
    RateSchedule,
    check_grad_clip,
    check_lr_schedule,
    make_optimizer,
    plan_for,
    steps_per_epoch,
)
from app.session.trainer import Trainer
from engine import Parameter
from tests.app.session.session_samples import mlp_project

RATE = STEP_COLUMNS.index("learning_rate")


# ----------------------------------------------------------------------------- settings


def test_a_project_from_before_trains_with_a_constant_rate_and_no_clipping():
    settings = TrainingSettings.from_project({"dataset": "spirals", "learning_rate": 0.1})
    assert settings.schedule().constant
    assert settings.clipping() == ("none", 1.0)
    assert np.all(settings.schedule().rates(0.1, 7) == 0.1)


def test_a_schedule_gets_its_kinds_defaults():
    spec = check_lr_schedule({"kind": "exponential"})
    assert spec == {"kind": "exponential", "decay_rate": 0.9, "decay_epochs": 1, "stair": False,
                    "warmup_steps": 0}  # fmt: skip
    assert check_grad_clip({"mode": "norm"}) == {"mode": "norm", "value": 1.0}


DAMAGED = [
    ({"lr_schedule": "cosine"}, "must be an object"),
    ({"lr_schedule": {"kind": "linear"}}, "constant, step, exponential, cosine, not 'linear'"),
    ({"lr_schedule": {"kind": "cosine", "min_factor": 1.0}}, "at least 0 and below 1"),
    ({"lr_schedule": {"kind": "cosine", "warmup_steps": -2}}, "warmup steps"),
    ({"lr_schedule": {"kind": "cosine", "warmup_steps": 2.5}}, "whole number"),
    ({"lr_schedule": {"kind": "step", "factor": 2}}, "factor must be above 0 and at most 1"),
    ({"lr_schedule": {"kind": "step", "step_epochs": 0}}, "step epochs"),
    ({"lr_schedule": {"kind": "exponential", "stair": "yes"}}, "true or false"),
    ({"lr_schedule": {"kind": "constant", "min_factor": 0.1}}, "no setting 'min_factor'"),
    ({"grad_clip": {"mode": "norm", "value": -1}}, "above 0"),
    ({"grad_clip": {"mode": "elementwise"}}, "'none', 'norm' or 'value'"),
    ({"grad_clip": 5}, "must be an object"),
    ({"optimizer": "Adadelta"}, "RMSProp, Adagrad"),
]


@pytest.mark.parametrize(("given", "reason"), DAMAGED, ids=[str(d[0]) for d in DAMAGED])
def test_a_damaged_setting_is_refused_with_the_reason_and_left_as_it_is(given, reason):
    project = mlp_project(**given)
    kept = dict(project.training)
    with pytest.raises(TrainingError, match=reason):
        TrainingSession(project)
    assert project.training == kept


@pytest.mark.parametrize("name", ["RMSProp", "Adagrad"])
def test_the_new_optimizers_are_made_with_their_options_and_weight_decay(name):
    options = {"RMSProp": {"momentum": 0.9, "centered": True, "weight_decay": 0.01},
               "Adagrad": {"accum": 0.2, "weight_decay": 0.01}}[name]  # fmt: skip
    settings = TrainingSettings(dataset="-", optimizer=name, optimizer_options=options)
    optimizer = make_optimizer(settings, [Parameter(np.zeros(2, np.float32), name="w")])
    assert type(optimizer).__name__ == name and optimizer.weight_decay == 0.01
    with pytest.raises(TrainingError, match=f"The {name} optimizer can't be made"):
        bad = TrainingSettings(dataset="-", optimizer=name, optimizer_options={"bogus": 1})
        make_optimizer(bad, [Parameter(np.zeros(2, np.float32), name="w")])


@pytest.mark.parametrize(("task", "fraction", "samples", "batch"), [
    ("classification", 0.2, 203, 16), ("classification", 0.0, 100, 7),
    ("regression", 0.35, 61, 5), ("classification", 0.5, 9, 4),
])  # fmt: skip
def test_steps_per_epoch_is_what_the_session_split_gives(task, fraction, samples, batch):
    rs = np.random.RandomState(0)
    x = rs.randn(samples, 2).astype(np.float32)
    y = rs.randint(0, 3, samples) if task == "classification" else rs.randn(samples, 1)
    data = Dataset(x, y.astype(np.int64 if task == "classification" else np.float32),
                   task=task, num_classes=3 if task == "classification" else None)
    train, _ = data.split(fraction, seed=4)
    assert steps_per_epoch(samples, fraction, batch) == train.batch_count(batch)


# ----------------------------------------------------------------------------- schedules


def test_warmup_then_cosine_factors_by_hand():
    schedule = RateSchedule("cosine", {"min_factor": 0.1}, warmup_steps=4, epochs=3)
    factors = schedule.factors(5)  # 15 steps: 4 rising, then 11 of cosine
    assert len(factors) == 15
    np.testing.assert_allclose(factors[:4], [0.0, 0.25, 0.5, 0.75])
    i = np.arange(11)
    cosine = 0.1 + 0.45 * (1 + np.cos(np.pi * i / 11))
    np.testing.assert_allclose(factors[4:], cosine, rtol=1e-6)
    assert factors[4] == pytest.approx(1.0)
    # Past the planned run the cosine holds its minimum.
    np.testing.assert_allclose(schedule.factors(5, 20)[15:], 0.1, rtol=1e-6)


def test_step_and_exponential_factors_by_hand():
    step = RateSchedule("step", {"step_epochs": 2, "factor": 0.5}, warmup_steps=1, epochs=6)
    np.testing.assert_allclose(step.factors(3)[:9], [0, 1, 1, 1, 1, 1, 1, 0.5, 0.5])
    smooth = RateSchedule("exponential", {"decay_rate": 0.8, "decay_epochs": 2, "stair": False},
                          epochs=3)  # fmt: skip
    np.testing.assert_allclose(smooth.factors(4), 0.8 ** (np.arange(12) / 8), rtol=1e-6)
    stairs = RateSchedule("exponential", {"decay_rate": 0.8, "decay_epochs": 2, "stair": True},
                          epochs=3)  # fmt: skip
    np.testing.assert_allclose(stairs.factors(4), 0.8 ** np.floor(np.arange(12) / 8), rtol=1e-6)
    assert "warmup 1 steps" in step.describe() and "cosine" not in step.describe()


# ----------------------------------------------------------------------------- training


def _trainer(project, *, schedule=True, clip=None):
    """A Trainer over a session's parts, with the project's schedule and clipping."""
    session = TrainingSession(project)
    s = session.settings
    trainer = Trainer(session.network, session.loss_fn, session.optimizer, session.train_set,
                      session.val_set, batch_size=s.batch_size, seed=s.seed,
                      state=session.state, metrics=session.metrics, emit=lambda event: None,
                      input_dtype=session.compiled.input_dtypes[0],
                      schedule=s.schedule() if schedule else None,
                      grad_clip=clip or s.clipping())  # fmt: skip
    return session, trainer


def _rates(session) -> np.ndarray:
    return session.metrics.steps.snapshot()[:, RATE]


def test_each_step_uses_the_scheduled_rate_warmup_then_cosine():
    project = mlp_project(learning_rate=0.05, epochs=2,
                          lr_schedule={"kind": "cosine", "min_factor": 0.2, "warmup_steps": 5})
    session, trainer = _trainer(project)
    per_epoch = session.train_set.batch_count(16)
    event = trainer.run(2, RunControl())
    assert event.reason == "completed" and session.state.step == 2 * per_epoch
    expected = 0.05 * session.settings.schedule().factors(per_epoch)
    np.testing.assert_allclose(_rates(session), expected, rtol=1e-12)
    assert _rates(session)[0] == 0.0 and _rates(session)[5] == pytest.approx(0.05)
    assert trainer.learning_rate == 0.05  # the base rate stays what was set


def test_a_rate_typed_during_the_run_becomes_the_schedules_base():
    project = mlp_project(learning_rate=0.05, epochs=2,
                          lr_schedule={"kind": "step", "step_epochs": 1, "factor": 0.5})
    session, trainer = _trainer(project)
    control = RunControl()
    trainer.run(2, control, max_steps=12)
    control = RunControl()
    control.set_learning_rate(0.2)
    trainer.run(2, control)
    per_epoch = session.train_set.batch_count(16)
    factors = session.settings.schedule().factors(per_epoch)
    rates = _rates(session)
    np.testing.assert_allclose(rates[:12], 0.05 * factors[:12])
    np.testing.assert_allclose(rates[12:], 0.2 * factors[12:])
    assert trainer.learning_rate == 0.2


def test_a_new_run_follows_the_schedule_from_its_start_again():
    project = mlp_project(learning_rate=0.05, epochs=2,
                          lr_schedule={"kind": "cosine", "warmup_steps": 4})
    session, trainer = _trainer(project)
    per_epoch = session.train_set.batch_count(16)
    trainer.run(2, RunControl())  # the whole planned run
    trainer.run(4, RunControl())  # Start again: two more epochs, a run of its own
    factors = session.settings.schedule().factors(per_epoch)
    np.testing.assert_allclose(_rates(session), 0.05 * np.concatenate([factors, factors]))


def test_the_plan_starts_where_the_next_step_of_its_run_is():
    project = mlp_project(learning_rate=0.05, epochs=2,
                          lr_schedule={"kind": "step", "step_epochs": 1, "factor": 0.5})
    session, trainer = _trainer(project)
    per_epoch = session.train_set.batch_count(16)
    samples = len(session.dataset)
    fresh = plan_for(project.training, samples)
    assert fresh.first_step == 1 and fresh.steps_per_epoch == per_epoch
    np.testing.assert_allclose(fresh.rates, [0.05] * per_epoch + [0.025] * per_epoch)
    trainer.run(2, RunControl(), max_steps=3)  # stopped early: the run goes on along it
    project.training["state"] = session.state.to_json()
    going_on = plan_for(project.training, samples)
    assert going_on.first_step == 1 and going_on.same_as(fresh)
    trainer.run(2, RunControl())  # finished: the next run starts the schedule afresh
    project.training["state"] = session.state.to_json()
    after = plan_for(project.training, samples)
    assert after.first_step == 2 * per_epoch + 1
    np.testing.assert_allclose(after.rates, fresh.rates)
    assert plan_for({**project.training, "lr_schedule": {"kind": "constant"}}, samples) is None


def _torch_twin(session):
    """The session's MLP in torch with the same weights (Dense weight is torch's layout)."""
    weights = [torch.tensor(p.asnumpy().copy()) for p in session.optimizer.parameters]
    net = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))
    with torch.no_grad():
        for param, value in zip(net.parameters(), weights, strict=True):
            param.copy_(value)
    return net


@pytest.mark.parametrize(("clip", "steps"), [(("norm", 0.05), 25), (("value", 0.01), 25)])
def test_weights_after_n_steps_equal_torch_with_schedule_and_clipping(clip, steps):
    """Nesterov SGD with weight decay, warmup then cosine, clipped: as torch does it."""
    project = mlp_project(optimizer="SGD", learning_rate=0.3, epochs=3,
                          optimizer_options={"momentum": 0.9, "nesterov": True,
                                             "weight_decay": 0.01},
                          lr_schedule={"kind": "cosine", "min_factor": 0.0, "warmup_steps": 6},
                          grad_clip={"mode": clip[0], "value": clip[1]})  # fmt: skip
    session, trainer = _trainer(project)
    net = _torch_twin(session)
    per_epoch = session.train_set.batch_count(16)
    factors = session.settings.schedule().factors(per_epoch)
    opt = torch.optim.SGD(net.parameters(), lr=0.3, momentum=0.9, nesterov=True,
                          weight_decay=0.01)  # fmt: skip
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: float(factors[i]))
    loss_fn = torch.nn.CrossEntropyLoss()
    done, epoch, grad_seen = 0, 0, 0.0
    while done < steps:
        for x, y in session.train_set.batches(16, True, 0, epoch):
            if done == steps:
                break
            opt.zero_grad()
            loss_fn(net(torch.tensor(x)), torch.tensor(y)).backward()
            grad_seen = max(grad_seen, max(float(p.grad.abs().max()) for p in net.parameters()))
            if clip[0] == "norm":
                torch.nn.utils.clip_grad_norm_(net.parameters(), clip[1])
            else:
                torch.nn.utils.clip_grad_value_(net.parameters(), clip[1])
            opt.step()
            sched.step()
            done += 1
        epoch += 1
    assert grad_seen > clip[1]  # the clipping did clip
    trainer.run(3, RunControl(), max_steps=steps)
    for ours, theirs in zip(session.optimizer.parameters, net.parameters(), strict=True):
        np.testing.assert_allclose(ours.asnumpy(), theirs.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)  # fmt: skip


def test_clipping_changes_the_update_and_none_does_not():
    base = mlp_project(learning_rate=0.5)
    clipped = mlp_project(learning_rate=0.5, grad_clip={"mode": "norm", "value": 1e-3})
    after = []
    for project in (base, clipped):
        session, trainer = _trainer(project)
        start = [p.asnumpy().copy() for p in session.optimizer.parameters]
        trainer.run(1, RunControl(), max_steps=1)
        moved = [p.asnumpy() - s for p, s in zip(session.optimizer.parameters, start,
                                                  strict=True)]  # fmt: skip
        after.append(math.sqrt(sum(float((m.astype(np.float64) ** 2).sum()) for m in moved)))
    # Adam's first step is about lr per element, clipped or not; SGD shows the norm.
    assert after[0] > 0 and after[1] > 0
    sgd = mlp_project(optimizer="SGD", learning_rate=1.0, grad_clip={"mode": "norm",
                                                                     "value": 1e-3})
    session, trainer = _trainer(sgd)
    start = [p.asnumpy().copy() for p in session.optimizer.parameters]
    trainer.run(1, RunControl(), max_steps=1)
    step = math.sqrt(sum(float(((p.asnumpy() - s).astype(np.float64) ** 2).sum())
                         for p, s in zip(session.optimizer.parameters, start, strict=True)))
    assert step == pytest.approx(1e-3, rel=1e-3)  # lr 1 times a gradient of norm 1e-3


def test_a_diverging_run_is_still_stopped_and_rolled_back_with_a_schedule_and_clipping():
    project = mlp_project(optimizer="SGD", learning_rate=1e38,
                          lr_schedule={"kind": "exponential", "warmup_steps": 2},
                          grad_clip={"mode": "value", "value": 1e6})  # fmt: skip
    session, trainer = _trainer(project)
    event = trainer.run(3, RunControl())
    assert type(event).__name__ == "TrainingFailed" and "infinite or NaN" in event.message
    kept = [p.asnumpy() for p in session.optimizer.parameters]
    assert all(np.isfinite(k).all() for k in kept)


def test_the_session_trains_with_the_projects_schedule_and_clipping():
    """Through TrainingSession itself (it hands settings.schedule() and clipping() over)."""
    project = mlp_project(learning_rate=0.04, epochs=1,
                          lr_schedule={"kind": "cosine", "warmup_steps": 3},
                          grad_clip={"mode": "norm", "value": 0.5})  # fmt: skip
    session = TrainingSession(project)
    session.run()
    per_epoch = session.train_set.batch_count(16)
    np.testing.assert_allclose(_rates(session), 0.04 * session.settings.schedule().factors(
        per_epoch), rtol=1e-12)
    assert session._trainer._clip_mode == "norm"


@pytest.mark.parametrize(("name", "options"), [
    ("RMSProp", {"momentum": 0.5, "centered": True, "weight_decay": 0.01}),
    ("Adagrad", {"accum": 0.2}),
])  # fmt: skip
def test_the_new_optimizers_state_survives_the_project_file(name, options, tmp_path):
    project = mlp_project(optimizer=name, optimizer_options=options, epochs=2,
                          lr_schedule={"kind": "cosine", "warmup_steps": 3},
                          grad_clip={"mode": "norm", "value": 1.0})  # fmt: skip
    session = TrainingSession(project)
    session.run(steps=6)
    path = tmp_path / "p.cwproj"
    save_project(project, path)
    again = TrainingSession(load_project(path))
    saved, restored = session.optimizer.state_dict(), again.optimizer.state_dict()
    slots = [k for k, v in saved.items() if isinstance(v, dict)]
    assert len(slots) == (3 if name == "RMSProp" else 1) and int(restored["step"]) == 6
    for slot in slots:
        for key, value in saved[slot].items():
            np.testing.assert_array_equal(restored[slot][key], value)
    session.run(steps=5)
    again.run(steps=5)
    for a, b in zip(session.optimizer.parameters, again.optimizer.parameters, strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
