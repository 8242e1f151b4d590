"""Reductions, comparisons and `select`, each differentiable op beside its gradient rule."""

from __future__ import annotations

import builtins

import numpy as np

from engine._dtype import to_numpy_dtype
from engine.autograd import unbroadcast
from engine.ops._functional import (
    _arr,
    _finish1,
    _finish2,
    _shape,
    _tensor,
    div,
    mul,
    sqrt,
    sub,
)
from engine.tensor import wrap

# ----------------------------------------------------------------------------- reductions


def _axes(axis, ndim):
    if axis is None or axis == ():
        return tuple(range(ndim))
    if isinstance(axis, int):
        return (axis % ndim if ndim else 0,)
    return tuple(a % ndim for a in axis)


def _expand_reduced(g, shape, axes, keepdims):
    if not keepdims and shape:
        for a in sorted(axes):
            g = np.expand_dims(g, a)
    return g


def sum(x, axis=None, keepdims=False, dtype=None):  # noqa: A001
    x = _tensor(x)
    d = x._data
    axes = _axes(axis, d.ndim)
    out = d.sum(axis=axes, keepdims=keepdims)
    if dtype is not None:
        out = out.astype(to_numpy_dtype(dtype))
    elif d.dtype.kind == "b":
        out = out.astype(np.int64)
    return _finish1(out, x, _sum_vjp, (d.shape, axes, keepdims), "sum")


def _sum_vjp(g, saved, needs):
    shape, axes, keepdims = saved
    return (np.broadcast_to(_expand_reduced(g, shape, axes, keepdims), shape),)


def mean(x, axis=None, keepdims=False):
    x = _tensor(x)
    d = x._data
    axes = _axes(axis, d.ndim)
    out = d.mean(axis=axes, keepdims=keepdims)
    if d.dtype.kind != "f":
        out = out.astype(np.float32)
    count = 1
    for a in axes:
        count *= d.shape[a]
    return _finish1(out, x, _mean_vjp, (d.shape, axes, keepdims, builtins.max(count, 1)), "mean")


def _mean_vjp(g, saved, needs):
    shape, axes, keepdims, count = saved
    g = _expand_reduced(g, shape, axes, keepdims) / count
    return (np.broadcast_to(g, shape),)


def _extreme(fn, name):
    def op(x, axis=None, keepdims=False):
        x = _tensor(x)
        d = x._data
        axes = _axes(axis, d.ndim)
        out = fn(d, axis=axes, keepdims=keepdims)
        return _finish1(out, x, _extreme_vjp, (d, out, axes, keepdims), name)

    op.__name__ = name
    return op


def _extreme_vjp(g, saved, needs):
    d, out, axes, keepdims = saved
    out_k = _expand_reduced(out, d.shape, axes, keepdims)
    mask = d == out_k
    # Ties share the gradient equally, so the rule matches finite differences.
    count = mask.sum(axis=axes, keepdims=True)
    return (_expand_reduced(g, d.shape, axes, keepdims) * mask / count,)


amax = _extreme(np.max, "amax")
amin = _extreme(np.min, "amin")


def prod(x, axis=None, keepdims=False):
    x = _tensor(x)
    d = x._data
    axes = _axes(axis, d.ndim)
    out = d.prod(axis=axes, keepdims=keepdims)
    return _finish1(out, x, _prod_vjp, (d, out, axes, keepdims), "prod")


def _prod_vjp(g, saved, needs):
    d, out, axes, keepdims = saved
    out_k = _expand_reduced(out, d.shape, axes, keepdims)
    g_k = _expand_reduced(g, d.shape, axes, keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        gd = np.where(d != 0, g_k * out_k / np.where(d != 0, d, 1), 0)
    if np.any(d == 0):
        # Exact rule where zeros occur: product of the other entries.
        for idx in zip(*np.nonzero(d == 0), strict=False):
            others = d.copy()
            others[idx] = 1
            gd[idx] = (g_k * others.prod(axis=axes, keepdims=True))[
                tuple(0 if i in axes else j for i, j in enumerate(idx))
            ]
    return (gd,)


def var(x, axis=None, ddof=0, keepdims=False):
    m = mean(x, axis=axis, keepdims=True)
    diff = sub(x, m)
    sq = mul(diff, diff)
    d = _tensor(x)._data
    axes = _axes(axis, d.ndim)
    count = 1
    for a in axes:
        count *= d.shape[a]
    return div(sum(sq, axis=axis, keepdims=keepdims), builtins.max(count - ddof, 1))


def std(x, axis=None, ddof=0, keepdims=False):
    return sqrt(var(x, axis=axis, ddof=ddof, keepdims=keepdims))


def argmax(x, axis=None, keepdims=False):
    d = _arr(x)
    return wrap(np.argmax(d, axis=axis, keepdims=keepdims).astype(np.int64))


def argmin(x, axis=None, keepdims=False):
    d = _arr(x)
    return wrap(np.argmin(d, axis=axis, keepdims=keepdims).astype(np.int64))


def max(x, axis=None, keepdims=False):  # noqa: A001
    """MindSpore 2.x `ops.max`: `(values, indices)` along `axis`; the value alone for axis=None."""
    if axis is None:
        return amax(x)
    return amax(x, axis=axis, keepdims=keepdims), argmax(x, axis=axis, keepdims=keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    if axis is None:
        return amin(x)
    return amin(x, axis=axis, keepdims=keepdims), argmin(x, axis=axis, keepdims=keepdims)


# ----------------------------------------------------------------------------- comparisons


def _compare(fn, name):
    def op(x, y):
        return wrap(fn(_arr(x), _arr(y)))

    op.__name__ = name
    return op


gt = greater = _compare(np.greater, "gt")
ge = greater_equal = _compare(np.greater_equal, "ge")
lt = less = _compare(np.less, "lt")
le = less_equal = _compare(np.less_equal, "le")
eq = equal = _compare(np.equal, "eq")
ne = not_equal = _compare(np.not_equal, "ne")
logical_and = _compare(np.logical_and, "logical_and")
logical_or = _compare(np.logical_or, "logical_or")


def logical_not(x):
    return wrap(np.logical_not(_arr(x)))


def isnan(x):
    return wrap(np.isnan(_arr(x)))


def isfinite(x):
    return wrap(np.isfinite(_arr(x)))


def select(cond, x, y):
    """Elementwise `x where cond else y` (MindSpore `ops.select`)."""
    c = np.asarray(_arr(cond), dtype=bool)
    a, b = _arr(x), _arr(y)
    out = np.where(c, a, b)
    if isinstance(a, np.ndarray) and out.dtype != a.dtype and a.dtype.kind == "f":
        out = out.astype(a.dtype)
    return _finish2(out, x, y, _select_vjp, (c, _shape(a), _shape(b)), "select")


def _select_vjp(g, saved, needs):
    c, sa, sb = saved
    zero = np.zeros((), dtype=g.dtype)
    return (
        unbroadcast(np.where(c, g, zero), sa) if needs[0] else None,
        unbroadcast(np.where(c, zero, g), sb) if needs[1] else None,
    )


def where(condition, x, y):
    return select(condition, x, y)
