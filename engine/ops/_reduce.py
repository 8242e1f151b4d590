"""Reductions, comparisons and `select`, each differentiable op beside its gradient rule."""

from __future__ import annotations

import builtins

import numpy as np

from engine._dtype import to_numpy_dtype
from engine.autograd import unbroadcast
from engine.ops._args import renamed
from engine.ops._functional import (
    _arr,
    _finish1,
    _finish2,
    _shape,
    _tensor,
    cast,
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


@renamed(x="input", axis="dim", keepdims="keepdim", keep_dims="keepdim")
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001,A002 - MindSpore's names
    """MindSpore 2.x `ops.sum(input, dim=None, keepdim=False, *, dtype=None)`."""
    x = _tensor(input)
    d = x._data
    axes = _axes(dim, d.ndim)
    out = d.sum(axis=axes, keepdims=keepdim)
    if dtype is not None:
        out = out.astype(to_numpy_dtype(dtype))
    elif d.dtype.kind == "b":
        out = out.astype(np.int64)
    return _finish1(out, x, _sum_vjp, (d.shape, axes, keepdim), "sum")


def _sum_vjp(g, saved, needs):
    shape, axes, keepdims = saved
    return (np.broadcast_to(_expand_reduced(g, shape, axes, keepdims), shape),)


@renamed(input="x", dim="axis", keepdim="keep_dims", keepdims="keep_dims")
def mean(x, axis=None, keep_dims=False):
    """MindSpore 2.x `ops.mean(x, axis=None, keep_dims=False)` (2.3 spells the input `input`)."""
    x = _tensor(x)
    d = x._data
    axes = _axes(axis, d.ndim)
    out = d.mean(axis=axes, keepdims=keep_dims)
    if d.dtype.kind != "f":
        out = out.astype(np.float32)
    count = 1
    for a in axes:
        count *= d.shape[a]
    saved = (d.shape, axes, keep_dims, builtins.max(count, 1))
    return _finish1(out, x, _mean_vjp, saved, "mean")


def _mean_vjp(g, saved, needs):
    shape, axes, keepdims, count = saved
    g = _expand_reduced(g, shape, axes, keepdims) / count
    return (np.broadcast_to(g, shape),)


def _extreme(fn, name):
    @renamed(x="input", dim="axis", keepdim="keepdims", keep_dims="keepdims")
    def op(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A002
        x = _tensor(input)
        d = x._data
        axes = _axes(axis, d.ndim)
        kw = {}
        if initial is not None:
            kw["initial"] = _scalar(initial)
        if where is not None:
            kw["where"] = np.asarray(_arr(where), dtype=bool)
        out = fn(d, axis=axes, keepdims=keepdims, **kw)
        mask_where = kw.get("where")
        return _finish1(out, x, _extreme_vjp, (d, out, axes, keepdims, mask_where), name)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (
        f"MindSpore 2.x `ops.{name}(input, axis=None, keepdims=False, *, "
        "initial=None, where=None)`."
    )
    return op


def _scalar(v):
    return v._data.item() if hasattr(v, "_data") else v


def _extreme_vjp(g, saved, needs):
    d, out, axes, keepdims, where = saved
    out_k = _expand_reduced(out, d.shape, axes, keepdims)
    mask = d == out_k
    if where is not None:
        mask = mask & where
    # Ties share the gradient equally, so the rule matches finite differences;
    # where `initial` wins, no element gets any.
    count = np.maximum(mask.sum(axis=axes, keepdims=True), 1)
    return (_expand_reduced(g, d.shape, axes, keepdims) * mask / count,)


amax = _extreme(np.max, "amax")
amin = _extreme(np.min, "amin")


@renamed(x="input", dim="axis", keepdim="keep_dims", keepdims="keep_dims")
def prod(input, axis=None, keep_dims=False, dtype=None):  # noqa: A002
    """MindSpore 2.x `ops.prod(input, axis=None, keep_dims=False, dtype=None)`."""
    x = _tensor(input)
    if dtype is not None:
        x = cast(x, dtype)
    d = x._data
    axes = _axes(axis, d.ndim)
    out = d.prod(axis=axes, keepdims=keep_dims)
    return _finish1(out, x, _prod_vjp, (d, out, axes, keep_dims), "prod")


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


@renamed(x="input", dim="axis", keepdim="keepdims", keep_dims="keepdims")
def var(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """MindSpore 2.x `ops.var(input, axis=None, ddof=0, keepdims=False)`; `ddof` may be a bool."""
    m = mean(input, axis=axis, keep_dims=True)
    diff = sub(input, m)
    sq = mul(diff, diff)
    d = _tensor(input)._data
    axes = _axes(axis, d.ndim)
    count = 1
    for a in axes:
        count *= d.shape[a]
    return div(sum(sq, axis, keepdims), builtins.max(count - int(ddof), 1))


@renamed(x="input", dim="axis", keepdim="keepdims", keep_dims="keepdims")
def std(input, axis=None, ddof=0, keepdims=False):  # noqa: A002
    """MindSpore 2.x `ops.std(input, axis=None, ddof=0, keepdims=False)`."""
    return sqrt(var(input, axis, ddof, keepdims))


@renamed(x="input", axis="dim", keepdims="keepdim", keep_dims="keepdim")
def argmax(input, dim=None, keepdim=False):  # noqa: A002
    """MindSpore 2.x `ops.argmax(input, dim=None, keepdim=False)`."""
    d = _arr(input)
    return wrap(np.argmax(d, axis=dim, keepdims=keepdim).astype(np.int64))


@renamed(x="input", dim="axis", keepdim="keepdims", keep_dims="keepdims")
def argmin(input, axis=None, keepdims=False):  # noqa: A002
    """MindSpore 2.x `ops.argmin(input, axis=None, keepdims=False)`."""
    d = _arr(input)
    return wrap(np.argmin(d, axis=axis, keepdims=keepdims).astype(np.int64))


def _with_index(extreme, arg, fill, input, axis, keepdims, initial, where):  # noqa: A002
    if axis is None:
        # MindSpore 2.x: with axis None, keepdims and the keyword arguments are
        # ignored and the index is always 0 (documented on the ops.max page).
        return extreme(input), wrap(np.array(0, dtype=np.int64))
    values = extreme(input, axis, keepdims, initial=initial, where=where)
    d = _arr(input)
    if where is not None:
        d = np.where(np.asarray(_arr(where), dtype=bool), d, fill)
    return values, wrap(arg(d, axis=axis, keepdims=keepdims).astype(np.int64))


@renamed(x="input", dim="axis", keepdim="keepdims", keep_dims="keepdims")
def max(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A001,A002
    """MindSpore 2.x `ops.max(input, axis=None, keepdims=False, *, initial=None, where=None)`.

    Returns `(values, indices)`; with `axis=None` the maximum of all elements and index 0.
    """
    return _with_index(amax, np.argmax, -np.inf, input, axis, keepdims, initial, where)


@renamed(x="input", dim="axis", keepdim="keepdims", keep_dims="keepdims")
def min(input, axis=None, keepdims=False, *, initial=None, where=None):  # noqa: A001,A002
    """MindSpore 2.x `ops.min(input, axis=None, keepdims=False, *, initial=None, where=None)`."""
    return _with_index(amin, np.argmin, np.inf, input, axis, keepdims, initial, where)


# ----------------------------------------------------------------------------- comparisons


def _compare(fn, name):
    @renamed(x="input", y="other")
    def op(input, other):  # noqa: A002
        return wrap(fn(_arr(input), _arr(other)))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"MindSpore 2.x `ops.{name}(input, other)`."
    return op


gt = greater = _compare(np.greater, "gt")
ge = greater_equal = _compare(np.greater_equal, "ge")
lt = less = _compare(np.less, "lt")
le = less_equal = _compare(np.less_equal, "le")
eq = equal = _compare(np.equal, "eq")
ne = not_equal = _compare(np.not_equal, "ne")
logical_and = _compare(np.logical_and, "logical_and")
logical_or = _compare(np.logical_or, "logical_or")


@renamed(x="input")
def logical_not(input):  # noqa: A002
    return wrap(np.logical_not(_arr(input)))


@renamed(x="input")
def isnan(input):  # noqa: A002
    return wrap(np.isnan(_arr(input)))


@renamed(x="input")
def isfinite(input):  # noqa: A002
    return wrap(np.isfinite(_arr(input)))


@renamed(x="input", y="other")
def select(cond, input, other):  # noqa: A002
    """MindSpore 2.x `ops.select(cond, input, other)`: elementwise `input if cond else other`."""
    x, y = input, other
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


@renamed(x="input", y="other")
def where(condition, input, other):  # noqa: A002
    """MindSpore 2.x `ops.where(condition, input, other)`."""
    return select(condition, input, other)
