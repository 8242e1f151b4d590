"""Optimizers: first steps against their update formulas and torch.optim, learning rate, state."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
import torch

import engine
from engine import Parameter, Tensor, nn, ops

RS = np.random.RandomState(0)
W0 = RS.randn(3, 2)
G0 = RS.randn(4)  # "bn.gamma": MindSpore's Momentum and Adam do not decay it
GRADS = [(RS.randn(3, 2), RS.randn(4)) for _ in range(3)]


def _params(dtype=np.float64):
    return [Parameter(W0.astype(dtype), name="w"), Parameter(G0.astype(dtype), name="bn.gamma")]


def _run(opt_factory, dtype=np.float64, grads=GRADS):
    params = _params(dtype)
    opt = opt_factory(params)
    history = []
    for gw, gg in grads:
        opt((Tensor(gw.astype(dtype)), Tensor(gg.astype(dtype))))
        history.append([p.asnumpy().copy() for p in params])
    return history, opt


# ----------------------------------------------------------------------------- formulas, in NumPy


def sgd_formula(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                loss_scale=1.0):
    """MindSpore nn.SGD: unscale, add decay to every parameter, momentum with v = g at first."""
    out = []
    ps, vs = [W0.copy(), G0.copy()], [None, None]
    for grads in GRADS:
        for k, g in enumerate(grads):
            g = g / loss_scale + weight_decay * ps[k]
            if momentum > 0:
                vs[k] = g.copy() if vs[k] is None else momentum * vs[k] + (1 - dampening) * g
                g = g + momentum * vs[k] if nesterov else vs[k]
            ps[k] = ps[k] - lr * g
        out.append([p.copy() for p in ps])
    return out


def momentum_formula(lr, momentum, weight_decay=0.0, loss_scale=1.0, use_nesterov=False):
    """MindSpore nn.Momentum: decay (not 'gamma'/'beta'), then unscale; v = momentum v + g."""
    out = []
    ps, vs = [W0.copy(), G0.copy()], [0.0, 0.0]
    decays = [weight_decay, 0.0]
    for grads in GRADS:
        for k, g in enumerate(grads):
            g = (g + decays[k] * ps[k]) / loss_scale
            vs[k] = momentum * vs[k] + g
            ps[k] = ps[k] - lr * (g + momentum * vs[k] if use_nesterov else vs[k])
        out.append([p.copy() for p in ps])
    return out


def adam_formula(lr, beta1=0.9, beta2=0.999, eps=1e-8, use_nesterov=False, weight_decay=0.0,
                 loss_scale=1.0):
    """MindSpore nn.Adam: eps added to sqrt(v), bias correction folded into the step size."""
    out = []
    ps, ms, vs = [W0.copy(), G0.copy()], [0.0, 0.0], [0.0, 0.0]
    decays = [weight_decay, 0.0]
    for t, grads in enumerate(GRADS, start=1):
        for k, g in enumerate(grads):
            g = (g + decays[k] * ps[k]) / loss_scale
            ms[k] = beta1 * ms[k] + (1 - beta1) * g
            vs[k] = beta2 * vs[k] + (1 - beta2) * g * g
            lr_t = lr * math.sqrt(1 - beta2**t) / (1 - beta1**t)
            num = beta1 * ms[k] + (1 - beta1) * g if use_nesterov else ms[k]
            ps[k] = ps[k] - lr_t * num / (np.sqrt(vs[k]) + eps)
        out.append([p.copy() for p in ps])
    return out


def adamw_formula(lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=1e-2):
    """MindSpore 2.x AdamW (experimental/mint): decoupled decay of every parameter, then Adam with
    eps added to the bias-corrected sqrt(v) — PyTorch's AdamW formula."""
    out = []
    ps, ms, vs = [W0.copy(), G0.copy()], [0.0, 0.0], [0.0, 0.0]
    for t, grads in enumerate(GRADS, start=1):
        for k, g in enumerate(grads):
            ps[k] = ps[k] * (1 - lr * weight_decay)
            ms[k] = beta1 * ms[k] + (1 - beta1) * g
            vs[k] = beta2 * vs[k] + (1 - beta2) * g * g
            denom = np.sqrt(vs[k]) / math.sqrt(1 - beta2**t) + eps
            ps[k] = ps[k] - lr / (1 - beta1**t) * ms[k] / denom
        out.append([p.copy() for p in ps])
    return out


