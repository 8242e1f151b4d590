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
from engine.nn.layers_pool_nd import _AvgPoolNd, _MaxPoolNd
from engine.ops._conv import conv_padding
from engine.ops._functional import _tensor


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


Pair = int | tuple[int, int]


def _image(what: str, x):
    """The Tensor of `x`, which must be (N, C, H, W) or unbatched (C, H, W)."""
    x = _tensor(x)
    if x._data.ndim not in (3, 4):
        raise ValueError(f"{what} expects input of shape (C, H, W) or (N, C, H, W), got shape "
                         f"{tuple(x._data.shape)}")
    return x


class MaxPool2d(_MaxPoolNd):
    """Maximum over kernel_size windows moved by `stride`: (N, C, H, W) or (C, H, W).

    MindSpore 2.x's pad modes: 'valid' (no padding), 'same' (output ceil(H/stride), -inf
    padding, an odd row/column at the bottom/right) and 'pad': `padding` (an int, or
    (top/bottom, left/right)) rows/columns of -inf on both sides, at most half the kernel.
    As in MindSpore, `padding`, `dilation` and `ceil_mode` need pad_mode 'pad' (ValueError
    otherwise). With `ceil_mode` a last, partial window is kept when it starts inside the
    input or its top/left padding (PyTorch's rule). `return_indices=True` and
    data_format 'NHWC' raise NotImplementedError.
    """

    nd = 2

    def __init__(
        self,
        kernel_size: Pair = 1,
        stride: Pair = 1,
        pad_mode: Literal["valid", "same", "pad"] = "valid",
        padding: Pair = 0,
        dilation: Pair = 1,
        return_indices: Fixed = False,
        ceil_mode: bool = False,
        data_format: Fixed = "NCHW",
    ):
        only_defaults("MaxPool2d", data_format=(data_format, "NCHW"))
        super().__init__(kernel_size, stride, pad_mode, padding, dilation, return_indices,
                         ceil_mode)

    def _input(self, x):
        return _image("MaxPool2d", x)


class AvgPool2d(_AvgPoolNd):
    """Mean over kernel_size windows moved by `stride`: (N, C, H, W) or (C, H, W).

    pad_mode 'valid', 'same' (output ceil(H/stride); the padding never counts in a mean) or
    'pad': `padding` (an int, or (top/bottom, left/right)) zeros on both sides, at most
    half the kernel, counted in each mean unless `count_include_pad=False`. As in
    MindSpore, `padding` needs pad_mode 'pad' (ValueError otherwise); `ceil_mode` applies
    with 'valid' and 'pad' ('same' sets the output size), keeping a last, partial window
    that starts inside the input or its top/left padding; the part of it past the padding
    never counts. `divisor_override` other than None and data_format 'NHWC' raise
    NotImplementedError.
    """

    nd = 2

    def __init__(
        self,
        kernel_size: Pair = 1,
        stride: Pair = 1,
        pad_mode: Literal["valid", "same", "pad"] = "valid",
        padding: Pair = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: Fixed = None,
        data_format: Fixed = "NCHW",
    ):
        only_defaults("AvgPool2d", divisor_override=(divisor_override, None),
                      data_format=(data_format, "NCHW"))
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad)

    def _input(self, x):
        return _image("AvgPool2d", x)
