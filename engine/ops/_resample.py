"""interpolate (nearest and linear resizing), pixel_shuffle and pad, with their vjps.

Resizing maps output position o of an axis of length `in` resized to `out` back to the
input with PyTorch's float32 rules (the oracle; MindSpore's kernels agree): 'nearest'
reads floor(o·in/out); the linear modes, without `align_corners`, read the half-pixel
point (o + 0.5)·in/out - 0.5 (clamped at 0) between its two neighbours, and with it
o·(in-1)/(out-1). The ratio is always in/out, even when a `scale_factor` gave the size
(MindSpore resizes to a size). Each axis is one `axis_linear` map; padding in the
'reflect' and 'replicate' modes is too.
"""

from __future__ import annotations

import math

import numpy as np

from engine.ops._args import renamed
from engine.ops._functional import _finish1, _tensor
from engine.ops._resample_axis import axis_linear

__all__ = ["interpolate", "upsample", "pixel_shuffle", "pad"]

LINEAR_MODES = {"linear": 3, "bilinear": 4, "trilinear": 5}  # mode -> the input rank it takes
_LATER = ("bicubic", "area", "nearest-exact")


# ----------------------------------------------------------------------------- interpolate


def nearest_index(size: int, out: int) -> np.ndarray:
    """Input position of each output position along one axis ('nearest', float32 as PyTorch)."""
    o = np.arange(out)
    if out == size:
        return o
    if out == 2 * size:
        return o >> 1
    scale = np.float32(size) / np.float32(out)
    return np.minimum(np.floor(o.astype(np.float32) * scale).astype(np.int64), size - 1)


def linear_taps(size: int, out: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """(index, weight), both (out, 2): the two neighbours of each output position and how
    much of each it takes."""
    o = np.arange(out, dtype=np.float64)
    if align_corners:
        src = o * ((size - 1) / (out - 1) if out > 1 else 0.0)
    else:
        src = np.maximum((o + 0.5) * (size / out) - 0.5, 0.0)
    i0 = np.minimum(src.astype(np.int64), size - 1)
    i1 = np.minimum(i0 + 1, size - 1)
    frac = src - i0
    return np.stack([i0, i1], axis=1), np.stack([1.0 - frac, frac], axis=1)


def output_sizes(what: str, spatial: tuple[int, ...], size, scale_factor) -> tuple[int, ...]:
    """The resized spatial shape from `size` or `scale_factor` (exactly one of them)."""
    nd = len(spatial)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{what}: give exactly one of size and scale_factor, got "
                         f"{'both' if size is not None else 'neither'}")
    if size is not None:
        items = tuple(size) if isinstance(size, (tuple, list)) else (size,) * nd
        if len(items) != nd or not all(
                not isinstance(v, bool) and isinstance(v, (int, np.integer)) for v in items):
            raise ValueError(f"{what}: size must be an int or {nd} ints for an input of "
                             f"spatial shape {spatial}, got {size!r}")
        if any(v < 1 for v in items):
            raise ValueError(f"{what}: size must be at least 1 along every axis, got {size!r}")
        return tuple(int(v) for v in items)
    items = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else (scale_factor,) * nd
    if len(items) != nd or not all(
            not isinstance(v, bool) and isinstance(v, (int, float, np.number)) for v in items):
        raise ValueError(f"{what}: scale_factor must be a number or {nd} numbers for an input "
                         f"of spatial shape {spatial}, got {scale_factor!r}")
    if any(not v > 0 or not math.isfinite(v) for v in items):
        raise ValueError(f"{what}: scale_factor must be more than 0, got {scale_factor!r}")
    outs = tuple(int(math.floor(n * float(v))) for n, v in zip(spatial, items, strict=True))
    if any(o < 1 for o in outs):
        raise ValueError(f"{what}: scale_factor {scale_factor!r} resizes spatial shape "
                         f"{spatial} to {outs}, which is empty")
    return outs


