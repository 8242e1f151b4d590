"""Adaptive pooling: a mean or maximum over bins that split each axis into a given count.

Bin i of an axis of length L split into n covers floor(i·L/n) .. ceil((i+1)·L/n), as
PyTorch and MindSpore's AdaptiveAvgPool2d (MindSpore's 1-D Cells take L divisible by n,
where both rules agree). 2-D pooling is the 1-D op along W, then along H: a bin's mean is
the mean of its rows' means, and its maximum the maximum of its rows' maxima (ties go to
the first in row-major order, as PyTorch's scan). The work loops over nothing finer than
whole arrays: bins are gathered as (out, widest bin) index tables.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from engine.ops._args import renamed, unsupported
from engine.ops._functional import _finish1, _tensor
from engine.ops._resample_axis import axis_linear

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d"]


@lru_cache(maxsize=128)
def bins(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """(index (out, widest), weight (out, widest)): each bin's positions, its last one
    repeated to the widest bin's width with weight 0, and 1/width for the real ones."""
    i = np.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    width = end - start
    taps = np.arange(width.max())
    index = np.minimum(start[:, None] + taps, end[:, None] - 1)
    weight = np.where(taps < width[:, None], 1.0 / width[:, None], 0.0)
    index.setflags(write=False)
    weight.setflags(write=False)
    return index, weight


def _sizes(what: str, output_size, spatial: tuple[int, ...]) -> tuple[int, ...]:
    """`output_size` (an int, or one entry per axis where None keeps the input's size)."""
    nd = len(spatial)
    items = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,)
    if output_size is None:
        items = (None,) * nd
    if len(items) == 1:
        items = items * nd
    ok = len(items) == nd and all(
        v is None or (not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= 1)
        for v in items
    )
    if not ok:
        many = "a positive int" if nd == 1 else f"a positive int or {nd} of them (or None)"
        raise ValueError(f"{what}: output_size must be {many}, got {output_size!r}")
    return tuple(size if v is None else int(v) for v, size in zip(items, spatial, strict=True))


def _input(what: str, x, nd: int):
    x = _tensor(x)
    if x._data.ndim not in (nd + 1, nd + 2):
        axes = "L" if nd == 1 else "H, W"
        raise ValueError(f"{what} expects input of shape (N, C, {axes}) or (C, {axes}), got "
                         f"shape {tuple(x._data.shape)}")
    if x._data.dtype.kind != "f":
        raise TypeError(f"{what} expects a floating-point input, got {x._data.dtype}")
    return x


def adaptive_avg(x, nd: int, output_size, what: str):
    x = _input(what, x, nd)
    outs = _sizes(what, output_size, x._data.shape[-nd:])
    for k in range(nd):  # last axis first
        axis = -1 - k
        size, out = x._data.shape[axis], outs[axis]
        if size != out:
            index, weight = bins(size, out)
            x = axis_linear(x, axis, index, weight, what)
    return x


def adaptive_max(x, nd: int, output_size, what: str):
    x = _input(what, x, nd)
    outs = _sizes(what, output_size, x._data.shape[-nd:])
    for k in range(nd):
        axis = -1 - k
        size, out = x._data.shape[axis], outs[axis]
        if size != out:
            x = _max_along(x, axis, out, what)
    return x


def _max_along(x, axis: int, out: int, what: str):
    d = x._data
    axis %= d.ndim
    index, _ = bins(d.shape[axis], out)
    taps = np.moveaxis(d, axis, -1)[..., index]  # (..., out, widest)
    arg = taps.argmax(axis=-1)  # the first maximum; repeated last positions come after it
    best = np.take_along_axis(taps, arg[..., None], axis=-1)[..., 0]
    where = index[np.arange(out), arg]  # input position of each maximum, (..., out)
    saved = (axis, where, d.shape[axis])
    return _finish1(np.ascontiguousarray(np.moveaxis(best, -1, axis)), x, _max_along_vjp,
                    saved, what)  # fmt: skip


def _max_along_vjp(g, saved, needs):
    axis, where, size = saved
    gm = np.moveaxis(g, axis, -1)  # (..., out)
    gx = np.zeros((*gm.shape[:-1], size), dtype=g.dtype)
    # One bin at a time: bins overlap, and a fancy-index '+=' would drop repeated positions.
    for i in range(gm.shape[-1]):
        at = where[..., i : i + 1]
        np.put_along_axis(gx, at, np.take_along_axis(gx, at, -1) + gm[..., i : i + 1], -1)
    return (np.moveaxis(gx, -1, axis),)


@renamed(x="input", input_x="input")
def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """MindSpore 2.x `ops.adaptive_avg_pool1d(input, output_size)`: (N, C, L) -> (N, C, out)."""
    if isinstance(output_size, (tuple, list)) or output_size is None:
        raise ValueError(f"adaptive_avg_pool1d: output_size must be an int, got {output_size!r}")
    return adaptive_avg(input, 1, output_size, "adaptive_avg_pool1d")


@renamed(x="input", input_x="input")
def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """MindSpore 2.x `ops.adaptive_avg_pool2d(input, output_size)`: (N, C, H, W) or (C, H, W)
    -> (…, h, w); `output_size` is h, (h, w) or has None to keep that axis."""
    return adaptive_avg(input, 2, output_size, "adaptive_avg_pool2d")


@renamed(x="input", input_x="input")
def adaptive_max_pool1d(input, output_size):  # noqa: A002
    """MindSpore 2.x `ops.adaptive_max_pool1d(input, output_size)`: (N, C, L) -> (N, C, out)."""
    if isinstance(output_size, (tuple, list)) or output_size is None:
        raise ValueError(f"adaptive_max_pool1d: output_size must be an int, got {output_size!r}")
    return adaptive_max(input, 1, output_size, "adaptive_max_pool1d")


@renamed(x="input", input_x="input")
def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """MindSpore 2.x `ops.adaptive_max_pool2d(input, output_size, return_indices=False)`;
    `return_indices=True` raises NotImplementedError."""
    unsupported("adaptive_max_pool2d", return_indices=return_indices)
    return adaptive_max(input, 2, output_size, "adaptive_max_pool2d")
