"""Window pooling over 1, 2 or 3 spatial axes (max and mean) with their vjps.

One kernel serves every rank: the input is padded once, then each kernel tap is one
strided slice of it, so the work is a loop over the kh·kw·… taps of whole-array NumPy
calls (never over samples or pixels).  Output sizes and the mean's divisor follow
PyTorch (the numerical oracle): with `ceil_mode` a last, partial window is kept when it
starts inside the input or its left padding, and the part of it past the padding never
counts.  The functional forms keep MindSpore 2.x's names and signatures; the adaptive
pools live in `_pool_adaptive` and are listed here too.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from engine.autograd import Node, state
from engine.ops._args import renamed, unsupported
from engine.ops._conv import same_pads
from engine.ops._functional import _finish1, _tensor
from engine.ops._nn import max_over_taps
from engine.ops._pool_adaptive import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
)
from engine.tensor import wrap

__all__ = ["max_pool3d", "avg_pool1d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d"]

_AXES = {1: "L", 2: "H, W", 3: "D, H, W"}


# ----------------------------------------------------------------------------- arguments


def ints(what: str, name: str, value, nd: int, minimum: int = 1) -> tuple[int, ...]:
    """An int, or a sequence of 1 or `nd` ints, each at least `minimum` -> an nd-tuple."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(items) == 1:
        items = items * nd
    ok = len(items) == nd and all(
        not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= minimum
        for v in items
    )
    if not ok:
        many = "an int" if nd == 1 else f"an int or {nd} ints"
        raise ValueError(f"{what}: {name} must be {many}, each >= {minimum}, got {value!r}")
    return tuple(int(v) for v in items)


def pad_pairs(what: str, padding, nd: int) -> tuple[tuple[int, int], ...]:
    """`padding` as (before, after) per spatial axis: an int, `nd` ints (both sides alike)
    or 2·nd ints (before and after of each axis in turn, as MindSpore's avg_pool3d)."""
    items = tuple(padding) if isinstance(padding, (tuple, list)) else (padding,)
    if len(items) == 2 * nd and nd > 1:
        values = ints(what, "padding", items, 2 * nd, minimum=0)
        return tuple((values[2 * i], values[2 * i + 1]) for i in range(nd))
    values = ints(what, "padding", items, nd, minimum=0)
    return tuple((v, v) for v in values)


def check_input(what: str, x, nd: int):
    """The Tensor of `x`, which must be batched (N, C, …) or unbatched (C, …)."""
    x = _tensor(x)
    if x._data.ndim not in (nd + 1, nd + 2):
        axes = _AXES[nd]
        raise ValueError(f"{what} expects input of shape (N, C, {axes}) or (C, {axes}), got "
                         f"shape {tuple(x._data.shape)}")
    return x


