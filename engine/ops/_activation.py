"""Activation functions beyond _functional's, each forward beside its one gradient rule.

MindSpore 2.x names and arguments (`ops.elu(input_x, alpha=1.0)`, `ops.glu(x, axis=-1)`, ...);
where 2.x spells an argument two ways across releases (`x` and `input`), both are accepted.
Tails are computed stably: softplus-like terms use exp of non-positive numbers only.
"""

from __future__ import annotations

import numbers

import numpy as np

from engine.ops._args import renamed
from engine.ops._functional import _finish1, _finish2, _np_sigmoid, _np_softplus, _tensor, cast

__all__ = ["elu", "selu", "celu", "prelu", "softsign", "silu", "mish", "hardswish",
           "hardsigmoid", "relu6", "hardtanh", "logsigmoid", "softmin", "glu"]

# SELU's fixed constants (Klambauer et al. 2017), as PyTorch spells them.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _real(op: str, name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{op}: {name} must be a number, got {value!r}")
    return float(value)


def _same(out, d):
    """`out` in the input's float dtype (a Python float keeps float32 float32 already)."""
    return out.astype(d.dtype, copy=False) if d.dtype.kind == "f" else out


# ----------------------------------------------------------------------------- ELU family


@renamed(x="input_x", input="input_x")
def elu(input_x, alpha=1.0):
    """MindSpore 2.x `ops.elu(input_x, alpha=1.0)`: x where x > 0, else alpha·(eˣ − 1)."""
    alpha = _real("elu", "alpha", alpha)
    x = _tensor(input_x)
    d = x._data
    neg = alpha * np.expm1(np.minimum(d, 0))
    out = _same(np.where(d > 0, d, neg), d)
    return _finish1(out, x, _elu_vjp, (d, neg, alpha), "elu")


def _elu_vjp(g, saved, needs):
    d, neg, alpha = saved
    return (np.where(d > 0, g, g * (neg + alpha)),)


@renamed(x="input_x", input="input_x")
def selu(input_x):
    """MindSpore 2.x `ops.selu(input_x)`: scale·elu(x, alpha) with SELU's fixed constants."""
    x = _tensor(input_x)
    d = x._data
    neg = SELU_ALPHA * np.expm1(np.minimum(d, 0))
    out = _same(SELU_SCALE * np.where(d > 0, d, neg), d)
    return _finish1(out, x, _selu_vjp, (d, neg), "selu")


def _selu_vjp(g, saved, needs):
    d, neg = saved
    return (SELU_SCALE * np.where(d > 0, g, g * (neg + SELU_ALPHA)),)


@renamed(input="x")
def celu(x, alpha=1.0):
    """MindSpore 2.x `ops.celu(x, alpha=1.0)`: max(0, x) + min(0, alpha·(e^(x/alpha) − 1))."""
    alpha = _real("celu", "alpha", alpha)
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0")
    t = _tensor(x)
    d = t._data
    scaled = np.exp(np.minimum(d, 0) / alpha)  # e^(x/alpha) where it is used: x <= 0
    out = _same(np.where(d > 0, d, alpha * (scaled - 1)), d)
    return _finish1(out, t, _celu_vjp, (d, scaled), "celu")


def _celu_vjp(g, saved, needs):
    d, scaled = saved
    return (np.where(d > 0, g, g * scaled),)


