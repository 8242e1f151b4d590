"""N-d convolution (`conv1d`, `conv3d`) and transposed convolution, each beside its vjp.

Both run in the phase-plane layout of `_conv_layout`: a convolution is im2col (`gather`)
plus a stacked matmul (one small GEMM per sample); its weight gradient is the same
columns against the output gradient, summed over the batch, and its input gradient the
transposed matmul plus col2im (`scatter`). A transposed convolution swaps the two:
forward = col2im of W^T x, input gradient = the convolution of the output gradient, so
both share every kernel.
"""

from __future__ import annotations

import math

import numpy as np

from engine.autograd import Node, state
from engine.ops._args import renamed
from engine.ops._conv import check_pad_mode
from engine.ops._conv_layout import layout as make_layout
from engine.ops._functional import _link, _tensor
from engine.tensor import Tensor, wrap

__all__ = ["conv1d", "conv3d"]

_LAYOUTS = {1: "(N, C, L)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


# ----------------------------------------------------------------------------- arguments


def ints(value, n: int, name: str, minimum: int = 1, who: str = "") -> tuple[int, ...]:
    """An int, or a sequence of 1 or `n` ints, as an n-tuple; each at least `minimum`."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(items) == 1:
        items = items * n
    ok = len(items) == n and all(
        not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= minimum
        for v in items)
    if not ok:
        many = "" if n == 1 else f" or {n} ints"
        raise ValueError(f"{who}{name} must be an int{many}, each >= {minimum}; got {value!r}")
    return tuple(int(v) for v in items)


def same_pads(size: int, reach: int, stride: int) -> tuple[int, int]:
    """MindSpore 'same': ceil(size / stride) outputs; an odd padding goes after."""
    total = max((-(-size // stride) - 1) * stride + reach - size, 0)
    return total // 2, total - total // 2


def reaches(kernel, dilation) -> tuple[int, ...]:
    return tuple((k - 1) * d + 1 for k, d in zip(kernel, dilation, strict=True))


def _bias(bias, channels: int, what: str):
    if bias is None:
        return None
    bd = bias._data if isinstance(bias, Tensor) else np.asarray(bias)
    if bd.shape != (channels,):
        raise ValueError(f"{what}: bias must have shape ({channels},), got {tuple(bd.shape)}")
    return bd


def _groups(groups, what: str) -> int:
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"{what}: groups must be a positive int, got {groups!r}")
    return int(groups)


def _weight_by_tap(wd: np.ndarray, groups: int) -> np.ndarray:
    """(O, Cg, *K) -> (groups, O/groups, K*Cg): taps outer, channels inner, as `gather`."""
    o, cg = wd.shape[:2]
    taps = math.prod(wd.shape[2:])
    w = wd.reshape(groups, o // groups, cg, taps).transpose(0, 1, 3, 2)
    return np.ascontiguousarray(w).reshape(groups, o // groups, taps * cg)


def _weight_back(gw: np.ndarray, shape: tuple) -> np.ndarray:
    """The inverse of `_weight_by_tap`, for a gradient (groups, O/groups, K*Cg)."""
    o, cg, kernel = shape[0], shape[1], shape[2:]
    g = gw.shape[0]
    gw = gw.reshape(g, o // g, math.prod(kernel), cg).transpose(0, 1, 3, 2)
    return gw.reshape(o, cg, *kernel)


def _record(out, inputs, vjp, saved, name):
    if state.recording:
        links = tuple(_link(t) for t in inputs)
        if any(link is not None for link in links):
            return wrap(out, Node(vjp, saved, links, name))
    return wrap(out)


# ----------------------------------------------------------------------------- convolution


def conv_nd(x, weight, bias, stride, pads, dilation, groups, what: str):
    """Cross-correlation of (N, C, *S) with (O, C/groups, *K); `pads` ((begin, end), ...)."""
    x, weight = _tensor(x), _tensor(weight, "weight")
    xd, wd = x._data, weight._data
    dims = len(pads)
    if xd.ndim != dims + 2:
        raise ValueError(f"{what} expects a {dims + 2}-D {_LAYOUTS[dims]} input, got shape "
                         f"{tuple(xd.shape)}")
    if wd.ndim != dims + 2:
        raise ValueError(f"{what}: weight must be {dims + 2}-D (O, C/groups, *kernel), got "
                         f"{tuple(wd.shape)}")
    n, c, *size = xd.shape
    o, cg, *kernel = wd.shape
    if c != cg * groups or o % groups:
        raise ValueError(f"{what}: weight of shape {tuple(wd.shape)} with groups={groups} "
                         f"expects {cg * groups} input channels (and out channels divisible "
                         f"by groups), got input shape {tuple(xd.shape)}")
    bd = _bias(bias, o, what)
    padded = tuple(z + b + e for z, (b, e) in zip(size, pads, strict=True))
    out = []
    for p, r, s in zip(padded, reaches(kernel, dilation), stride, strict=True):
        if p < r:
            raise ValueError(f"{what}: the padded input {(n, c, *padded)} is smaller than the "
                             f"kernel's reach {r} along an axis")
        out.append((p - r) // s + 1)
    layout = make_layout(n, c, groups, tuple(kernel), tuple(stride), tuple(dilation), padded,
                         tuple(out))
    begin = tuple(b for b, _ in pads)
    cols = layout.gather(layout.split(xd, begin))
    wk = _weight_by_tap(wd, groups)
    if layout.tail:  # the outputs are the first columns of each block: no unpitching
        result = np.matmul(wk, cols[..., : layout.length]).reshape(n, o, *out)
    else:
        result = layout.unpitch(np.matmul(wk, cols).reshape(n, o, layout.block))
    if bd is not None:
        result += bd.reshape(o, *(1,) * dims)
    saved = (cols, wk, wd.shape, layout, begin, tuple(size))
    return _record(result, (x, weight, bias), _conv_vjp, saved, what.lower())


def _conv_vjp(g, saved, needs):
    cols, wk, wshape, layout, begin, size = saved
    gs, width = layout.outputs(g)
    gx = gw = gb = None
    if needs[1]:
        # One small GEMM per sample, then a sum over the batch.
        gw = np.matmul(cols[..., :width], gs.swapaxes(-1, -2)).sum(axis=0).swapaxes(-1, -2)
        gw = _weight_back(gw, wshape).astype(wk.dtype, copy=False)
    if needs[0]:
        planes = layout.scatter(layout.columns(wk.swapaxes(-1, -2), gs))
        gx = layout.merge(planes, begin, size)
    if needs[2]:
        gb = g.sum(axis=(0, *range(2, g.ndim)))
    return gx, gw, gb


# ----------------------------------------------------------------------------- transposed


def conv_transpose_nd(x, weight, bias, stride, dilation, groups, begin, size, extra,
                      what: str):
    """Transposed convolution of (N, Cin, *S) with (Cin, Cout/groups, *K).

    The full result ((S - 1) * stride + reach per axis) is read from `begin` for `size`
    (zeros past its end); `extra` zeros follow at the end of each axis, without bias
    (MindSpore's output_padding).
    """
    x, weight = _tensor(x), _tensor(weight, "weight")
    xd, wd = x._data, weight._data
    dims = len(size)
    if xd.ndim != dims + 2:
        raise ValueError(f"{what} expects a {dims + 2}-D {_LAYOUTS[dims]} input, got shape "
                         f"{tuple(xd.shape)}")
    n, c_in, *spatial = xd.shape
    _, og, *kernel = wd.shape
    if wd.shape[0] != c_in or c_in % groups:
        raise ValueError(f"{what}: weight of shape {tuple(wd.shape)} expects an input with "
                         f"{wd.shape[0]} channels, got input shape {tuple(xd.shape)}")
    c_out = og * groups
    bd = _bias(bias, c_out, what)
    full = tuple((z - 1) * s + r for z, s, r in
                 zip(spatial, stride, reaches(kernel, dilation), strict=True))
    layout = make_layout(n, c_out, groups, tuple(kernel), tuple(stride), tuple(dilation), full,
                         tuple(spatial))
    wk = _weight_by_tap(wd, groups)  # as the weight of the convolution this transposes
    xs, _ = layout.outputs(xd)
    planes = layout.scatter(layout.columns(wk.swapaxes(-1, -2), xs))
    result = layout.merge(planes, begin, size, extra)
    if bd is not None:  # a separate pass: an add into the strided phases is slower
        region = result[(Ellipsis, *(slice(0, z) for z in size))] if extra else result
        region += bd.reshape(c_out, *(1,) * dims)
    saved = (xs, wk, wd.shape, layout, tuple(begin), tuple(size))
    return _record(result, (x, weight, bias), _conv_transpose_vjp, saved, what.lower())


def _conv_transpose_vjp(g, saved, needs):
    xs, wk, wshape, layout, begin, size = saved
    n = layout.batch
    g = g[(Ellipsis, *(slice(0, z) for z in size))]  # output_padding takes no gradient
    cols = layout.gather(layout.split(g, begin))
    gx = gw = gb = None
    width = xs.shape[-1]
    if needs[0]:
        gx = np.matmul(wk, cols[..., :width]).reshape(n, wshape[0], width)
        gx = gx.reshape(n, wshape[0], *layout.out) if layout.tail else layout.unpitch(gx)
    if needs[1]:
        gw = np.matmul(cols[..., :width], xs.swapaxes(-1, -2)).sum(axis=0).swapaxes(-1, -2)
        gw = _weight_back(gw, wshape).astype(wk.dtype, copy=False)
    if needs[2]:
        gb = g.sum(axis=(0, *range(2, g.ndim)))
    return gx, gw, gb


# ----------------------------------------------------------------------------- MindSpore ops


def _functional(dims, input, weight, bias, stride, pad_mode, padding, dilation,  # noqa: A002
                groups, what):
    mode = check_pad_mode(pad_mode)
    pad = ints(padding, dims, "padding", 0, f"{what}: ")
    if mode != "pad" and any(pad):
        raise ValueError(f"{what}: padding must be 0 when pad_mode is {mode!r}, got {padding!r}")
    stride = ints(stride, dims, "stride", 1, f"{what}: ")
    dilation = ints(dilation, dims, "dilation", 1, f"{what}: ")
    groups = _groups(groups, what)
    x, w = _tensor(input), _tensor(weight, "weight")
    if x._data.ndim != dims + 2:
        raise ValueError(f"{what} expects a {dims + 2}-D {_LAYOUTS[dims]} input, got shape "
                         f"{tuple(x.shape)}")
    if w._data.ndim != dims + 2:
        raise ValueError(f"{what}: weight must be {dims + 2}-D (O, C/groups, *kernel), got "
                         f"{tuple(w.shape)}")
    if mode == "same":
        pads = tuple(same_pads(z, r, s) for z, r, s in
                     zip(x.shape[2:], reaches(w.shape[2:], dilation), stride, strict=True))
    else:
        pads = tuple((p, p) for p in pad)
    return conv_nd(x, w, bias, stride, pads, dilation, groups, what)


@renamed(x="input")
def conv1d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0,  # noqa: A002
           dilation=1, groups=1):
    """1-D cross-correlation of an (N, C, L) input with an (O, C/groups, k) weight.

    `pad_mode` 'same' keeps ceil(L/stride) positions (an odd padding goes at the end),
    'valid' pads nothing, 'pad' pads `padding` (an int or a 1-tuple) zeros on both sides.
    """
    return _functional(1, input, weight, bias, stride, pad_mode, padding, dilation, groups,
                       "conv1d")


@renamed(x="input")
def conv3d(input, weight, bias=None, stride=1, pad_mode="valid", padding=0,  # noqa: A002
           dilation=1, groups=1):
    """3-D cross-correlation of an (N, C, D, H, W) input with an (O, C/groups, kd, kh, kw)
    weight. `padding` ('pad' mode) is an int or (depth, height, width), each on both sides;
    'same' puts an odd padding at the back/bottom/right."""
    return _functional(3, input, weight, bias, stride, pad_mode, padding, dilation, groups,
                       "conv3d")
