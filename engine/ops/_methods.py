"""Binds Tensor's operators and methods to the functional ops (one implementation each)."""

from __future__ import annotations

from engine.ops import _functional as F
from engine.ops import _reduce as R
from engine.ops import _select as X
from engine.ops import _shape as S
from engine.tensor import Tensor


def _r(fn):
    def reflected(self, other):
        return fn(other, self)

    return reflected


def _eq(self, other):
    if other is None:
        return False
    return R.eq(self, other)


def _ne(self, other):
    if other is None:
        return True
    return R.ne(self, other)


def _reduce(fn):
    # The op takes the same positional order as the Tensor method and resolves
    # every keyword spelling (axis/dim, keepdims/keep_dims/keepdim) itself.
    def method(self, *args, **kw):
        return fn(self, *args, **kw)

    method.__name__ = fn.__name__
    return method


def _sum(self, axis=None, dtype=None, keepdims=False, initial=None, **kw):
    """MindSpore 2.x `Tensor.sum(axis=None, dtype=None, keepdims=False, initial=None)`."""
    if axis is not None:
        kw["axis"] = axis
    if keepdims:
        kw["keepdims"] = keepdims
    out = R.sum(self, dtype=dtype, **kw)
    return out if initial is None else F.add(out, initial)


def _astype(self, dtype, copy=True):
    return F.cast(self, dtype)


def _float(self):
    return F.cast(self, "float32")


def _view(self, *shape):
    return S.reshape(self, *shape)


def _all(self, axis=None, keep_dims=False):
    """MindSpore 2.x `Tensor.all(axis=None, keep_dims=False)`."""
    return X.all(self, axis, keep_dims)


def _any(self, axis=None, keep_dims=False):
    """MindSpore 2.x `Tensor.any(axis=None, keep_dims=False)`."""
    return X.any(self, axis, keep_dims)


def _cumsum(self, axis=None, dtype=None):
    """MindSpore 2.x `Tensor.cumsum(axis=None, dtype=None)` (None: over the flattened input)."""
    return X.cumsum(self, axis, dtype)


def _gather(self, input_indices, axis, batch_dims=0):
    """MindSpore 2.x `Tensor.gather(input_indices, axis, batch_dims=0)`."""
    return X.gather(self, input_indices, axis, batch_dims)


def _topk(self, k, dim=None, largest=True, sorted=True):  # noqa: A002
    """MindSpore 2.x `Tensor.topk(k, dim=None, largest=True, sorted=True)`."""
    return X.topk(self, k, dim, largest, sorted)


def _sort(self, axis=-1, descending=False):
    """MindSpore 2.x `Tensor.sort(axis=-1, descending=False)`."""
    return X.sort(self, axis, descending)


def _norm(self, ord=None, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """MindSpore 2.x `Tensor.norm(ord=None, dim=None, keepdim=False, *, dtype=None)`."""
    return X.norm(self, ord, dim, keepdim, dtype=dtype)


def _max(self, *args, return_indices=False, **kw):
    """MindSpore 2.x `Tensor.max(axis=None, keepdims=False, *, initial=None, where=None,
    return_indices=False)`: the values, or `(values, indices)` with return_indices."""
    return R.max(self, *args, **kw) if return_indices else R.amax(self, *args, **kw)


def _min(self, *args, return_indices=False, **kw):
    return R.min(self, *args, **kw) if return_indices else R.amin(self, *args, **kw)


def bind() -> None:
    T = Tensor
    T.__add__ = F.add
    T.__radd__ = _r(F.add)
    T.__sub__ = F.sub
    T.__rsub__ = _r(F.sub)
    T.__mul__ = F.mul
    T.__rmul__ = _r(F.mul)
    T.__truediv__ = F.div
    T.__rtruediv__ = _r(F.div)
    T.__floordiv__ = F.floor_div
    T.__rfloordiv__ = _r(F.floor_div)
    T.__mod__ = F.mod
    T.__rmod__ = _r(F.mod)
    T.__pow__ = F.pow
    T.__rpow__ = _r(F.pow)
    T.__matmul__ = F.matmul
    T.__rmatmul__ = _r(F.matmul)
    T.__neg__ = F.neg
    T.__pos__ = lambda self: self
    T.__abs__ = F.abs
    T.__lt__ = R.lt
    T.__le__ = R.le
    T.__gt__ = R.gt
    T.__ge__ = R.ge
    T.__eq__ = _eq
    T.__ne__ = _ne
    T.__and__ = R.logical_and
    T.__or__ = R.logical_or
    T.__invert__ = R.logical_not
    T.__getitem__ = S.getitem
    T.__setitem__ = S.setitem

    T.add, T.sub, T.mul, T.div, T.matmul = F.add, F.sub, F.mul, F.div, F.matmul
    T.sum = _sum
    T.mean = _reduce(R.mean)
    T.prod = _reduce(R.prod)
    T.max = _max
    T.min = _min
    T.amax = _reduce(R.amax)
    T.amin = _reduce(R.amin)
    T.argmax = _reduce(R.argmax)
    T.argmin = _reduce(R.argmin)
    T.var = _reduce(R.var)
    T.std = _reduce(R.std)
    T.all = _all
    T.any = _any
    T.cumsum = _cumsum
    T.gather = _gather
    T.topk = _topk
    T.sort = _sort
    T.norm = _norm
    T.reshape = S.reshape
    T.view = _view
    T.transpose = S.transpose
    T.permute = S.transpose
    T.swapaxes = S.swapaxes
    T.squeeze = S.squeeze
    T.expand_dims = S.expand_dims
    T.unsqueeze = S.expand_dims
    T.flatten = lambda self, order="C", *, start_dim=0, end_dim=-1: S.flatten(
        self, order, start_dim=start_dim, end_dim=end_dim
    )
    T.broadcast_to = S.broadcast_to
    T.tile = S.tile
    T.exp, T.log, T.sqrt, T.abs = F.exp, F.log, F.sqrt, F.abs
    T.relu, T.sigmoid, T.tanh, T.square = F.relu, F.sigmoid, F.tanh, F.square
    T.clip = T.clamp = F.clip
    T.softmax = F.softmax
    T.astype = _astype
    T.to = _astype
    T.float = _float
    T.T = property(lambda self: S.transpose(self))
