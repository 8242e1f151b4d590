"""Upsample, PixelShuffle and the 2-D padding layers (MindSpore 2.x)."""

from typing import Literal

from engine.nn._checks import input_shape, positive_int, real
from engine.nn.cell import Cell
from engine.ops import _resample as resample

__all__ = ["Upsample", "PixelShuffle", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d",
           "ReplicationPad2d"]

Mode = Literal["nearest", "linear", "bilinear", "trilinear"]


class Upsample(Cell):
    """Resize the spatial axes to `size` or by `scale_factor` (give exactly one).

    `mode`: 'nearest' (output position o reads input floor(o·in/out)); 'linear' (N, C, L),
    'bilinear' (N, C, H, W) and 'trilinear' (N, C, D, H, W) interpolate between neighbours,
    at the half-pixel point (o + 0.5)·in/out - 0.5 unless `align_corners`. The output size
    is floor(size · scale_factor); positions then map by in/out whether or not
    `recompute_scale_factor` is set. `align_corners=True` with 'nearest' is refused;
    'bicubic', 'area' and 'nearest-exact' raise NotImplementedError.
    """

    def __init__(
        self,
        size: int | tuple[int, int] | tuple[int, int, int] | None = None,
        scale_factor: float | None = None,
        mode: Mode = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ):
        super().__init__()
        resample.check_mode("Upsample", mode, None, align_corners)
        if (size is None) == (scale_factor is None):
            raise ValueError("Upsample: give exactly one of size and scale_factor, got "
                             + ("both" if size is not None else "neither"))
        self.size = tuple(size) if isinstance(size, list) else size
        self.scale_factor = tuple(scale_factor) if isinstance(scale_factor, list) \
            else scale_factor  # fmt: skip
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def construct(self, x):
        try:
            return resample.interpolate(x, self.size, self.scale_factor, self.mode,
                                        self.align_corners or None, self.recompute_scale_factor)
        except ValueError as exc:
            raise ValueError(str(exc).replace("interpolate", "Upsample", 1)) from None

    def extend_repr(self) -> str:
        given = f"size={self.size}" if self.size is not None else \
            f"scale_factor={self.scale_factor}"  # fmt: skip
        return f"{given}, mode={self.mode}" + (
            f", align_corners={self.align_corners}" if self.mode != "nearest" else "")


class PixelShuffle(Cell):
    """Rearrange (N, C·r², H, W) into (N, C, H·r, W·r), r = `upscale_factor` (sub-pixel
    convolution's upsampling)."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = positive_int("PixelShuffle", "upscale_factor", upscale_factor)

    def construct(self, x):
        try:
            return resample.pixel_shuffle(x, self.upscale_factor)
        except ValueError as exc:
            raise ValueError(str(exc).replace("pixel_shuffle", "PixelShuffle", 1)) from None

    def extend_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


def _padding(layer: str, padding, minimum: int | None) -> tuple[int, int, int, int]:
    """`padding` (an int, (left, right) or (left, right, top, bottom)) as a 4-tuple."""
    items = (padding,) * 4 if not isinstance(padding, (tuple, list)) else tuple(padding)
    if len(items) == 2:
        items += (0, 0)
    good = len(items) == 4 and all(
        not isinstance(v, bool) and isinstance(v, int) and (minimum is None or v >= minimum)
        for v in items)  # fmt: skip
    if not good:
        low = "" if minimum is None else f" >= {minimum}"
        raise ValueError(f"{layer}: padding must be an int{low} or a tuple (left, right, top, "
                         f"bottom) of them, got {padding!r}")
    return items


class _Pad2d(Cell):
    mode = "constant"
    minimum: int | None = 0

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _padding(type(self).__name__, padding, self.minimum)
        self.value = value

    def construct(self, x):
        name = type(self).__name__
        if self.mode == "constant":
            input_shape(name, x, tuple(range(2, 33)), None, "(*, H, W)")
        else:
            input_shape(name, x, (3, 4), None, "(N, C, H, W) or (C, H, W)")
        left, right, top, bottom = self.padding
        if self.mode == "reflect":
            h, w = x.shape[-2:]
            if max(top, bottom) >= h or max(left, right) >= w:
                raise ValueError(f"{name}: padding {self.padding} must be less than the input's "
                                 f"height and width, got shape {tuple(x.shape)}")
        value = self.value if self.mode == "constant" else None
        try:
            return resample.pad(x, self.padding, self.mode, value)
        except ValueError as exc:
            raise ValueError(f"{name}: {str(exc).removeprefix('pad: ')}") from None

    def extend_repr(self) -> str:
        return f"padding={self.padding}" + (
            f", value={self.value}" if type(self) is ConstantPad2d else "")


class ZeroPad2d(_Pad2d):
    """Pad H and W with zeros: `padding` is an int or (left, right, top, bottom); a negative
    entry crops."""

    minimum = None

    def __init__(self, padding: int | tuple[int, int, int, int]):
        super().__init__(padding, 0.0)


class ConstantPad2d(_Pad2d):
    """Pad H and W with `value`: `padding` is an int or (left, right, top, bottom); a
    negative entry crops."""

    minimum = None

    def __init__(self, padding: int | tuple[int, int, int, int], value: float):
        super().__init__(padding, real("ConstantPad2d", "value", value))


class ReflectionPad2d(_Pad2d):
    """Pad H and W with their mirror image (the edge not repeated): `padding` is an int or
    (left, right, top, bottom), each less than the size it mirrors."""

    mode = "reflect"

    def __init__(self, padding: int | tuple[int, int, int, int]):
        super().__init__(padding)


class ReplicationPad2d(_Pad2d):
    """Pad H and W by repeating the edge: `padding` is an int or (left, right, top, bottom)."""

    mode = "replicate"

    def __init__(self, padding: int | tuple[int, int, int, int]):
        super().__init__(padding)
