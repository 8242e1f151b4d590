"""Parameter initializers with MindSpore's names, fan rules and defaults.

`initializer(init, shape, dtype)` accepts an `Initializer`, its string name
(case-insensitive: 'xavier_uniform', 'XavierUniform', ...), a number (a
constant), or a Tensor/ndarray (copied; its shape must match).  All random
draws come from `engine._random.rng()`, so `engine.set_seed(n)` makes every
initialisation repeatable.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from engine import tensor as _tensor
from engine._dtype import float32, to_numpy_dtype
from engine._random import rng
from engine.tensor import Tensor, wrap

__all__ = [
    "Initializer", "initializer", "Zero", "One", "Constant", "Normal", "Uniform",
    "XavierUniform", "XavierNormal", "HeUniform", "HeNormal", "TruncatedNormal",
]


def _fan_in_and_fan_out(shape: tuple) -> tuple[int, int]:
    """MindSpore's fans: (out, in) -> (in, out); (out, in/g, kh, kw) -> (in/g*kh*kw, out*kh*kw)."""
    if len(shape) < 2:
        raise ValueError(
            f"fan_in and fan_out need a shape with at least 2 dimensions, got {tuple(shape)}"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _gain(nonlinearity: str, param=None) -> float:
    """Recommended gain for a nonlinearity (the table of `torch.nn.init.calculate_gain`)."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, numbers.Real):
            raise ValueError(f"negative_slope must be a number, got {slope!r}")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"unsupported nonlinearity {nonlinearity!r}")


class Initializer:
    """Base class: `init(shape, dtype)` or `init(array)` fills values; subclasses define `_fill`."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def _fill(self, shape: tuple) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, arr_or_shape, dtype=float32):
        if isinstance(arr_or_shape, np.ndarray):  # MindSpore style: fill an array in place
            arr_or_shape[...] = self._fill(arr_or_shape.shape)
            return arr_or_shape
        return initializer(self, arr_or_shape, dtype)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


class Zero(Initializer):
    """All zeros."""

    def _fill(self, shape):
        return np.zeros(shape)


class One(Initializer):
    """All ones."""

    def _fill(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    """Every element equal to `value`."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _fill(self, shape):
        return np.full(shape, self.value)


class Normal(Initializer):
    """N(mean, sigma^2)."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0):
        super().__init__(sigma=sigma, mean=mean)
        if sigma < 0:
            raise ValueError(f"Normal sigma must be >= 0, got {sigma}")
        self.sigma, self.mean = sigma, mean

    def _fill(self, shape):
        return rng().normal(self.mean, self.sigma, shape)


class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        if scale < 0:
            raise ValueError(f"Uniform scale must be >= 0, got {scale}")
        self.scale = scale

    def _fill(self, shape):
        return rng().uniform(-self.scale, self.scale, shape)


class TruncatedNormal(Initializer):
    """N(mean, sigma^2) restricted to [a, b] (absolute bounds), by resampling."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0, b: float = 2.0):
        super().__init__(sigma=sigma, mean=mean, a=a, b=b)
        if sigma < 0 or a >= b:
            raise ValueError(f"TruncatedNormal needs sigma >= 0 and a < b, got {sigma}, {a}, {b}")
        self.sigma, self.mean, self.a, self.b = sigma, mean, a, b

    def _fill(self, shape):
        gen = rng()
        out = gen.normal(self.mean, self.sigma, shape)
        for _ in range(100):
            bad = (out < self.a) | (out > self.b)
            count = int(bad.sum())
            if not count:
                return out
            out[bad] = gen.normal(self.mean, self.sigma, count)
        return np.clip(out, self.a, self.b)  # bounds far in the tail: settle the stragglers


class XavierUniform(Initializer):
    """U(-bound, bound) with bound = gain * sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    def _fill(self, shape):
        fan_in, fan_out = _fan_in_and_fan_out(shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return rng().uniform(-bound, bound, shape)


class XavierNormal(Initializer):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, gain: float = 1):
        super().__init__(gain=gain)
        self.gain = gain

    def _fill(self, shape):
        fan_in, fan_out = _fan_in_and_fan_out(shape)
        return rng().normal(0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)), shape)


