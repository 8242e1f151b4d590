"""Pooling, dropout and batch normalisation ops, each beside its gradient rule.

Pooling works on the kh*kw strided slices of the input, so it is a handful of
whole-array NumPy calls (no loop over pixels or samples).  Signatures follow
MindSpore 2.x's functional ops.  `conv2d` lives in `_conv` and is re-exported.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine._random import rng
from engine.autograd import Node, state
from engine.ops._args import renamed, unsupported
from engine.ops._conv import (
    _check_4d,
    _crop,
    _out_size,
    _padded,
    _pair,
    _resolve_pads,
    check_pad_mode,
    conv2d,
)
from engine.ops._functional import _finish1, _finish_n, _tensor
from engine.tensor import Tensor, wrap

__all__ = ["conv2d", "max_pool2d", "avg_pool2d", "dropout", "batch_norm"]

# ----------------------------------------------------------------------------- pooling


def _pool_setup(x, kernel_size, stride, padding, pad_mode, what):
    x = _tensor(x)
    d = x._data
    _check_4d(d, what)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(kernel_size if stride is None else stride, "stride")
    mode = check_pad_mode(pad_mode)
    if mode == "pad":
        ph, pw = _pair(padding, "padding", minimum=0)
        if ph > kh // 2 or pw > kw // 2:
            raise ValueError(
                f"{what}: padding {(ph, pw)} must be at most half the kernel size {(kh, kw)}"
            )
        pads = (ph, ph, pw, pw)
    else:
        if padding not in (0, (0, 0), [0, 0]):
            raise ValueError(f"padding must be 0 when pad_mode is {mode!r}, got {padding!r}")
        pads = _resolve_pads(mode, None, d.shape[2:], (kh, kw), (sh, sw))
    hp = d.shape[2] + pads[0] + pads[1]
    wp = d.shape[3] + pads[2] + pads[3]
    ho = _out_size(hp, kh, sh, what, (*d.shape[:2], hp, wp))
    wo = _out_size(wp, kw, sw, what, (*d.shape[:2], hp, wp))
    return x, d, (kh, kw), (sh, sw), pads, mode, (ho, wo)


def _slices(kh, kw, sh, sw, ho, wo):
    he, we = sh * (ho - 1) + 1, sw * (wo - 1) + 1
    return [
        (slice(None), slice(None), slice(i, i + he, sh), slice(j, j + we, sw))
        for i in range(kh)
        for j in range(kw)
    ]


@renamed(input="x")
def max_over_taps(xp: np.ndarray, parts: list, with_arg: bool):
    """(the maximum over the window taps `parts` of `xp`, the index of the tap holding it
    or None when not `with_arg`). Strict '>' keeps the first of tied values, as PyTorch
    does; arithmetic on the index beats masked copies (np.where / copyto(where=)) several
    times over on these sizes."""
    best = xp[parts[0]].copy()
    if not with_arg:
        for part in parts[1:]:
            np.maximum(best, xp[part], out=best)
        return best, None
    arg = np.zeros(best.shape, dtype=np.uint8 if len(parts) < 256 else np.int32)
    for idx in range(1, len(parts)):
        s = xp[parts[idx]]
        taken = s > best
        np.maximum(best, s, out=best)
        arg *= ~taken
        arg += taken * arg.dtype.type(idx)
    return best, arg


def max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
               ceil_mode=False, *, pad_mode="valid"):
    """MindSpore 2.x `ops.max_pool2d(x, kernel_size, stride=None, padding=0, dilation=1,
    return_indices=False, ceil_mode=False)`; max over kh*kw windows of an (N, C, H, W) input.

    `stride` defaults to the kernel size.  `dilation`, `return_indices` and
    `ceil_mode` other than their defaults raise NotImplementedError.

    `pad_mode` 'same' pads (with -inf) so the output has ceil(H/stride) rows;
    'pad' pads `padding` (an int or (ph, pw)) on both sides.
    """
    if pad_mode == "valid" and padding not in (0, (0, 0), [0, 0]):
        pad_mode = "pad"  # MindSpore's functional form: a padding implies padding
    if dilation not in (1, (1, 1), [1, 1]):
        raise NotImplementedError("max_pool2d: argument 'dilation' is not supported by this engine")
    unsupported("max_pool2d", return_indices=return_indices, ceil_mode=ceil_mode)
    x, d, (kh, kw), (sh, sw), pads, _, (ho, wo) = _pool_setup(
        x, kernel_size, stride, padding, pad_mode, "max_pool2d"
    )
    if d.dtype.kind == "f":
        lowest = -np.inf
    else:
        lowest = np.iinfo(d.dtype).min if d.dtype.kind in "iu" else 0
    xp = _padded(d, pads, lowest)
    parts = _slices(kh, kw, sh, sw, ho, wo)
    best, arg = max_over_taps(xp, parts, state.recording and x._node is not None)
    if arg is None:
        return wrap(best)
    saved = (arg, d.shape, xp.shape, pads, parts)
    return wrap(best, Node(_max_pool2d_vjp, saved, ((x._node, x._oi),), "max_pool2d"))


def _max_pool2d_vjp(g, saved, needs):
    arg, shape, pshape, pads, parts = saved
    gp = np.zeros(pshape, dtype=g.dtype)
    for idx, part in enumerate(parts):
        gp[part] += (arg == idx) * g
    return (_crop(gp, pads, shape[2], shape[3]),)


@lru_cache(maxsize=64)
def _window_counts(h, w, pads, kernel, stride, out_hw) -> np.ndarray:
    """How many real (unpadded) input pixels each pooling window covers."""
    ones = _padded(np.ones((1, 1, h, w)), pads)
    counts = np.zeros((1, 1) + out_hw)
    for part in _slices(*kernel, *stride, *out_hw):
        counts += ones[part]
    counts.setflags(write=False)
    return counts


@renamed(x="input_x", input="input_x")
def avg_pool2d(input_x, kernel_size=1, stride=1, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None, *, pad_mode="valid"):
    """MindSpore 2.x `ops.avg_pool2d(input_x, kernel_size=1, stride=1, padding=0,
    ceil_mode=False, count_include_pad=True, divisor_override=None)`: mean over kh*kw windows.

    With `pad_mode='same'` the padded zeros are not counted (MindSpore's
    AvgPool); with explicit `padding` they are unless `count_include_pad=False`.
    """
    if pad_mode == "valid" and padding not in (0, (0, 0), [0, 0]):
        pad_mode = "pad"
    unsupported("avg_pool2d", ceil_mode=ceil_mode, divisor_override=divisor_override)
    x, d, kernel, strides, pads, mode, (ho, wo) = _pool_setup(
        input_x, kernel_size, stride, padding, pad_mode, "avg_pool2d"
    )
    xp = _padded(d, pads)
    parts = _slices(*kernel, *strides, ho, wo)
    acc = xp[parts[0]].copy() if d.dtype.kind == "f" else xp[parts[0]].astype(np.float32)
    for part in parts[1:]:
        acc += xp[part]
    if any(pads) and (mode == "same" or not count_include_pad):
        divisor = _window_counts(d.shape[2], d.shape[3], pads, kernel, strides, (ho, wo))
        acc /= divisor.astype(acc.dtype, copy=False)
    else:
        divisor = float(kernel[0] * kernel[1])
        acc *= acc.dtype.type(1.0 / divisor)
    saved = (divisor, d.shape, xp.shape, pads, parts)
    return _finish1(acc, x, _avg_pool2d_vjp, saved, "avg_pool2d")


def _avg_pool2d_vjp(g, saved, needs):
    divisor, shape, pshape, pads, parts = saved
    gs = g / divisor if isinstance(divisor, np.ndarray) else g * g.dtype.type(1.0 / divisor)
    gs = gs.astype(g.dtype, copy=False)
    gp = np.zeros(pshape, dtype=g.dtype)
    for part in parts:
        gp[part] += gs
    return (_crop(gp, pads, shape[2], shape[3]),)


# ----------------------------------------------------------------------------- dropout


@renamed(x="input")
def dropout(input, p=0.5, training=True, seed=None):  # noqa: A002
    """Inverted dropout: zero each element with probability `p`, scale the rest by 1/(1-p).

    Draws from `engine._random.rng()`, so `engine.set_seed` makes masks repeatable.
    Outside training, or with p == 0, returns `x` unchanged.
    """
    unsupported("dropout", seed=seed)  # draws come from engine.set_seed's generator
    x = input
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability p must be in [0, 1], got {p}")
    x = _tensor(x)
    if not training or p == 0.0:
        return x
    d = x._data
    dtype = d.dtype if d.dtype.kind == "f" else np.dtype(np.float32)
    if p == 1.0:
        mask = np.zeros(d.shape, dtype=dtype)
    else:
        mask = rng().random(d.shape, dtype=np.float32) >= np.float32(p)
        mask = mask.astype(dtype)
        mask *= dtype.type(1.0 / (1.0 - p))
    return _finish1(d * mask, x, _dropout_vjp, mask, "dropout")


def _dropout_vjp(g, saved, needs):
    return (g * saved,)


# ----------------------------------------------------------------------------- batch norm


@renamed(x="input_x", input="input_x")
def batch_norm(
    input_x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
    eps=1e-5,
):
    """Batch normalisation over axis 1 of an (N, C) or (N, C, ...) input, as one op.

    Train mode normalises with the batch mean and the biased batch variance and
    updates the running statistics in place:
    `running = (1 - momentum) * running + momentum * batch_stat` (MindSpore's
    functional convention; `nn.BatchNorm*` pass `1 - their momentum`).  The
    running variance takes the biased batch variance, as MindSpore's CPU kernel
    does.  Predict mode normalises with the running statistics.
    """
    x = _tensor(input_x)
    d = x._data
    if d.ndim < 2:
        raise ValueError(f"batch_norm expects an (N, C, ...) input, got shape {tuple(d.shape)}")
    c = d.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and tuple(np.shape(t._data if isinstance(t, Tensor) else t)) != (c,):
            shape = np.shape(t._data if isinstance(t, Tensor) else t)
            raise ValueError(
                f"batch_norm: input of shape {tuple(d.shape)} has {c} channels, but {name} "
                f"has shape {tuple(shape)}"
            )
    if not training and (running_mean is None or running_var is None):
        raise ValueError(
            "batch_norm in predict mode (training=False) needs running_mean and running_var"
        )
    # Work on an (N, C, M) view: one code path for (N, C) and (N, C, H, W).
    d3 = d.reshape(d.shape[0], c, -1)
    count = d3.shape[0] * d3.shape[2]
    dt = d.dtype.type
    if training:
        if count < 1:
            raise ValueError("batch_norm in train mode needs at least one value per channel")
        mean = d3.mean(axis=(0, 2))
        xc = d3 - mean[:, None]
        var = (np.einsum("ncm,ncm->c", xc, xc) / dt(count)).astype(d.dtype, copy=False)
        for stat, value in ((running_mean, mean), (running_var, var)):
            if stat is None:  # no running statistics to track
                continue
            arr = stat._data if isinstance(stat, Tensor) else stat
            arr *= arr.dtype.type(1.0 - momentum)
            arr += (value * momentum).astype(arr.dtype, copy=False)
    else:
        mean = np.asarray(running_mean._data if isinstance(running_mean, Tensor) else running_mean)
        var = np.asarray(running_var._data if isinstance(running_var, Tensor) else running_var)
        xc = d3 - mean.astype(d.dtype, copy=False)[:, None]
    invstd = (1.0 / np.sqrt(var + dt(eps))).astype(d.dtype, copy=False)
    xhat = xc
    xhat *= invstd[:, None]
    gamma = None if weight is None else _tensor(weight, "weight")._data
    out = xhat * gamma[:, None] if gamma is not None else xhat.copy()
    if bias is not None:
        out += _tensor(bias, "bias")._data[:, None]
    saved = (xhat, invstd, gamma, bool(training))
    return _finish_n(out.reshape(d.shape), (x, weight, bias), _batch_norm_vjp, saved, "batch_norm")


def _batch_norm_vjp(g, saved, needs):
    xhat, invstd, gamma, training = saved
    shape = g.shape
    g = g.reshape(xhat.shape)
    gx = gg = gb = None
    gsum = g.sum(axis=(0, 2)) if (needs[2] or (needs[0] and training)) else None
    ghat = np.einsum("ncm,ncm->c", g, xhat) if (needs[1] or (needs[0] and training)) else None
    if needs[0]:
        scale = invstd if gamma is None else gamma * invstd
        if training:
            m = g.shape[0] * g.shape[2]
            gx = g - (gsum / m)[:, None] - xhat * (ghat / m)[:, None]
            gx *= scale[:, None]
        else:
            gx = g * scale[:, None]
        gx = gx.reshape(shape)
    if needs[1]:
        gg = ghat
    if needs[2]:
        gb = gsum
    return gx, gg, gb
