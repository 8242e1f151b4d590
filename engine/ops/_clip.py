"""Clipping a Tensor or a list of them, e.g. gradients before an update (MindSpore 2.x names).

`clip_by_value` clamps every element into [min, max]; `clip_by_global_norm` scales a
whole tuple so that the L2 norm over all its elements together is at most `clip_norm`
(each Tensor by the same factor, so their directions and ratios stay). Both are
differentiable: they are made of differentiable ops.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from engine.autograd import state
from engine.ops._functional import _tensor, clip, div, maximum, mul, sqrt, square
from engine.ops._reduce import sum as _sum
from engine.tensor import Tensor, wrap

__all__ = ["clip_by_value", "clip_by_global_norm"]


def clip_by_value(x, clip_value_min=None, clip_value_max=None):
    """MindSpore 2.x `ops.clip_by_value(x, clip_value_min=None, clip_value_max=None)`.

    `x` is a Tensor, or a list or tuple of Tensors (the result is of the same kind).
    Elements below `clip_value_min` become it, those above `clip_value_max` become
    that; one bound may be None. If min > max every element becomes max (the maximum
    with min is taken first, then the minimum with max, as MindSpore does).
    """
    if clip_value_min is None and clip_value_max is None:
        raise ValueError("clip_by_value: at least one of 'clip_value_min' and "
                         "'clip_value_max' must be given")  # fmt: skip
    for name, bound in (("clip_value_min", clip_value_min), ("clip_value_max", clip_value_max)):
        if bound is not None and (isinstance(bound, bool)
                                  or not isinstance(bound, (Tensor, numbers.Real))):  # fmt: skip
            raise TypeError(f"clip_by_value: {name} must be None, a number or a Tensor, got "
                            f"{type(bound).__name__}")  # fmt: skip
    if isinstance(x, Tensor):
        return clip(x, clip_value_min, clip_value_max)
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"clip_by_value: x must be a Tensor or a list or tuple of Tensors, "
                        f"got {type(x).__name__}")  # fmt: skip
    tensors = [_item(t, i, "clip_by_value") for i, t in enumerate(x)]
    if state.recording and any(t._node is not None for t in tensors):
        out = [clip(t, clip_value_min, clip_value_max) for t in tensors]
    else:  # gradients before an update: two NumPy calls per Tensor, no tape
        out = [wrap(_clamp(t._data, clip_value_min, clip_value_max)) for t in tensors]
    return tuple(out) if isinstance(x, tuple) else out


def _clamp(a, low, high):
    """max with `low`, then min with `high` (each cast to `a`'s type), as MindSpore does."""
    if low is not None:
        a = np.maximum(a, np.asarray(low._data if isinstance(low, Tensor) else low, a.dtype))
    if high is not None:
        a = np.minimum(a, np.asarray(high._data if isinstance(high, Tensor) else high, a.dtype))
    return a


def clip_by_global_norm(x, clip_norm=1.0, use_norm=None):
    """MindSpore 2.x `ops.clip_by_global_norm(x, clip_norm=1.0, use_norm=None)`.

    With `global_norm = sqrt(sum over all Tensors of sum(t ** 2))`, each Tensor becomes
    `t * clip_norm / max(global_norm, clip_norm)`: unchanged when the global norm is at
    most `clip_norm`, else all scaled down by the same factor. Returns a tuple.
    (torch.nn.utils.clip_grad_norm_ divides by `global_norm + 1e-6` instead: the same
    to about 1e-6 relative.) The norm is computed in the Tensors' own float type, where
    MindSpore always uses float32: float64 inputs keep their precision.
    """
    if use_norm is not None:
        raise NotImplementedError("clip_by_global_norm: use_norm is not supported (MindSpore "
                                  "itself supports only None)")  # fmt: skip
    if isinstance(clip_norm, bool) or not isinstance(clip_norm, numbers.Real):
        raise TypeError(f"clip_by_global_norm: clip_norm must be a number, got "
                        f"{type(clip_norm).__name__}")  # fmt: skip
    clip_norm = float(clip_norm)
    if not clip_norm > 0:
        raise ValueError(f"clip_by_global_norm: clip_norm must be greater than 0, got {clip_norm}")
    if isinstance(x, Tensor) or not isinstance(x, (list, tuple)):
        raise TypeError(f"clip_by_global_norm: x must be a list or tuple of Tensors, got "
                        f"{type(x).__name__}")  # fmt: skip
    tensors = [_item(t, i, "clip_by_global_norm") for i, t in enumerate(x)]
    if not tensors:
        return ()
    if not (state.recording and any(t._node is not None for t in tensors)):
        return _clip_arrays_by_global_norm(tensors, clip_norm)
    total = None
    for t in tensors:
        part = _sum(square(t))
        total = part if total is None else total + part
    # clip_norm / max(norm, clip_norm): at a tie the gradient goes through the norm, as
    # MindSpore's select(norm >= clip_norm, norm, clip_norm) sends it.
    scale = div(clip_norm, maximum(sqrt(total), clip_norm))
    return tuple(mul(t, scale.astype(t.dtype)) for t in tensors)


def _clip_arrays_by_global_norm(tensors: list, clip_norm: float) -> tuple:
    """The same without a tape (gradients before an update): a few NumPy calls per Tensor."""
    arrays = [t._data for t in tensors]
    total = 0.0
    for a in arrays:
        flat = a.reshape(-1)
        total += float(np.dot(flat, flat))
    # Each Tensor's sum of squares in its own type, their total in float64; the taped path
    # sums in the Tensors' type: both round to the same float32 norm but for the last bit.
    norm = math.sqrt(total)
    if norm <= clip_norm:  # the usual case: the gradients go on as they are, not copied
        return tuple(tensors)
    scale = clip_norm / norm
    return tuple(wrap(a * a.dtype.type(scale)) for a in arrays)


def _item(t, i: int, who: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{who}: x[{i}] must be a Tensor, got {type(t).__name__}")
    if t._data.dtype.kind != "f":
        raise TypeError(f"{who}: x[{i}] must hold floating-point numbers, got {t.dtype}")
    return _tensor(t)
