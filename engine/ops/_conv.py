"""2-D convolution (`conv2d`) and the padding/argument helpers pooling shares.

The forward is im2col plus one batched matmul; the backward scatters the
column gradient back with a loop over kernel positions only (never over
pixels or samples).  For stride 1 both directions use a "row pitch" layout:
rows of the padded input are laid end to end, so each kernel position is one
contiguous slice and im2col / col2im move long runs instead of short rows.
The few junk columns this creates meet zeros in the gradient and are cut
from the output.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from engine.autograd import Node, state
from engine.ops._args import renamed
from engine.ops._functional import _link, _tensor
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
    cols = _im2col_pitched(xd, geo) if pitched else _im2col_strided(xd, geo)
    out = np.matmul(wd.reshape(groups, o // groups, cg * kh * kw), cols)
    if pitched:
        out = out.reshape(n, o, ho, wp)
        if wp != wo:
            out = np.ascontiguousarray(out[..., :wo])
    else:
        out = out.reshape(n, o, ho, wo)
    if bias is not None:
        bd = bias._data if isinstance(bias, Tensor) else np.asarray(bias)
        if bd.shape != (o,):
            raise ValueError(f"conv2d bias must have shape ({o},), got {tuple(bd.shape)}")
        out += bd.reshape(o, 1, 1)
    if state.recording:
        links = (_link(x), _link(weight), _link(bias) if bias is not None else None)
        if links[0] is not None or links[1] is not None or links[2] is not None:
            return wrap(out, Node(_conv2d_vjp, (cols, wd, geo, pitched), links, "conv2d"))
    return wrap(out)


def _im2col_strided(xd, geo):
    """(N, groups, C/groups*kh*kw, Ho*Wo) columns through a strided window view (any stride)."""
    (n, c, _, _), (_, cg, kh, kw), pads, _, (ho, wo), (sh, sw), (dh, dw), groups = geo
    xp = _padded(xd, pads)
    s0, s1, s2, s3 = xp.strides
    win = as_strided(
        xp, (n, c, kh, kw, ho, wo), (s0, s1, s2 * dh, s3 * dw, s2 * sh, s3 * sw), writeable=False
    )
    return win.reshape(n, groups, cg * kh * kw, ho * wo)  # the copy


def _pitch_geometry(geo):
    (_, _, kh, kw), (hp, wp), (ho, _), (dh, dw) = geo[1], geo[3], geo[4], geo[6]
    offsets = [i * dh * wp + j * dw for i in range(kh) for j in range(kw)]
    # The last window row reads (kw - 1) * dw values past the padded image: slack.
    return offsets, ho * wp, hp * wp + (kw - 1) * dw


def _im2col_pitched(xd, geo):
    """Stride-1 columns (N, groups, C/groups*kh*kw, Ho*Wp): one contiguous slice per position."""
    (n, c, h, w), (_, cg, kh, kw), (t, _, l, _), (hp, wp), _, _, _, groups = geo
    offsets, length, size = _pitch_geometry(geo)
    flat = np.zeros((n, c, size), dtype=xd.dtype)
    flat[:, :, : hp * wp].reshape(n, c, hp, wp)[:, :, t : t + h, l : l + w] = xd
    cols = np.empty((n, c, kh * kw, length), dtype=xd.dtype)
    for k, off in enumerate(offsets):
        cols[:, :, k] = flat[:, :, off : off + length]
    return cols.reshape(n, groups, cg * kh * kw, length)


def _conv2d_vjp(g, saved, needs):
    cols, wd, geo, pitched = saved
    (n, c, h, w), wshape, pads, (hp, wp), (ho, wo), _, _, groups = geo
    o = wshape[0]
    og = o // groups
    if pitched and wp != wo:
        # The gradient in the pitched layout: zeros against the junk columns.
        gs = np.zeros((n, groups, og, ho, wp), dtype=g.dtype)
        gs[..., :wo] = g.reshape(n, groups, og, ho, wo)
        gs = gs.reshape(n, groups, og, ho * wp)
    else:
        gs = g.reshape(n, groups, og, -1)
    gx = gw = gb = None
    if needs[1]:
        # One small GEMM per sample, then a sum over the batch: cheaper than
        # copying the columns into a single (K, N*L) operand.
        gw = np.matmul(gs, cols.swapaxes(-1, -2)).sum(axis=0).reshape(wshape).astype(
            wd.dtype, copy=False)
    if needs[0]:
        gx = _col2im_pitched(gs, wd, geo) if pitched else _col2im_strided(gs, wd, geo)
    if needs[2]:
        gb = g.sum(axis=(0, 2, 3))
    return gx, gw, gb


def _col2im_pitched(gs, wd, geo):
    (n, c, h, w), (o, cg, kh, kw), (t, _, l, _), (hp, wp), _, _, _, groups = geo
    offsets, length, size = _pitch_geometry(geo)
    # Per kernel position: (groups, C/groups, O/groups) weights, so each product is contiguous.
    wk = np.ascontiguousarray(
        wd.reshape(groups, o // groups, cg, kh * kw).transpose(3, 0, 2, 1)
    ).astype(gs.dtype, copy=False)
    flat = np.zeros((n, c, size), dtype=gs.dtype)
    for k, off in enumerate(offsets):
        flat[:, :, off : off + length] += np.matmul(wk[k], gs).reshape(n, c, length)
    return flat[:, :, : hp * wp].reshape(n, c, hp, wp)[:, :, t : t + h, l : l + w]


def _col2im_strided(gs, wd, geo):
    (n, c, h, w), (o, cg, kh, kw), pads, (hp, wp), (ho, wo), (sh, sw), (dh, dw), groups = geo
    wm = wd.reshape(groups, o // groups, cg * kh * kw)
    gcols = np.matmul(wm.swapaxes(-1, -2), gs).reshape(n, c, kh, kw, ho, wo)
    gp = np.zeros((n, c, hp, wp), dtype=gcols.dtype)
    he, we = sh * (ho - 1) + 1, sw * (wo - 1) + 1
    for i in range(kh):
        for j in range(kw):
            gp[:, :, i * dh : i * dh + he : sh, j * dw : j * dw + we : sw] += gcols[:, :, i, j]
    return _crop(gp, pads, h, w)
