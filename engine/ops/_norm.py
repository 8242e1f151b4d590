"""layer_norm, group_norm, instance_norm (and lrn, from _norm_lrn) with their vjps.

Each op normalises the rows of a 2-D view of its input (layer norm: the trailing axes
of each leading index; group norm: each sample's group of channels) and records one
tape node whose rule is the analytic backward pass, not a chain of small ops. The row
kernels are in _norm_rows and _norm_group_rows; they keep what the backward pass needs
only while the tape records the op. Statistics are computed in the input's floating dtype
(float32 for float16 and integer inputs); the variance is the biased one (divided by
the row length), as MindSpore and PyTorch use.
"""

from __future__ import annotations

import math

import numpy as np

from engine.autograd import state
from engine.ops._functional import _finish_n, _tensor
from engine.ops._norm_group_rows import group_norm_backward, group_norm_forward
from engine.ops._norm_lrn import lrn
from engine.ops._norm_rows import layer_norm_backward, layer_norm_forward
from engine.tensor import Tensor

__all__ = ["layer_norm", "group_norm", "instance_norm", "lrn"]


# ----------------------------------------------------------------------------- plumbing


def _work_dtype(d: np.ndarray) -> np.dtype:
    """float64 stays float64; anything else is normalised in float32."""
    return np.dtype(np.float64) if d.dtype == np.float64 else np.dtype(np.float32)


def _out_dtype(d: np.ndarray, work: np.dtype) -> np.dtype:
    """The output keeps a floating input's dtype; integers give the work dtype."""
    return d.dtype if d.dtype.kind == "f" else work


def _param(p, who: str, name: str, shape: tuple, work: np.dtype):
    """A weight or bias as a flat array of the work dtype (None stays None)."""
    if p is None:
        return None
    arr = _tensor(p, name)._data
    if tuple(arr.shape) != tuple(shape):
        raise ValueError(f"{who}: {name} has shape {tuple(arr.shape)}, but the input needs "
                         f"{tuple(shape)}")
    return arr.astype(work, copy=False).reshape(-1)


