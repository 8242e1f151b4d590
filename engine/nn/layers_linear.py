"""`Dense`: a fully connected layer, `activation(x @ weight.T + bias)`."""

import math

from engine import ops
from engine._dtype import DType, float32
from engine.common.initializer import HeUniform, Initializer, Uniform, initializer
from engine.nn import layers_basic as basic
from engine.nn._checks import float_dtype, positive_int
from engine.nn.cell import Cell
from engine.parameter import Parameter
from engine.tensor import Tensor

# MindSpore's `get_activation` names for the activations this engine has.
ACTIVATIONS = {
    "relu": basic.ReLU, "leakyrelu": basic.LeakyReLU, "sigmoid": basic.Sigmoid,
    "tanh": basic.Tanh, "gelu": basic.GELU, "softmax": basic.Softmax,
    "logsoftmax": basic.LogSoftmax,
}

InitSpec = str | float | Initializer | Tensor | None


def get_activation(name: str | Cell | None, layer: str) -> Cell | None:
    """An activation Cell from a name ('relu', ...), a Cell (kept), or None."""
    if name is None or isinstance(name, Cell):
        return name
    if isinstance(name, str):
        cls = ACTIVATIONS.get(name.lower())
        if cls is not None:
            return cls()
    raise ValueError(
        f"{layer}: activation must be a Cell, None or one of {', '.join(sorted(ACTIVATIONS))}; "
        f"got {name!r}"
    )


def make_param(init, shape: tuple, default, dtype=float32) -> Parameter:
    """A Parameter of `dtype` from an init spec (None means the layer's default initializer)."""
    return Parameter(initializer(default if init is None else init, shape, dtype)._data)


class Dense(Cell):
    """Fully connected layer: `activation(x @ weight.T + bias)`, weight of shape (out, in).

    Defaults follow MindSpore 2.x: weight HeUniform(negative_slope=sqrt(5))
    (uniform with bound 1/sqrt(in)), bias uniform with bound 1/sqrt(in).
    `dtype` (a floating-point dtype) is the Parameters' dtype.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        weight_init: InitSpec = None,
        bias_init: InitSpec = None,
        has_bias: bool = True,
        activation: str | Cell | None = None,
        dtype: DType = float32,
    ):
        super().__init__()
        self.in_channels = positive_int("Dense", "in_channels", in_channels)
        self.out_channels = positive_int("Dense", "out_channels", out_channels)
        self.has_bias = bool(has_bias)
        np_dtype = float_dtype("Dense", dtype)
        self.weight = make_param(
            weight_init, (self.out_channels, self.in_channels), HeUniform(math.sqrt(5)), np_dtype
        )
        self.bias = (
            make_param(bias_init, (self.out_channels,), Uniform(1 / math.sqrt(self.in_channels)),
                       np_dtype)
            if self.has_bias
            else None
        )
        self.activation = get_activation(activation, "Dense")
        self.activation_flag = self.activation is not None

    def construct(self, x):
        shape = x.shape
        if not shape or shape[-1] != self.in_channels:
            raise ValueError(
                f"Dense expects input of shape (..., {self.in_channels}), got shape "
                f"{tuple(shape)}"
            )
        out = ops.dense(x, self.weight, self.bias)
        return self.activation(out) if self.activation_flag else out

    def extend_repr(self) -> str:
        s = f"input_channels={self.in_channels}, output_channels={self.out_channels}"
        s += f", has_bias={self.has_bias}"
        if self.activation_flag:
            s += f", activation={type(self.activation).__name__}"
        return s