def check_mode(what: str, mode, rank: int | None, align_corners) -> str:
    """`mode`, checked against the input rank (None: not known yet) and align_corners."""
    if mode in _LATER:
        raise NotImplementedError(f"{what}: mode {mode!r} is not supported by this engine "
                                  "(only 'nearest', 'linear', 'bilinear', 'trilinear')")
    if mode != "nearest" and mode not in LINEAR_MODES:
        raise ValueError(f"{what}: mode must be 'nearest', 'linear', 'bilinear' or 'trilinear', "
                         f"got {mode!r}")
    if align_corners not in (None, False, True):
        raise TypeError(f"{what}: align_corners must be a bool or None, got {align_corners!r}")
    if mode == "nearest" and align_corners:
        raise ValueError(f"{what}: align_corners applies only to the 'linear', 'bilinear' and "
                         "'trilinear' modes, not 'nearest'")
    if rank is not None and mode in LINEAR_MODES and rank != LINEAR_MODES[mode]:
        raise ValueError(f"{what}: mode {mode!r} takes a {LINEAR_MODES[mode]}-D input, got a "
                         f"{rank}-D one")
    return mode


@renamed(x="input")
def interpolate(input, size=None, scale_factor=None, mode="nearest",  # noqa: A002
                align_corners=None, recompute_scale_factor=None):  # fmt: skip
    """MindSpore 2.x `ops.interpolate`: resize the spatial axes of an (N, C, L),
    (N, C, H, W) or (N, C, D, H, W) input to `size`, or to floor(size · `scale_factor`).

    Modes: 'nearest' (any of those ranks), 'linear' (3-D), 'bilinear' (4-D), 'trilinear'
    (5-D); 'bicubic', 'area' and 'nearest-exact' raise NotImplementedError.
    `recompute_scale_factor` changes nothing here: positions always map by in/out.
    """
    what = "interpolate"
    x = _tensor(input)
    d = x._data
    if d.ndim not in (3, 4, 5):
        raise ValueError(f"{what} expects an (N, C, L), (N, C, H, W) or (N, C, D, H, W) input, "
                         f"got shape {tuple(d.shape)}")
    check_mode(what, mode, d.ndim, align_corners)
    if recompute_scale_factor and size is not None:
        raise ValueError(f"{what}: recompute_scale_factor needs scale_factor, not size")
    outs = output_sizes(what, tuple(d.shape[2:]), size, scale_factor)
    for k in range(len(outs)):  # last axis first
        axis = -1 - k
        n, out = x._data.shape[axis], outs[axis]
        if mode == "nearest":
            if n != out:
                x = axis_linear(x, axis, nearest_index(n, out)[:, None], None, what)
        else:
            index, weight = linear_taps(n, out, bool(align_corners))
            x = axis_linear(x, axis, index, weight, what)
    return x


upsample = interpolate  # MindSpore 2.x keeps `ops.upsample` as another name for it


# ----------------------------------------------------------------------------- pixel_shuffle


