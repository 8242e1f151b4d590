"""Compiled steps: Cells that run eagerly (bprop, hooks, Python between Cells) and staleness."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import nn, ops
from engine.plan import compile_step


class Doubled(nn.Cell):
    """Computes between its Cells: the container runs eagerly as a whole."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        return self.fc(x) * 2.0


class ClipGrad(nn.Cell):
    """Identity with a custom bprop that halves the gradient."""

    def construct(self, x):
        return x

    def bprop(self, x, out, dout):
        return (dout * 0.5,)


def _net(middle):
    return nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), middle, nn.Dense(4, 2))


def _data(steps=30, seed=0):
    rs = np.random.RandomState(seed)
    return rs.randn(steps, 8, 3).astype(np.float32), rs.randint(0, 2, (steps, 8))


def _run(make, compiled, xs, ys, hook=None):
    """Weights after the steps, and what `hook(net)` recorded, from the same start."""
    engine._random.set_seed(0)
    net = make()
    net.set_train(True)
    seen = hook(net) if hook else None
    loss = nn.CrossEntropyLoss()
    opt = nn.SGD(net.trainable_params(), 0.1)
    if compiled:
        plan = compile_step(net, loss, opt, xs[0], ys[0])
        for x, y in zip(xs, ys, strict=True):
            plan.step(x, y)
    else:
        fn = engine.value_and_grad(lambda a, b: loss(net(a), b), None, opt.parameters)
        for x, y in zip(xs, ys, strict=True):
            opt(fn(engine.Tensor(x), engine.Tensor(y))[1])
        plan = None
    return [p.asnumpy().copy() for p in net.get_parameters()], seen, plan


def _same(a, b):
    for u, v in zip(a, b, strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("middle, cell, why", [
    (lambda: ClipGrad(), "2", "bprop"),
    (lambda: Doubled(), "2", "no compiled rule"),
])
def test_eager_cells_give_the_eager_result_and_are_named(middle, cell, why):
    xs, ys = _data()
    eager, _, _ = _run(lambda: _net(middle()), False, xs, ys)
    weights, _, plan = _run(lambda: _net(middle()), True, xs, ys)
    _same(eager, weights)
    assert plan.compiled == 3  # Dense, ReLU, Dense
    assert f"{cell} runs eagerly" in plan.describe() and why in plan.describe()


def _hooks(net):
    """Forward and backward hooks on the ReLU; the backward one scales the gradient."""
    seen = []
    relu = net._cells["1"]
    relu.register_forward_hook(lambda c, i, o: seen.append(("fwd", o.asnumpy().copy())))

    def backward(cell, grad_in, grad_out):
        seen.append(("bwd", grad_in[0].asnumpy().copy()))
        return (grad_out[0] * 3.0,)

    relu.register_backward_hook(backward)
    return seen


def test_hooks_fire_with_the_eager_values_in_the_eager_order():
    xs, ys = _data(10)
    eager, eager_seen, _ = _run(lambda: _net(nn.ReLU()), False, xs, ys, _hooks)
    weights, seen, plan = _run(lambda: _net(nn.ReLU()), True, xs, ys, _hooks)
    _same(eager, weights)
    assert [k for k, _ in seen] == [k for k, _ in eager_seen] == ["fwd", "bwd"] * 10
    for (_, a), (_, b) in zip(eager_seen, seen, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-6)
    assert "1 runs eagerly: it has hooks" in plan.describe()


def test_nothing_compiled_gives_none_with_a_reason():
    net = Doubled()
    plan = compile_step(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1),
                        np.zeros((2, 4), np.float32), np.zeros((2, 4), np.float32))
    assert plan is None
    assert "no Cell of the network has a compiled rule" in engine.plan.last_reason


def _plan():
    net = _net(nn.ReLU())
    net.set_train(True)
    xs, ys = _data(2)
    opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    plan = compile_step(net, nn.CrossEntropyLoss(), opt, xs[0], ys[0])
    plan.step(xs[0], ys[0])
    assert not plan.stale()
    return net, plan, xs, ys


def test_a_plan_goes_stale_when_what_it_depends_on_changes():
    net, plan, _, _ = _plan()
    net.set_train(False)
    assert plan.stale()

    net, plan, _, _ = _plan()
    handle = net._cells["1"].register_forward_hook(lambda *a: None)
    assert plan.stale()
    net, plan, _, _ = _plan()
    handle.remove()
    assert plan.stale()

    net, plan, _, _ = _plan()
    net._cells["0"].weight.requires_grad = False
    assert plan.stale()

    net, plan, _, _ = _plan()
    net._cells["3"].weight.set_data(np.zeros((2, 4), np.float32))
    assert plan.stale()

    net, plan, _, _ = _plan()
    net._cells["1"] = nn.Tanh()
    assert plan.stale()


def test_a_plan_fits_only_batches_of_its_shape_and_dtype():
    _, plan, xs, ys = _plan()
    assert plan.valid_for(xs[0], ys[0])
    assert not plan.valid_for(xs[0][:5], ys[0][:5])  # the last, partial batch
    assert not plan.valid_for(xs[0].astype(np.float64), ys[0])


def test_learning_rate_and_optimizer_options_are_read_at_every_step():
    net, plan, xs, ys = _plan()
    opt = plan.optimizer
    before = [p.asnumpy().copy() for p in net.get_parameters()]
    opt.learning_rate = 0.0
    opt.momentum = 0.0
    plan.step(xs[1], ys[1])
    assert not plan.stale()
    for a, p in zip(before, net.get_parameters(), strict=True):
        np.testing.assert_array_equal(a, p.asnumpy())
    ops.assign(opt.learning_rate, engine.Tensor(np.float32(0.1)))
    plan.step(xs[1], ys[1])
    assert not np.array_equal(before[0], net._cells["0"].weight.asnumpy())
