"""Activation Cells beyond the basic ones (MindSpore 2.x names, signatures and defaults).

Annotations are real objects (no `from __future__ import annotations`): the app's node
catalogue reads hyper-parameter schemas from `inspect.signature`.
"""

import numbers

import numpy as np

from engine import ops
from engine.nn._checks import positive_int, real
from engine.nn.cell import Cell
from engine.ops._activation import SELU_ALPHA, SELU_SCALE
from engine.parameter import Parameter
from engine.tensor import Tensor

__all__ = ["ELU", "SeLU", "CELU", "PReLU", "Softsign", "SiLU", "Mish", "HSwish", "HSigmoid",
           "ReLU6", "Hardtanh", "LogSigmoid", "Softmin", "GLU"]


class _Elementwise(Cell):
    """A parameter-free activation applying one `ops` function elementwise."""

    _op = None

    def __init__(self):  # no hyper-parameters (hides Cell's own arguments)
        super().__init__()

    def construct(self, x):
        return type(self)._op(x)


class ELU(Cell):
    """Exponential linear unit: x where x > 0, else alpha·(eˣ − 1).

    (MindSpore's CPU kernel takes only alpha = 1.0; any alpha works here, as in PyTorch.)
    """

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = real("ELU", "alpha", alpha)

    def construct(self, x):
        return ops.elu(x, self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class SeLU(_Elementwise):
    """Scaled exponential linear unit: scale·ELU(x, alpha) with fixed constants
    (self-normalising); `alpha` and `scale` are read-only class attributes."""

    _op = staticmethod(ops.selu)
    alpha = SELU_ALPHA
    scale = SELU_SCALE


class CELU(Cell):
    """Continuously differentiable ELU: max(0, x) + min(0, alpha·(e^(x/alpha) − 1))."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = real("CELU", "alpha", alpha)
        if self.alpha == 0:
            raise ValueError("CELU: alpha must not be 0")

    def construct(self, x):
        return ops.celu(x, self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class PReLU(Cell):
    """Parametric ReLU: x where x > 0, else w·x, with `w` learned.

    MindSpore 2.x `PReLU(channel=1, w=0.25)`: `channel` slopes, one shared by every
    element (1) or one per channel along axis 1. `w` is the initial value: a number
    (every slope), a list of `channel` numbers or a 1-D Tensor of `channel` floats.
    The Parameter is the attribute `w` (named 'a' until the Cell sits in a network,
    then by its path, e.g. 'prelu1.w'), of shape (channel,).
    """

    def __init__(self, channel: int = 1, w: float | list | Tensor = 0.25):
        super().__init__()
        self.channel = positive_int("PReLU", "channel", channel)
        self.w = Parameter(_initial_slopes(self.channel, w), name="a")

    def construct(self, x):
        return ops.prelu(x, self.w)

    def extend_repr(self) -> str:
        return f"channel={self.channel}"


def _initial_slopes(channel: int, w) -> np.ndarray:
    if isinstance(w, Tensor):
        if w._data.dtype not in (np.float16, np.float32, np.float64):
            raise TypeError(f"PReLU: a Tensor w must be a float Tensor, got {w.dtype}")
        if w.shape != (channel,):
            raise ValueError(f"PReLU: w must have shape ({channel},) to match channel, "
                             f"got shape {w.shape}")
        return w._data.copy()
    if isinstance(w, list):
        if len(w) != channel or not all(
                isinstance(v, numbers.Real) and not isinstance(v, bool) for v in w):
            raise ValueError(f"PReLU: a list w must hold {channel} numbers (one per channel), "
                             f"got {w!r}")
        return np.asarray(w, dtype=np.float32)
    if isinstance(w, numbers.Real) and not isinstance(w, bool):
        return np.full((channel,), w, dtype=np.float32)
    raise TypeError(f"PReLU: w must be a number, a list or a Tensor, got {type(w).__name__}")


class Softsign(_Elementwise):
    """x / (1 + |x|): like tanh, with gentler tails."""

    _op = staticmethod(ops.softsign)


class SiLU(_Elementwise):
    """Sigmoid linear unit (swish): x·sigmoid(x)."""

    _op = staticmethod(ops.silu)


class Mish(_Elementwise):
    """x·tanh(softplus(x))."""

    _op = staticmethod(ops.mish)


class HSwish(_Elementwise):
    """Hard swish: x·ReLU6(x + 3)/6."""

    _op = staticmethod(ops.hardswish)


class HSigmoid(_Elementwise):
    """Hard sigmoid: ReLU6(x + 3)/6 (PyTorch's Hardsigmoid)."""

    _op = staticmethod(ops.hardsigmoid)


class ReLU6(_Elementwise):
    """min(max(x, 0), 6)."""

    _op = staticmethod(ops.relu6)


class LogSigmoid(_Elementwise):
    """log(sigmoid(x)), computed stably for large |x|."""

    _op = staticmethod(ops.logsigmoid)


class Hardtanh(Cell):
    """x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        super().__init__()
        self.min_val = real("Hardtanh", "min_val", min_val)
        self.max_val = real("Hardtanh", "max_val", max_val)
        if self.max_val < self.min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must not be less than min_val "
                             f"({min_val})")

    def construct(self, x):
        return ops.hardtanh(x, self.min_val, self.max_val)

    def extend_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


def _axis(layer: str, axis, tuples: bool = False):
    ok = not isinstance(axis, bool) and isinstance(axis, int)
    if tuples and isinstance(axis, tuple) and axis:
        ok = all(not isinstance(a, bool) and isinstance(a, int) for a in axis)
    if not ok:
        more = " or a tuple of ints" if tuples else ""
        raise ValueError(f"{layer}: axis must be an int{more}, got {axis!r}")
    return axis


class Softmin(Cell):
    """exp(−x) / sum(exp(−x)) along `axis` (an int, or a tuple of ints as in MindSpore)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = _axis("Softmin", axis, tuples=True)

    def construct(self, x):
        return ops.softmin(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class GLU(Cell):
    """Gated linear unit: split `axis` into halves a, b (its size must be even); a·sigmoid(b)."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = _axis("GLU", axis)

    def construct(self, x):
        return ops.glu(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"
