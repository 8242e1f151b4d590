"""Convolution and pooling layers over (N, C, H, W) inputs: Conv2d, MaxPool2d, AvgPool2d."""

import math
from typing import Literal

from engine import ops
from engine.common.initializer import HeUniform, Uniform
from engine.nn._checks import choice, input_shape, int_pair, positive_int
from engine.nn.cell import Cell
from engine.nn.layers_linear import InitSpec, make_param
from engine.ops._conv import conv_padding


class Conv2d(Cell):
    """2-D convolution; weight of shape (out_channels, in_channels / group, kh, kw).

    `pad_mode`: 'same' (output ceil(H/stride); an odd padding row/column goes at
    the bottom/right), 'valid' (no padding) or 'pad' (`padding`: an int or
    (top, bottom, left, right)).  Default inits follow MindSpore 2.x:
    HeUniform(sqrt(5)) for the weight, uniform bound 1/sqrt(fan_in) for the bias.
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        stride: int | tuple[int, int] = 1,
        pad_mode: Literal["same", "valid", "pad"] = "same",
        padding: int | tuple[int, int, int, int] = 0,
        dilation: int | tuple[int, int] = 1,
        group: int = 1,
        has_bias: bool = False,
        weight_init: InitSpec = None,
        bias_init: InitSpec = None,
    ):
        super().__init__()
        self.in_channels = positive_int("Conv2d", "in_channels", in_channels)
        self.out_channels = positive_int("Conv2d", "out_channels", out_channels)
        self.group = positive_int("Conv2d", "group", group)
        if self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(
                f"Conv2d: in_channels ({in_channels}) and out_channels ({out_channels}) must "
                f"both be divisible by group ({group})"
            )
        self.kernel_size = int_pair("Conv2d", "kernel_size", kernel_size)
        self.stride = int_pair("Conv2d", "stride", stride)
        self.dilation = int_pair("Conv2d", "dilation", dilation)
        self.pad_mode = choice("Conv2d", "pad_mode", pad_mode, ("same", "valid", "pad"))
        try:
            pads = conv_padding(padding)
        except ValueError as exc:
            raise ValueError(f"Conv2d: {exc}") from None
        if self.pad_mode != "pad" and any(pads):
            raise ValueError(
                f"Conv2d: padding must be 0 when pad_mode is {self.pad_mode!r}, got {padding!r}"
            )
        self.padding = padding
        self.has_bias = bool(has_bias)
        shape = (self.out_channels, self.in_channels // self.group, *self.kernel_size)
        self.weight = make_param(weight_init, shape, HeUniform(math.sqrt(5)))
        fan_in = shape[1] * shape[2] * shape[3]
        self.bias = (
            make_param(bias_init, (self.out_channels,), Uniform(1 / math.sqrt(fan_in)))
            if self.has_bias
            else None
        )

    def construct(self, x):
        input_shape("Conv2d", x, (4,), self.in_channels, f"(N, {self.in_channels}, H, W)")
        return ops.conv2d(
            x, self.weight, self.bias, self.stride, self.pad_mode, self.padding, self.dilation,
            self.group,
        )

    def extend_repr(self) -> str:
        return (
            f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
            f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}, "
            f"padding={self.padding}, dilation={self.dilation}, group={self.group}, "
            f"has_bias={self.has_bias}"
        )


class _Pool2d(Cell):
    def __init__(self, kernel_size, stride, pad_mode):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = int_pair(name, "kernel_size", kernel_size)
        self.stride = int_pair(name, "stride", stride)
        self.pad_mode = choice(name, "pad_mode", pad_mode, ("valid", "same"))

    def _check(self, x):
        input_shape(type(self).__name__, x, (4,), None, "(N, C, H, W)")

    def extend_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"


class MaxPool2d(_Pool2d):
    """Maximum over kernel_size windows moved by `stride` ('same' pads with -inf)."""

    def __init__(
        self,
        kernel_size: int | tuple[int, int] = 1,
        stride: int | tuple[int, int] = 1,
        pad_mode: Literal["valid", "same"] = "valid",
    ):
        super().__init__(kernel_size, stride, pad_mode)

    def construct(self, x):
        self._check(x)
        return ops.max_pool2d(x, self.kernel_size, self.stride, pad_mode=self.pad_mode)


class AvgPool2d(_Pool2d):
    """Mean over kernel_size windows moved by `stride` ('same' does not count padding)."""

    def __init__(
        self,
        kernel_size: int | tuple[int, int] = 1,
        stride: int | tuple[int, int] = 1,
        pad_mode: Literal["valid", "same"] = "valid",
    ):
        super().__init__(kernel_size, stride, pad_mode)

    def construct(self, x):
        self._check(x)
        return ops.avg_pool2d(x, self.kernel_size, self.stride, pad_mode=self.pad_mode)
