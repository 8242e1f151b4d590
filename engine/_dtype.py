"""Engine dtypes: thin named wrappers over NumPy dtypes, printed the MindSpore way (`Float32`)."""

from __future__ import annotations

import numpy as np


class DType:
    """A tensor element type. Compares equal to itself and to the NumPy dtype it wraps."""

    __slots__ = ("name", "np")

    def __init__(self, name: str, np_dtype):
        self.name = name
        self.np = np.dtype(np_dtype)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        if isinstance(other, DType):
            return self.np == other.np
        try:
            return self.np == np.dtype(other)
        except TypeError:
            return False

    def __hash__(self) -> int:
        return hash(self.np)

    @property
    def is_floating(self) -> bool:
        return self.np.kind == "f"


float16 = DType("Float16", np.float16)
float32 = DType("Float32", np.float32)
float64 = DType("Float64", np.float64)
int8 = DType("Int8", np.int8)
int16 = DType("Int16", np.int16)
int32 = DType("Int32", np.int32)
int64 = DType("Int64", np.int64)
uint8 = DType("UInt8", np.uint8)
bool_ = DType("Bool", np.bool_)

_BY_NUMPY = {d.np: d for d in (float16, float32, float64, int8, int16, int32, int64, uint8, bool_)}
float_ = float32
int_ = int64


def to_numpy_dtype(dtype) -> np.dtype:
    """Accept an engine DType, a NumPy dtype, a type object or a string; return a NumPy dtype."""
    if isinstance(dtype, DType):
        return dtype.np
    if dtype is float:
        return float32.np
    if dtype is int:
        return int64.np
    if dtype is bool:
        return bool_.np
    try:
        return np.dtype(dtype)
    except TypeError as exc:
        raise TypeError(f"{dtype!r} is not a dtype (use e.g. engine.float32)") from exc


def from_numpy_dtype(np_dtype) -> DType:
    """The engine DType for a NumPy dtype (unknown kinds get a DType named after NumPy's)."""
    np_dtype = np.dtype(np_dtype)
    found = _BY_NUMPY.get(np_dtype)
    if found is None:
        found = _BY_NUMPY.setdefault(np_dtype, DType(np_dtype.name.capitalize(), np_dtype))
    return found
