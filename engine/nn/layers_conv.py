"""Convolution and pooling layers over (N, C, H, W) inputs: Conv2d, MaxPool2d, AvgPool2d."""

import math
from typing import Literal

from engine import ops
from engine._dtype import DType, float32
from engine.common.initializer import HeUniform, Uniform
from engine.nn._checks import (
    Fixed,
    choice,
    float_dtype,
    input_shape,
    int_pair,
    only_defaults,
    positive_int,
)
from engine.nn.cell import Cell
from engine.nn.layers_linear import InitSpec, make_param
from engine.ops._conv import conv_padding


class Conv2d(Cell):
    """2-D convolution; weight of shape (out_channels, in_channels / group, kh, kw).

    `pad_mode`: 'same' (output ceil(H/stride); an odd padding row/column goes at
    the bottom/right), 'valid' (no padding) or 'pad' (`padding`: an int or
    (top, bottom, left, right)).  Default inits follow MindSpore 2.x:
    HeUniform(sqrt(5)) for the weight, uniform bound 1/sqrt(fan_in) for the bias.
    `dtype` is the Parameters' dtype; `data_format` must be 'NCHW' ('NHWC' is not
    implemented).
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
        data_format: Fixed = "NCHW",
        dtype: DType = float32,
    ):
        super().__init__()
        only_defaults("Conv2d", data_format=(data_format, "NCHW"))
        np_dtype = float_dtype("Conv2d", dtype)
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
        self.weight = make_param(weight_init, shape, HeUniform(math.sqrt(5)), np_dtype)
        fan_in = shape[1] * shape[2] * shape[3]
        self.bias = (
            make_param(bias_init, (self.out_channels,), Uniform(1 / math.sqrt(fan_in)), np_dtype)
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
    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode, data_format):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = int_pair(name, "kernel_size", kernel_size)
        self.stride = int_pair(name, "stride", stride)
        self.pad_mode = choice(name, "pad_mode", pad_mode, ("valid", "same", "pad"))
        pads = int_pair(name, "padding", padding, minimum=0)
        if self.pad_mode != "pad" and any(pads):
            raise ValueError(
                f"{name}: padding must be 0 when pad_mode is {self.pad_mode!r}, got {padding!r}"
            )
        self.padding = pads if self.pad_mode == "pad" else 0
        only_defaults(name, ceil_mode=(ceil_mode, False), data_format=(data_format, "NCHW"))

    def _check(self, x):
        input_shape(type(self).__name__, x, (4,), None, "(N, C, H, W)")

    def extend_repr(self) -> str:
        s = f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"
        return s + (f", padding={self.padding}" if self.pad_mode == "pad" else "")


class MaxPool2d(_Pool2d):
    """Maximum over kernel_size windows moved by `stride` ('same' pads with -inf).

    `pad_mode='pad'` pads `padding` (an int, or (top/bottom, left/right)) on both
    sides.  `dilation`, `return_indices`, `ceil_mode` and `data_format` are
    accepted at their defaults only (NotImplementedError otherwise).
    """

    def __init__(
        self,
        kernel_size: int | tuple[int, int] = 1,
        stride: int | tuple[int, int] = 1,
        pad_mode: Literal["valid", "same"] = "valid",
        padding: Fixed = 0,
        dilation: Fixed = 1,
        return_indices: Fixed = False,
        ceil_mode: Fixed = False,
        data_format: Fixed = "NCHW",
    ):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format)
        if int_pair("MaxPool2d", "dilation", dilation) != (1, 1):
            raise NotImplementedError(f"MaxPool2d: dilation={dilation!r} is not supported by "
                                      "this engine (only 1)")
        only_defaults("MaxPool2d", return_indices=(return_indices, False))

    def construct(self, x):
        self._check(x)
        return ops.max_pool2d(x, self.kernel_size, self.stride, self.padding,
                              pad_mode=self.pad_mode)


class AvgPool2d(_Pool2d):
    """Mean over kernel_size windows moved by `stride` ('same' does not count padding).

    `pad_mode='pad'` pads `padding` zeros on both sides, counted in the mean
    unless `count_include_pad=False`.  `ceil_mode`, `divisor_override` and
    `data_format` are accepted at their defaults only (NotImplementedError otherwise).
    """

    def __init__(
        self,
        kernel_size: int | tuple[int, int] = 1,
        stride: int | tuple[int, int] = 1,
        pad_mode: Literal["valid", "same"] = "valid",
        padding: Fixed = 0,
        ceil_mode: Fixed = False,
        count_include_pad: Fixed = True,
        divisor_override: Fixed = None,
        data_format: Fixed = "NCHW",
    ):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, data_format)
        if not isinstance(count_include_pad, bool):
            raise TypeError(f"AvgPool2d: count_include_pad must be a bool, got "
                            f"{count_include_pad!r}")
        if divisor_override is not None:
            raise NotImplementedError(f"AvgPool2d: divisor_override={divisor_override!r} is not "
                                      "supported by this engine (only None)")
        self.count_include_pad = count_include_pad

    def construct(self, x):
        self._check(x)
        return ops.avg_pool2d(x, self.kernel_size, self.stride, self.padding,
                              count_include_pad=self.count_include_pad, pad_mode=self.pad_mode)
