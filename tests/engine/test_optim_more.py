"""RMSProp, Adagrad, Nesterov SGD and weight decay on every optimizer: weights after N steps
against torch.optim where the formula is the same, else against a NumPy reference of
MindSpore's formula (RMSProp: torch puts epsilon outside the square root, starts the mean
square at 0 and keeps the learning rate out of the moment)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine import Parameter, Tensor, nn

RS = np.random.RandomState(7)
W0 = RS.randn(4, 3)
B0 = RS.randn(3)  # "bias": decayed, as MindSpore decays every name without beta/gamma
G0 = RS.rand(3) + 0.5  # "bn.gamma": never decayed by the filtering optimizers
STEPS = 6
GRADS = [(RS.randn(4, 3), RS.randn(3), RS.randn(3)) for _ in range(STEPS)]
NAMES = ("dense.weight", "dense.bias", "bn.gamma")
START = (W0, B0, G0)


def _engine_run(make, dtype=np.float32, rates=None):
    params = [Parameter(a.astype(dtype), name=n) for a, n in zip(START, NAMES, strict=True)]
    opt = make(params)
    for k, grads in enumerate(GRADS):
        if rates is not None:
            opt.learning_rate = rates[k]
        opt(tuple(Tensor(g.astype(dtype)) for g in grads))
    return [p.asnumpy() for p in params], opt


def _torch_run(make, groups=False, prefill=None):
    params = [torch.nn.Parameter(torch.tensor(a.astype(np.float32))) for a in START]
    opt = make([{"params": params[:2]}, {"params": params[2:], "weight_decay": 0.0}]
               if groups else params)  # fmt: skip
    if prefill is not None:
        for p in params:
            opt.state[p] = prefill(p)
    for grads in GRADS:
        for p, g in zip(params, grads, strict=True):
            p.grad = torch.tensor(g.astype(np.float32))
        opt.step()
    return [p.detach().numpy() for p in params]


def _rmsprop_ones(centered, momentum):
    def state(p):
        s = {"step": torch.tensor(0.0), "square_avg": torch.ones_like(p)}
        if momentum:
            s["momentum_buffer"] = torch.zeros_like(p)
        if centered:
            s["grad_avg"] = torch.zeros_like(p)
        return s
    return state


CASES = [
    ("SGD nesterov + decay (all params)",
     lambda ps: nn.SGD(ps, 0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
     lambda ps: torch.optim.SGD(ps, 0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
     False, None),
    ("SGD dampening + decay",
     lambda ps: nn.SGD(ps, 0.05, momentum=0.8, dampening=0.3, weight_decay=0.02),
     lambda ps: torch.optim.SGD(ps, 0.05, momentum=0.8, dampening=0.3, weight_decay=0.02),
     False, None),
    ("Momentum nesterov + decay (not gamma)",
     lambda ps: nn.Momentum(ps, 0.05, 0.9, weight_decay=0.01, use_nesterov=True),
     lambda ps: torch.optim.SGD(ps, 0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
     True, None),
    ("Adagrad + decay (not gamma)",
     lambda ps: nn.Adagrad(ps, accum=0.1, learning_rate=0.1, weight_decay=0.05),
     lambda ps: torch.optim.Adagrad(ps, 0.1, initial_accumulator_value=0.1, eps=0.0,
                                    weight_decay=0.05),
     True, None),
    ("Adagrad defaults", lambda ps: nn.Adagrad(ps),
     lambda ps: torch.optim.Adagrad(ps, 0.001, initial_accumulator_value=0.1, eps=0.0),
     False, None),
    # torch's RMSprop with its mean square started at 1 (MindSpore's start) and a tiny
    # epsilon, outside the root there and inside here: the same to ~1e-10.
    ("RMSProp momentum + decay (not gamma)",
     lambda ps: nn.RMSProp(ps, 0.01, decay=0.8, momentum=0.9, weight_decay=0.01),
     lambda ps: torch.optim.RMSprop(ps, 0.01, alpha=0.8, eps=1e-10, momentum=0.9,
                                    weight_decay=0.01),
     True, _rmsprop_ones(False, True)),
    ("RMSProp centered",
     lambda ps: nn.RMSProp(ps, 0.01, momentum=0.5, centered=True),
     lambda ps: torch.optim.RMSprop(ps, 0.01, alpha=0.9, eps=1e-10, momentum=0.5, centered=True),
     False, _rmsprop_ones(True, True)),
    ("RMSProp plain",
     lambda ps: nn.RMSProp(ps, 0.01),
     lambda ps: torch.optim.RMSprop(ps, 0.01, alpha=0.9, eps=1e-10),
     False, _rmsprop_ones(False, False)),
]  # fmt: skip


@pytest.mark.parametrize(("ours", "theirs", "groups", "prefill"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_weights_after_n_steps_match_torch(ours, theirs, groups, prefill):
    got, _ = _engine_run(ours)
    want = _torch_run(theirs, groups, prefill)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def rmsprop_reference(lr, decay=0.9, momentum=0.0, epsilon=1e-10, centered=False,
                      weight_decay=0.0, loss_scale=1.0, rates=None):
    """MindSpore's ApplyRMSProp / ApplyCenteredRMSProp in float64 NumPy."""
    ps = [a.astype(np.float64) for a in START]
    ms = [np.ones_like(p) for p in ps]
    mg = [np.zeros_like(p) for p in ps]
    mom = [np.zeros_like(p) for p in ps]
    decays = [weight_decay, weight_decay, 0.0]  # no 'beta'/'gamma' in the first two names
    for k, grads in enumerate(GRADS):
        rate = lr if rates is None else rates[k]
        for i, g in enumerate(grads):
            g = (g + decays[i] * ps[i]) / loss_scale
            ms[i] = decay * ms[i] + (1 - decay) * g * g
            denom = ms[i] + epsilon
            if centered:
                mg[i] = decay * mg[i] + (1 - decay) * g
                denom = denom - mg[i] ** 2
            mom[i] = momentum * mom[i] + rate * g / np.sqrt(denom)
            ps[i] = ps[i] - mom[i]
    return ps


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_follows_mindspores_formula_where_torch_differs(centered):
    # A large epsilon (inside the root) and a rate that changes every step (folded into
    # the moment): both differ from torch's RMSprop.
    rates = [0.05, 0.02, 0.1, 0.0, 0.03, 0.07]
    kwargs = {"decay": 0.7, "momentum": 0.6, "epsilon": 0.3, "centered": centered,
              "weight_decay": 0.02, "loss_scale": 4.0}
    got, opt = _engine_run(lambda ps: nn.RMSProp(ps, 0.05, **kwargs), np.float64, rates)
    want = rmsprop_reference(0.05, rates=rates, **kwargs)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-12)
    state = opt.state_dict()
    slots = {"mean_square", "moment"} | ({"mean_grad"} if centered else set())
    assert slots <= set(state) and state["type"] == "RMSProp"
    assert set(state["mean_square"]) == set(NAMES)


