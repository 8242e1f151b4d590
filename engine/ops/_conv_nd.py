"""N-d convolution (`conv1d`, `conv3d`) and transposed convolution, each beside its vjp.

Both run in the phase-plane layout of `_conv_layout`: a convolution is im2col (`gather`)
plus a stacked matmul (one small GEMM per sample); its weight gradient is the same
columns against the output gradient, summed over the batch (or, when each tap's columns
are a plain window of the planes, one product per tap on those windows: no im2col), and
its input gradient the transposed matmul plus col2im (`scatter`). A transposed
convolution swaps the two: forward = col2im of W^T x, input gradient = the convolution of
the output gradient, so both share every kernel.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from engine.ops._args import renamed
from engine.ops._conv import check_pad_mode, same_pads
from engine.ops._conv_layout import layout as make_layout
from engine.ops._conv_threads import runs
from engine.ops._functional import _finish_n, _tensor
from engine.ops._threads import run
from engine.tensor import Tensor

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
    planes = layout.split(xd, begin)
    wk = _weight_by_tap(wd, groups)
    width = layout.length if layout.tail else layout.block
    result = np.empty((n, o, width), dtype=np.result_type(wk, planes))
    rows = result.reshape(n, groups, o // groups, width)
    cols = _Columns(layout, planes)

    shift = None if bd is None else bd.reshape(groups, o // groups, 1)

    def block(part, buf):
        np.matmul(wk, cols.gather(part, buf)[..., :width], out=rows[part])
        if shift is not None:  # while the block is in cache (junk columns are dropped)
            rows[part] += shift

    cols.each(block)
    result = result.reshape(n, o, *out) if layout.tail else layout.unpitch(result)
    saved = (planes, wk, wd.shape, layout, begin, tuple(size))
    return _finish_n(result, (x, weight, bias), _conv_vjp, saved, what.lower())


class _Columns:
    """im2col one block of samples at a time (`Layout.parts`) into one buffer: the
    columns are K times the input, so made whole they would stream through memory once
    written and again per product; a block stays in cache. Blocks of col2im use the same
    buffer. Runs of blocks go to the pool's threads (`_conv_threads`), a buffer each."""

    def __init__(self, layout, planes):
        self.layout, self.planes = layout, planes
        per = layout.groups * len(layout.taps) * (layout.channels // layout.groups) \
            * layout.block
        self.per, self.parts = per, layout.parts(per)

    def each(self, body, buffer=True):
        """body(part, buffer) for every block; the sum of what it returns (or None).
        Without `buffer` the bodies get an empty one (they need none)."""
        size = self.per * (self.parts[0].stop - self.parts[0].start) if buffer else 0

        def one(parts):
            buf, total = np.empty(size, dtype=self.planes.dtype), None
            for part in parts:
                value = body(part, buf)
                if value is not None:
                    total = value if total is None else np.add(total, value, out=total)
            return total

        totals = [t for t in run(one, runs(self.parts, self.per * self.layout.batch))
                  if t is not None]
        return functools.reduce(np.add, totals) if totals else None

    def gather(self, part, buf):
        return self.layout.gather(self.planes[:, part], buf[: (part.stop - part.start)
                                                            * self.per])

    def columns(self, w, a, part, buf):
        lay = self.layout
        if np.result_type(w, a) != buf.dtype:  # mixed precisions: a buffer of their own
            return lay.columns(w, a)
        shape = (part.stop - part.start, lay.groups, w.shape[-2], lay.block)
        return lay.columns(w, a, buf[: math.prod(shape)].reshape(shape))


def _weight_sum(cols, rows):
    """The sum over a block's samples of cols @ rows^T, (groups, K*Cg, O/groups)."""
    return np.matmul(cols, rows.swapaxes(-1, -2)).sum(axis=0)


TAP_PRODUCT = 1 << 15  # Cg * O/groups * columns: from here a product per tap pays


def _by_tap(layout, width: int, rows: int) -> bool:
    """Whether the weight gradient is better made tap by tap from the planes, no im2col:
    each tap's columns are a window of its plane (a strided view) while no window runs
    past its channel's block, and the products are big enough that K of them cost less
    than the copies (a 32-sample block of conv1d 16->16 k5, 256 columns: 0.25 ms against
    0.32; the whole weight gradient of conv1d 8->16 k5, 64 samples: 0.24 against 0.31)."""
    cg = layout.channels // layout.groups
    fits = max(shift for _, shift in layout.taps) + width <= layout.block
    return fits and cg * rows * width >= TAP_PRODUCT


def _tap_sums(layout, planes, rows, width):
    """`_weight_sum` of the block's im2col, one product per tap on views of `planes`
    (phases, n, C, block) against `rows` (n, groups, O/groups, width)."""
    n, g = rows.shape[:2]
    cg = layout.channels // g
    back = rows.swapaxes(-1, -2)
    out = np.empty((g, len(layout.taps) * cg, rows.shape[-2]),
                   dtype=np.result_type(planes, rows))
    for k, (phase, shift) in enumerate(layout.taps):
        window = planes[phase].reshape(n, g, cg, layout.block)[..., shift: shift + width]
        np.matmul(window, back).sum(axis=0, out=out[:, k * cg: (k + 1) * cg])
    return out


def _conv_vjp(g, saved, needs):
    planes, wk, wshape, layout, begin, size = saved
    gs, width = layout.outputs(g)
    gx = gw = gb = None
    cols = _Columns(layout, planes)
    if needs[0]:
        back = np.empty(planes.shape, dtype=np.result_type(wk, gs))

    by_tap = needs[1] and _by_tap(layout, width, gs.shape[-2])

    def block(part, buf):  # one block's columns serve both gradients while in cache
        gw = None
        if by_tap:
            gw = _tap_sums(layout, planes[:, part], gs[part], width)
        elif needs[1]:
            gw = _weight_sum(cols.gather(part, buf)[..., :width], gs[part])
        if needs[0]:
            layout.scatter(cols.columns(wk.swapaxes(-1, -2), gs[part], part, buf),
                           back[:, part])
        return gw

    gw = cols.each(block, needs[0] or not by_tap)
    if needs[1]:
        gw = _weight_back(gw.swapaxes(-1, -2), wshape).astype(wk.dtype, copy=False)
    if needs[0]:
        gx = layout.merge(back, begin, size)
    if needs[2]:  # einsum's loop beats a reduction over two axes; the junk is zero
        gb = np.einsum("ngow->go", gs).reshape(-1)
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
    planes = np.empty((layout.phases, n, c_out, layout.block), dtype=np.result_type(wk, xs))
    cols = _Columns(layout, planes)

    def block(part, buf):
        layout.scatter(cols.columns(wk.swapaxes(-1, -2), xs[part], part, buf), planes[:, part])

    cols.each(block)
    result = layout.merge(planes, begin, size, extra)
    if bd is not None:  # a separate pass: an add into the strided phases is slower
        region = result[(Ellipsis, *(slice(0, z) for z in size))] if extra else result
        region += bd.reshape(c_out, *(1,) * dims)
    saved = (xs, wk, wd.shape, layout, tuple(begin), tuple(size))
    return _finish_n(result, (x, weight, bias), _conv_transpose_vjp, saved, what.lower())


def _conv_transpose_vjp(g, saved, needs):
    xs, wk, wshape, layout, begin, size = saved
    n = layout.batch
    g = g[(Ellipsis, *(slice(0, z) for z in size))]  # output_padding takes no gradient
    cols = _Columns(layout, layout.split(g, begin))
    gx = gw = gb = None
    width = xs.shape[-1]
    if needs[0]:
        gx = np.empty(xs.shape, dtype=np.result_type(wk, cols.planes))

    def block(part, buf):
        taken = cols.gather(part, buf)[..., :width]
        if needs[0]:
            np.matmul(wk, taken, out=gx[part])
        return _weight_sum(taken, xs[part]) if needs[1] else None

    gw = cols.each(block)
    if needs[0]:
        gx = gx.reshape(n, wshape[0], width)
        gx = gx.reshape(n, wshape[0], *layout.out) if layout.tail else layout.unpitch(gx)
    if needs[1]:
        gw = _weight_back(gw.swapaxes(-1, -2), wshape).astype(wk.dtype, copy=False)
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
