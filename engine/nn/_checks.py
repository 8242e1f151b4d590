"""Hyper-parameter checks shared by the layers: clear `ValueError`s naming the layer and value."""

from __future__ import annotations

import numbers
from typing import Annotated

import numpy as np


def positive_int(layer: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{layer}: {name} must be a positive int, got {value!r}")
    return int(value)


def int_pair(layer: str, name: str, value, minimum: int = 1) -> tuple[int, int]:
    """An int or a pair of ints, each at least `minimum`."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(items) == 1:
        items = items * 2
    ok = len(items) == 2 and all(
        not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= minimum
        for v in items
    )
    if not ok:
        raise ValueError(
            f"{layer}: {name} must be an int or a pair of ints >= {minimum}, got {value!r}"
        )
    return int(items[0]), int(items[1])


def real(layer: str, name: str, value, low=None, high=None, low_open=False, high_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{layer}: {name} must be a number, got {value!r}")
    value = float(value)
    bad = (
        (low is not None and (value <= low if low_open else value < low))
        or (high is not None and (value >= high if high_open else value > high))
    )
    if bad:
        lo = "" if low is None else ("(" if low_open else "[") + str(low)
        hi = "" if high is None else str(high) + (")" if high_open else "]")
        raise ValueError(f"{layer}: {name} must be in {lo}, {hi}, got {value}")
    return value


def choice(layer: str, name: str, value, allowed: tuple) -> str:
    key = value.lower() if isinstance(value, str) else value
    if key not in allowed:
        raise ValueError(
            f"{layer}: {name} must be one of {', '.join(map(repr, allowed))}, got {value!r}"
        )
    return key


def input_shape(layer: str, x, ndims: tuple, channels: int | None, layout: str) -> None:
    """Raise if `x` has the wrong rank or channel count, naming expected and actual shapes."""
    shape = tuple(x.shape)
    if len(shape) not in ndims or (channels is not None and shape[1] != channels):
        raise ValueError(f"{layer} expects input of shape {layout}, got shape {shape}")


# An argument MindSpore has that this engine takes only at its default. The marker keeps it out
# of hyper-parameter schemas read from annotations (the app's node palette shows none of them).
Fixed = Annotated[object, "engine: only the MindSpore default is supported"]


def only_defaults(layer: str, **given) -> None:
    """`only_defaults('Conv2d', data_format=(value, 'NCHW'))`: NotImplementedError naming the
    first argument that is not at its default (accepted so MindSpore code runs unchanged)."""
    for name, (value, default) in given.items():
        same = value == default if not isinstance(default, bool) else value is default
        if not same:
            raise NotImplementedError(
                f"{layer}: {name}={value!r} is not supported by this engine (only {default!r})"
            )


def float_dtype(layer: str, dtype) -> np.dtype:
    """The NumPy dtype of a floating-point `dtype` argument (engine DType or NumPy dtype)."""
    from engine._dtype import to_numpy_dtype

    try:
        np_dtype = np.dtype(to_numpy_dtype(dtype))
    except (TypeError, ValueError, KeyError):
        raise TypeError(f"{layer}: dtype must be a floating-point dtype, got {dtype!r}") from None
    if np_dtype.kind != "f":
        raise TypeError(f"{layer}: dtype must be a floating-point dtype, got {dtype!r}")
    return np_dtype
