"""2-D convolution (`conv2d`) and the padding/argument helpers pooling shares.

The forward is im2col plus one batched matmul; the backward scatters the
column gradient back with a loop over kernel positions only (never over
pixels or samples).  For stride 1 both directions use a "row pitch" layout:
rows of the padded input are laid end to end, so each kernel position is one
contiguous slice and im2col / col2im move long runs instead of short rows.
The few junk columns this creates meet zeros in the gradient and are cut
from the output. A big enough batch is cut into one block of samples per worker
of the engine's pool (`_threads`), each block's im2col, products and col2im
together on its own thread; the blocks' weight gradients are summed in order.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from engine.autograd import Node, state
from engine.ops._args import renamed
from engine.ops._conv_threads import PARALLEL_FROM
from engine.ops._functional import _link, _tensor
from engine.ops._threads import run, workers
from engine.tensor import Tensor, wrap

PAD_MODES = ("same", "valid", "pad")

# ----------------------------------------------------------------------------- arguments


def _pair(value, name: str, minimum: int = 1) -> tuple[int, int]:
    """An int or a 1- or 2-sequence of ints -> (h, w), each at least `minimum`."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1:
            value = (value[0], value[0])
        elif len(value) != 2:
            raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
    else:
        value = (value, value)
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")
        if v < minimum:
            raise ValueError(f"{name} must be >= {minimum}, got {tuple(value)}")
        out.append(int(v))
    return out[0], out[1]


def check_pad_mode(pad_mode, allowed=PAD_MODES) -> str:
    mode = pad_mode.lower() if isinstance(pad_mode, str) else pad_mode
    if mode not in allowed:
        names = ", ".join(map(repr, allowed))
        raise ValueError(f"pad_mode must be one of {names}; got {pad_mode!r}")
    return mode


def conv_padding(padding) -> tuple[int, int, int, int]:
    """MindSpore's conv `padding`: an int, or (top, bottom, left, right)."""
    if isinstance(padding, (tuple, list)):
        if len(padding) != 4:
            raise ValueError(
                f"padding must be an int or a 4-tuple (top, bottom, left, right), got {padding!r}"
            )
        values = tuple(padding)
    else:
        values = (padding,) * 4
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"padding must hold non-negative ints, got {padding!r}")
    return tuple(int(v) for v in values)


