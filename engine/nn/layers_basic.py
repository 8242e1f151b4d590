"""Parameter-free layers: activations, Identity, Flatten and Dropout.

Annotations are real objects (no `from __future__ import annotations`): the
app's node catalogue reads hyper-parameter schemas from `inspect.signature`.
"""

from engine import ops
from engine._dtype import DType, float32
from engine.nn._checks import real
from engine.nn.cell import Cell


class ReLU(Cell):
    """max(x, 0) elementwise."""

    def __init__(self):  # no hyper-parameters (hides Cell's own arguments)
        super().__init__()

    def construct(self, x):
        return ops.relu(x)


class LeakyReLU(Cell):
    """x where x > 0, else alpha * x."""

    def __init__(self, alpha: float = 0.2):
        super().__init__()
        self.alpha = real("LeakyReLU", "alpha", alpha)

    def construct(self, x):
        return ops.leaky_relu(x, self.alpha)

    def extend_repr(self) -> str:
        return f"alpha={self.alpha}"


class Sigmoid(Cell):
    """1 / (1 + exp(-x)) elementwise."""

    def __init__(self):  # no hyper-parameters (hides Cell's own arguments)
        super().__init__()

    def construct(self, x):
        return ops.sigmoid(x)


class Tanh(Cell):
    """tanh(x) elementwise."""

    def __init__(self):  # no hyper-parameters (hides Cell's own arguments)
        super().__init__()

    def construct(self, x):
        return ops.tanh(x)


class GELU(Cell):
    """Gaussian error linear unit; the tanh approximation unless `approximate=False` (exact erf)."""

    def __init__(self, approximate: bool = True):
        super().__init__()
        if not isinstance(approximate, bool):
            raise ValueError(f"GELU: approximate must be a bool, got {approximate!r}")
        self.approximate = approximate

    def construct(self, x):
        return ops.gelu(x, "tanh" if self.approximate else "none")

    def extend_repr(self) -> str:
        return f"approximate={self.approximate}"


def _axis(layer: str, axis) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise ValueError(f"{layer}: axis must be an int, got {axis!r}")
    return axis


class Softmax(Cell):
    """exp(x) / sum(exp(x)) along `axis`."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = _axis("Softmax", axis)

    def construct(self, x):
        return ops.softmax(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class LogSoftmax(Cell):
    """log(softmax(x)) along `axis`, computed stably."""

    def __init__(self, axis: int = -1):
        super().__init__()
        self.axis = _axis("LogSoftmax", axis)

    def construct(self, x):
        return ops.log_softmax(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class Identity(Cell):
    """Returns its input unchanged."""

    def __init__(self):  # no hyper-parameters (hides Cell's own arguments)
        super().__init__()

    def construct(self, x):
        return x


class Flatten(Cell):
    """Collapse dimensions start_dim..end_dim into one (default: all but the batch axis)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = _axis("Flatten", start_dim)
        self.end_dim = _axis("Flatten", end_dim)

    def construct(self, x):
        return ops.flatten(x, start_dim=self.start_dim, end_dim=self.end_dim)

    def extend_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Dropout(Cell):
    """Zero elements with probability `p` (or `1 - keep_prob`) in train mode; identity otherwise.

    MindSpore 2.x `Dropout(keep_prob=0.5, p=None, dtype=float32)`: `p`, when
    given, wins over the deprecated `keep_prob` (as in MindSpore); with neither,
    p = 0.5 (keep_prob's default is None here so a schema can tell "not given").
    Kept elements are scaled by 1/(1-p).  `dtype` is deprecated in MindSpore and
    has no effect there or here (the output keeps the input's dtype).
    """

    def __init__(self, keep_prob: float | None = None, p: float | None = None,
                 dtype: DType = float32):
        super().__init__()
        if p is not None:
            p = real("Dropout", "p", p, 0.0, 1.0, high_open=True)
        elif keep_prob is not None:
            keep_prob = real("Dropout", "keep_prob", keep_prob, 0.0, 1.0, low_open=True)
            p = 1.0 - keep_prob
        else:
            p = 0.5
        self.p = p
        self.keep_prob = 1.0 - p

    def construct(self, x):
        if not self.training or self.p == 0.0:
            return x
        return ops.dropout(x, self.p, True)

    def extend_repr(self) -> str:
        return f"p={self.p}"
