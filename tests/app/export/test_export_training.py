"""The training part of the exported scripts: the torch script's schedule gives the engine's rate
at every step, its optimizer and clipping are the project's, and a short training run of the
exported engine script ends with the weights the app's own training gives."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import engine
from app.export.python_script import export_python
from app.export.torch_script import export_torch
from app.session import TrainingSession
from app.session.run_control import RunControl
from app.session.trainer import Trainer
from tests.app.export.export_samples import load_script
from tests.app.session.session_samples import bn_dropout_project, mlp_project

SCHEDULES = [
    {"kind": "cosine", "min_factor": 0.1, "warmup_steps": 5},
    {"kind": "cosine", "min_factor": 0.0},
    {"kind": "step", "step_epochs": 1, "factor": 0.5, "warmup_steps": 3},
    {"kind": "exponential", "decay_rate": 0.7, "decay_epochs": 2, "stair": False},
    {"kind": "exponential", "decay_rate": 0.7, "decay_epochs": 1, "stair": True,
     "warmup_steps": 4},
    {"kind": "constant", "warmup_steps": 7},
]  # fmt: skip



def _app_rates(project) -> tuple[np.ndarray, int]:
    session = TrainingSession(project)
    per_epoch = session.train_set.batch_count(session.settings.batch_size)
    return session.settings.schedule().rates(session.settings.learning_rate, per_epoch), per_epoch


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda s: "-".join(map(str, s.values())))
def test_the_torch_scripts_schedule_gives_the_engines_rate_at_every_step(schedule, tmp_path):
    project = mlp_project(learning_rate=0.03, epochs=3, lr_schedule=schedule)
    expected, per_epoch = _app_rates(project)
    module = load_script(export_torch(project, tmp_path / "net.py").written[0])
    optimizer = module.make_optimizer(module.load_network().train())
    scheduler = module.make_scheduler(optimizer, per_epoch)
    rates = []
    for _ in range(len(expected)):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    np.testing.assert_allclose(rates, expected, rtol=1e-6, atol=1e-12)
    # And the engine script's list, made with nn.WarmUpLR / CosineDecayLR / ExponentialDecayLR.
    script = load_script(export_python(project, tmp_path / "net_engine.py").script)
    np.testing.assert_allclose(script.learning_rates(per_epoch), expected, rtol=1e-6,
                               atol=1e-12)  # fmt: skip


OPTIMIZERS = [
    ("SGD", {"momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}, torch.optim.SGD,
     {"momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01, "nesterov": False}, 1),
    ("SGD", {"momentum": 0.9, "nesterov": True}, torch.optim.SGD,
     {"momentum": 0.9, "nesterov": True}, 1),
    ("Momentum", {"weight_decay": 0.01, "use_nesterov": True}, torch.optim.SGD,
     {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01}, 2),
    ("RMSProp", {"momentum": 0.5, "centered": True, "decay": 0.8, "weight_decay": 0.02},
     torch.optim.RMSprop, {"alpha": 0.8, "eps": 1e-10, "momentum": 0.5, "centered": True,
                           "weight_decay": 0.02}, 2),
    ("Adagrad", {"accum": 0.2, "weight_decay": 0.01}, torch.optim.Adagrad,
     {"initial_accumulator_value": 0.2, "eps": 0.0, "weight_decay": 0.01}, 2),
    ("AdamW", {"weight_decay": 0.05}, torch.optim.AdamW, {"weight_decay": 0.05}, 1),
    ("Adam", {"beta1": 0.8}, torch.optim.Adam, {"betas": (0.8, 0.999), "eps": 1e-8}, 1),
]  # fmt: skip


@pytest.mark.parametrize(("name", "options", "cls", "hyper", "groups"), OPTIMIZERS,
                         ids=[f"{o[0]}-{i}" for i, o in enumerate(OPTIMIZERS)])  # fmt: skip
def test_the_torch_script_makes_the_projects_optimizer(name, options, cls, hyper, groups,
                                                       tmp_path):  # fmt: skip
    project = bn_dropout_project(optimizer=name, optimizer_options=options,
                                 grad_clip={"mode": "value", "value": 0.25})  # fmt: skip
    report = export_torch(project, tmp_path / "net.py")
    module = load_script(report.written[0])
    net = module.load_network().train()
    optimizer = module.make_optimizer(net)
    assert type(optimizer) is cls and len(optimizer.param_groups) == groups
    for key, value in hyper.items():
        assert optimizer.param_groups[0][key] == value, key
    assert optimizer.param_groups[0]["lr"] == 0.02
    if groups == 2:  # MindSpore's filter: BatchNorm's gamma and beta are not decayed
        kept = {id(p) for p in optimizer.param_groups[1]["params"]}
        names = {n for n, p in net.named_parameters() if id(p) in kept}
        assert names == {"batchnorm1d1.weight", "batchnorm1d1.bias"}
        assert optimizer.param_groups[1]["weight_decay"] == 0.0
    # Clipping as the project's: each gradient element into [-0.25, 0.25].
    for p in net.parameters():
        p.grad = torch.full_like(p, 3.0)
    module.clip_gradients(net)
    assert all(float(p.grad.max()) == 0.25 for p in net.parameters())


def test_what_torch_cannot_do_is_reported(tmp_path):
    project = mlp_project(optimizer="Adagrad", optimizer_options={"update_slots": False})
    report = export_torch(project, tmp_path / "net.py")
    assert any("update_slots" in item for item in report.left_out)
    damaged = mlp_project(lr_schedule={"kind": "linear"})
    report = export_torch(damaged, tmp_path / "bad.py")
    assert any("refused" in item and "linear" in item for item in report.left_out)
    text = export_python(damaged, tmp_path / "bad_engine.py").script.read_text()
    assert "not exported" in text and "def make_optimizer" not in text


@pytest.mark.parametrize("clip", [{"mode": "norm", "value": 0.05}, {"mode": "none"}])
def test_a_short_run_of_the_exported_engine_script_trains_as_the_app(clip, tmp_path):
    project = mlp_project(optimizer="RMSProp", learning_rate=0.01, epochs=2,
                          optimizer_options={"momentum": 0.5, "centered": True,
                                             "weight_decay": 0.01},
                          lr_schedule={"kind": "cosine", "min_factor": 0.1, "warmup_steps": 4},
                          grad_clip=clip)  # fmt: skip
    script = load_script(export_python(project, tmp_path / "net.py").script)
    session = TrainingSession(project)
    s, steps = session.settings, 14
    per_epoch = session.train_set.batch_count(s.batch_size)
    # The script's network, optimizer, clipping and loss, on the app's batches.
    net = script.load_network()
    net.set_train(True)
    start = {name: p.asnumpy() for name, p in session.compiled.parameters().items()}
    for name, param in net.parameters_and_names():
        param.set_data(engine.Tensor(start[name].copy()))  # the session's first weights
    optimizer = script.make_optimizer(net, per_epoch)
    assert type(optimizer) is engine.nn.RMSProp and optimizer.centered
    loss_fn = script.make_loss()
    grad = engine.value_and_grad(lambda x, y: loss_fn(net(x), y), None, optimizer.parameters)
    batches = itertools.chain(*(session.train_set.batches(s.batch_size, True, s.seed, epoch)
                                for epoch in range(2)))  # fmt: skip
    for _ in range(steps):  # past the first epoch's end
        x, y = next(batches)
        _, grads = grad(engine.Tensor(x), engine.Tensor(y))
        optimizer(script.clip_gradients(grads))
    # The app: a Trainer given the project's schedule and clipping, as the session makes it.
    trainer = Trainer(session.network, session.loss_fn, session.optimizer, session.train_set,
                      session.val_set, batch_size=s.batch_size, seed=s.seed,
                      state=session.state, metrics=session.metrics, emit=lambda event: None,
                      schedule=s.schedule(), grad_clip=s.clipping())  # fmt: skip
    trainer.run(2, RunControl(), max_steps=steps)
    ours = {p.name: p.asnumpy() for p in optimizer.parameters}
    for p in session.optimizer.parameters:
        np.testing.assert_allclose(ours[p.name], p.asnumpy(), rtol=1e-5, atol=1e-7)