def window_plan(what: str, shape, kernel, stride, pads, dilation, ceil_mode):
    """Per spatial axis: (output size, extra padding after, reach of a window), PyTorch's
    rule. Raises naming the (padded) input when a window does not fit."""
    plan = []
    for size, k, s, (lo, hi), d in zip(shape, kernel, stride, pads, dilation, strict=True):
        reach = (k - 1) * d + 1
        span = size + lo + hi
        if span < reach:
            raise ValueError(f"{what}: the window of {reach} doesn't fit the (padded) input of "
                             f"spatial shape {tuple(shape)} (padded size {span})")
        out = (span - reach) // s + 1
        if ceil_mode:
            out = -(-(span - reach) // s) + 1
            if (out - 1) * s >= size + lo:  # the last window must start inside
                out -= 1
        plan.append((out, max(0, (out - 1) * s + reach - span), reach))
    return plan


def resolve_pads(mode, padding, shape, kernel, stride, dilation):
    """(before, after) per axis for pad_mode 'same' (MindSpore: output ceil(size/stride), an
    odd pad after), 'valid' or 'pad'."""
    if mode == "same":
        return tuple(same_pads(size, (k - 1) * d + 1, s)
                     for size, k, s, d in zip(shape, kernel, stride, dilation, strict=True))
    if mode == "valid":
        return ((0, 0),) * len(shape)
    return padding


def _check_pads(what, pads, kernel) -> None:
    # PyTorch's limit (and so the exports'): no window may lie wholly in the padding.
    for (lo, hi), k in zip(pads, kernel, strict=True):
        if max(lo, hi) > k // 2:
            raise ValueError(f"{what}: padding {max(lo, hi)} must be at most half the kernel "
                             f"size ({k})")


@lru_cache(maxsize=256)
def _tap_slices(kernel, stride, dilation, outs) -> tuple:
    """One tuple of spatial slices per kernel tap, in row-major tap order."""
    axes = [[slice(t * d, t * d + s * (o - 1) + 1, s) for t in range(k)]
            for k, s, d, o in zip(kernel, stride, dilation, outs, strict=True)]
    return tuple((Ellipsis, *combo) for combo in itertools.product(*axes))


def _padded(d: np.ndarray, pads, value) -> np.ndarray:
    if not any(lo or hi for lo, hi in pads):
        return d
    nd = len(pads)
    shape = d.shape[:-nd] + tuple(n + lo + hi for n, (lo, hi) in zip(d.shape[-nd:], pads,
                                                                       strict=True))
    out = np.full(shape, value, dtype=d.dtype)
    out[(Ellipsis, *(slice(lo, lo + n) for n, (lo, _) in zip(d.shape[-nd:], pads,
                                                              strict=True)))] = d
    return out


def _cropped(gp: np.ndarray, pads, shape) -> np.ndarray:
    return gp[(Ellipsis, *(slice(lo, lo + n) for n, (lo, _) in zip(shape, pads, strict=True)))]


# ----------------------------------------------------------------------------- max


def max_pool_nd(x, nd, kernel, stride, pads, dilation=None, ceil_mode=False, what="max_pool"):
    """Max over windows of the last `nd` axes; `pads` are (before, after) per axis, filled
    with -inf. Ties give the gradient to the first tap, as PyTorch."""
    x = _tensor(x)
    d = x._data
    dilation = dilation or (1,) * nd
    _check_pads(what, pads, kernel)
    plan = window_plan(what, d.shape[-nd:], kernel, stride, pads, dilation, ceil_mode)
    full = tuple((lo, hi + extra) for (lo, hi), (_, extra, _) in zip(pads, plan, strict=True))
    if d.dtype.kind == "f":
        lowest = -np.inf
    else:
        lowest = np.iinfo(d.dtype).min if d.dtype.kind in "iu" else 0
    xp = _padded(d, full, lowest)
    parts = _tap_slices(kernel, stride, dilation, tuple(o for o, _, _ in plan))
    best, arg = max_over_taps(xp, parts, state.recording and x._node is not None)
    if arg is None:
        return wrap(best)
    saved = (arg, d.shape[-nd:], xp.shape, full, parts)
    return wrap(best, Node(_max_pool_vjp, saved, ((x._node, x._oi),), what))


def _max_pool_vjp(g, saved, needs):
    arg, shape, pshape, pads, parts = saved
    gp = np.zeros(pshape, dtype=g.dtype)
    for idx, part in enumerate(parts):
        gp[part] += (arg == idx) * g
    return (_cropped(gp, pads, shape),)


# ----------------------------------------------------------------------------- mean


@lru_cache(maxsize=128)
def _axis_counts(size, lo, hi, extra, k, s, out, count_pad) -> np.ndarray:
    """How much of each window along one axis counts in the mean's divisor."""
    mask = np.zeros(lo + size + hi + extra)
    if count_pad:
        mask[: lo + size + hi] = 1.0  # not the part past the padding (ceil_mode)
    else:
        mask[lo : lo + size] = 1.0
    counts = sum(mask[t : t + s * (out - 1) + 1 : s] for t in range(k))
    counts.setflags(write=False)
    return counts


def avg_pool_nd(x, nd, kernel, stride, pads, ceil_mode=False, count_include_pad=True,
                what="avg_pool"):  # fmt: skip
    """Mean over windows of the last `nd` axes; `pads` are (before, after) zeros per axis,
    counted in the divisor when `count_include_pad`."""
    x = _tensor(x)
    d = x._data
    _check_pads(what, pads, kernel)
    ones = (1,) * nd
    plan = window_plan(what, d.shape[-nd:], kernel, stride, pads, ones, ceil_mode)
    full = tuple((lo, hi + extra) for (lo, hi), (_, extra, _) in zip(pads, plan, strict=True))
    xp = _padded(d, full, 0)
    parts = _tap_slices(kernel, stride, ones, tuple(o for o, _, _ in plan))
    dtype = d.dtype if d.dtype.kind == "f" else np.dtype(np.float32)
    acc = xp[parts[0]].astype(dtype, copy=True)
    for part in parts[1:]:
        acc += xp[part]
    divisor = _divisor(d.shape[-nd:], tuple(pads), tuple(plan), kernel, stride,
                       bool(count_include_pad), dtype.str)
    if isinstance(divisor, float):  # every window counts alike: one scale
        acc *= acc.dtype.type(1.0 / divisor)
    else:
        acc /= divisor
    saved = (divisor, d.shape[-nd:], xp.shape, full, parts)
    return _finish1(acc, x, _avg_pool_vjp, saved, what)


@lru_cache(maxsize=128)
def _divisor(shape, pads, plan, kernel, stride, count_pad, dtype):
    """Each window's divisor: a float when all windows count alike, else a read-only array
    of the output's spatial shape."""
    counts = [_axis_counts(n, lo, hi, extra, k, s, o, count_pad)
              for n, (lo, hi), (o, extra, _), k, s in
              zip(shape, pads, plan, kernel, stride, strict=True)]  # fmt: skip
    if all(c.min() == c.max() for c in counts):
        return float(np.prod([c[0] for c in counts]))
    divisor = counts[0]
    for c in counts[1:]:
        divisor = np.multiply.outer(divisor, c)
    divisor = divisor.astype(dtype)
    divisor.setflags(write=False)
    return divisor


def _avg_pool_vjp(g, saved, needs):
    divisor, shape, pshape, pads, parts = saved
    gs = g * g.dtype.type(1.0 / divisor) if isinstance(divisor, float) else g / divisor
    gp = np.zeros(pshape, dtype=g.dtype)
    for part in parts:
        gp[part] += gs
    return (_cropped(gp, pads, shape),)


# ----------------------------------------------------------------------------- functional


def _pool_call(kind, what, x, nd, kernel_size, stride, padding, dilation=1, ceil_mode=False,
               count_include_pad=True):  # fmt: skip
    x = check_input(what, x, nd)
    kernel = ints(what, "kernel_size", kernel_size, nd)
    strides = kernel if stride is None else ints(what, "stride", stride, nd)
    pads = pad_pairs(what, padding, nd)
    if not isinstance(ceil_mode, bool):
        raise TypeError(f"{what}: ceil_mode must be a bool, got {ceil_mode!r}")
    if kind == "max":
        dil = ints(what, "dilation", dilation, nd)
        return max_pool_nd(x, nd, kernel, strides, pads, dil, ceil_mode, what)
    return avg_pool_nd(x, nd, kernel, strides, pads, ceil_mode, count_include_pad, what)


@renamed(input="x")
def max_pool3d(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):  # fmt: skip
    """MindSpore 2.x `ops.max_pool3d`: max over kd·kh·kw windows of an (N, C, D, H, W) or
    (C, D, H, W) input; `stride` defaults to the kernel size, `padding` (an int, 3 ints, or
    6 as before/after of D, H, W) pads with -inf. `return_indices=True` raises
    NotImplementedError."""
    unsupported("max_pool3d", return_indices=return_indices)
    return _pool_call("max", "max_pool3d", x, 3, kernel_size, stride, padding, dilation,
                      ceil_mode)


@renamed(x="input_x", input="input_x")
def avg_pool1d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True):  # fmt: skip
    """MindSpore 2.x `ops.avg_pool1d`: mean over windows of an (N, C, L) or (C, L) input;
    `padding` zeros on both ends count in the mean unless `count_include_pad=False`."""
    return _pool_call("avg", "avg_pool1d", input_x, 1, kernel_size, stride, padding,
                      ceil_mode=ceil_mode, count_include_pad=count_include_pad)


@renamed(x="input_x", input="input_x")
def avg_pool3d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=0):  # fmt: skip
    """MindSpore 2.x `ops.avg_pool3d`: mean over windows of an (N, C, D, H, W) or
    (C, D, H, W) input. `padding` is an int, 3 ints or 6 (before/after of D, H, W); a
    `divisor_override` other than 0 raises NotImplementedError."""
    if divisor_override not in (0, None):
        raise NotImplementedError("avg_pool3d: argument 'divisor_override' is not supported "
                                  "by this engine")
    return _pool_call("avg", "avg_pool3d", input_x, 3, kernel_size, stride, padding,
                      ceil_mode=ceil_mode, count_include_pad=count_include_pad)

