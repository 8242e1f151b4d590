"""grad, value_and_grad, GradOperation: return shapes, errors, deep chains, no_grad."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import Parameter, Tensor, nn, ops


def t(*values):
    return Tensor(np.array(values, np.float32))


def f(x, y):
    return (x * x * y).sum()


def test_grad_positions():
    x, y = t(1.0, 2.0), t(3.0, 4.0)
    assert engine.grad(f)(x, y).asnumpy().tolist() == [6.0, 16.0]
    gx, gy = engine.grad(f, (0, 1))(x, y)
    assert gy.asnumpy().tolist() == [1.0, 4.0]
    (gy2,) = engine.grad(f, (1,))(x, y)
    assert gy2.asnumpy().tolist() == [1.0, 4.0]


class Lin(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.array([2.0, 3.0], np.float32), name="w")

    def construct(self, x):
        return (x * self.w).sum()


def test_grad_with_weights_and_value_and_grad():
    net = Lin()
    x = t(1.0, 5.0)
    gx, gw = engine.grad(net, 0, net.trainable_params())(x)
    assert gx.asnumpy().tolist() == [2.0, 3.0] and gw[0].asnumpy().tolist() == [1.0, 5.0]
    gw_only = engine.grad(net, None, net.trainable_params())(x)
    assert isinstance(gw_only, tuple) and gw_only[0].asnumpy().tolist() == [1.0, 5.0]
    value, grads = engine.value_and_grad(net, None, net.trainable_params())(x)
    assert value.asnumpy() == 17.0 and grads[0].asnumpy().tolist() == [1.0, 5.0]


def test_has_aux():
    def fn(x):
        return (x * x).sum(), x * 3
    g, aux = engine.grad(fn, has_aux=True)(t(2.0))
    assert g.asnumpy().tolist() == [4.0] and aux[0].asnumpy().tolist() == [6.0]
    (out, aux2), g2 = engine.value_and_grad(fn, has_aux=True)(t(2.0))
    assert out.asnumpy() == 4.0 and g2.asnumpy().tolist() == [4.0]


def test_grad_operation_forms():
    x, y = t(1.0), t(3.0)
    assert engine.ops.GradOperation()(f)(x, y).asnumpy().tolist() == [6.0]
    gx, gy = ops.GradOperation(get_all=True)(f)(x, y)
    assert gy.asnumpy().tolist() == [1.0]
    net = Lin()
    params = net.trainable_params()
    (gw,) = ops.GradOperation(get_by_list=True)(net, params)(t(1.0, 1.0))
    assert gw.asnumpy().tolist() == [1.0, 1.0]
    inputs, weights = ops.GradOperation(get_all=True, get_by_list=True)(net, params)(t(1.0, 1.0))
    assert inputs[0].asnumpy().tolist() == [2.0, 3.0]
    g = ops.GradOperation(sens_param=True)(lambda x: x * 2.0)(t(1.0, 1.0), t(5.0, 7.0))
    assert g.asnumpy().tolist() == [10.0, 14.0]


def test_gradient_accumulates_when_used_twice_and_unused_is_zero():
    g = engine.grad(lambda x, y: (x * 2.0 + x * 3.0).sum(), (0, 1))(t(1.0), t(1.0))
    assert g[0].asnumpy().tolist() == [5.0] and g[1].asnumpy().tolist() == [0.0]


def test_deep_chain_has_no_recursion_limit():
    def chain(x):
        for _ in range(10_000):
            x = x + 1.0
        return x.sum()

    assert engine.grad(chain)(t(0.0)).asnumpy().tolist() == [1.0]


def test_no_grad_and_outside_grad_record_nothing():
    x = Tensor(np.ones(2, np.float32))
    with engine.no_grad():
        assert (x * 2.0)._node is None
    p = Parameter(np.ones(2, np.float32))
    assert (p * 2.0)._node is None  # plain forward calls never build a tape
    assert engine.grad(lambda v: engine.no_grad()(lambda: v * 2.0)().sum())(x).asnumpy().tolist() \
        == [0.0, 0.0]


def test_bad_calls_are_clear():
    with pytest.raises(TypeError, match="not a Tensor"):
        engine.grad(lambda x: x * 2)(3.0)
    with pytest.raises(TypeError, match="returned a float"):
        engine.grad(lambda x: 3.0)(t(1.0))
    with pytest.raises(ValueError, match="out of range"):
        engine.grad(f, 5)(t(1.0), t(1.0))
    with pytest.raises(ValueError, match="cannot both be None"):
        engine.grad(f, None, None)
    with pytest.raises(TypeError):
        engine.grad(42)


def test_tape_is_per_thread():
    import threading

    seen = {}
    p = Parameter(np.ones(2, np.float32), name="p")

    def other():
        seen["node"] = (p * 2.0)._node

    def fn(x):
        th = threading.Thread(target=other)
        th.start()
        th.join()
        return (x * p).sum()

    engine.grad(fn, 0, [p])(t(1.0, 1.0))
    assert seen["node"] is None