@renamed(input="x")
def prelu(x, weight):
    """MindSpore 2.x `ops.prelu(x, weight)`: x where x > 0, else weight·x.

    `weight` is 1-D: one slope shared by every element, or one per channel of axis 1
    (then the input needs at least 2 dimensions and as many channels as slopes).
    """
    t, w = _tensor(x), _tensor(weight, "weight")
    d, wd = t._data, w._data
    if wd.ndim != 1 or wd.size < 1:
        raise ValueError(f"prelu: weight must be 1-D with 1 or C slopes, got shape {wd.shape}")
    if wd.size > 1 and (d.ndim < 2 or d.shape[1] != wd.size):
        raise ValueError(f"prelu: {wd.size} slopes need an input with {wd.size} channels on "
                         f"axis 1, got shape {tuple(d.shape)}")
    slope = wd.reshape((1, wd.size) + (1,) * (d.ndim - 2)) if wd.size > 1 else wd.reshape(())
    pos = d > 0
    out = _same(np.where(pos, d, slope * d), d)
    return _finish2(out, t, w, _prelu_vjp, (d, slope, pos, wd.shape, wd.dtype), "prelu")


def _prelu_vjp(g, saved, needs):
    d, slope, pos, wshape, wdtype = saved
    gx = np.where(pos, g, g * slope).astype(g.dtype, copy=False) if needs[0] else None
    gw = None
    if needs[1]:
        part = np.where(pos, 0, g * d)
        gw = (part.sum(axis=tuple(i for i in range(d.ndim) if i != 1)) if wshape[0] > 1
              else part.sum().reshape(wshape))
        gw = gw.astype(wdtype, copy=False)
    return gx, gw


# ----------------------------------------------------------------------------- smooth gates


@renamed(input="x")
def softsign(x):
    """MindSpore 2.x `ops.softsign(x)`: x / (1 + |x|)."""
    t = _tensor(x)
    d = t._data
    denom = 1 + np.abs(d)
    return _finish1(_same(d / denom, d), t, _softsign_vjp, denom, "softsign")


def _softsign_vjp(g, saved, needs):
    return (g / (saved * saved),)


@renamed(x="input")
def silu(input):  # noqa: A002 - MindSpore 2.x names
    """MindSpore 2.x `ops.silu(input)` (swish): x·sigmoid(x)."""
    t = _tensor(input)
    d = t._data
    s = _np_sigmoid(d)
    return _finish1(_same(d * s, d), t, _silu_vjp, (d, s), "silu")


def _silu_vjp(g, saved, needs):
    d, s = saved
    return (g * s * (1 + d * (1 - s)),)


@renamed(x="input")
def mish(input):  # noqa: A002
    """MindSpore 2.x `ops.mish(input)`: x·tanh(softplus(x)), softplus computed stably."""
    t = _tensor(input)
    d = t._data
    th = np.tanh(_np_softplus(d))
    return _finish1(_same(d * th, d), t, _mish_vjp, (d, th), "mish")


def _mish_vjp(g, saved, needs):
    d, th = saved
    return (g * (th + d * (1 - th * th) * _np_sigmoid(d)),)


@renamed(x="input")
def logsigmoid(x):
    """MindSpore 2.x `ops.logsigmoid(x)`: log(sigmoid(x)) = min(x, 0) − log(1 + e^(−|x|))."""
    t = _tensor(x)
    d = t._data
    out = np.minimum(d, 0) - np.log1p(np.exp(-np.abs(d)))
    return _finish1(_same(out, d), t, _logsigmoid_vjp, d, "logsigmoid")


def _logsigmoid_vjp(g, saved, needs):
    return (g * _np_sigmoid(-saved),)


# ----------------------------------------------------------------------------- piecewise linear


@renamed(input="x")
def hardswish(x):
    """MindSpore 2.x `ops.hardswish(x)`: x·relu6(x + 3)/6."""
    t = _tensor(x)
    d = t._data
    out = d * np.clip(d + 3, 0, 6) / 6
    return _finish1(_same(out, d), t, _hardswish_vjp, d, "hardswish")


def _hardswish_vjp(g, saved, needs):
    d = saved
    return (np.where(d < -3, 0, np.where(d <= 3, g * (d / 3 + 0.5), g)).astype(g.dtype),)


