"""The compiled training step (engine.plan) trains exactly as the eager path does."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import engine
from app.compiler import compile_project
from app.io.project_file import load_project
from engine import _random, nn
from engine.plan import compile_step


def _mlp():
    return nn.SequentialCell(nn.Dense(2, 16), nn.Tanh(), nn.Dense(16, 16), nn.ReLU(),
                             nn.Dense(16, 3), nn.Sigmoid(), nn.Dense(3, 3))


def _cnn():
    return nn.SequentialCell(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
                             nn.Conv2d(8, 16, 3), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                             nn.Dense(16 * 7 * 7, 10))


OPTIMIZERS = {
    "sgd": lambda ps: nn.SGD(ps, 0.1),
    "momentum": lambda ps: nn.Momentum(ps, 0.05, 0.9, weight_decay=1e-4),
    "adam": lambda ps: nn.Adam(ps, 0.01),
    "nesterov": lambda ps: nn.SGD(ps, 0.05, momentum=0.9, nesterov=True),
}


def _train(make_net, loss, make_opt, xs, ys, compiled: bool, seed=0, on_step=None):
    """Weights (and last loss) after len(xs) steps from the same start, eager or compiled."""
    _random.set_seed(seed)
    net = make_net()
    net.set_train(True)
    opt = make_opt(net.trainable_params())
    _random.set_seed(seed + 1)
    if compiled:
        plan = compile_step(net, loss, opt, xs[0], ys[0])
        assert plan is not None
        for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
            if on_step:
                on_step(i, opt)
            value = plan.step(x, y)
    else:
        grad_fn = engine.value_and_grad(lambda a, b: loss(net(a), b), None, opt.parameters)
        for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
            if on_step:
                on_step(i, opt)
            out, grads = grad_fn(engine.Tensor(x), engine.Tensor(y))
            opt(grads)
            value = float(out.asnumpy())
    return [p.asnumpy().copy() for p in net.get_parameters()], value


def _assert_same(a, b):
    for u, v in zip(a[0], b[0], strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-6, atol=1e-7)
    assert a[1] == pytest.approx(b[1], rel=1e-6)


@pytest.mark.parametrize("opt", sorted(OPTIMIZERS))
def test_mlp_weights_after_100_steps_equal_eager(opt):
    rs = np.random.RandomState(0)
    xs = rs.randn(100, 32, 2).astype(np.float32)
    ys = rs.randint(0, 3, (100, 32))
    args = (_mlp, nn.CrossEntropyLoss(), OPTIMIZERS[opt], xs, ys)
    _assert_same(_train(*args, compiled=False), _train(*args, compiled=True))


def test_mse_and_one_hot_losses_equal_eager():
    rs = np.random.RandomState(1)
    xs = rs.randn(100, 16, 2).astype(np.float32)
    for loss, ys in (
        (nn.MSELoss(), rs.randn(100, 16, 3).astype(np.float32)),
        (nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean"),
         np.eye(3, dtype=np.float32)[rs.randint(0, 3, (100, 16))]),
        (nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
         rs.randint(0, 3, (100, 16)).astype(np.int32)),
    ):
        args = (_mlp, loss, OPTIMIZERS["momentum"], xs, ys)
        _assert_same(_train(*args, compiled=False), _train(*args, compiled=True))


def test_small_cnn_equals_eager():
    rs = np.random.RandomState(2)
    xs = rs.randn(30, 8, 1, 28, 28).astype(np.float32)
    ys = rs.randint(0, 10, (30, 8))
    args = (_cnn, nn.CrossEntropyLoss(), OPTIMIZERS["momentum"], xs, ys)
    _assert_same(_train(*args, compiled=False), _train(*args, compiled=True))


def test_live_learning_rate_changes_are_used():
    rs = np.random.RandomState(3)
    xs = rs.randn(40, 32, 2).astype(np.float32)
    ys = rs.randint(0, 3, (40, 32))

    def change(i, opt):
        if i == 10:
            opt.learning_rate = 0.5
        if i == 25:
            engine.ops.assign(opt.learning_rate, engine.Tensor(np.float32(0.001)))

    args = (_mlp, nn.CrossEntropyLoss(), OPTIMIZERS["sgd"], xs, ys)
    changed = _train(*args, compiled=True, on_step=change)
    _assert_same(_train(*args, compiled=False, on_step=change), changed)
    assert not np.allclose(changed[0][0], _train(*args, compiled=True)[0][0])


def test_logits_buffer_holds_the_network_output():
    rs = np.random.RandomState(4)
    net = _mlp()
    opt = nn.SGD(net.trainable_params(), 0.0)
    x, y = rs.randn(32, 2).astype(np.float32), rs.randint(0, 3, 32)
    plan = compile_step(net, nn.CrossEntropyLoss(), opt, x, y)
    loss = plan.step(x, y)
    np.testing.assert_array_equal(plan.logits, net(engine.Tensor(x)).asnumpy())
    assert loss == pytest.approx(float(nn.CrossEntropyLoss()(net(engine.Tensor(x)),
                                                              engine.Tensor(y)).asnumpy()))


def _example_data(compiled, n, steps, rs):
    shape = [n if d == "N" else d for d in compiled.input_shapes[0]]
    dtype = compiled.input_dtypes[0]
    if dtype.startswith("int"):
        xs = rs.randint(0, 20, (steps, *shape)).astype(dtype)
    else:
        xs = rs.randn(steps, *shape).astype(np.float32)
    out = [n if d == "N" else d for d in compiled.output_shape]
    if isinstance(compiled.loss_fn, nn.CrossEntropyLoss):
        ys = rs.randint(0, out[-1], (steps, n))
    else:
        ys = rs.randn(steps, *out).astype(np.float32)
    return xs, ys


def _traced(fn):
    """(bytes still held after `fn()` beyond before it, peak bytes during it), NumPy's and
    ours (tracemalloc's own bookkeeping left out)."""
    ours = [tracemalloc.Filter(False, tracemalloc.__file__)]
    tracemalloc.start()
    try:
        start = tracemalloc.take_snapshot().filter_traces(ours)
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        fn()
        peak = tracemalloc.get_traced_memory()[1] - base
        end = tracemalloc.take_snapshot().filter_traces(ours)
    finally:
        tracemalloc.stop()
    return sum(s.size_diff for s in end.compare_to(start, "filename")), peak


def test_steady_state_steps_allocate_nothing():
    compiled = compile_project(load_project("resources/examples/spiral_mlp.cwproj"))
    net = compiled.network
    net.set_train(True)
    opt = nn.Adam(net.trainable_params(), 0.01)
    rs = np.random.RandomState(5)
    xs = rs.randn(8, 32, 2).astype(np.float32)
    ys = rs.randint(0, 2, (8, 32))
    plan = compile_step(net, compiled.loss_fn, opt, xs[0], ys[0])

    def steps(n):
        for i in range(n):
            plan.step(xs[i % 8], ys[i % 8])

    steps(20)  # warm-up, also of tracemalloc's own filters (their first use allocates)
    _traced(lambda: steps(5))
    grown, _ = _traced(lambda: steps(200))
    assert grown < 512  # flat: nothing is kept from one step to the next


def test_a_step_makes_no_layer_sized_temporaries():
    net = nn.SequentialCell(nn.Dense(784, 256), nn.ReLU(), nn.Dense(256, 128), nn.ReLU(),
                            nn.Dense(128, 10))
    opt = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    rs = np.random.RandomState(6)
    x, y = rs.randn(128, 784).astype(np.float32), rs.randint(0, 10, 128)
    plan = compile_step(net, nn.CrossEntropyLoss(), opt, x, y)
    _traced(lambda: plan.step(x, y))  # warm-up
    grown, peak = _traced(lambda: plan.step(x, y))
    # The smallest activation is 128 x 128 floats (64 KB); what a step makes besides its
    # buffers is NumPy's own iteration buffer (8192 elements) and small index arrays.
    assert grown < 512
    assert peak < 128 * 128 * 4
