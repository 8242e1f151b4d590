"""Ops that pick, order or accumulate elements: cumsum, gather, sort, topk, norm, any, all.

Each differentiable forward sits beside its gradient rule (see `_functional`).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from engine.ops._args import renamed
from engine.ops._functional import _finish1, _tensor, abs, cast, sqrt
from engine.ops._reduce import _axes, _expand_reduced, amax, amin
from engine.ops._reduce import sum as _sum
from engine.tensor import Tensor, wrap

# ----------------------------------------------------------------------------- cumsum


@renamed(input="x", dim="axis")
def cumsum(x, axis, dtype=None):
    """MindSpore 2.x `ops.cumsum(x, axis, dtype=None)`: running sums along `axis`.

    `dtype` casts the input first (to avoid overflow); `axis=None` (the
    `Tensor.cumsum` default) runs over the flattened input.
    """
    t = _tensor(x)
    if dtype is not None:
        t = cast(t, dtype)
    d = t._data
    if axis is None:
        out = np.cumsum(d.reshape(-1))
        return _finish1(out, t, _cumsum_flat_vjp, d.shape, "cumsum")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"cumsum: axis must be an int, got {axis!r}")
    if not -d.ndim <= axis < builtins.max(d.ndim, 1):
        raise ValueError(f"cumsum: axis {axis} is out of range for a {d.ndim}-D input")
    out = np.cumsum(d, axis=int(axis), dtype=d.dtype)
    return _finish1(out, t, _cumsum_vjp, int(axis), "cumsum")


def _reverse_cumsum(g, axis):
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def _cumsum_vjp(g, saved, needs):
    return (_reverse_cumsum(g, saved),)


def _cumsum_flat_vjp(g, saved, needs):
    return (_reverse_cumsum(g, 0).reshape(saved),)


# ----------------------------------------------------------------------------- gather


def _index_array(indices, who: str) -> np.ndarray:
    idx = indices._data if isinstance(indices, Tensor) else np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{who}: indices must be integers, got {idx.dtype}")
    return idx


@renamed(input="input_params", x="input_params", indices="input_indices", dim="axis")
def gather(input_params, input_indices, axis, batch_dims=0):
    """MindSpore 2.x `ops.gather(input_params, input_indices, axis, batch_dims=0)`.

    Slices of `input_params` along `axis` at `input_indices`; the output shape is
    `params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]`.
    Indices outside [0, params.shape[axis]) raise IndexError (as on CPU/GPU).
    """
    x = _tensor(input_params, "input_params")
    d = x._data
    idx = _index_array(input_indices, "gather")
    if isinstance(axis, Tensor):
        axis = int(axis._data.reshape(-1)[0])
    axis = int(axis) % builtins.max(d.ndim, 1)
    batch_dims = int(batch_dims) % (idx.ndim + 1) if batch_dims < 0 else int(batch_dims)
    if batch_dims > axis or batch_dims > idx.ndim:
        raise ValueError(
            f"gather: batch_dims ({batch_dims}) must be at most axis ({axis}) and the "
            f"indices' rank ({idx.ndim})"
        )
    if d.shape[:batch_dims] != idx.shape[:batch_dims]:
        raise ValueError(
            f"gather: the first {batch_dims} dims of params {d.shape} and indices {idx.shape} "
            "must match"
        )
    n = d.shape[axis]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"gather: indices must be in [0, {n}) along axis {axis}")
    out = _gather(d, idx, axis, batch_dims)
    return _finish1(out, x, _gather_vjp, (d.shape, idx, axis, batch_dims), "gather")


def _gather(d, idx, axis, batch_dims):
    if batch_dims == 0:
        return np.take(d, idx, axis=axis)
    lead = d.shape[:batch_dims]
    db = d.reshape((-1,) + d.shape[batch_dims:])
    ib = idx.reshape((-1,) + idx.shape[batch_dims:])
    parts = [np.take(db[b], ib[b], axis=axis - batch_dims) for b in range(db.shape[0])]
    out = np.stack(parts) if parts else np.empty((0,), d.dtype)
    return out.reshape(lead + out.shape[1:])


def _gather_vjp(g, saved, needs):
    shape, idx, axis, batch_dims = saved
    full = np.zeros(shape, dtype=g.dtype)
    if batch_dims == 0:
        # Move the gathered axis first so np.add.at scatters whole slices.
        moved = np.moveaxis(full, axis, 0)
        gi = np.moveaxis(g, tuple(range(axis, axis + idx.ndim)), tuple(range(idx.ndim)))
        np.add.at(moved, idx, gi)
        return (full,)
    fb = full.reshape((-1,) + shape[batch_dims:])
    ib = idx.reshape((-1,) + idx.shape[batch_dims:])
    gb = g.reshape((fb.shape[0],) + g.shape[batch_dims:])
    a = axis - batch_dims
    k = ib.ndim - 1
    for b in range(fb.shape[0]):
        moved = np.moveaxis(fb[b], a, 0)
        np.add.at(moved, ib[b], np.moveaxis(gb[b], tuple(range(a, a + k)), tuple(range(k))))
    return (full,)


# ----------------------------------------------------------------------------- sort, topk


def _order(d, axis, descending):
    # Stable sorts keep equal values in index order, descending too (MindSpore's tie rule).
    key = -d if descending and d.dtype.kind != "b" else d
    if descending and d.dtype.kind == "b":
        key = ~d
    if descending and d.dtype.kind == "u":
        key = np.iinfo(d.dtype).max - d
    return np.argsort(key, axis=axis, kind="stable")


@renamed(input="input_x", x="input_x", dim="axis")
def sort(input_x, axis=-1, descending=False):
    """MindSpore 2.x `ops.sort(input_x, axis=-1, descending=False)` -> `(values, indices)`;
    indices are int32; equal values keep their index order."""
    x = _tensor(input_x, "input_x")
    d = x._data
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"sort: axis must be an int, got {axis!r}")
    if not isinstance(descending, bool):
        raise TypeError(f"sort: descending must be a bool, got {descending!r}")
    if d.ndim == 0:
        return wrap(d.copy()), wrap(np.zeros((), np.int32))
    if not -d.ndim <= axis < d.ndim:
        raise ValueError(f"sort: axis {axis} is out of range for a {d.ndim}-D input")
    axis = int(axis) % d.ndim
    order = _order(d, axis, descending)
    values = np.take_along_axis(d, order, axis=axis)
    out = _finish1(values, x, _take_along_vjp, (d.shape, order, axis), "sort")
    return out, wrap(order.astype(np.int32))


def _take_along_vjp(g, saved, needs):
    shape, order, axis = saved
    full = np.zeros(shape, dtype=g.dtype)
    np.put_along_axis(full, order, g, axis=axis)
    return (full,)


def topk(input, k, dim=None, largest=True, sorted=True):  # noqa: A001,A002 - MindSpore's names
    """MindSpore 2.x `ops.topk(input, k, dim=None, largest=True, sorted=True)` ->
    `(values, indices)` of the k largest (or smallest) entries along `dim` (default the
    last); indices are int32 and of equal values the lower index comes first.  Results
    are always in sorted order (MindSpore leaves the order open when `sorted=False`).
    """
    x = _tensor(input)
    d = x._data
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"topk: k must be an int, got {k!r}")
    for name, flag in (("largest", largest), ("sorted", sorted)):
        if not isinstance(flag, bool):
            raise TypeError(f"topk: {name} must be a bool, got {flag!r}")
    if d.ndim == 0:
        raise ValueError("topk: input must be at least 1-D")
    axis = -1 if dim is None else dim
    if not -d.ndim <= axis < d.ndim:
        raise ValueError(f"topk: dim {dim} is out of range for a {d.ndim}-D input")
    axis = int(axis) % d.ndim
    if not 0 <= k <= d.shape[axis]:
        raise ValueError(f"topk: k must be in [0, {d.shape[axis]}], got {k}")
    order = np.take(_order(d, axis, largest), np.arange(k), axis=axis)
    values = np.take_along_axis(d, order, axis=axis)
    out = _finish1(values, x, _take_along_vjp, (d.shape, order, axis), "topk")
    return out, wrap(order.astype(np.int32))


# ----------------------------------------------------------------------------- norm


def _pnorm(x: Tensor, p: float, axes, keepdim: bool) -> Tensor:
    """sum(|x|^p)^(1/p) over `axes` for finite p != 0, with a zero gradient at x = 0."""
    d = x._data
    a = np.abs(d)
    if p == 2.0:
        out = np.sqrt(np.sum(d * d, axis=axes, keepdims=keepdim))
    elif p == 1.0:
        out = np.sum(a, axis=axes, keepdims=keepdim)
    else:
        with np.errstate(divide="ignore", over="ignore"):
            out = np.sum(a**p, axis=axes, keepdims=keepdim) ** (1.0 / p)
    out = out.astype(d.dtype, copy=False)
    return _finish1(out, x, _pnorm_vjp, (d, out, p, axes, keepdim), "norm")


def _pnorm_vjp(g, saved, needs):
    d, out, p, axes, keepdim = saved
    n = _expand_reduced(out, d.shape, axes, keepdim)
    gk = _expand_reduced(g, d.shape, axes, keepdim)
    if p == 1.0:
        return (gk * np.sign(d),)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if p == 2.0:
            gd = gk * d / n
        else:
            gd = gk * np.sign(d) * np.abs(d) ** (p - 1) / n ** (p - 1)
    return (np.where(np.isfinite(gd), gd, 0).astype(d.dtype, copy=False),)


def _vector_norm(x: Tensor, ord, axes, keepdim):
    if ord is None:
        ord = 2
    if isinstance(ord, str):
        raise ValueError(f"norm: ord={ord!r} is a matrix norm; give dim as a pair of axes")
    if ord == math.inf:
        return amax(abs(x), axes, keepdim)
    if ord == -math.inf:
        return amin(abs(x), axes, keepdim)
    if ord == 0:
        d = x._data
        return wrap(np.sum(d != 0, axis=axes, keepdims=keepdim).astype(d.dtype))
    return _pnorm(x, float(ord), axes, keepdim)


def _svals(x: Tensor, rows: int, cols: int, which: str, keepdim: bool):
    """Largest / smallest / summed singular values of the matrices in axes (rows, cols)."""
    d = np.moveaxis(x._data, (rows, cols), (-2, -1))
    u, s, vh = np.linalg.svd(d, full_matrices=False)
    if which == "max":
        out, pick = s[..., 0], (slice(0, 1),)
    elif which == "min":
        out, pick = s[..., -1], (slice(-1, None),)
    else:
        out, pick = s.sum(-1), (slice(None),)
    if keepdim:
        out = np.expand_dims(out, tuple(sorted((rows, cols))))
    saved = (u[..., pick[0]], vh[..., pick[0], :], rows, cols, keepdim, x._data.shape)
    return _finish1(out.astype(x._data.dtype), x, _svals_vjp, saved, "norm")


def _svals_vjp(g, saved, needs):
    u, vh, rows, cols, keepdim, shape = saved
    if keepdim:
        g = np.squeeze(g, tuple(sorted((rows, cols))))
    grad = (u * np.asarray(g)[..., None, None]) @ vh
    return (np.moveaxis(grad, (-2, -1), (rows, cols)),)


def _matrix_norm(x: Tensor, ord, dims, keepdim):
    nd = x._data.ndim
    r, c = (int(a) % nd for a in dims)
    if r == c:
        raise ValueError(f"norm: dim {dims} names the same axis twice")
    if ord is None or ord == "fro":
        return sqrt(_sum(x * x, (r, c), keepdim))
    if ord == "nuc":
        return _svals(x, r, c, "sum", keepdim)
    if ord in (2, -2):
        return _svals(x, r, c, "max" if ord == 2 else "min", keepdim)
    if ord in (1, -1):
        col_sums = _sum(abs(x), r, True)
        pick = amax if ord == 1 else amin
        return pick(col_sums, (r, c), keepdim)
    if ord in (math.inf, -math.inf):
        row_sums = _sum(abs(x), c, True)
        pick = amax if ord == math.inf else amin
        return pick(row_sums, (r, c), keepdim)
    raise ValueError(f"norm: ord={ord!r} is not a matrix norm (use 'fro', 'nuc', ±1, ±2, ±inf)")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002,N803
    """MindSpore 2.x `ops.norm(A, ord=None, dim=None, keepdim=False, *, dtype=None)`.

    An int `dim` gives vector norms, a pair of dims matrix norms; with `dim=None`
    the whole input's 2-norm when `ord` is None, else `A` must be 1-D or 2-D.
    Vector `ord`: None/2, any float, inf, -inf, 0 (count of non-zeros).  Matrix
    `ord`: None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf.  `dtype` casts `A` first.
    """
    x = _tensor(A, "A")
    if dtype is not None:
        x = cast(x, dtype)
    if x._data.dtype.kind != "f":
        raise TypeError(f"norm: A must be a floating-point Tensor, got {x._data.dtype}")
    if not isinstance(keepdim, bool):
        raise TypeError(f"norm: keepdim must be a bool, got {keepdim!r}")
    nd = x._data.ndim
    if dim is None:
        if ord is None:
            return _vector_norm(x, None, _axes(None, nd), keepdim)
        if nd == 1:
            return _vector_norm(x, ord, (0,), keepdim)
        if nd == 2:
            return _matrix_norm(x, ord, (0, 1), keepdim)
        raise ValueError(f"norm: with ord={ord!r} and dim=None, A must be 1-D or 2-D, got {nd}-D")
    if isinstance(dim, (tuple, list)):
        if len(dim) == 1:
            dim = dim[0]
        elif len(dim) == 2:
            return _matrix_norm(x, ord, tuple(dim), keepdim)
        else:
            raise ValueError(f"norm: dim must be an int or a pair of ints, got {dim!r}")
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"norm: dim must be an int or a pair of ints, got {dim!r}")
    if not -nd <= dim < builtins.max(nd, 1):
        raise ValueError(f"norm: dim {dim} is out of range for a {nd}-D input")
    return _vector_norm(x, ord, (int(dim) % builtins.max(nd, 1),), keepdim)


# ----------------------------------------------------------------------------- any, all


def _logical_reduce(fn, name):
    @renamed(x="input", dim="axis", keepdim="keep_dims", keepdims="keep_dims")
    def op(input, axis=None, keep_dims=False):  # noqa: A002
        d = _tensor(input)._data
        if isinstance(axis, Tensor):
            axis = tuple(int(a) for a in axis._data.reshape(-1))
        elif isinstance(axis, list):
            axis = tuple(axis)
        return wrap(np.asarray(fn(d, axis=axis, keepdims=keep_dims), dtype=np.bool_))

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"MindSpore 2.x `ops.{name}(input, axis=None, keep_dims=False)`: a bool Tensor."
    return op


any = _logical_reduce(np.any, "any")  # noqa: A001 - MindSpore's names
all = _logical_reduce(np.all, "all")  # noqa: A001


def _dtype_of(value):
    """The output dtype `one_hot` takes from its on_value (MindSpore: the same as on_value)."""
    if isinstance(value, Tensor):
        return value._data.dtype
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    if isinstance(value, (int, np.integer)):
        return np.dtype(np.int64)
    return np.dtype(np.float32)


def one_hot(indices, depth, on_value=1, off_value=0, axis=-1):
    """MindSpore 2.x `ops.one_hot(indices, depth, on_value=1, off_value=0, axis=-1)`.

    The output has `on_value`'s dtype: Int64 for Python ints (the defaults),
    Float32 for Python floats, a Tensor's own dtype; `off_value` is cast to it.
    Indices outside [0, depth) give a row of `off_value`.
    """
    idx = _index_array(_tensor(indices, "indices")._data, "one_hot")
    if isinstance(depth, Tensor):
        depth = int(depth._data.reshape(-1)[0])
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 0:
        raise ValueError(f"one_hot: depth must be an int >= 0, got {depth!r}")
    out_dtype = _dtype_of(on_value)
    on = np.asarray(on_value._data if isinstance(on_value, Tensor) else on_value)
    off = np.asarray(off_value._data if isinstance(off_value, Tensor) else off_value)
    if on.size != 1 or off.size != 1:
        raise ValueError("one_hot: on_value and off_value must be scalars")
    if not -1 <= axis <= idx.ndim:
        raise ValueError(f"one_hot: axis must be in [-1, {idx.ndim}], got {axis}")
    hot = idx[..., None] == np.arange(depth)
    out = np.where(hot, on.reshape(()).astype(out_dtype), off.reshape(()).astype(out_dtype))
    if axis != -1:
        out = np.moveaxis(out, -1, axis)
    return wrap(np.ascontiguousarray(out, dtype=out_dtype))


__all__ = ["cumsum", "gather", "sort", "topk", "norm", "any", "all", "one_hot"]