def same_pads(size: int, k_eff: int, stride: int) -> tuple[int, int]:
    """MindSpore/TF 'same' padding of one axis, (before, after), for a window reaching
    `k_eff`: output = ceil(size / stride); an odd pad goes after (bottom/right)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + k_eff - size, 0)
    return total // 2, total - total // 2


def _resolve_pads(mode, padding, hw, k_eff, stride) -> tuple[int, int, int, int]:
    if mode == "same":
        return same_pads(hw[0], k_eff[0], stride[0]) + same_pads(hw[1], k_eff[1], stride[1])
    if mode == "valid":
        return (0, 0, 0, 0)
    return padding


def _padded(d: np.ndarray, pads, value=0.0) -> np.ndarray:
    t, b, l, r = pads
    if not (t or b or l or r):
        return d
    n, c, h, w = d.shape
    out = np.empty((n, c, h + t + b, w + l + r), dtype=d.dtype)
    out.fill(value)
    out[:, :, t : t + h, l : l + w] = d
    return out


def _out_size(size: int, k_eff: int, stride: int, what: str, shape) -> int:
    n = (size - k_eff) // stride + 1
    if n <= 0:
        raise ValueError(
            f"{what}: the (padded) input of shape {tuple(shape)} is smaller than the "
            f"kernel extent {k_eff}"
        )
    return n


def _check_4d(d: np.ndarray, what: str) -> None:
    if d.ndim != 4:
        raise ValueError(f"{what} expects a 4-D (N, C, H, W) input, got shape {tuple(d.shape)}")


def _crop(gp: np.ndarray, pads, h: int, w: int) -> np.ndarray:
    t, _, l, _ = pads
    if gp.shape[2] == h and gp.shape[3] == w:
        return gp
    return gp[:, :, t : t + h, l : l + w]


# ----------------------------------------------------------------------------- conv2d


@renamed(x="input")
def conv2d(input, weight, bias=None, stride=1, pad_mode="valid",  # noqa: A002
           padding=0, dilation=1, groups=1):
    """2-D cross-correlation of an (N, C, H, W) input with an (O, C/groups, kh, kw) weight.

    `pad_mode` 'same' keeps ceil(H/stride) rows and puts an odd padding row
    or column at the bottom/right (MindSpore); 'pad' uses `padding`, an int
    or (top, bottom, left, right); 'valid' pads nothing.
    """
    x = input
    x = _tensor(x)
    weight = _tensor(weight, "weight")
    xd, wd = x._data, weight._data
    _check_4d(xd, "conv2d")
    if wd.ndim != 4:
        raise ValueError(f"conv2d weight must be 4-D (O, C/groups, kh, kw), got {tuple(wd.shape)}")
    mode = check_pad_mode(pad_mode)
    pads = conv_padding(padding)
    if mode != "pad" and any(pads):
        raise ValueError(f"padding must be 0 when pad_mode is {mode!r}, got {padding!r}")
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise ValueError(f"groups must be a positive int, got {groups!r}")
    n, c, h, w = xd.shape
    o, cg, kh, kw = wd.shape
    if c != cg * groups or o % groups:
        raise ValueError(
            f"conv2d: weight of shape {tuple(wd.shape)} with groups={groups} expects an input "
            f"with {cg * groups} channels (and out channels divisible by groups), got input "
            f"shape {tuple(xd.shape)}"
        )
    stride = _pair(stride, "stride")
    dil = _pair(dilation, "dilation")
    ekh, ekw = (kh - 1) * dil[0] + 1, (kw - 1) * dil[1] + 1
    pads = _resolve_pads(mode, pads, (h, w), (ekh, ekw), stride)
    hp, wp = h + pads[0] + pads[1], w + pads[2] + pads[3]
    ho = _out_size(hp, ekh, stride[0], "conv2d", (n, c, hp, wp))
    wo = _out_size(wp, ekw, stride[1], "conv2d", (n, c, hp, wp))
    geo = (xd.shape, wd.shape, pads, (hp, wp), (ho, wo), stride, dil, groups)
    pitched = stride == (1, 1)
    bd = None
    if bias is not None:
        bd = bias._data if isinstance(bias, Tensor) else np.asarray(bias)
        if bd.shape != (o,):
            raise ValueError(f"conv2d bias must have shape ({o},), got {tuple(bd.shape)}")
    out, cols, parts = _forward(xd, wd, bd, geo, pitched)
    if state.recording:
        links = (_link(x), _link(weight), _link(bias) if bias is not None else None)
        if links[0] is not None or links[1] is not None or links[2] is not None:
            saved = (cols, wd, geo, pitched, parts)
            return wrap(out, Node(_conv2d_vjp, saved, links, "conv2d"))
    return wrap(out)


def _batch_parts(n: int, cols: int) -> list[slice]:
    """The batch cut into one block of samples per worker of the pool when the columns
    (`cols` elements) are big enough to pay for the hand-off, else one block. Each block's
    products are one small GEMM per sample, which BLAS runs on one core: two blocks on two
    threads use both (residual CNN's 3x3 16->16 conv, forward and backward: 1.86 -> 1.34 ms
    on an idle machine; more, smaller blocks per worker were slower, busy or idle)."""
    count = min(workers() if cols >= PARALLEL_FROM else 1, n)  # the threshold of conv_nd
    bounds = [n * i // count for i in range(count + 1)]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def _forward(xd, wd, bd, geo, pitched):
    """The output (N, O, Ho, Wo) and the columns its gradient needs, block by block. Every
    buffer is made here, for the whole batch, and the blocks fill their slices: made on a
    worker thread, they came from its own malloc arena and faulted pages in again."""
    (n, c, _, _), (o, cg, kh, kw), pads, (_, wp), (ho, wo), _, _, groups = geo
    length = ho * wp if pitched else ho * wo
    cols = np.empty((n, groups, cg * kh * kw, length), dtype=xd.dtype)
    parts = _batch_parts(n, cols.size)
    wm = wd.reshape(groups, o // groups, cg * kh * kw)
    shift = None if bd is None else bd.reshape(o, 1, 1)
    out = np.empty((n, o, ho, wo), dtype=np.result_type(wd, xd))
    crop = pitched and wp != wo
    prod = np.empty(cols.shape[:2] + (o // groups, length), out.dtype) if crop else None
    if pitched:
        source = np.zeros((n, c, _pitch_geometry(geo)[2]), dtype=xd.dtype)
        _pitch_into(source, xd, geo)
    else:
        source = _padded(xd, pads)

    def block(part):
        (_im2col_pitched if pitched else _im2col_strided)(source[part], geo, cols[part])
        if crop:  # the pitched outputs' junk columns are cut while the product is in cache
            np.matmul(wm, cols[part], out=prod[part])
            out[part] = prod[part].reshape(-1, o, ho, wp)[..., :wo]
        else:
            np.matmul(wm, cols[part], out=out[part].reshape(-1, groups, o // groups, length))
        if shift is not None:
            out[part] += shift

    run(block, parts)
    return out, cols, parts


def _im2col_strided(xp, geo, cols):
    """im2col of any stride of the padded input `xp` into `cols` (n, groups,
    C/groups*kh*kw, Ho*Wo), through a strided window view: one copy."""
    (_, c, _, _), (_, _, kh, kw), _, _, (ho, wo), (sh, sw), (dh, dw), _ = geo
    n = xp.shape[0]
    s0, s1, s2, s3 = xp.strides
    win = as_strided(
        xp, (n, c, kh, kw, ho, wo), (s0, s1, s2 * dh, s3 * dw, s2 * sh, s3 * sw), writeable=False
    )
    np.copyto(cols.reshape(n, c, kh, kw, ho, wo), win)


def _pitch_geometry(geo):
    (_, _, kh, kw), (hp, wp), (ho, _), (dh, dw) = geo[1], geo[3], geo[4], geo[6]
    offsets = [i * dh * wp + j * dw for i in range(kh) for j in range(kw)]
    # The last window row reads (kw - 1) * dw values past the padded image: slack.
    return offsets, ho * wp, hp * wp + (kw - 1) * dw


def _pitched_image(flat, geo):
    """The (n, C, H, W) image inside a pitched buffer (n, C, size): padding around it."""
    (_, _, h, w), (t, _, l, _), (hp, wp) = geo[0], geo[2], geo[3]
    n, c = flat.shape[:2]
    return flat[:, :, : hp * wp].reshape(n, c, hp, wp)[:, :, t : t + h, l : l + w]


def _pitch_into(flat, xd, geo):
    _pitched_image(flat, geo)[...] = xd


def _im2col_pitched(flat, geo, cols):
    """Stride-1 im2col of the pitched input `flat` (n, C, size) into `cols` (n, groups,
    C/groups*kh*kw, Ho*Wp): one contiguous slice per kernel position."""
    (_, c, _, _), (_, _, kh, kw) = geo[0], geo[1]
    n = flat.shape[0]
    offsets, length, _ = _pitch_geometry(geo)
    taps = cols.reshape(n, c, kh * kw, length)
    for k, off in enumerate(offsets):
        taps[:, :, k] = flat[:, :, off : off + length]


def _conv2d_vjp(g, saved, needs):
    cols, wd, geo, pitched, parts = saved
    (n, c, _, _), wshape, _, (hp, wp), (ho, wo), _, _, groups = geo
    og = wshape[0] // groups
    if pitched and wp != wo:
        # The gradient in the pitched layout: zeros against the junk columns.
        gs = np.zeros((n, groups, og, ho, wp), dtype=g.dtype)
        gs[..., :wo] = g.reshape(n, groups, og, ho, wo)
        gs = gs.reshape(n, groups, og, ho * wp)
    else:
        gs = g.reshape(n, groups, og, -1)
    # Buffers for the whole batch, made on this thread (see `_forward`).
    if needs[1]:
        per_sample = np.empty(gs.shape[:3] + cols.shape[2:3], np.result_type(gs, cols))
    if needs[0]:
        if pitched:
            into = np.zeros((n, c, _pitch_geometry(geo)[2]), dtype=gs.dtype)
            taps = np.empty((n, groups, c // groups, gs.shape[-1]), dtype=gs.dtype)
        else:
            into = np.zeros((n, c, hp, wp), dtype=np.result_type(wd, gs))
            taps = np.empty(cols.shape, dtype=into.dtype)

    def block(part):
        gw = None
        if needs[1]:
            # One small GEMM per sample, then a sum over the samples: cheaper than
            # copying the columns into a single (K, N*L) operand.
            gw = np.matmul(gs[part], cols[part].swapaxes(-1, -2), out=per_sample[part])
            gw = gw.sum(axis=0)
        if needs[0]:
            col2im = _col2im_pitched if pitched else _col2im_strided
            col2im(gs[part], wd, geo, into[part], taps[part])
        return gw

    done = run(block, parts)
    gx = gw = gb = None
    if needs[0]:
        gx = _pitched_image(into, geo) if pitched else _crop(into, geo[2], *geo[0][2:])
    if needs[1]:
        gw = done[0]
        for other in done[1:]:
            gw += other
        gw = gw.reshape(wshape).astype(wd.dtype, copy=False)
    if needs[2]:  # summing the samples first, then each channel's run, beats axis=(0, 2, 3)
        gb = g.reshape(n, g.shape[1], -1).sum(axis=0).sum(axis=1)
    return gx, gw, gb


def _col2im_pitched(gs, wd, geo, flat, tmp):
    """Adds every kernel position's share of the columns' gradient `gs` into the pitched
    input gradient `flat` (zeros to start), with `tmp` (n, groups, C/groups, Ho*Wp)."""
    (o, cg, kh, kw), groups = geo[1], geo[7]
    n, c = flat.shape[:2]
    offsets, length, _ = _pitch_geometry(geo)
    # Per kernel position: (groups, C/groups, O/groups) weights, so each product is contiguous.
    wk = np.ascontiguousarray(
        wd.reshape(groups, o // groups, cg, kh * kw).transpose(3, 0, 2, 1)
    ).astype(gs.dtype, copy=False)
    rows = tmp.reshape(n, c, length)
    for k, off in enumerate(offsets):
        np.matmul(wk[k], gs, out=tmp)
        flat[:, :, off : off + length] += rows


def _col2im_strided(gs, wd, geo, gp, gcols):
    """Adds the columns' gradient `gs` into the padded input gradient `gp` (zeros to start),
    with `gcols` (n, groups, C/groups*kh*kw, Ho*Wo)."""
    (o, cg, kh, kw), (ho, wo), (sh, sw), (dh, dw), groups = (geo[1], geo[4], geo[5], geo[6],
                                                             geo[7])
    n, c = gp.shape[:2]
    wm = wd.reshape(groups, o // groups, cg * kh * kw)
    np.matmul(wm.swapaxes(-1, -2), gs, out=gcols)
    taps = gcols.reshape(n, c, kh, kw, ho, wo)
    he, we = sh * (ho - 1) + 1, sw * (wo - 1) + 1
    for i in range(kh):
        for j in range(kw):
            gp[:, :, i * dh : i * dh + he : sh, j * dw : j * dw + we : sw] += taps[:, :, i, j]