def test_adagrad_without_update_slots_keeps_its_accumulator():
    got, opt = _engine_run(lambda ps: nn.Adagrad(ps, accum=0.25, learning_rate=0.1,
                                                 update_slots=False), np.float64)  # fmt: skip
    want = [a - 0.1 * sum(g[i] for g in GRADS) / 0.5 for i, a in enumerate(START)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    np.testing.assert_array_equal(opt.state_dict()["accum"]["dense.weight"], 0.25)


def test_adagrad_loss_scale_divides_the_decayed_gradient():
    kwargs = {"accum": 0.1, "learning_rate": 0.1, "weight_decay": 0.1}
    scaled, _ = _engine_run(lambda ps: nn.Adagrad(ps, loss_scale=8.0, **kwargs), np.float64)
    ps = [a.astype(np.float64) for a in START]
    acc = [np.full_like(p, 0.1) for p in ps]
    for grads in GRADS:
        for i, g in enumerate(grads):
            g = (g + (0.1 if i < 2 else 0.0) * ps[i]) / 8.0
            acc[i] += g * g
            ps[i] = ps[i] - 0.1 * g / np.sqrt(acc[i])
    for g, w in zip(scaled, ps, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


@pytest.mark.parametrize("make", [
    lambda ps: nn.RMSProp(ps, 0.01, momentum=0.9, centered=True, weight_decay=0.01),
    lambda ps: nn.Adagrad(ps, learning_rate=0.1, weight_decay=0.01),
], ids=["RMSProp", "Adagrad"])  # fmt: skip
def test_state_round_trip_continues_identically(make):
    half = len(GRADS) // 2
    params = [Parameter(a.copy(), name=n) for a, n in zip(START, NAMES, strict=True)]
    opt = make(params)
    for grads in GRADS[:half]:
        opt(tuple(Tensor(g) for g in grads))
    state = opt.state_dict()
    copies = [Parameter(p.asnumpy().copy(), name=p.name) for p in params]
    other = make(copies)
    other.load_state_dict(state)
    for grads in GRADS[half:]:
        opt(tuple(Tensor(g) for g in grads))
        other(tuple(Tensor(g) for g in grads))
    for a, b in zip(params, copies, strict=True):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_float32_stays_float32_and_frozen_parameters_stay():
    params = [Parameter(a.astype(np.float32), name=n) for a, n in zip(START, NAMES, strict=True)]
    params[1].requires_grad = False
    opt = nn.RMSProp(params, 0.01, centered=True)
    opt(tuple(Tensor(g.astype(np.float32)) for g in GRADS[0]))
    assert all(p.asnumpy().dtype == np.float32 for p in params)
    np.testing.assert_array_equal(params[1].asnumpy(), B0.astype(np.float32))
    assert not np.array_equal(params[0].asnumpy(), W0.astype(np.float32))


def test_defaults_are_mindspores():
    p = [Parameter(np.zeros(2, np.float32), name="w")]
    rms = nn.RMSProp(p)
    assert (float(rms.get_lr().asnumpy()), rms.decay, rms.momentum, rms.epsilon, rms.centered,
            rms.loss_scale, rms.weight_decay) == (np.float32(0.1), 0.9, 0.0, 1e-10, False,
                                                  1.0, 0.0)  # fmt: skip
    ada = nn.Adagrad(p)
    assert (float(ada.get_lr().asnumpy()), ada.accum_init, ada.update_slots) == (
        np.float32(0.001), 0.1, True)  # fmt: skip


@pytest.mark.parametrize(("make", "words"), [
    (lambda p: nn.RMSProp(p, epsilon=0.0), "epsilon"),
    (lambda p: nn.RMSProp(p, decay=-0.1), "decay"),
    (lambda p: nn.RMSProp(p, momentum=-1.0), "momentum"),
    (lambda p: nn.RMSProp(p, weight_decay=-1.0), "weight_decay"),
    (lambda p: nn.Adagrad(p, accum=-0.1), "accum"),
    (lambda p: nn.Adagrad(p, loss_scale=0.0), "loss_scale"),
    (lambda p: nn.SGD(p, momentum=0.0, nesterov=True), "nesterov"),
], ids=lambda v: None)  # fmt: skip
def test_bad_hyperparameters_are_refused_naming_them(make, words):
    with pytest.raises(ValueError, match=words):
        make([Parameter(np.zeros(2, np.float32), name="w")])