FORMULA_CASES = [
    ("sgd", lambda p: nn.SGD(p, 0.1), sgd_formula(0.1)),
    ("sgd-momentum", lambda p: nn.SGD(p, 0.05, momentum=0.9), sgd_formula(0.05, 0.9)),
    ("sgd-dampening-decay-scale",
     lambda p: nn.SGD(p, 0.05, momentum=0.8, dampening=0.3, weight_decay=0.01, loss_scale=4.0),
     sgd_formula(0.05, 0.8, 0.3, 0.01, loss_scale=4.0)),
    ("sgd-nesterov", lambda p: nn.SGD(p, 0.05, momentum=0.9, nesterov=True, weight_decay=0.02),
     sgd_formula(0.05, 0.9, 0.0, 0.02, nesterov=True)),
    ("momentum", lambda p: nn.Momentum(p, 0.05, 0.9), momentum_formula(0.05, 0.9)),
    ("momentum-decay-scale",
     lambda p: nn.Momentum(p, 0.05, 0.9, weight_decay=0.01, loss_scale=8.0),
     momentum_formula(0.05, 0.9, 0.01, 8.0)),
    ("momentum-nesterov", lambda p: nn.Momentum(p, 0.05, 0.9, use_nesterov=True),
     momentum_formula(0.05, 0.9, use_nesterov=True)),
    ("adam", lambda p: nn.Adam(p, 0.01), adam_formula(0.01)),
    ("adam-betas-eps", lambda p: nn.Adam(p, 0.02, beta1=0.8, beta2=0.99, eps=1e-3),
     adam_formula(0.02, 0.8, 0.99, 1e-3)),
    ("adam-nesterov-decay-scale",
     lambda p: nn.Adam(p, 0.01, use_nesterov=True, weight_decay=0.05, loss_scale=2.0),
     adam_formula(0.01, use_nesterov=True, weight_decay=0.05, loss_scale=2.0)),
    ("adamw", lambda p: nn.AdamW(p, 0.01), adamw_formula(0.01)),
    ("adamw-decay", lambda p: nn.AdamW(p, 0.05, beta1=0.85, eps=1e-6, weight_decay=0.1),
     adamw_formula(0.05, beta1=0.85, eps=1e-6, weight_decay=0.1)),
]


@pytest.mark.parametrize("name,factory,expected", FORMULA_CASES, ids=[c[0] for c in FORMULA_CASES])
def test_first_three_steps_follow_the_formula(name, factory, expected):
    history, opt = _run(factory)
    for got, want in zip(history, expected, strict=True):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)
    assert opt.step_count == 3 and opt.global_step.asnumpy() == 3


@pytest.mark.parametrize("name,factory,expected", FORMULA_CASES, ids=[c[0] for c in FORMULA_CASES])
def test_float32_parameters_stay_float32(name, factory, expected):
    history, opt = _run(factory, np.float32)
    for p in opt.parameters:
        assert p.dtype == engine.float32
    for g, w in zip(history[-1], expected[-1], strict=True):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6)


# ----------------------------------------------------------------------------- against torch.optim

TORCH_CASES = [
    # (engine factory, torch factory, tolerance). MindSpore's SGD decays every parameter, as torch.
    (lambda p: nn.SGD(p, 0.1), lambda p: torch.optim.SGD(p, lr=0.1), 1e-14),
    (lambda p: nn.SGD(p, 0.05, momentum=0.9, dampening=0.3, weight_decay=0.01),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01), 1e-14),
    (lambda p: nn.SGD(p, 0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01), 1e-14),
    # Momentum is torch's SGD with momentum and no dampening (no decay: its filter differs).
    (lambda p: nn.Momentum(p, 0.05, 0.9, use_nesterov=True),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True), 1e-14),
    # Adam: torch adds eps to sqrt(v_hat), MindSpore to sqrt(v); the two differ by O(eps).
    (lambda p: nn.Adam(p, 0.01), lambda p: torch.optim.Adam(p, lr=0.01), 1e-6),
    # AdamW: MindSpore 2.x's formula is torch's, exactly.
    (lambda p: nn.AdamW(p, 0.01, weight_decay=0.1),
     lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1), 1e-13),
]


