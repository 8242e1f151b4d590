"""Shape, indexing, joining and creation ops, each beside its gradient rule."""

from __future__ import annotations

import numpy as np

from engine._dtype import to_numpy_dtype
from engine.autograd import Node, state, unbroadcast
from engine.ops._args import renamed
from engine.ops._functional import _finish1, _finish_n, _link, _tensor
from engine.tensor import Tensor, _infer_array, wrap


def _shape_arg(shape) -> tuple:
    if isinstance(shape, Tensor):
        return tuple(int(v) for v in shape._data.reshape(-1))
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(v) for v in shape)


@renamed(x="input", input_x="input")
def reshape(input, *shape_args, shape=None):  # noqa: A002
    """MindSpore 2.x `ops.reshape(input, shape)`; `Tensor.reshape(*shape)` also works."""
    x = _tensor(input)
    if shape is not None:
        if shape_args:
            raise TypeError("reshape() got the shape both positionally and as 'shape='")
        shape_args = (shape,)
    shape = shape_args
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    d = x._data
    try:
        out = d.reshape(_shape_arg(shape))
    except ValueError as exc:
        raise ValueError(f"cannot reshape a tensor of shape {d.shape} into {tuple(shape)}") from exc
    return _finish1(out, x, _reshape_vjp, d.shape, "reshape")


def _reshape_vjp(g, saved, needs):
    return (g.reshape(saved),)


@renamed(x="input")
def flatten(input, order="C", *, start_dim=1, end_dim=-1):  # noqa: A002
    """MindSpore 2.x `ops.flatten(input, order='C', *, start_dim=1, end_dim=-1)`.

    Collapses dims start_dim..end_dim; `order='F'` reads them in Fortran (column-major) order.
    """
    if order not in ("C", "F"):
        raise ValueError(f"flatten: order must be 'C' or 'F', got {order!r}")
    x = _tensor(input)
    shape = x.shape
    if not shape:
        return reshape(x, (1,))
    n = len(shape)
    s, e = start_dim % n, end_dim % n
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} is after end_dim {end_dim}")
    new = shape[:s] + (int(np.prod(shape[s : e + 1])),) + shape[e + 1 :]
    if order == "F" and e > s:
        x = transpose(x, tuple(range(s)) + tuple(range(e, s - 1, -1)) + tuple(range(e + 1, n)))
    return reshape(x, new)


@renamed(x="input", perm="input_perm")
def transpose(input, *perm, input_perm=None):  # noqa: A002
    """MindSpore 2.x `ops.transpose(input, input_perm)`; `Tensor.transpose(*axes)` also works."""
    x = _tensor(input)
    if input_perm is not None:
        if perm:
            raise TypeError("transpose() got the permutation both positionally and by keyword")
        perm = (input_perm,)
    if len(perm) == 1 and not isinstance(perm[0], int):
        perm = tuple(perm[0])
    if not perm:
        perm = tuple(reversed(range(x.ndim)))
    if sorted(p % max(x.ndim, 1) for p in perm) != list(range(x.ndim)):
        raise ValueError(f"transpose: {perm} is not a permutation of the {x.ndim} axes")
    out = np.transpose(x._data, perm)
    return _finish1(out, x, _transpose_vjp, np.argsort(perm), "transpose")


def _transpose_vjp(g, saved, needs):
    return (np.transpose(g, saved),)


@renamed(dims="axis")
def permute(input, *axes, axis=None):  # noqa: A002
    """MindSpore 2.x `ops.permute(input, axis)` (2.5 names it `dims`)."""
    if axis is not None:
        if axes:
            raise TypeError("permute() got the axes both positionally and by keyword")
        axes = (axis,)
    return transpose(input, *axes)


@renamed(x="input")
def swapaxes(input, axis0, axis1):  # noqa: A002
    perm = list(range(_tensor(input).ndim))
    perm[axis0], perm[axis1] = perm[axis1], perm[axis0]
    return transpose(input, tuple(perm))