def _eps(who: str, eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or eps < 0:
        raise ValueError(f"{who}: eps must be a number >= 0, got {eps!r}")
    return float(eps)


def _meta(t) -> tuple | None:
    """(shape, dtype) of an op argument, kept for its gradient instead of the argument."""
    if t is None:
        return None
    arr = t._data if isinstance(t, Tensor) else np.asarray(t)
    return arr.shape, arr.dtype


def _recorded(*inputs) -> bool:
    """Whether the tape will record an op on these inputs (so its backward may run)."""
    if state.recording:
        for t in inputs:
            if isinstance(t, Tensor) and t._node is not None:
                return True
    return False


def _grad(value: np.ndarray | None, meta: tuple) -> np.ndarray | None:
    """A gradient in the shape and dtype of the argument it belongs to."""
    if value is None:
        return None
    shape, dtype = meta
    return value.reshape(shape).astype(dtype, copy=False)


# ----------------------------------------------------------------------------- layer norm


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """MindSpore 2.x `ops.layer_norm(input, normalized_shape, weight=None, bias=None,
    eps=1e-5)`: normalise over the trailing axes `normalized_shape` (an int or a tuple,
    equal to the input's last axes); `weight` and `bias` have that shape."""
    x = _tensor(input)
    if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
        normalized_shape = (int(normalized_shape),)
    if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape:
        raise TypeError(f"layer_norm: normalized_shape must be an int or a non-empty tuple of "
                        f"ints, got {normalized_shape!r}")
    shape = tuple(x.shape)
    k = len(normalized_shape)
    if k > len(shape) or shape[len(shape) - k:] != tuple(normalized_shape):
        raise ValueError(f"layer_norm: normalized_shape {tuple(normalized_shape)} must equal the "
                         f"last axes of the input, whose shape is {shape}")
    begin = len(shape) - k
    return layer_norm_axes(x, begin, begin, weight, bias, eps, "layer_norm")


def _begin(who: str, name: str, axis, rank: int) -> int:
    """MindSpore's begin axes: an int in [-1, rank); -1 is the last axis."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{who}: {name} must be an int, got {axis!r}")
    if not -1 <= axis < rank:
        raise ValueError(f"{who}: {name} must be in [-1, {rank}) for an input of rank {rank}, "
                         f"got {axis}")
    return int(axis) % rank


def layer_norm_axes(input, begin_norm_axis, begin_params_axis, gamma=None, beta=None,  # noqa: A002
                    epsilon=1e-7, who="LayerNorm"):
    """MindSpore's LayerNorm primitive: normalise over the axes from `begin_norm_axis` on;
    `gamma` and `beta` have the input's shape from `begin_params_axis` on and broadcast
    over the axes before it. Both axes are in [-1, rank). Returns the output only."""
    x = _tensor(input)
    d = x._data
    if d.ndim == 0:
        raise ValueError(f"{who} needs an input with at least one axis, got a scalar")
    bna = _begin(who, "begin_norm_axis", begin_norm_axis, d.ndim)
    bpa = _begin(who, "begin_params_axis", begin_params_axis, d.ndim)
    eps = _eps(who, epsilon)
    work = _work_dtype(d)
    pshape = d.shape[bpa:]
    g = _param(gamma, who, "gamma", pshape, work)
    b = _param(beta, who, "beta", pshape, work)
    rows, m = math.prod(d.shape[:bna]), math.prod(d.shape[bna:])
    p = math.prod(pshape)
    out, xc, rstd = layer_norm_forward(d.astype(work, copy=False).reshape(rows, m), g, b, p,
                                       eps, _recorded(x, gamma, beta))
    out = out.reshape(d.shape).astype(_out_dtype(d, work), copy=False)
    saved = (xc, rstd, g, p, _meta(x), _meta(gamma), _meta(beta))
    return _finish_n(out, (x, gamma, beta), _layer_norm_vjp, saved, "layer_norm")


def _layer_norm_vjp(gout, saved, needs):
    xc, rstd, g, p, x, gamma, beta = saved
    gout = gout.astype(xc.dtype, copy=False).reshape(xc.shape)
    gx, gg, gb = layer_norm_backward(gout, xc, rstd, g, p, needs)
    return _grad(gx, x), _grad(gg, gamma), _grad(gb, beta)


# ----------------------------------------------------------------------------- group norm


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """MindSpore 2.x `ops.group_norm(input, num_groups, weight=None, bias=None, eps=1e-5)`:
    an (N, C, *) input's C channels fall into `num_groups` groups of C / num_groups; each
    sample's group is normalised on its own, then `weight` and `bias` (C,) scale and
    shift each channel."""
    return _group_norm(input, num_groups, weight, bias, eps, "group_norm")


def instance_norm(input, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Instance normalisation of an (N, C, *) input: each sample's channels normalised on
    their own over the remaining axes (a group norm with one channel per group), then
    `weight` and `bias` (C,) scale and shift each channel. This is MindSpore's
    InstanceNorm primitive on instance statistics; running statistics are not involved."""
    x = _tensor(input)
    if x._data.ndim < 2:
        raise ValueError(f"instance_norm expects an (N, C, ...) input, got shape {tuple(x.shape)}")
    return _group_norm(x, x._data.shape[1], weight, bias, eps, "instance_norm")


def _group_norm(input, num_groups, weight, bias, eps, who):  # noqa: A002
    x = _tensor(input)
    d = x._data
    if d.ndim < 2:
        raise ValueError(f"{who} expects an (N, C, ...) input, got shape {tuple(d.shape)}")
    if isinstance(num_groups, bool) or not isinstance(num_groups, (int, np.integer)) \
            or num_groups < 1:
        raise ValueError(f"{who}: num_groups must be a positive int, got {num_groups!r}")
    n, c = d.shape[:2]
    groups = int(num_groups)
    if c % groups:
        raise ValueError(f"{who}: the input's {c} channels (shape {tuple(d.shape)}) must be "
                         f"divisible by num_groups ({groups})")
    eps = _eps(who, eps)
    work = _work_dtype(d)
    w = _param(weight, who, "weight", (c,), work)
    b = _param(bias, who, "bias", (c,), work)
    s = math.prod(d.shape[2:])
    out, xc, rstd = group_norm_forward(d.astype(work, copy=False).reshape(n, c, s), groups, w,
                                       b, eps, _recorded(x, weight, bias))
    out = out.reshape(d.shape).astype(_out_dtype(d, work), copy=False)
    saved = (xc, rstd, w, _meta(x), _meta(weight), _meta(bias))
    return _finish_n(out, (x, weight, bias), _group_norm_vjp, saved, who)


def _group_norm_vjp(gout, saved, needs):
    xc, rstd, w, x, weight, bias = saved
    gout = gout.astype(xc.dtype, copy=False).reshape(xc.shape)
    gx, gw, gb = group_norm_backward(gout, xc, rstd, w, needs)
    return _grad(gx, x), _grad(gw, weight), _grad(gb, bias)