@pytest.mark.parametrize("ours,theirs,rtol", TORCH_CASES)
def test_matches_torch_optim(ours, theirs, rtol):
    history, _ = _run(ours)
    tparams = [torch.tensor(W0.copy(), requires_grad=True),
               torch.tensor(G0.copy(), requires_grad=True)]
    topt = theirs(tparams)
    for step, grads in enumerate(GRADS):
        for tp, g in zip(tparams, grads, strict=True):
            tp.grad = torch.tensor(g)
        topt.step()
        for tp, got in zip(tparams, history[step], strict=True):
            np.testing.assert_allclose(got, tp.detach().numpy(), rtol=rtol, atol=1e-12)


# ----------------------------------------------------------------------------- learning rate


def test_learning_rate_can_change_between_steps():
    params = _params()
    opt = nn.SGD(params, 0.1)
    opt((Tensor(GRADS[0][0]), Tensor(GRADS[0][1])))
    opt.learning_rate = 0.5
    before = params[0].asnumpy().copy()
    opt((Tensor(GRADS[1][0]), Tensor(GRADS[1][1])))
    np.testing.assert_allclose(params[0].asnumpy(), before - 0.5 * GRADS[1][0], rtol=1e-14)
    opt.set_learning_rate(0.25)
    assert opt.get_lr().asnumpy() == np.float32(0.25)
    before = params[0].asnumpy().copy()
    opt((Tensor(GRADS[2][0]), Tensor(GRADS[2][1])))
    np.testing.assert_allclose(params[0].asnumpy(), before - 0.25 * GRADS[2][0], rtol=1e-14)
    # MindSpore code writes into the learning-rate Parameter with ops.assign.
    ops.assign(opt.learning_rate, Tensor(np.float32(0.125)))
    before = params[0].asnumpy().copy()
    opt((Tensor(GRADS[0][0]), Tensor(GRADS[0][1])))
    np.testing.assert_allclose(params[0].asnumpy(), before - 0.125 * GRADS[0][0], rtol=1e-14)
    assert repr(opt.learning_rate).startswith("Parameter (name=learning_rate, shape=()")


def test_per_step_learning_rate_list_uses_the_last_value_after_its_end():
    params = _params()
    opt = nn.SGD(params, [0.1, 0.01])
    lrs = []
    for gw, gg in GRADS:
        before = params[0].asnumpy().copy()
        opt((Tensor(gw), Tensor(gg)))
        lrs.append(float(np.mean((before - params[0].asnumpy()) / gw)))
    assert lrs == pytest.approx([0.1, 0.01, 0.01], rel=1e-12)


def test_bad_hyperparameters_are_refused():
    with pytest.raises(ValueError, match="learning_rate"):
        nn.SGD(_params(), -0.1)
    with pytest.raises(ValueError, match="beta1"):
        nn.Adam(_params(), beta1=1.0)
    with pytest.raises(ValueError, match="eps"):
        nn.Adam(_params(), eps=0.0)
    with pytest.raises(ValueError, match="nesterov"):
        nn.SGD(_params(), momentum=0.0, nesterov=True)
    with pytest.raises(ValueError, match="empty"):
        nn.Adam([])
    p = _params()
    with pytest.raises(ValueError, match="listed twice"):
        nn.Adam([p[0], p[1], p[0]])
    opt = nn.SGD(_params())
    with pytest.raises(ValueError, match="learning_rate"):
        opt.learning_rate = float("nan")


# ----------------------------------------------------------------------------- gradients in


def test_gradient_count_and_shape_mismatch_are_reported():
    opt = nn.Adam(_params())
    before = [p.asnumpy().copy() for p in opt.parameters]
    with pytest.raises(ValueError, match="1 gradient.*2 parameter"):
        opt((Tensor(GRADS[0][0]),))
    with pytest.raises(ValueError, match=r"'bn.gamma' has shape \(5,\).*shape \(4,\)"):
        opt((Tensor(GRADS[0][0]), Tensor(np.zeros(5))))
    with pytest.raises(TypeError, match="tuple of gradients"):
        opt(Tensor(GRADS[0][0]))
    for p, b in zip(opt.parameters, before, strict=True):
        assert np.array_equal(p.asnumpy(), b)
    assert opt.step_count == 0