@renamed(x="input", dim="axis")
def squeeze(input, axis=None):  # noqa: A002
    """MindSpore 2.x `ops.squeeze(input, axis=None)`."""
    x = _tensor(input)
    if isinstance(axis, list):
        axis = tuple(axis)
    out = np.squeeze(x._data, axis=axis)
    return _finish1(out, x, _reshape_vjp, x.shape, "squeeze")


@renamed(x="input_x", input="input_x", dim="axis")
def expand_dims(input_x, axis):
    """MindSpore 2.x `ops.expand_dims(input_x, axis)`."""
    x = _tensor(input_x)
    out = np.expand_dims(x._data, axis)
    return _finish1(out, x, _reshape_vjp, x.shape, "expand_dims")


@renamed(x="input", axis="dim")
def unsqueeze(input, dim):  # noqa: A002
    """MindSpore 2.x `ops.unsqueeze(input, dim)`."""
    return expand_dims(input, dim)


@renamed(x="input")
def broadcast_to(input, shape):  # noqa: A002
    """MindSpore 2.x `ops.broadcast_to(input, shape)`."""
    x = _tensor(input)
    out = np.broadcast_to(x._data, _shape_arg(shape))
    return _finish1(out, x, _broadcast_vjp, x.shape, "broadcast_to")


def _broadcast_vjp(g, saved, needs):
    return (unbroadcast(g, saved),)


@renamed(x="input", multiples="dims")
def tile(input, dims):  # noqa: A002
    """MindSpore 2.x `ops.tile(input, dims)` (before 2.3: `multiples`)."""
    x = _tensor(input)
    reps = _shape_arg(dims)
    d = x._data
    out = np.tile(d, reps)
    return _finish1(out, x, _tile_vjp, (d.shape, reps), "tile")


def _tile_vjp(g, saved, needs):
    shape, reps = saved
    nd = max(len(shape), len(reps))
    shape = (1,) * (nd - len(shape)) + tuple(shape)
    reps = (1,) * (nd - len(reps)) + tuple(reps)
    split = []
    for r, s in zip(reps, shape, strict=True):
        split += [r, s]
    summed = g.reshape(split).sum(axis=tuple(range(0, 2 * nd, 2)))
    return (summed.reshape(saved[0]),)


@renamed(input_x="tensors", dim="axis")
def concat(tensors, axis=0):
    """MindSpore 2.x `ops.concat(tensors, axis=0)` / `ops.cat(tensors, axis=0)`."""
    tensors = [_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError("concat needs at least one tensor")
    datas = [t._data for t in tensors]
    try:
        out = np.concatenate(datas, axis=axis)
    except ValueError as exc:
        shapes = ", ".join(str(d.shape) for d in datas)
        raise ValueError(f"concat along axis {axis}: shapes {shapes} do not fit") from exc
    sizes = np.cumsum([d.shape[axis] for d in datas])[:-1]
    return _finish_n(out, tensors, _concat_vjp, (sizes, axis), "concat")


cat = concat


def _concat_vjp(g, saved, needs):
    sizes, axis = saved
    return tuple(np.split(g, sizes, axis=axis))


@renamed(input_x="tensors", dim="axis")
def stack(tensors, axis=0):
    """MindSpore 2.x `ops.stack(tensors, axis=0)`."""
    tensors = [_tensor(t) for t in tensors]
    out = np.stack([t._data for t in tensors], axis=axis)
    return _finish_n(out, tensors, _stack_vjp, axis, "stack")


def _stack_vjp(g, saved, needs):
    return tuple(np.moveaxis(g, saved, 0))


@renamed(x="tensor", input="tensor", dim="axis")
def split(tensor, split_size_or_sections, axis=0):
    """MindSpore 2.x `ops.split(tensor, split_size_or_sections, axis=0)`: an int piece size
    (the last piece may be smaller) or a list of sizes."""
    x = _tensor(tensor)
    n = x.shape[axis]
    if isinstance(split_size_or_sections, int):
        bounds = list(range(split_size_or_sections, n, split_size_or_sections))
    else:
        bounds = list(np.cumsum(split_size_or_sections)[:-1])
    pieces = []
    start = 0
    for end in bounds + [n]:
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, end)
        pieces.append(getitem(x, tuple(index)))
        start = end
    return tuple(pieces)


