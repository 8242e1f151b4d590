"""Conv1d, Conv3d, Conv2dTranspose, Conv1dTranspose (MindSpore 2.x).

Signatures, defaults and Parameter layouts are MindSpore's: a Conv1d/Conv1dTranspose
weight keeps MindSpore's 4-D layout (its Conv1d is a Conv2d of height 1), so checkpoints
move between the two unchanged; a transposed weight is (in, out / group, *kernel).
MindSpore's `output_padding` appends zero rows/columns at the bottom/right after the bias
(not torch's extended output); it needs pad_mode 'pad' and must be < max(stride, dilation).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from engine._dtype import DType, float32
from engine.common.initializer import HeUniform, Uniform
from engine.nn._checks import Fixed, choice, float_dtype, input_shape, only_defaults
from engine.nn._checks import positive_int as _positive
from engine.nn.cell import Cell
from engine.nn.layers_linear import InitSpec, make_param
from engine.ops._conv import same_pads
from engine.ops._conv_nd import conv_nd, conv_transpose_nd, ints, reaches
from engine.tensor import Tensor

__all__ = ["Conv1d", "Conv3d", "Conv2dTranspose", "Conv1dTranspose"]

PadMode = Literal["same", "valid", "pad"]
_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}


def _padding(layer: str, value, dims: int, mode: str) -> tuple[tuple[int, int], ...]:
    """MindSpore's `padding`: an int (every side), or one (begin, end) pair per axis flat."""
    sides = 2 * dims
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,) * sides
    ok = len(items) == sides and all(
        not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= 0 for v in items)
    if not ok:
        shape = "an int" if dims == 1 else f"an int or {sides} ints"
        raise ValueError(f"{layer}: padding must be {shape}, each >= 0; got {value!r}")
    if mode != "pad" and any(items):
        raise ValueError(f"{layer}: padding must be 0 when pad_mode is {mode!r}, got {value!r}")
    return tuple((int(items[2 * i]), int(items[2 * i + 1])) for i in range(dims))