class _He(Initializer):
    def __init__(self, negative_slope=0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
        super().__init__(negative_slope=negative_slope, mode=mode, nonlinearity=nonlinearity)
        if mode not in ("fan_in", "fan_out"):
            raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
        _gain(nonlinearity, negative_slope)  # validate early
        self.negative_slope, self.mode, self.nonlinearity = negative_slope, mode, nonlinearity

    def _std(self, shape) -> float:
        fan_in, fan_out = _fan_in_and_fan_out(shape)
        fan = fan_in if self.mode == "fan_in" else fan_out
        return _gain(self.nonlinearity, self.negative_slope) / math.sqrt(fan)


class HeUniform(_He):
    """Kaiming uniform: U(-bound, bound), bound = gain * sqrt(3 / fan)."""

    def _fill(self, shape):
        bound = math.sqrt(3.0) * self._std(shape)
        return rng().uniform(-bound, bound, shape)


class HeNormal(_He):
    """Kaiming normal: N(0, (gain / sqrt(fan))^2)."""

    def _fill(self, shape):
        return rng().normal(0.0, self._std(shape), shape)


_BY_NAME = {
    "zeros": Zero, "ones": One, "normal": Normal, "uniform": Uniform,
    "xavier_uniform": XavierUniform, "xavier_normal": XavierNormal,
    "he_uniform": HeUniform, "he_normal": HeNormal, "truncatednormal": TruncatedNormal,
}
# Also accept class names and spellings without underscores: 'XavierUniform', 'zero', 'One'.
_ALIASES = {key.replace("_", ""): cls for key, cls in _BY_NAME.items()}
_ALIASES.update({cls.__name__.lower(): cls for cls in _BY_NAME.values()})


def _from_name(name: str) -> Initializer:
    cls = _ALIASES.get(name.lower().replace("_", ""))
    if cls is None:
        raise ValueError(
            f"unknown initializer {name!r}; valid names are: {', '.join(sorted(_BY_NAME))}"
        )
    return cls()


def _shape_tuple(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        shape = tuple(int(s) for s in shape)
    except TypeError as exc:
        raise TypeError(f"shape must be an int or a sequence of ints, got {shape!r}") from exc
    if any(s < 0 for s in shape):
        raise ValueError(f"shape must not contain negative sizes, got {shape}")
    return shape


def initializer(init, shape=None, dtype=float32) -> Tensor:
    """A new Tensor of `shape` and `dtype` filled by `init` (see the module docstring)."""
    np_dtype = to_numpy_dtype(dtype)
    if isinstance(init, (Tensor, np.ndarray)):
        data = init._data if isinstance(init, Tensor) else init
        if shape is not None and tuple(data.shape) != _shape_tuple(shape):
            raise ValueError(
                f"initializer: the given Tensor has shape {tuple(data.shape)}, but shape "
                f"{_shape_tuple(shape)} was requested"
            )
        return wrap(np.array(data, dtype=np_dtype, copy=True))
    if shape is None:
        raise ValueError("initializer needs a shape unless init is a Tensor")
    shape = _shape_tuple(shape)
    if isinstance(init, str):
        init = _from_name(init)
    elif isinstance(init, type) and issubclass(init, Initializer):
        init = init()
    elif isinstance(init, numbers.Number) and not isinstance(init, bool):
        init = Constant(init)
    elif isinstance(init, bool):
        init = Constant(int(init))
    if not isinstance(init, Initializer):
        raise TypeError(
            "init must be an Initializer, a name, a number or a Tensor, got "
            f"{type(init).__name__}"
        )
    return wrap(np.asarray(init._fill(shape)).astype(np_dtype, copy=False))


_tensor._initializer = initializer  # Tensor(shape=..., init=...) fills through this module