def test_parameters_that_do_not_require_grad_are_left_alone():
    params = _params()
    params[1].requires_grad = False
    opt = nn.Adam(params, 0.1)
    frozen = params[1].asnumpy().copy()
    opt((Tensor(GRADS[0][0]), Tensor(GRADS[0][1])))
    assert np.array_equal(params[1].asnumpy(), frozen)
    assert not np.array_equal(params[0].asnumpy(), W0)
    # Unfreezing takes effect at the next step.
    params[1].requires_grad = True
    opt((Tensor(GRADS[1][0]), Tensor(GRADS[1][1])))
    assert not np.array_equal(params[1].asnumpy(), frozen)


def test_set_data_between_steps_is_respected():
    params = _params()
    opt = nn.SGD(params, 0.1)
    opt((Tensor(GRADS[0][0]), Tensor(GRADS[0][1])))
    params[0].set_data(Tensor(np.ones((3, 2))))
    opt((Tensor(GRADS[1][0]), Tensor(GRADS[1][1])))
    np.testing.assert_allclose(params[0].asnumpy(), 1 - 0.1 * GRADS[1][0], rtol=1e-14)


def test_gradients_passed_in_are_not_modified():
    opt = nn.Adam(_params(), 0.1, weight_decay=0.1, loss_scale=2.0)
    grads = (Tensor(GRADS[0][0].copy()), Tensor(GRADS[0][1].copy()))
    opt(grads)
    assert np.array_equal(grads[0].asnumpy(), GRADS[0][0])


def test_a_step_allocates_no_parameter_sized_buffers():
    rs = np.random.RandomState(1)
    params = [Parameter(rs.randn(100, 100).astype(np.float32), name="w"),
              Parameter(rs.randn(100).astype(np.float32), name="b")]
    grads = tuple(Tensor(rs.randn(*p.shape).astype(np.float32)) for p in params)
    for opt in (nn.Adam(params, weight_decay=0.01), nn.SGD(params, momentum=0.9),
                nn.Momentum(params, 0.1, 0.9), nn.AdamW(params)):
        opt(grads)  # first step after packing
        tracemalloc.start()
        opt(grads)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 8_000, f"{type(opt).__name__} allocated {peak} bytes in a step"


# ----------------------------------------------------------------------------- state


def test_state_dict_round_trip_continues_identically():
    a_params = _params()
    a = nn.Adam(a_params, 0.05, weight_decay=0.01)
    for gw, gg in GRADS[:2]:
        a((Tensor(gw), Tensor(gg)))
    state = a.state_dict()
    saved = {k: (dict(v) if isinstance(v, dict) else v) for k, v in state.items()}
    b_params = [Parameter(p.asnumpy().copy(), name=p.name) for p in a_params]
    b = nn.Adam(b_params, 0.5, weight_decay=0.01)
    b.load_state_dict(state)
    assert b.step_count == 2 and b.get_lr().asnumpy() == np.float32(0.05)
    for opt in (a, b):
        opt((Tensor(GRADS[2][0]), Tensor(GRADS[2][1])))
    for pa, pb in zip(a_params, b_params, strict=True):
        assert np.array_equal(pa.asnumpy(), pb.asnumpy())
    # The dict was a copy: training on did not change it.
    assert np.array_equal(state["moment1"]["w"], saved["moment1"]["w"])
    assert set(state) == {"type", "step", "learning_rate", "moment1", "moment2"}
    assert set(state["moment2"]) == {"w", "bn.gamma"}
    assert all(isinstance(v, np.ndarray) for v in state["moment2"].values())


def test_sgd_state_includes_first_step_flags():
    params = _params()
    opt = nn.SGD(params, 0.1, momentum=0.9, dampening=0.5)
    state0 = opt.state_dict()
    assert bool(state0["stat"]["w"]) is True
    opt((Tensor(GRADS[0][0]), Tensor(GRADS[0][1])))
    fresh = nn.SGD(_params(), 0.1, momentum=0.9, dampening=0.5)
    fresh.load_state_dict(opt.state_dict())
    for o in (opt, fresh):
        o((Tensor(GRADS[1][0]), Tensor(GRADS[1][1])))
    np.testing.assert_array_equal(fresh.state_dict()["accum"]["w"], opt.state_dict()["accum"]["w"])


