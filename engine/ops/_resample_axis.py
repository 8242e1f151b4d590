"""One differentiable op behind resizing, adaptive mean pooling and edge padding.

Each of those, along one axis, is a fixed linear map from the input's positions to the
output's: output o takes `sum_t weight[o, t] * x[index[o, t]]` (one tap for nearest
neighbours and padding, two for linear interpolation, a bin's worth for an adaptive
mean). The forward gathers the taps (no loop over elements); the backward is one
matrix product with the map's (out, in) matrix, so positions read by several outputs
get all their gradient.
"""

from __future__ import annotations

import numpy as np

from engine.ops._functional import _finish1, _tensor


def axis_linear(x, axis: int, index: np.ndarray, weight: np.ndarray | None, name: str):
    """Apply the map (`index`, `weight`, both (out, T); `weight` None: one tap of weight 1)
    along `axis` of the Tensor `x`."""
    x = _tensor(x)
    d = x._data
    axis %= d.ndim
    moved = np.moveaxis(d, axis, -1)
    taps = moved[..., index]  # (..., out, T)
    if weight is None:
        out = taps[..., 0]
    else:
        w = weight.astype(d.dtype if d.dtype.kind == "f" else np.float32, copy=False)
        out = np.einsum("...ot,ot->...o", taps, w)
    out = np.ascontiguousarray(np.moveaxis(out, -1, axis))
    saved = (axis, index, weight, d.shape[axis])
    return _finish1(out, x, _axis_linear_vjp, saved, name)


def _axis_linear_vjp(g, saved, needs):
    axis, index, weight, size = saved
    matrix = np.zeros((index.shape[0], size), dtype=g.dtype)
    rows = np.broadcast_to(np.arange(index.shape[0])[:, None], index.shape)
    np.add.at(matrix, (rows, index), 1.0 if weight is None else weight)
    gm = np.moveaxis(g, axis, -1) @ matrix
    return (np.moveaxis(gm, -1, axis),)