@renamed(x="input")
def hardsigmoid(input):  # noqa: A002
    """MindSpore 2.x `ops.hardsigmoid(input)`: relu6(x + 3)/6 = max(0, min(1, x/6 + 1/2))."""
    t = _tensor(input)
    d = t._data
    out = np.clip(d + 3, 0, 6) / 6
    return _finish1(_same(out, d), t, _hardsigmoid_vjp, d, "hardsigmoid")


def _hardsigmoid_vjp(g, saved, needs):
    d = saved
    return (g * ((d > -3) & (d < 3)) / 6,)


def _clamped(op: str, x, low: float, high: float):
    t = _tensor(x)
    d = t._data
    out = np.clip(d, low, high)
    return _finish1(_same(out, d), t, _clamped_vjp, (d, low, high), op)


def _clamped_vjp(g, saved, needs):
    d, low, high = saved
    return (g * ((d > low) & (d < high)),)


@renamed(input="x")
def relu6(x):
    """MindSpore 2.x `ops.relu6(x)`: min(max(x, 0), 6)."""
    return _clamped("relu6", x, 0.0, 6.0)


@renamed(x="input")
def hardtanh(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """MindSpore 2.x `ops.hardtanh(input, min_val=-1.0, max_val=1.0)`: x clipped to
    [min_val, max_val]."""
    low = _real("hardtanh", "min_val", min_val)
    high = _real("hardtanh", "max_val", max_val)
    if high < low:
        raise ValueError(f"hardtanh: max_val ({max_val}) must not be less than min_val "
                         f"({min_val})")
    return _clamped("hardtanh", input, low, high)


# ----------------------------------------------------------------------------- along an axis


def _axes(op: str, axis, ndim: int):
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    if not items or any(isinstance(a, bool) or not isinstance(a, (int, np.integer))
                        or not -ndim <= a < max(ndim, 1) for a in items):
        raise ValueError(f"{op}: axis must be an int (or a tuple of them) in "
                         f"[-{ndim}, {ndim}), got {axis!r}")
    return tuple(int(a) for a in items) if isinstance(axis, (tuple, list)) else int(axis)


@renamed(input="x", dim="axis")
def softmin(x, axis=-1, *, dtype=None):
    """MindSpore 2.x `ops.softmin(x, axis=-1, *, dtype=None)`: softmax(−x) along `axis` (an int
    or a tuple of ints); `dtype` casts the input first."""
    t = _tensor(x)
    if dtype is not None:
        t = cast(t, dtype)
    d = t._data
    axis = _axes("softmin", axis, d.ndim)
    neg = -d
    e = np.exp(neg - neg.max(axis=axis, keepdims=True))
    out = e / e.sum(axis=axis, keepdims=True)
    return _finish1(out, t, _softmin_vjp, (out, axis), "softmin")


def _softmin_vjp(g, saved, needs):
    s, axis = saved
    gs = g * s
    return (s * gs.sum(axis=axis, keepdims=True) - gs,)


@renamed(input="x", dim="axis")
def glu(x, axis=-1):
    """MindSpore 2.x `ops.glu(x, axis=-1)`: split `axis` into halves a, b; a·sigmoid(b).

    The size along `axis` must be even.
    """
    t = _tensor(x)
    d = t._data
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) \
            or not -d.ndim <= axis < d.ndim:
        raise ValueError(f"glu: axis must be an int in [-{d.ndim}, {d.ndim}), got {axis!r}")
    axis = int(axis) % d.ndim
    size = d.shape[axis]
    if size % 2:
        raise ValueError(f"glu: the size along axis {axis} must be even to split in halves, "
                         f"got shape {tuple(d.shape)}")
    a, b = np.split(d, 2, axis=axis)
    s = _np_sigmoid(b)
    return _finish1(_same(a * s, d), t, _glu_vjp, (a, s, axis), "glu")


def _glu_vjp(g, saved, needs):
    a, s, axis = saved
    return (np.concatenate([g * s, g * a * s * (1 - s)], axis=axis),)