def test_bad_state_is_refused_and_changes_nothing():
    opt = nn.Adam(_params(), 0.05)
    opt((Tensor(GRADS[0][0]), Tensor(GRADS[0][1])))
    good = opt.state_dict()

    def broken(**changes):
        state = {k: (dict(v) if isinstance(v, dict) else v) for k, v in good.items()}
        for key, value in changes.items():
            slot, _, name = key.partition("__")
            if name:
                state[slot][name.replace("_", ".")] = value
            else:
                state[slot] = value
        return state

    bad_states = [
        (broken(moment1__w=np.zeros((2, 3))), r"'moment1' of parameter 'w': expected shape "
                                              r"\(3, 2\), found \(2, 3\)"),
        ({k: v for k, v in good.items() if k != "moment2"}, "missing entries"),
        (broken(moment1=dict(good["moment1"], extra=np.zeros(1))), "extra"),
        (broken(type="SGD"), "SGD optimizer"),
        (broken(step=np.array(-1)), "non-negative"),
    ]
    missing = broken()
    del missing["moment1"]["w"]
    bad_states.append((missing, r"\['w'\] have no saved state"))
    opt.set_learning_rate(0.07)
    before = opt.state_dict()
    for state, message in bad_states:
        with pytest.raises(ValueError, match=message):
            opt.load_state_dict(state)
        after = opt.state_dict()
        assert after["step"] == before["step"] and after["learning_rate"] == before["learning_rate"]
        for slot in ("moment1", "moment2"):
            for n in after[slot]:
                assert np.array_equal(after[slot][n], before[slot][n])


def test_duplicate_parameter_names_cannot_key_the_state():
    opt = nn.Adam([Parameter(np.zeros(2)), Parameter(np.zeros(3))])
    with pytest.raises(ValueError, match="names repeat"):
        opt.state_dict()


# ----------------------------------------------------------------------------- wrappers


class _Line(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([[0.5], [-0.25]]), name="w")
        self.b = Parameter(np.array([0.1]), name="b")

    def construct(self, x):
        return ops.matmul(x, self.w) + self.b


def test_value_and_grad_over_optimizer_parameters_then_optimizer_step():
    net = _Line()
    opt = nn.SGD(net.trainable_params(), 0.1)
    assert isinstance(opt.parameters, engine.ParameterTuple)
    assert list(opt.parameters) == net.trainable_params()
    x = Tensor(np.array([[1.0, 2.0], [3.0, -1.0]]))
    y = Tensor(np.array([[1.0], [0.0]]))
    loss_fn = nn.MSELoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = engine.value_and_grad(forward, None, opt.parameters)
    first, grads = grad_fn(x, y)
    expected_w = net.w.asnumpy() - 0.1 * grads[0].asnumpy()
    opt(grads)
    np.testing.assert_allclose(net.w.asnumpy(), expected_w, rtol=1e-14)
    for _ in range(50):
        loss, grads = grad_fn(x, y)
        opt(grads)
    assert float(loss.asnumpy()) < float(first.asnumpy())


def test_train_one_step_cell_returns_the_loss_and_updates():
    net = _Line()
    loss_net = nn.WithLossCell(net, nn.MSELoss())
    assert loss_net.backbone_network is net
    opt = nn.Momentum(net.trainable_params(), 0.05, 0.9)
    train = nn.TrainOneStepCell(loss_net, opt)
    assert [p.name for p in train.trainable_params()] == ["w", "b"]  # names are not prefixed
    x = Tensor(np.array([[1.0, 2.0], [3.0, -1.0]]))
    y = Tensor(np.array([[1.0], [0.0]]))
    expected_loss = loss_net(x, y)
    grads = engine.grad(loss_net, None, opt.parameters)(x, y)
    w_before = net.w.asnumpy().copy()
    loss = train(x, y)
    assert loss.asnumpy() == expected_loss.asnumpy()
    np.testing.assert_allclose(net.w.asnumpy(), w_before - 0.05 * grads[0].asnumpy(), rtol=1e-14)


def test_train_one_step_cell_sens_scales_the_gradients():
    nets = [_Line(), _Line()]
    steps = [nn.TrainOneStepCell(nn.WithLossCell(n, nn.MSELoss()), nn.SGD(n.trainable_params(),
                                 0.1), sens=s) for n, s in zip(nets, (1.0, 3.0), strict=True)]
    x = Tensor(np.array([[1.0, 2.0]]))
    y = Tensor(np.array([[1.0]]))
    w0 = nets[0].w.asnumpy().copy()
    for s in steps:
        s(x, y)
    np.testing.assert_allclose(w0 - nets[1].w.asnumpy(), 3.0 * (w0 - nets[0].w.asnumpy()),
                               rtol=1e-12)
