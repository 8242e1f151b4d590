"""1-D and 3-D pooling and adaptive pooling (MindSpore 2.x); the 2-D window pools in
`layers_conv` are these same classes with nd = 2.

The window pools take MindSpore's `pad_mode`: 'valid' (no padding), 'same' (output
ceil(size/stride), an odd pad after; a mean does not count the padding) or 'pad'
(`padding` on both sides of each axis, -inf for a maximum, zeros for a mean, counted
unless `count_include_pad=False`). As in MindSpore, a max pool takes `padding`,
`dilation` and `ceil_mode` only with pad_mode 'pad'. Every pool takes a batched
(N, C, …) or an unbatched (C, …) input.
"""

from typing import Literal

from engine.nn._checks import Fixed, choice, only_defaults
from engine.nn.cell import Cell
from engine.nn.layers_pool_adaptive import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
)
from engine.ops._pool_nd import (
    avg_pool_nd,
    check_input,
    ints,
    max_pool_nd,
    resolve_pads,
)

__all__ = ["MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]

Triple = int | tuple[int, int, int]


class _PoolNd(Cell):
    """What the window pools share: checked sizes, and the padding of one input."""

    nd = 1

    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = ints(name, "kernel_size", kernel_size, self.nd)
        self.stride = ints(name, "stride", kernel_size if stride is None else stride, self.nd)
        self.pad_mode = choice(name, "pad_mode", pad_mode, ("valid", "same", "pad"))
        self.padding = ints(name, "padding", padding, self.nd, minimum=0)
        if self.pad_mode != "pad" and any(self.padding):
            raise ValueError(f"{name}: padding must be 0 when pad_mode is {self.pad_mode!r}, "
                             f"got {padding!r}")
        if not isinstance(ceil_mode, bool):
            raise TypeError(f"{name}: ceil_mode must be a bool, got {ceil_mode!r}")
        self.ceil_mode = ceil_mode

    def _input(self, x):
        return check_input(type(self).__name__, x, self.nd)

    def _pads(self, x, dilation):
        return resolve_pads(self.pad_mode, tuple((p, p) for p in self.padding),
                            x.shape[-self.nd:], self.kernel_size, self.stride, dilation)

    def extend_repr(self) -> str:
        s = f"kernel_size={self.kernel_size}, stride={self.stride}, pad_mode={self.pad_mode}"
        return s + (f", padding={self.padding}" if self.pad_mode == "pad" else "")


class _MaxPoolNd(_PoolNd):
    def __init__(self, kernel_size, stride, pad_mode, padding, dilation, return_indices,
                 ceil_mode):  # fmt: skip
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)
        name = type(self).__name__
        only_defaults(name, return_indices=(return_indices, False))
        self.dilation = ints(name, "dilation", dilation, self.nd)
        if self.pad_mode != "pad" and (ceil_mode or any(d != 1 for d in self.dilation)):
            raise ValueError(f"{name}: dilation and ceil_mode need pad_mode 'pad' (MindSpore), "
                             f"got pad_mode {self.pad_mode!r}")

    def construct(self, x):
        x = self._input(x)
        return max_pool_nd(x, self.nd, self.kernel_size, self.stride,
                           self._pads(x, self.dilation), self.dilation, self.ceil_mode,
                           type(self).__name__)  # fmt: skip


class _AvgPoolNd(_PoolNd):
    def __init__(self, kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode)
        name = type(self).__name__
        if not isinstance(count_include_pad, bool):
            raise TypeError(f"{name}: count_include_pad must be a bool, got "
                            f"{count_include_pad!r}")
        self.count_include_pad = count_include_pad

    def construct(self, x):
        x = self._input(x)
        # 'same' sets the output size itself and never counts its padding.
        counted = self.count_include_pad and self.pad_mode == "pad"
        ceil = self.ceil_mode and self.pad_mode != "same"
        return avg_pool_nd(x, self.nd, self.kernel_size, self.stride,
                           self._pads(x, (1,) * self.nd), ceil, counted,
                           type(self).__name__)  # fmt: skip


class MaxPool1d(_MaxPoolNd):
    """Maximum over windows of `kernel_size` along L, moved by `stride`: (N, C, L) or (C, L).

    `return_indices=True` raises NotImplementedError.
    """

    nd = 1

    def __init__(
        self,
        kernel_size: int = 1,
        stride: int = 1,
        pad_mode: Literal["valid", "same", "pad"] = "valid",
        padding: int = 0,
        dilation: int = 1,
        return_indices: Fixed = False,
        ceil_mode: bool = False,
    ):
        super().__init__(kernel_size, stride, pad_mode, padding, dilation, return_indices,
                         ceil_mode)


class MaxPool3d(_MaxPoolNd):
    """Maximum over kd×kh×kw windows: (N, C, D, H, W) or (C, D, H, W).

    `padding` is an int or (d, h, w), on both sides. `return_indices=True` raises
    NotImplementedError.
    """

    nd = 3

    def __init__(
        self,
        kernel_size: Triple = 1,
        stride: Triple = 1,
        pad_mode: Literal["valid", "same", "pad"] = "valid",
        padding: Triple = 0,
        dilation: Triple = 1,
        return_indices: Fixed = False,
        ceil_mode: bool = False,
    ):
        super().__init__(kernel_size, stride, pad_mode, padding, dilation, return_indices,
                         ceil_mode)


class AvgPool1d(_AvgPoolNd):
    """Mean over windows of `kernel_size` along L, moved by `stride`: (N, C, L) or (C, L).

    `ceil_mode` applies with pad_mode 'valid' and 'pad' ('same' sets the output size).
    """

    nd = 1

    def __init__(
        self,
        kernel_size: int = 1,
        stride: int = 1,
        pad_mode: Literal["valid", "same", "pad"] = "valid",
        padding: int = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad)


class AvgPool3d(_AvgPoolNd):
    """Mean over kd×kh×kw windows: (N, C, D, H, W) or (C, D, H, W).

    `divisor_override` other than None raises NotImplementedError.
    """

    nd = 3

    def __init__(
        self,
        kernel_size: Triple = 1,
        stride: Triple = 1,
        pad_mode: Literal["valid", "same", "pad"] = "valid",
        padding: Triple = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: Fixed = None,
    ):
        super().__init__(kernel_size, stride, pad_mode, padding, ceil_mode, count_include_pad)
        only_defaults("AvgPool3d", divisor_override=(divisor_override, None))