# ----------------------------------------------------------------------------- indexing


def _index(idx):
    if isinstance(idx, Tensor):
        return idx._data
    if isinstance(idx, tuple):
        return tuple(i._data if isinstance(i, Tensor) else i for i in idx)
    if isinstance(idx, list):
        return np.asarray(idx)
    return idx


def _is_basic(idx) -> bool:
    items = idx if isinstance(idx, tuple) else (idx,)
    return all(isinstance(i, (int, slice, type(None), type(Ellipsis))) for i in items)


def getitem(x, index):
    x = _tensor(x)
    idx = _index(index)
    d = x._data
    out = d[idx]
    return _finish1(out, x, _getitem_vjp, (d.shape, d.dtype, idx), "getitem")


def _getitem_vjp(g, saved, needs):
    shape, dtype, idx = saved
    full = np.zeros(shape, dtype=g.dtype)
    if _is_basic(idx):
        full[idx] = g
    else:
        np.add.at(full, idx, g)
    return (full,)


def setitem(x: Tensor, index, value) -> None:
    """`x[index] = value` in place; on the tape it becomes a functional update."""
    idx = _index(index)
    if isinstance(value, Tensor):
        v = value._data
    else:
        v = value if isinstance(value, (int, float, bool)) else _infer_array(value, None)
    d = x._data
    if state.recording and (x._node is not None or _link(value) is not None):
        new = d.copy()
        new[idx] = v
        links = (_link(x), _link(value))
        x._data = new
        x._node = Node(_setitem_vjp, (idx, np.shape(v)), links, "setitem")
        x._oi = 0
        return
    d[idx] = v


def _setitem_vjp(g, saved, needs):
    idx, vshape = saved
    gx = None
    if needs[0]:
        gx = g.copy()
        gx[idx] = 0
    gv = unbroadcast(np.asarray(g[idx]), vshape) if needs[1] else None
    return gx, gv


# ----------------------------------------------------------------------------- creation


def _dtype_or(dtype, default=np.float32):
    return to_numpy_dtype(dtype) if dtype is not None else np.dtype(default)


@renamed(shape="size")
def zeros(size, dtype=None):
    return wrap(np.zeros(_shape_arg(size), dtype=_dtype_or(dtype)))


@renamed(size="shape")
def ones(shape, dtype=None):
    """MindSpore 2.x `ops.ones(shape, dtype=None)`."""
    return wrap(np.ones(_shape_arg(shape), dtype=_dtype_or(dtype)))


def full(size, fill_value, *, dtype=None):
    if dtype is None:
        dtype = np.float32 if isinstance(fill_value, float) else np.int64
        if isinstance(fill_value, bool):
            dtype = np.bool_
    return wrap(np.full(_shape_arg(size), fill_value, dtype=_dtype_or(dtype)))


def fill(type, shape, value):  # noqa: A002 - MindSpore's signature: fill(type, shape, value)
    return wrap(np.full(_shape_arg(shape), value, dtype=to_numpy_dtype(type)))


@renamed(x="input")
def zeros_like(input, *, dtype=None):  # noqa: A002
    d = _tensor(input)._data
    return wrap(np.zeros(d.shape, dtype=_dtype_or(dtype, d.dtype)))


@renamed(x="input")
def ones_like(input, *, dtype=None):  # noqa: A002
    d = _tensor(input)._data
    return wrap(np.ones(d.shape, dtype=_dtype_or(dtype, d.dtype)))


@renamed(x="input")
def full_like(input, fill_value, *, dtype=None):  # noqa: A002
    d = _tensor(input)._data
    return wrap(np.full(d.shape, fill_value, dtype=_dtype_or(dtype, d.dtype)))


def arange(start=0, end=None, step=1, *, dtype=None):
    if end is None:
        start, end = 0, start
    arr = np.arange(start, end, step)
    if dtype is not None:
        arr = arr.astype(to_numpy_dtype(dtype))
    elif arr.dtype == np.float64:
        arr = arr.astype(np.float32)
    return wrap(arr)


def eye(n, m=None, dtype=None):
    return wrap(np.eye(n, m, dtype=_dtype_or(dtype)))