@renamed(x="input")
def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """MindSpore 2.x `ops.pixel_shuffle`: (*, C·r², H, W) -> (*, C, H·r, W·r), channel
    c·r² + i·r + j going to row offset i and column offset j (PyTorch's order)."""
    x = _tensor(input)
    d = x._data
    r = upscale_factor
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
        raise ValueError(f"pixel_shuffle: upscale_factor must be a positive int, got {r!r}")
    if d.ndim < 3:
        raise ValueError(f"pixel_shuffle expects an input of shape (*, C, H, W), got shape "
                         f"{tuple(d.shape)}")
    *lead, c, h, w = d.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: the {c} channels of input shape {tuple(d.shape)} are "
                         f"not divisible by upscale_factor² ({r * r})")
    k = len(lead)
    parts = d.reshape(*lead, c // (r * r), r, r, h, w)
    order = (*range(k), k, k + 3, k + 1, k + 4, k + 2)
    out = parts.transpose(order).reshape(*lead, c // (r * r), h * r, w * r)
    return _finish1(out, x, _pixel_shuffle_vjp, (d.shape, r, order), "pixel_shuffle")


def _pixel_shuffle_vjp(g, saved, needs):
    shape, r, order = saved
    *lead, c, h, w = shape
    parts = g.reshape(*lead, c // (r * r), h, r, w, r)
    return (parts.transpose(np.argsort(order)).reshape(shape),)


# ----------------------------------------------------------------------------- pad


def pad_pairs(what: str, padding, rank: int) -> list[tuple[int, int]]:
    """MindSpore/PyTorch `padding` (before, after of the last axis, then of the one before
    it, …) as (before, after) per axis, last axis first."""
    items = tuple(padding) if isinstance(padding, (tuple, list)) else None
    if items is None or len(items) % 2 or not items or not all(
            not isinstance(v, bool) and isinstance(v, (int, np.integer)) for v in items):
        raise ValueError(f"{what}: padding must be a tuple of ints of even length (before and "
                         f"after of the last axis, then of the one before), got {padding!r}")
    if len(items) // 2 > rank:
        raise ValueError(f"{what}: padding {padding!r} pads {len(items) // 2} axes, but the input "
                         f"has only {rank}")
    return [(int(items[2 * i]), int(items[2 * i + 1])) for i in range(len(items) // 2)]


def edge_index(size: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """Source position of each padded position along one axis ('reflect' or 'replicate')."""
    p = np.arange(-lo, size + hi)
    if mode == "replicate":
        return np.clip(p, 0, size - 1)
    p = np.abs(p)
    return np.where(p > size - 1, 2 * (size - 1) - p, p)


@renamed(x="input_x", input="input_x")
def pad(input_x, padding, mode="constant", value=None):
    """MindSpore 2.x `ops.pad(input_x, padding, mode='constant', value=None)`.

    `padding` holds (before, after) for the last axis, then the one before it, and so on.
    'constant' fills with `value` (0 when None) and takes negative padding as cropping;
    'reflect' mirrors without repeating the edge (each padding less than that axis's size);
    'replicate' repeats the edge. 'circular' raises NotImplementedError.
    """
    what = "pad"
    x = _tensor(input_x)
    d = x._data
    if mode == "circular":
        raise NotImplementedError("pad: mode 'circular' is not supported by this engine")
    if mode not in ("constant", "reflect", "replicate"):
        raise ValueError(f"pad: mode must be 'constant', 'reflect' or 'replicate', got {mode!r}")
    pairs = pad_pairs(what, padding, d.ndim)
    if mode != "constant":
        if value is not None:
            raise ValueError(f"pad: value applies only to mode 'constant', not {mode!r}")
        for k, (lo, hi) in enumerate(pairs):
            axis = -1 - k
            n = d.shape[axis]
            if min(lo, hi) < 0:
                raise ValueError(f"pad: mode {mode!r} takes no negative padding, got {padding!r}")
            if mode == "reflect" and max(lo, hi) >= n:
                raise ValueError(f"pad: 'reflect' padding {max(lo, hi)} must be less than the "
                                 f"size {n} it mirrors (input shape {tuple(d.shape)})")
            if n == 0:
                raise ValueError(f"pad: can't {mode} an empty axis of shape {tuple(d.shape)}")
        for k, (lo, hi) in enumerate(pairs):
            if lo or hi:
                axis = -1 - k
                index = edge_index(x._data.shape[axis], lo, hi, mode)
                x = axis_linear(x, axis, index[:, None], None, f"pad {mode}")
        return x
    return _constant_pad(x, pairs, 0 if value is None else value)


def _constant_pad(x, pairs, value):
    d = x._data
    shape, src, dst = list(d.shape), [slice(None)] * d.ndim, [slice(None)] * d.ndim
    for k, (lo, hi) in enumerate(pairs):
        axis = d.ndim - 1 - k
        n = d.shape[axis]
        if n + lo + hi < 1:
            raise ValueError(f"pad: padding {(lo, hi)} leaves nothing of the size {n} along axis "
                             f"{axis} (input shape {tuple(d.shape)})")
        shape[axis] = n + lo + hi
        src[axis] = slice(max(0, -lo), n - max(0, -hi))
        dst[axis] = slice(max(0, lo), max(0, lo) + max(0, n - max(0, -lo) - max(0, -hi)))
    dtype = d.dtype if d.dtype.kind == "f" or float(value).is_integer() else np.float32
    out = np.full(shape, value, dtype=dtype)
    out[tuple(dst)] = d[tuple(src)]
    return _finish1(out, x, _constant_pad_vjp, (d.shape, tuple(src), tuple(dst)), "pad")


def _constant_pad_vjp(g, saved, needs):
    shape, src, dst = saved
    gx = np.zeros(shape, dtype=g.dtype)
    gx[src] = g[dst]
    return (gx,)
