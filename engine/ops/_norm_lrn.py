"""lrn: local response normalisation across channels (MindSpore 2.x `ops.lrn`), with its vjp.

MindSpore's (and TensorFlow's) form, for each channel c of an (N, C, H, W) input:

    out[c] = x[c] / (bias + alpha * S[c]) ** beta,   S[c] = sum of x[c']**2, |c' - c| <= r

with r = depth_radius and the window cut at the first and last channel. `alpha` is not
divided by the window size: PyTorch's LocalResponseNorm(size=2r+1) and ONNX's LRN divide
it, so they take alpha * (2r + 1) to compute the same thing.
"""

from __future__ import annotations

import numpy as np

from engine.ops._functional import _finish_n, _tensor

__all__ = ["lrn"]


def _window_sum(a: np.ndarray, radius: int) -> np.ndarray:
    """Sum of `a` over channels c - radius .. c + radius (axis 1), cut at the ends.

    Shifted slices added one by one: exact, unlike differences of a running sum, and
    the window of a real network is a handful of channels.
    """
    out = a.copy()
    for k in range(1, min(radius, a.shape[1] - 1) + 1):
        out[:, k:] += a[:, :-k]
        out[:, :-k] += a[:, k:]
    return out


def lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5, norm_region="ACROSS_CHANNELS"):
    """MindSpore 2.x `ops.lrn(x, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,
    norm_region='ACROSS_CHANNELS')` on an (N, C, H, W) input (see the module docstring)."""
    x = _tensor(x)
    d = x._data
    if isinstance(depth_radius, bool) or not isinstance(depth_radius, (int, np.integer)) \
            or depth_radius < 0:
        raise ValueError(f"lrn: depth_radius must be an int >= 0, got {depth_radius!r}")
    for name, value in (("bias", bias), ("alpha", alpha), ("beta", beta)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
            raise TypeError(f"lrn: {name} must be a number, got {value!r}")
    if norm_region != "ACROSS_CHANNELS":
        raise ValueError(f"lrn: norm_region must be 'ACROSS_CHANNELS', got {norm_region!r}")
    if d.ndim != 4:
        raise ValueError(f"lrn expects an (N, C, H, W) input, got shape {tuple(d.shape)}")
    work = np.float64 if d.dtype == np.float64 else np.float32
    xd = d.astype(work, copy=False)
    dt = np.dtype(work).type
    denom = _window_sum(xd * xd, int(depth_radius))
    denom *= dt(alpha)
    denom += dt(bias)
    if beta == 0.5:
        power = np.sqrt(denom)
        np.divide(dt(1.0), power, out=power)
    else:
        power = np.power(denom, dt(-beta))
    out = (xd * power).astype(d.dtype if d.dtype.kind == "f" else work, copy=False)
    saved = (xd, denom, power, int(depth_radius), float(alpha), float(beta), d.dtype)
    return _finish_n(out, (x,), _lrn_vjp, saved, "lrn")


def _lrn_vjp(g, saved, needs):
    # out[c] = x[c] * D[c]^-beta with D[c] = bias + alpha * sum over c's window of x^2:
    # dx[j] = g[j] D[j]^-beta - 2 alpha beta x[j] * sum over j's window of g x D^(-beta-1).
    xd, denom, power, radius, alpha, beta, dtype = saved
    dt = xd.dtype.type
    g = g.astype(xd.dtype, copy=False)
    inner = g * xd
    inner *= power
    inner /= denom
    gx = _window_sum(inner, radius)
    gx *= xd
    gx *= dt(-2.0 * alpha * beta)
    gx += g * power
    return (gx.astype(dtype, copy=False),)
