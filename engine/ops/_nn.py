"""Neural-network ops: convolution, pooling, dropout and batch normalisation, each with its rule.

Convolution is im2col through a strided view plus one batched matmul; its
gradient scatters back with a loop over kernel positions only (never over
pixels or samples).  Pooling works on the kh*kw strided slices of the input,
so it is a handful of whole-array NumPy calls.  Signatures follow MindSpore
2.x's functional ops.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import as_strided

from engine._random import rng
from engine.autograd import Node, state
from engine.ops._functional import _finish1, _finish_n, _link, _tensor
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


def _same_pads(size: int, k_eff: int, stride: int) -> tuple[int, int]:
    # MindSpore/TF 'same': output = ceil(size / stride); an odd pad goes after (bottom/right).
    out = -(-size // stride)
    total = max((out - 1) * stride + k_eff - size, 0)
    return total // 2, total - total // 2


def _resolve_pads(mode, padding, hw, k_eff, stride) -> tuple[int, int, int, int]:
    if mode == "same":
        return _same_pads(hw[0], k_eff[0], stride[0]) + _same_pads(hw[1], k_eff[1], stride[1])
    if mode == "valid":
        return (0, 0, 0, 0)
    return padding


def _padded(d: np.ndarray, pads, value=0.0) -> np.ndarray:
    t, b, l, r = pads
    if not (t or b or l or r):
        return d
    n, c, h, w = d.shape
    out = np.empty((n, c, h + t + b, w + l + r), dtype=d.dtype)
    if value == 0.0:
        out.fill(0)
    else:
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


def conv2d(x, weight, bias=None, stride=1, pad_mode="valid", padding=0, dilation=1, groups=1):
    """2-D cross-correlation of an (N, C, H, W) input with an (O, C/groups, kh, kw) weight.

    `pad_mode` 'same' keeps ceil(H/stride) rows and puts an odd padding row
    or column at the bottom/right (MindSpore); 'pad' uses `padding`, an int
    or (top, bottom, left, right); 'valid' pads nothing.
    """
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
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    ekh, ekw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    pads = _resolve_pads(mode, pads, (h, w), (ekh, ekw), (sh, sw))
    xp = _padded(xd, pads)
    hp, wp = xp.shape[2], xp.shape[3]
    ho = _out_size(hp, ekh, sh, "conv2d", xp.shape)
    wo = _out_size(wp, ekw, sw, "conv2d", xp.shape)
    s0, s1, s2, s3 = xp.strides
    win = as_strided(
        xp, (n, c, kh, kw, ho, wo), (s0, s1, s2 * dh, s3 * dw, s2 * sh, s3 * sw), writeable=False
    )
    k = cg * kh * kw
    cols = win.reshape(n, groups, k, ho * wo)  # the im2col copy
    wm = wd.reshape(groups, o // groups, k)
    out = np.matmul(wm, cols).reshape(n, o, ho, wo)
    if bias is not None:
        bd = bias._data if isinstance(bias, Tensor) else np.asarray(bias)
        if bd.shape != (o,):
            raise ValueError(f"conv2d bias must have shape ({o},), got {tuple(bd.shape)}")
        out += bd.reshape(o, 1, 1)
    if state.recording:
        links = (_link(x), _link(weight), _link(bias) if bias is not None else None)
        if links[0] is not None or links[1] is not None or links[2] is not None:
            geo = (xd.shape, wd.shape, pads, (hp, wp), (sh, sw), (dh, dw), groups)
            return wrap(out, Node(_conv2d_vjp, (cols, wm, geo), links, "conv2d"))
    return wrap(out)


def _conv2d_vjp(g, saved, needs):
    cols, wm, geo = saved
    (n, c, h, w), wshape, pads, (hp, wp), (sh, sw), (dh, dw), groups = geo
    o, _, kh, kw = wshape
    ho, wo = g.shape[2], g.shape[3]
    g4 = g.reshape(n, groups, o // groups, ho * wo)
    gx = gw = gb = None
    if needs[1]:
        # One small GEMM per sample, then a sum over the batch: cheaper than
        # copying the columns into a single (K, N*L) operand.
        gw = np.matmul(g4, cols.swapaxes(-1, -2)).sum(axis=0).reshape(wshape)
    if needs[0]:
        gcols = np.matmul(wm.swapaxes(-1, -2), g4).reshape(n, c, kh, kw, ho, wo)
        gp = np.zeros((n, c, hp, wp), dtype=gcols.dtype)
        he, we = sh * (ho - 1) + 1, sw * (wo - 1) + 1
        for i in range(kh):
            for j in range(kw):
                gp[:, :, i * dh : i * dh + he : sh, j * dw : j * dw + we : sw] += gcols[:, :, i, j]
        gx = _crop(gp, pads, h, w)
    if needs[2]:
        gb = g.sum(axis=(0, 2, 3))
    return gx, gw, gb


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


def max_pool2d(x, kernel_size, stride=None, padding=0, *, pad_mode="valid"):
    """Max over kh*kw windows of an (N, C, H, W) input; `stride` defaults to the kernel size.

    `pad_mode` 'same' pads (with -inf) so the output has ceil(H/stride) rows;
    'pad' pads `padding` (an int or (ph, pw)) on both sides.
    """
    if pad_mode == "valid" and padding not in (0, (0, 0), [0, 0]):
        pad_mode = "pad"  # MindSpore's functional form: a padding implies padding
    x, d, (kh, kw), (sh, sw), pads, _, (ho, wo) = _pool_setup(
        x, kernel_size, stride, padding, pad_mode, "max_pool2d"
    )
    xp = _padded(d, pads, -np.inf) if d.dtype.kind == "f" else _padded(d, pads)
    parts = _slices(kh, kw, sh, sw, ho, wo)
    best = xp[parts[0]].copy()
    if not (state.recording and x._node is not None):
        for part in parts[1:]:
            np.maximum(best, xp[part], out=best)
        return wrap(best)
    # Track which window position holds the maximum.  Strict '>' keeps the first
    # of tied values, as PyTorch does.  Arithmetic on the index beats masked
    # copies (np.where / copyto(where=)) several times over on these sizes.
    arg = np.zeros(best.shape, dtype=np.uint8 if len(parts) < 256 else np.int32)
    for idx in range(1, len(parts)):
        s = xp[parts[idx]]
        taken = s > best
        np.maximum(best, s, out=best)
        arg *= ~taken
        arg += taken * arg.dtype.type(idx)
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


def avg_pool2d(x, kernel_size=1, stride=1, padding=0, *, count_include_pad=True, pad_mode="valid"):
    """Mean over kh*kw windows of an (N, C, H, W) input.

    With `pad_mode='same'` the padded zeros are not counted (MindSpore's
    AvgPool); with explicit `padding` they are unless `count_include_pad=False`.
    """
    if pad_mode == "valid" and padding not in (0, (0, 0), [0, 0]):
        pad_mode = "pad"
    x, d, kernel, strides, pads, mode, (ho, wo) = _pool_setup(
        x, kernel_size, stride, padding, pad_mode, "avg_pool2d"
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


def dropout(x, p=0.5, training=True):
    """Inverted dropout: zero each element with probability `p`, scale the rest by 1/(1-p).

    Draws from `engine._random.rng()`, so `engine.set_seed` makes masks repeatable.
    Outside training, or with p == 0, returns `x` unchanged.
    """
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


def batch_norm(
    x, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5
):
    """Batch normalisation over axis 1 of an (N, C) or (N, C, ...) input, as one op.

    Train mode normalises with the batch mean and the biased batch variance and
    updates the running statistics in place:
    `running = (1 - momentum) * running + momentum * batch_stat` (MindSpore's
    functional convention; `nn.BatchNorm*` pass `1 - their momentum`).  The
    running variance takes the biased batch variance, as MindSpore's CPU kernel
    does.  Predict mode normalises with the running statistics.
    """
    x = _tensor(x)
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
