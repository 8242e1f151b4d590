"""The four hook kinds: order, chaining, removal, replacement, errors."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import Tensor, nn, ops
from engine.nn import HookError


def ones(*shape):
    return Tensor(np.ones(shape, np.float32))


class Scale(nn.Cell):
    def __init__(self, k=3.0):
        super().__init__()
        self.k = k

    def construct(self, x):
        return x * self.k


class Outer(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = Scale()

    def construct(self, x):
        return self.inner(x) * 2.0


def test_hooks_run_in_registration_order_and_chain():
    cell = Scale()
    calls = []
    cell.register_forward_pre_hook(lambda c, inp: calls.append("pre1") or (inp[0] + 1,))
    cell.register_forward_pre_hook(lambda c, inp: calls.append(("pre2", inp[0].asnumpy()[0])))
    cell.register_forward_hook(lambda c, inp, out: calls.append("fwd1") or out * 10)
    cell.register_forward_hook(lambda c, inp, out: calls.append(("fwd2", out.asnumpy()[0])))
    out = cell(ones(1))
    assert calls == ["pre1", ("pre2", 2.0), "fwd1", ("fwd2", 60.0)]
    assert out.asnumpy()[0] == 60.0


def test_nested_order_parent_pre_first_child_forward_first_child_backward_first():
    net = Outer()
    calls = []
    net.register_forward_pre_hook(lambda c, i: calls.append("outer pre"))
    net.inner.register_forward_pre_hook(lambda c, i: calls.append("inner pre"))
    net.register_forward_hook(lambda c, i, o: calls.append("outer fwd"))
    net.inner.register_forward_hook(lambda c, i, o: calls.append("inner fwd"))
    net.register_backward_hook(lambda c, gi, go: calls.append("outer bwd"))
    net.inner.register_backward_hook(lambda c, gi, go: calls.append("inner bwd"))
    engine.grad(net)(ones(2))
    assert calls == ["outer pre", "inner pre", "inner fwd", "outer fwd", "inner bwd", "outer bwd"]


def test_each_hook_runs_once_per_call_and_twice_for_two_calls():
    cell = Scale()
    counts = {"pre": 0, "fwd": 0, "bwd": 0}
    cell.register_forward_pre_hook(lambda c, i: counts.__setitem__("pre", counts["pre"] + 1))
    cell.register_forward_hook(lambda c, i, o: counts.__setitem__("fwd", counts["fwd"] + 1))
    cell.register_backward_hook(lambda c, gi, go: counts.__setitem__("bwd", counts["bwd"] + 1))
    engine.value_and_grad(lambda x: cell(cell(x)).sum())(ones(2))
    assert counts == {"pre": 2, "fwd": 2, "bwd": 2}


def test_backward_hook_sees_and_replaces_gradients():
    cell = Scale(3.0)
    seen = {}

    def hook(c, grad_input, grad_output):
        seen["in"] = grad_input[0].asnumpy().copy()
        seen["out"] = grad_output[0].asnumpy().copy()
        return (grad_output[0] * 0 + 5.0,)

    cell.register_backward_hook(hook)
    g = engine.grad(lambda x: (cell(x) * 2.0).sum())(ones(2))
    assert seen["in"].tolist() == [2.0, 2.0]
    assert seen["out"].tolist() == [6.0, 6.0]
    assert g.asnumpy().tolist() == [5.0, 5.0]


def test_several_backward_hooks_chain():
    cell = Scale(1.0)
    got = []
    cell.register_backward_hook(lambda c, gi, go: (go[0] * 2,))
    cell.register_backward_hook(lambda c, gi, go: got.append(go[0].asnumpy().tolist()))
    g = engine.grad(lambda x: cell(x).sum())(ones(2))
    assert got == [[2.0, 2.0]]
    assert g.asnumpy().tolist() == [2.0, 2.0]


def test_backward_hook_reaches_parameters_inside():
    class WithParam(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = engine.Parameter(np.full(2, 3.0, np.float32), name="w")

        def construct(self, x):
            return x * self.w

    cell = WithParam()
    cell.register_backward_hook(lambda c, gi, go: None)
    gx, (gw,) = engine.grad(lambda x: cell(x).sum(), 0, cell.trainable_params())(
        Tensor(np.array([1.0, 2.0], np.float32)))
    assert gx.asnumpy().tolist() == [3.0, 3.0]
    assert gw.asnumpy().tolist() == [1.0, 2.0]


def test_remove_and_context_manager():
    cell = Scale()
    calls = []
    handle = cell.register_forward_hook(lambda c, i, o: calls.append(1))
    cell(ones(1))
    handle.remove()
    handle.remove()  # removing twice is harmless
    cell(ones(1))
    with cell.register_forward_pre_hook(lambda c, i: calls.append(2)):
        cell(ones(1))
    cell(ones(1))
    assert calls == [1, 2]
    assert not cell._hooked


def test_hook_backward_replaces_gradient():
    hook = ops.HookBackward(lambda g: (g[0] * 10,))
    g = engine.grad(lambda x: (hook(x * 2.0) * 3.0).sum())(ones(2))
    assert g.asnumpy().tolist() == [60.0, 60.0]
    with pytest.raises(TypeError):
        ops.HookBackward(42)
    with pytest.raises(TypeError):
        hook(3.0)


def test_non_callable_hook_is_refused():
    with pytest.raises(TypeError, match="must be callable"):
        Scale().register_forward_hook("nope")


def test_exception_in_hook_names_the_hook_and_the_cell():
    net = Outer()

    def broken(cell, inputs):
        raise KeyError("boom")

    net.inner.register_forward_pre_hook(broken)
    with pytest.raises(HookError, match="broken.*Scale 'inner'.*KeyError") as info:
        net(ones(1))
    assert isinstance(info.value.__cause__, KeyError)


def test_exception_in_backward_hook_reaches_grad_caller():
    cell = Scale()
    cell.register_backward_hook(lambda c, gi, go: 1 / 0)
    with pytest.raises(HookError, match="ZeroDivisionError"):
        engine.grad(lambda x: cell(x).sum())(ones(1))


def test_bprop_wrong_count_is_an_error():
    class Bad(nn.Cell):
        def construct(self, x, y):
            return x * y

        def bprop(self, x, y, out, dout):
            return (dout,)

    with pytest.raises(ValueError, match="returned 1 gradient"):
        engine.grad(Bad(), (0, 1))(ones(1), ones(1))


def test_bprop_bare_tensor_for_one_input_and_grad_inside():
    class Square(nn.Cell):
        def construct(self, x):
            return x * x

        def bprop(self, x, out, dout):
            return engine.grad(lambda t: (t * t).sum())(x) * dout

    g = engine.grad(lambda x: Square()(x).sum())(Tensor(np.array([1.0, 3.0], np.float32)))
    assert g.asnumpy().tolist() == [2.0, 6.0]
