"""Forward, float64 gradcheck and dtype behaviour of every differentiable op in engine.ops."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import engine
from engine import Tensor, ops
from engine.gradcheck import gradcheck
from engine.ops import _functional, _reduce, _shape
from tests.engine.op_cases import OpCase

C = OpCase
BROADCAST = [[(3, 4), (3, 4)], [(3, 4), (4,)], [(2, 1, 4), (3, 1)], [(3, 4), ()]]


def _binary(name, fn, ref, **kw):
    return [C(name, fn, ref, shapes, **kw) for shapes in BROADCAST]


def _np_softmax(a, axis=-1):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _np_gelu(a):
    return 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a**3)))


CASES = [
    *_binary("add", ops.add, np.add),
    *_binary("sub", ops.sub, np.subtract),
    *_binary("mul", ops.mul, np.multiply),
    *_binary("div", ops.div, np.divide, positive=True),
    *_binary("pow", ops.pow, np.power, positive=True),
    *_binary("maximum", ops.maximum, np.maximum, away_from_zero=True),
    *_binary("minimum", ops.minimum, np.minimum, away_from_zero=True),
    C("mod", ops.mod, np.mod, [(3, 4), (4,)], positive=True),
    C("neg", ops.neg, np.negative, [(3, 4)]),
    C("matmul", ops.matmul, np.matmul, [(3, 4), (4, 5)]),
    C("matmul", ops.matmul, np.matmul, [(2, 3, 4), (4, 5)]),
    C("matmul", ops.matmul, np.matmul, [(4,), (4, 5)]),
    C("matmul", ops.matmul, np.matmul, [(3, 4), (4,)]),
    C("matmul", ops.matmul, np.matmul, [(2, 1, 3, 4), (5, 4, 2)]),
    C("dense", lambda x, w, b: ops.dense(x, w, b), lambda x, w, b: x @ w.T + b,
      [(5, 4), (3, 4), (3,)]),
    C("dense", lambda x, w, b: ops.dense(x, w, b), lambda x, w, b: x @ w.T + b,
      [(2, 5, 4), (3, 4), (3,)]),
    C("exp", ops.exp, np.exp, [(3, 4)]),
    C("log", ops.log, np.log, [(3, 4)], positive=True),
    C("sqrt", ops.sqrt, np.sqrt, [(3, 4)], positive=True),
    C("rsqrt", ops.rsqrt, lambda a: 1 / np.sqrt(a), [(3, 4)], positive=True),
    C("abs", ops.abs, np.abs, [(3, 4)], away_from_zero=True),
    C("relu", ops.relu, lambda a: np.maximum(a, 0), [(3, 4)], away_from_zero=True),
    C("sigmoid", ops.sigmoid, lambda a: 1 / (1 + np.exp(-a)), [(3, 4)]),
    C("tanh", ops.tanh, np.tanh, [(3, 4)]),
    C("square", ops.square, np.square, [(3, 4)]),
    C("sin", ops.sin, np.sin, [(3, 4)]),
    C("cos", ops.cos, np.cos, [(3, 4)]),
    C("softplus", ops.softplus, lambda a: np.log1p(np.exp(a)), [(3, 4)]),
    C("leaky_relu", ops.leaky_relu, lambda a: np.where(a > 0, a, 0.2 * a), [(3, 4)],
      away_from_zero=True),
    C("gelu", lambda a: ops.gelu(a, approximate="tanh"), _np_gelu, [(3, 4)]),
    C("gelu", lambda a: ops.gelu(a, approximate="none"), None, [(3, 4)]),
    C("clip", lambda a: ops.clip(a, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5), [(3, 4)],
      away_from_zero=True),
    C("cast", lambda a: ops.cast(a, engine.float32) * 1.0, None, [(3, 4)],
      check={"eps": 1e-2, "rtol": 1e-4, "atol": 1e-4}),
    C("identity", ops.identity, lambda a: a, [(3, 4)]),
    C("softmax", ops.softmax, _np_softmax, [(3, 4)]),
    C("softmax", lambda a: ops.softmax(a, 0), lambda a: _np_softmax(a, 0), [(3, 4)]),
    C("log_softmax", ops.log_softmax, lambda a: np.log(_np_softmax(a)), [(3, 4)]),
    C("logsumexp", lambda a: ops.logsumexp(a, 1), lambda a: np.log(np.exp(a).sum(1)), [(3, 4)]),
    C("sum", ops.sum, np.sum, [(3, 4)]),
    C("sum", lambda a: ops.sum(a, 1, keepdims=True), lambda a: a.sum(1, keepdims=True),
      [(3, 4)]),
    C("sum", lambda a: ops.sum(a, (0, 2)), lambda a: a.sum((0, 2)), [(2, 3, 4)]),
    C("mean", ops.mean, np.mean, [(3, 4)]),
    C("mean", lambda a: ops.mean(a, -1), lambda a: a.mean(-1), [(2, 3, 4)]),
    C("amax", lambda a: ops.amax(a, 1), lambda a: a.max(1), [(3, 4)], away_from_zero=True),
    C("amin", ops.amin, np.min, [(3, 4)], away_from_zero=True),
    C("prod", lambda a: ops.prod(a, 1), lambda a: a.prod(1), [(3, 4)]),
    C("var", lambda a: ops.var(a, 0), lambda a: a.var(0), [(5, 3)]),
    C("std", lambda a: ops.std(a, 1, ddof=1), lambda a: a.std(1, ddof=1), [(3, 5)]),
    C("select", lambda a, b: ops.select(a > 0, a, b), lambda a, b: np.where(a > 0, a, b),
      [(3, 4), (3, 4)], away_from_zero=True),
    C("select", lambda a, b: ops.select(a > 0, a, b), lambda a, b: np.where(a > 0, a, b),
      [(3, 4), (4,)], away_from_zero=True),
    C("reshape", lambda a: ops.reshape(a, (4, 3)), lambda a: a.reshape(4, 3), [(3, 4)]),
    C("reshape", lambda a: a.reshape(-1), lambda a: a.reshape(-1), [(3, 4)]),
    C("flatten", ops.flatten, lambda a: a.reshape(2, -1), [(2, 3, 4)]),
    C("transpose", lambda a: ops.transpose(a, (2, 0, 1)), lambda a: a.transpose(2, 0, 1),
      [(2, 3, 4)]),
    C("swapaxes", lambda a: ops.swapaxes(a, 0, 1), lambda a: a.swapaxes(0, 1), [(2, 3)]),
    C("squeeze", lambda a: ops.squeeze(a, 1), lambda a: a.squeeze(1), [(3, 1, 4)]),
    C("expand_dims", lambda a: ops.expand_dims(a, 1), lambda a: a[:, None], [(3, 4)]),
    C("broadcast_to", lambda a: ops.broadcast_to(a, (2, 3, 4)),
      lambda a: np.broadcast_to(a, (2, 3, 4)), [(3, 1)]),
    C("tile", lambda a: ops.tile(a, (2, 3)), lambda a: np.tile(a, (2, 3)), [(2, 3)]),
    C("concat", lambda a, b: ops.concat([a, b], 1), lambda a, b: np.concatenate([a, b], 1),
      [(3, 4), (3, 2)]),
    C("stack", lambda a, b: ops.stack([a, b], 1), lambda a, b: np.stack([a, b], 1),
      [(3, 4), (3, 4)]),
    C("split", lambda a: ops.split(a, 2, 1)[1], lambda a: a[:, 2:4], [(3, 5)]),
    C("getitem", lambda a: a[1:, ::2], lambda a: a[1:, ::2], [(3, 4)]),
    C("getitem", lambda a: a[[0, 2, 0]], lambda a: a[[0, 2, 0]], [(3, 4)]),
    C("getitem", lambda a: a[a > 0], lambda a: a[a > 0], [(3, 4)], away_from_zero=True),
    C("getitem", lambda a: a[..., 1], lambda a: a[..., 1], [(2, 3, 4)]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_forward_matches_numpy(case):
    arrays = case.make_inputs(np.float64)
    out = case.fn(*[Tensor(a) for a in arrays])
    if case.ref is not None:
        np.testing.assert_allclose(out.asnumpy(), case.ref(*arrays), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradcheck(case):
    arrays = case.make_inputs(np.float64)
    kw = {"rtol": 1e-5, "atol": 1e-6, **case.check}
    gradcheck(case.fn, [Tensor(a) for a in arrays], **kw)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_float32_stays_float32(case):
    arrays = case.make_inputs(np.float32)
    tensors = [Tensor(a) for a in arrays]
    out = case.fn(*tensors)
    assert out.dtype == engine.float32
    grads = engine.grad(lambda *xs: case.fn(*xs).sum(), tuple(range(len(tensors))))(*tensors)
    for g, t in zip(grads, tensors, strict=True):
        assert g.dtype == engine.float32 and g.shape == t.shape


def _differentiable_ops() -> set[str]:
    """Names of public ops whose module defines a gradient rule used by them."""
    names = set()
    for module in (_functional, _reduce, _shape):
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn) or name not in vars(ops):
                continue
            try:
                src = inspect.getsource(fn)
            except (OSError, TypeError):
                continue
            if "_vjp" in src or "_finish" in src:
                names.add(name)
    for name in ("exp", "log", "sqrt", "rsqrt", "abs", "relu", "sigmoid", "tanh", "square",
                 "sin", "cos", "softplus", "amax", "amin"):
        names.add(name)  # built by factories
    return names


def test_every_differentiable_op_has_a_case():
    covered = {c.name for c in CASES}
    aliases = {"cat": "concat", "clamp": "clip", "permute": "transpose", "unsqueeze": "expand_dims",
               "where": "select", "max": "amax", "min": "amin", "setitem": None}
    missing = set()
    for name in _differentiable_ops():
        target = aliases.get(name, name)
        if target is not None and target not in covered:
            missing.add(name)
    assert not missing, f"ops without a gradcheck case: {sorted(missing)}"


def test_setitem_on_tape_is_differentiable():
    a = Tensor(np.random.RandomState(1).randn(3, 4))
    v = Tensor(np.random.RandomState(2).randn(4))

    def fn(a, v):
        b = a * 1.0
        b[1] = v * 2.0
        return b

    gradcheck(fn, [a, v])


def test_integer_tensors_are_not_differentiated():
    x = Tensor(np.array([1.0, 2.0], dtype=np.float32))
    idx = Tensor(np.array([1, 0]))
    gx, gi = engine.grad(lambda x, i: (x * i).sum(), (0, 1))(x, idx)
    assert gx.asnumpy().tolist() == [1.0, 0.0]
    assert gi.dtype == engine.int64 and gi.asnumpy().tolist() == [0, 0]
