"""`Tensor`: a NumPy array with an optional link into the autograd tape.

Arithmetic, comparison, indexing and reduction methods delegate to
`engine.ops` (bound at import time by `engine.ops._methods`), so a method
and its functional form share one implementation and one gradient rule.
"""

from __future__ import annotations

import numpy as np

from engine._dtype import DType, from_numpy_dtype, to_numpy_dtype


def _infer_array(data, dtype) -> np.ndarray:
    if isinstance(data, Tensor):
        arr = data._data
        return arr.copy() if dtype is None else arr.astype(to_numpy_dtype(dtype))
    if dtype is not None:
        return np.array(data, dtype=to_numpy_dtype(dtype))
    if isinstance(data, np.ndarray):
        return data.copy()
    if isinstance(data, np.generic):
        return np.array(data)
    if isinstance(data, bool):
        return np.array(data, dtype=np.bool_)
    if isinstance(data, int):
        return np.array(data, dtype=np.int64)
    if isinstance(data, float):
        return np.array(data, dtype=np.float32)
    if isinstance(data, (list, tuple)):
        if any(isinstance(v, Tensor) for v in data):
            data = [v._data if isinstance(v, Tensor) else v for v in data]
        arr = np.array(data)
        # Python numbers follow the seeds: floats become float32, ints int64.
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype.kind in "iu":
            arr = arr.astype(np.int64)
        if arr.dtype == object:
            raise TypeError("Tensor data must be numbers or nested lists of numbers")
        return arr
    raise TypeError(f"cannot make a Tensor from {type(data).__name__}")


def _format_float(x) -> str:
    return f"{x: .8e}"


def format_value(arr: np.ndarray) -> str:
    """The `value=` part of a Tensor repr, as the seeds print it."""
    if arr.ndim == 0:
        v = arr.item()
        if isinstance(v, float):
            return " " + np.format_float_positional(v, trim="-")
        return " " + str(v)
    kind = arr.dtype.kind
    formatter = {"float_kind": _format_float} if kind == "f" else None
    text = np.array2string(arr, separator=", ", formatter=formatter, threshold=1000)
    # MindSpore prints nested blocks without NumPy's blank separator lines.
    text = "\n".join(line for line in text.split("\n") if line.strip())
    return ("\n" if arr.ndim > 1 else " ") + text


# `initializer(init, shape, dtype)` of `engine.common.initializer`, for `Tensor(init=...)`.
# That module builds Tensors, so it imports this one and puts its function here on import
# (`import engine` imports it), as `engine.ops` binds the Tensor methods.
_initializer = None


class Tensor:
    """An n-dimensional array of numbers that can take part in differentiation."""

    __slots__ = ("_data", "_node", "_oi", "__weakref__")
    __array_priority__ = 1000  # make `ndarray op Tensor` defer to Tensor

    def __init__(self, input_data=None, dtype=None, shape=None, init=None):
        if input_data is None:
            if shape is None:
                raise TypeError("Tensor needs input_data, or a shape and dtype")
            if init is not None:
                input_data = _initializer(init, shape, dtype or DType("Float32", np.float32))._data
            else:
                input_data = np.zeros(shape, dtype=to_numpy_dtype(dtype or np.float32))
        self._data = _infer_array(input_data, dtype)
        self._node = None
        self._oi = 0

    # -- NumPy view ------------------------------------------------------------
    def asnumpy(self) -> np.ndarray:
        return self._data

    def numpy(self) -> np.ndarray:
        return self._data

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self) -> DType:
        return from_numpy_dtype(self._data.dtype)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def dim(self) -> int:
        return self._data.ndim

    def item(self):
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d Tensor")
        return len(self._data)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        return bool(self._data)

    def __float__(self) -> float:
        return float(self._data)

    def __int__(self) -> int:
        return int(self._data)

    def __index__(self) -> int:
        return int(self._data)

    __hash__ = object.__hash__  # identity: Tensors key dicts (e.g. bprop's {param: grad})

    def __repr__(self) -> str:
        shape = list(self._data.shape)
        return f"Tensor(shape={shape}, dtype={self.dtype}, value={format_value(self._data)})"

    def __str__(self) -> str:
        return str(self._data)

    def __format__(self, spec: str) -> str:
        if spec and self._data.ndim == 0:
            return format(self._data.item(), spec)
        return str(self)

    # -- copies and dtype ------------------------------------------------------
    def copy(self) -> Tensor:
        return Tensor(self._data.copy())

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    @property
    def requires_grad(self) -> bool:
        return self._node is not None

    def stop_gradient(self) -> Tensor:
        return wrap(self._data)

    detach = stop_gradient

    def init_data(self) -> Tensor:
        return self


def wrap(data: np.ndarray, node=None, oi: int = 0) -> Tensor:
    """Fast internal constructor: no copy, no dtype inference."""
    if type(data) is not np.ndarray:  # NumPy returns scalars from 0-d arithmetic
        data = np.asarray(data)
    t = object.__new__(Tensor)
    t._data = data
    t._node = node
    t._oi = oi
    return t


def as_tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)