def _single(layer: str, name: str, value, minimum: int = 1) -> int:
    """Conv1d's int arguments: MindSpore takes a plain int there, no tuple."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{layer}: {name} must be an int >= {minimum}, got {value!r}")
    return int(value)


class _Conv(Cell):
    """What every convolution shares: channel and group checks, Parameters, repr."""

    dims = 2
    transposed = False

    def _setup_1d(self, in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                  dilation, group, has_bias, weight_init, bias_init, dtype):
        """A 1-D convolution's ints, checked, kept as MindSpore keeps them; its weight is
        laid out as a 2-D one with height 1 (MindSpore's layout)."""
        name = type(self).__name__
        self.kernel_size = _single(name, "kernel_size", kernel_size)
        self.stride = _single(name, "stride", stride)
        self.dilation = _single(name, "dilation", dilation)
        padding = _single(name, "padding", padding, 0)
        self._setup(in_channels, out_channels, (self.kernel_size,), (self.stride,), pad_mode,
                    padding, (self.dilation,), group, has_bias, weight_init, bias_init, dtype,
                    (1, self.kernel_size))

    def _setup(self, in_channels, out_channels, kernel, stride, pad_mode, padding, dilation,
               group, has_bias, weight_init, bias_init, dtype, layout):
        name = type(self).__name__
        np_dtype = float_dtype(name, dtype)
        self.in_channels = _positive(name, "in_channels", in_channels)
        self.out_channels = _positive(name, "out_channels", out_channels)
        self.group = _positive(name, "group", group)
        if self.in_channels % self.group or self.out_channels % self.group:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must both be divisible by group ({group})")
        self.pad_mode = choice(name, "pad_mode", pad_mode, ("same", "valid", "pad"))
        self._pads = _padding(name, padding, self.dims, self.pad_mode)
        self.padding = padding
        self._kernel, self._stride, self._dilation = kernel, stride, dilation
        self.has_bias = bool(has_bias)
        lead = ((self.in_channels, self.out_channels // self.group) if self.transposed
                else (self.out_channels, self.in_channels // self.group))
        shape = (*lead, *layout)
        if isinstance(weight_init, (Tensor, np.ndarray)) and len(weight_init.shape) == 3 \
                and len(shape) == 4:
            # MindSpore takes a Conv1d weight Tensor as (out, in/group, k) and adds the axis.
            data = weight_init._data if isinstance(weight_init, Tensor) else weight_init
            weight_init = np.expand_dims(data, 2)
        self.weight = make_param(weight_init, shape, HeUniform(math.sqrt(5)), np_dtype)
        fan_in = math.prod(shape[1:])
        self.bias = (make_param(bias_init, (self.out_channels,), Uniform(1 / math.sqrt(fan_in)),
                                np_dtype) if self.has_bias else None)

    def _check(self, x):
        name = type(self).__name__
        input_shape(name, x, (self.dims + 2,), self.in_channels,
                    f"(N, {self.in_channels}, {_SPATIAL[self.dims]})")

    def _kernel_weight(self):
        # Conv1d keeps MindSpore's (out, in/group, 1, k) Parameter; the kernel is 1-D.
        w = self.weight
        return w.reshape(*w.shape[:2], self._kernel[-1]) if self.dims == 1 else w

    def extend_repr(self) -> str:
        return (f"input_channels={self.in_channels}, output_channels={self.out_channels}, "
                f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"pad_mode={self.pad_mode}, padding={self.padding}, dilation={self.dilation}, "
                f"group={self.group}, has_bias={self.has_bias}")


class _ConvForward(_Conv):
    def construct(self, x):
        self._check(x)
        if self.pad_mode == "same":
            pads = tuple(same_pads(z, r, s) for z, r, s in
                         zip(x.shape[2:], reaches(self._kernel, self._dilation), self._stride,
                             strict=True))
        elif self.pad_mode == "valid":
            pads = ((0, 0),) * self.dims
        else:
            pads = self._pads
        return conv_nd(x, self._kernel_weight(), self.bias, self._stride, pads, self._dilation,
                       self.group, type(self).__name__)


class _ConvTransposed(_Conv):
    transposed = True
    _extra = None

    def geometry(self, size) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(where the output starts in the full result, its size) per axis, as MindSpore."""
        begin, out = [], []
        for i, (z, r, s) in enumerate(zip(size, reaches(self._kernel, self._dilation),
                                          self._stride, strict=True)):
            if self.pad_mode == "same":
                begin.append(max(r - s, 0) // 2)
                out.append(z * s)
            elif self.pad_mode == "valid":
                begin.append(0)
                out.append(z * s + max(r - s, 0))
            else:
                b, e = self._pads[i]
                full = (z - 1) * s + r
                if full - b - e < 1:
                    raise ValueError(f"{type(self).__name__}: padding {self.padding!r} leaves "
                                     f"no output from an input of size {z} (the full output "
                                     f"is {full} long)")
                begin.append(b)
                out.append(full - b - e)
        return tuple(begin), tuple(out)

    def construct(self, x):
        self._check(x)
        begin, size = self.geometry(x.shape[2:])
        return conv_transpose_nd(x, self._kernel_weight(), self.bias, self._stride,
                                 self._dilation, self.group, begin, size, self._extra,
                                 type(self).__name__)


class Conv1d(_ConvForward):
    """1-D convolution over (N, C, L); weight (out_channels, in_channels / group, 1, k).

    MindSpore 2.x: `kernel_size`, `stride`, `padding`, `dilation` are ints; 'same'
    keeps ceil(L/stride) positions (an odd padding goes at the end), 'pad' pads
    `padding` zeros on both sides. Init: HeUniform(sqrt(5)) weight, bias uniform with
    bound 1/sqrt(fan_in); `dtype` is the Parameters' dtype.
    """

    dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 pad_mode: PadMode = "same", padding: int = 0, dilation: int = 1,
                 group: int = 1, has_bias: bool = False, weight_init: InitSpec = None,
                 bias_init: InitSpec = None, dtype: DType = float32):
        super().__init__()
        self._setup_1d(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                       dilation, group, has_bias, weight_init, bias_init, dtype)


class Conv3d(_ConvForward):
    """3-D convolution over (N, C, D, H, W); weight (out, in / group, kd, kh, kw).

    `padding` ('pad' mode): an int, or (head, tail, top, bottom, left, right); 'same'
    puts an odd padding at the tail/bottom/right. `data_format` must be 'NCDHW'.
    """

    dims = 3

    def __init__(self, in_channels: int, out_channels: int,
                 kernel_size: int | tuple[int, int, int],
                 stride: int | tuple[int, int, int] = 1, pad_mode: PadMode = "same",
                 padding: int | tuple[int, int, int, int, int, int] = 0,
                 dilation: int | tuple[int, int, int] = 1, group: int = 1,
                 has_bias: bool = False, weight_init: InitSpec = None,
                 bias_init: InitSpec = None, data_format: Fixed = "NCDHW",
                 dtype: DType = float32):
        super().__init__()
        only_defaults("Conv3d", data_format=(data_format, "NCDHW"))
        self.kernel_size = ints(kernel_size, 3, "kernel_size", 1, "Conv3d: ")
        self.stride = ints(stride, 3, "stride", 1, "Conv3d: ")
        self.dilation = ints(dilation, 3, "dilation", 1, "Conv3d: ")
        self._setup(in_channels, out_channels, self.kernel_size, self.stride, pad_mode, padding,
                    self.dilation, group, has_bias, weight_init, bias_init, dtype,
                    self.kernel_size)


class Conv2dTranspose(_ConvTransposed):
    """2-D transposed convolution ("deconvolution"); weight (in, out / group, kh, kw).

    Output height: 'same' H*stride; 'valid' H*stride + max(reach - stride, 0); 'pad'
    (H-1)*stride + reach - top - bottom, then `output_padding` zero rows (and columns)
    at the bottom (right), after the bias; reach = dilation*(kernel-1) + 1.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, pad_mode: PadMode = "same",
                 padding: int | tuple[int, int, int, int] = 0,
                 output_padding: int | tuple[int, int] = 0,
                 dilation: int | tuple[int, int] = 1, group: int = 1, has_bias: bool = False,
                 weight_init: InitSpec = None, bias_init: InitSpec = None,
                 dtype: DType = float32):
        super().__init__()
        self.kernel_size = ints(kernel_size, 2, "kernel_size", 1, "Conv2dTranspose: ")
        self.stride = ints(stride, 2, "stride", 1, "Conv2dTranspose: ")
        self.dilation = ints(dilation, 2, "dilation", 1, "Conv2dTranspose: ")
        self._setup(in_channels, out_channels, self.kernel_size, self.stride, pad_mode, padding,
                    self.dilation, group, has_bias, weight_init, bias_init, dtype,
                    self.kernel_size)
        extra = ints(output_padding, 2, "output_padding", 0, "Conv2dTranspose: ")
        for e, s, d in zip(extra, self.stride, self.dilation, strict=True):
            if e >= max(s, d):
                raise ValueError(f"Conv2dTranspose: output_padding {output_padding!r} must be "
                                 f"less than max(stride, dilation) = {max(s, d)} on each axis")
        if any(extra) and self.pad_mode != "pad":
            raise ValueError(f"Conv2dTranspose: output_padding {output_padding!r} needs "
                             f"pad_mode 'pad' (it is {self.pad_mode!r})")
        self.output_padding = output_padding
        self._extra = extra if any(extra) else None

    def extend_repr(self) -> str:
        return super().extend_repr() + f", output_padding={self.output_padding}"


class Conv1dTranspose(_ConvTransposed):
    """1-D transposed convolution over (N, C, L); weight (in, out / group, 1, k).

    Output length: 'same' L*stride; 'valid' L*stride + max(reach - stride, 0); 'pad'
    (L-1)*stride + reach - 2*padding; reach = dilation*(kernel_size-1) + 1.
    """

    dims = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 pad_mode: PadMode = "same", padding: int = 0, dilation: int = 1,
                 group: int = 1, has_bias: bool = False, weight_init: InitSpec = None,
                 bias_init: InitSpec = None, dtype: DType = float32):
        super().__init__()
        self._setup_1d(in_channels, out_channels, kernel_size, stride, pad_mode, padding,
                       dilation, group, has_bias, weight_init, bias_init, dtype)
