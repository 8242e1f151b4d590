"""Reading, checking and making Parameter values for the Parameter editor (headless).

- `parse_value(text, dtype)`: a typed cell value, strictly: a finite number the
  Parameter's dtype can hold, else ValueError with the reason.
- `statistics(array)`: mean, std, min, max and L2 norm in one float64 pass each.
- `load_npy(path, shape, dtype, name)`: an `.npy` file for a Parameter, checked
  before its data is read (no pickles, shape and dtype named in every refusal).
- `save_npy(path, array)`.
- `INITIALIZERS` and `make_values(name, options, shape, dtype, seed)`: a new value
  from any of `engine.common.initializer`'s initializers, repeatable by seed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine import _random
from engine.common import initializer as init

STAT_NAMES = ("mean", "std", "min", "max", "norm")
MAX_NPY_BYTES = 2**31  # a Parameter file beyond 2 GB is refused before it is read


def parse_value(text: Any, dtype: Any = np.float32) -> float | int:
    """The number typed for one entry of a Parameter of `dtype`; ValueError says why not."""
    dtype = np.dtype(dtype)
    shown = str(text).strip()
    if isinstance(text, bool):
        raise ValueError(f"{shown!r} is not a number.")
    try:
        number = float(shown) if isinstance(text, str) else float(text)
    except (TypeError, ValueError):
        raise ValueError(f"{shown!r} is not a number.") from None
    if math.isnan(number):
        raise ValueError("NaN is not allowed: a Parameter must hold finite numbers.")
    if math.isinf(number):
        raise ValueError("Infinity is not allowed: a Parameter must hold finite numbers.")
    if dtype.kind == "f":
        limit = float(np.finfo(dtype).max)
        if abs(number) > limit:
            raise ValueError(f"{shown} is too large for {dtype.name} (at most ±{limit:.4g}).")
        return number
    if dtype.kind in "iu":
        if not number.is_integer():
            raise ValueError(f"{shown} is not a whole number, and this Parameter holds "
                             f"{dtype.name}.")  # fmt: skip
        info = np.iinfo(dtype)
        if not info.min <= number <= info.max:
            raise ValueError(f"{shown} is outside {dtype.name}'s range "
                             f"({info.min} to {info.max}).")  # fmt: skip
        return int(number)
    raise ValueError(f"A Parameter of dtype {dtype.name} can't be edited as numbers.")


def check_finite(values: np.ndarray, what: str = "The values") -> None:
    """ValueError if any of `values` is NaN or infinite, saying how many."""
    if values.dtype.kind not in "fc":
        return
    bad = values.size - int(np.count_nonzero(np.isfinite(values)))
    if bad:
        raise ValueError(f"{what} hold {bad} NaN or infinite number{'s' if bad != 1 else ''}; "
                         "a Parameter must hold finite numbers.")  # fmt: skip


def statistics(array: np.ndarray) -> dict[str, float]:
    """Mean, std, min, max and L2 norm of `array` (NaN for an empty one)."""
    if array.size == 0:
        return dict.fromkeys(STAT_NAMES, math.nan)
    values = np.asarray(array, dtype=np.float64)
    return {
        "mean": float(values.mean()),
        "std": float(values.std()),
        "min": float(values.min()),
        "max": float(values.max()),
        "norm": float(np.sqrt(np.dot(values.ravel(), values.ravel()))),
    }


def shape_text(shape: tuple) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def load_npy(path: str | os.PathLike[str], shape: tuple, dtype: Any,
             name: str = "the Parameter") -> np.ndarray:  # fmt: skip
    """The array in the `.npy` file at `path`, checked to fit a Parameter of `shape`/`dtype`.

    The header is read first: a wrong shape, a non-numeric dtype or an oversized
    file is refused before any data is read. Numbers of another real dtype are
    converted if every value is finite in `dtype`. Never unpickles.
    """
    path = Path(path)
    dtype = np.dtype(dtype)
    if not path.is_file():
        raise ValueError(f"{path.name} is not a file one can read.")
    try:
        with path.open("rb") as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                file_shape, _, file_dtype = np.lib.format.read_array_header_1_0(f)
            elif version in ((2, 0), (3, 0)):
                file_shape, _, file_dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"its format version {version} is unknown")
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{path.name} is not a NumPy .npy file ({exc}).") from None
    if file_dtype.hasobject or file_dtype.kind not in "biuf":
        raise ValueError(f"{path.name} holds {file_dtype} values; {name} takes numbers "
                         f"({dtype.name}).")  # fmt: skip
    if tuple(file_shape) != tuple(shape):
        raise ValueError(f"{path.name} holds an array of shape {shape_text(file_shape)}, but "
                         f"{name} has shape {shape_text(tuple(shape))}.")  # fmt: skip
    if math.prod(file_shape) * file_dtype.itemsize > MAX_NPY_BYTES:
        raise ValueError(f"{path.name} is too large to load.")
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{path.name} can't be read: {exc}") from None
    with np.errstate(all="ignore"):
        converted = array.astype(dtype)
    check_finite(converted, f"The values in {path.name} (as {dtype.name})")
    return converted


def save_npy(path: str | os.PathLike[str], array: np.ndarray) -> Path:
    """Write `array` to `path` (`.npy` added if missing); the path written."""
    path = Path(path)
    if path.suffix.lower() != ".npy":
        path = path.with_name(path.name + ".npy")
    np.save(path, np.ascontiguousarray(array), allow_pickle=False)
    return path


# ---- initializers ----------------------------------------------------------------------------


@dataclass(frozen=True)
class InitOption:
    """One option an initializer takes: its name, default, and the choices if it has some."""

    name: str
    default: Any
    choices: tuple = ()


INITIALIZERS: dict[str, tuple[type, tuple[InitOption, ...]]] = {
    "Zero": (init.Zero, ()),
    "One": (init.One, ()),
    "Constant": (init.Constant, (InitOption("value", 0.0),)),
    "Normal": (init.Normal, (InitOption("sigma", 0.01), InitOption("mean", 0.0))),
    "Uniform": (init.Uniform, (InitOption("scale", 0.07),)),
    "TruncatedNormal": (init.TruncatedNormal, (
        InitOption("sigma", 0.01), InitOption("mean", 0.0), InitOption("a", -2.0),
        InitOption("b", 2.0))),
    "XavierUniform": (init.XavierUniform, (InitOption("gain", 1.0),)),
    "XavierNormal": (init.XavierNormal, (InitOption("gain", 1.0),)),
    "HeUniform": (init.HeUniform, (
        InitOption("negative_slope", 0.0), InitOption("mode", "fan_in", ("fan_in", "fan_out")),
        InitOption("nonlinearity", "leaky_relu", ("leaky_relu", "relu", "tanh", "sigmoid",
                                                  "linear", "selu")))),
    "HeNormal": (init.HeNormal, (
        InitOption("negative_slope", 0.0), InitOption("mode", "fan_in", ("fan_in", "fan_out")),
        InitOption("nonlinearity", "leaky_relu", ("leaky_relu", "relu", "tanh", "sigmoid",
                                                  "linear", "selu")))),
}  # fmt: skip


def make_values(name: str, options: Mapping[str, Any], shape: tuple, dtype: Any,
                seed: int) -> np.ndarray:  # fmt: skip
    """A new value of `shape` from the initializer `name` with `options`, drawn with `seed`.

    The engine's own generator is left where it was, so training is not disturbed.
    ValueError with the reason for an unknown name, option or unsuitable shape.
    """
    if name not in INITIALIZERS:
        raise ValueError(f"Unknown initializer {name!r} (known: {', '.join(INITIALIZERS)}).")
    cls, known = INITIALIZERS[name]
    names = {option.name for option in known}
    unknown = set(options) - names
    if unknown:
        raise ValueError(f"{name} has no option {', '.join(sorted(unknown))}.")
    options = {option.name: option.default for option in known} | dict(options)
    try:  # a generator of its own: the training's is not touched
        with _random.fork_rng(int(seed)), np.errstate(all="ignore"):
            values = init.initializer(cls(**options), tuple(shape), np.dtype(dtype))
        array = np.array(values.asnumpy(), dtype=np.dtype(dtype), copy=True)
    except (TypeError, ValueError, ZeroDivisionError) as exc:
        raise ValueError(f"{name} can't fill shape {shape_text(tuple(shape))}: {exc}") from None
    check_finite(array, f"The values {name} made")
    return array
