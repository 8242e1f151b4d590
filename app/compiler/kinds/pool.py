"""Pooling, adaptive (global) pooling, Upsample, PixelShuffle and padding.

Shape rules, Parameter shapes, following sizes and op Cells (see app.compiler.kinds).
None of these types has Parameters or sizes that follow the input. Output sizes follow
the engine: a window pool's is PyTorch's (with ceil_mode a last window must start inside
the input or its left padding), 'same' gives ceil(size / stride), an Upsample's is
floor(size × scale_factor).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import ShapeError
from app.compiler.rules import Rule, Shape, text

_AXES = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}
_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}  # mode -> spatial axes it takes


def _layout(nd: int, channels: str = "C") -> str:
    return "(" + ", ".join(("N", channels, *_AXES[nd])) + ")"


def _per_axis(value: Any, nd: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * nd


def _rank(layer: str, shape: Shape, nd: int) -> None:
    if len(shape) != nd + 2:
        raise ShapeError(f"{layer} expects {_layout(nd)} input, gets {text(shape)}.")


def _window_out(layer: str, shape: Shape, axis: int, k: int, s: int, pad: int, d: int,
                ceil: bool) -> Any:  # fmt: skip
    size = shape[axis]
    if not isinstance(size, int):
        return "?"
    reach = (k - 1) * d + 1
    span = size + 2 * pad
    if span < reach:
        name = _AXES[len(shape) - 2][axis - 2]
        padded = f" (padded: {span})" if pad else ""
        raise ShapeError(f"{layer}: the window of {reach} doesn't fit {text(shape)}, whose "
                         f"{name} is {size}{padded}.")
    out = (span - reach) // s + 1
    if ceil:
        out = math.ceil((span - reach) / s) + 1
        if (out - 1) * s >= size + pad:
            out -= 1
    return out


def _window_pool(layer: str, nd: int, kind: str) -> Rule:
    def rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
        shape, mode = ins["in"], values["pad_mode"]
        kernel, strides = _per_axis(values["kernel_size"], nd), _per_axis(values["stride"], nd)
        pads = _per_axis(values["padding"], nd)
        dilation = _per_axis(values.get("dilation", 1), nd)
        ceil = values["ceil_mode"]
        if mode != "pad" and any(pads):
            raise ShapeError(f"{layer}: padding must be 0 unless pad_mode is 'pad' (it is "
                             f"'{mode}').")
        if kind == "max" and mode != "pad" and (ceil or any(d != 1 for d in dilation)):
            raise ShapeError(f"{layer}: dilation and ceil_mode apply only with pad_mode 'pad' "
                             f"(it is '{mode}'); set dilation 1 and ceil_mode off, or choose "
                             "'pad'.")
        for p, k in zip(pads, kernel, strict=True):
            if p > k // 2:
                raise ShapeError(f"{layer}: padding {p} is more than half the kernel size {k}; "
                                 f"at most {k // 2}.")
        _rank(layer, shape, nd)
        if mode == "same":
            outs = [-(-n // s) if isinstance(n, int) else "?"
                    for n, s in zip(shape[2:], strides, strict=True)]
        else:
            outs = [_window_out(layer, shape, 2 + i, kernel[i], strides[i], pads[i],
                                dilation[i], ceil) for i in range(nd)]  # fmt: skip
        return {"out": (*shape[:2], *outs)}

    return rule


def _adaptive(layer: str, nd: int) -> Rule:
    def rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
        shape = ins["in"]
        _rank(layer, shape, nd)
        wanted = _per_axis(values["output_size"], nd)
        if len(wanted) != nd:
            raise ShapeError(f"{layer}: output_size {values['output_size']} needs {nd} "
                             f"sizes, one per axis of {text(shape)} after N and C.")
        if any(v is not None and v < 1 for v in wanted):
            raise ShapeError(f"{layer}: output_size must be at least 1, got "
                             f"{values['output_size']}.")
        outs = [n if v is None else v for n, v in zip(shape[2:], wanted, strict=True)]
        return {"out": (*shape[:2], *outs)}

    return rule


def _upsample(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, mode = ins["in"], values["mode"]
    size, scale = values["size"], values["scale_factor"]
    if size is None and scale is None:
        raise ShapeError("Upsample: give a size or a scale_factor (both are none).")
    if size is not None and scale is not None:
        raise ShapeError("Upsample: give a size or a scale_factor, not both; set one to none.")
    if mode == "nearest" and values.get("align_corners"):
        raise ShapeError("Upsample: align_corners applies only to the linear modes; with "
                         "'nearest' it must be off (choose a linear mode to see it).")
    if len(shape) not in (3, 4, 5):
        raise ShapeError(f"Upsample expects (N, C, L), (N, C, H, W) or (N, C, D, H, W) input, "
                         f"gets {text(shape)}.")
    nd = len(shape) - 2
    if mode in _LINEAR and _LINEAR[mode] != nd:
        raise ShapeError(f"Upsample: mode '{mode}' takes {_layout(_LINEAR[mode])} input, gets "
                         f"{text(shape)}.")
    if size is not None:
        sizes = _per_axis(size, nd)
        if len(sizes) != nd:
            raise ShapeError(f"Upsample: size {size} has {len(sizes)} entries, but "
                             f"{text(shape)} has {nd} spatial {'axis' if nd == 1 else 'axes'}.")
        if any(v < 1 for v in sizes):
            raise ShapeError(f"Upsample: size must be at least 1 along every axis, got {size}.")
        return {"out": (*shape[:2], *sizes)}
    if not scale > 0:
        raise ShapeError(f"Upsample: scale_factor must be more than 0, got {scale:g}.")
    outs = [math.floor(n * scale) if isinstance(n, int) else "?" for n in shape[2:]]
    if any(o == 0 for o in outs):
        out = (*shape[:2], *outs)
        raise ShapeError(f"Upsample: scale_factor {scale:g} turns {text(shape)} into "
                         f"{text(out)}, which is empty; use a larger one.")
    return {"out": (*shape[:2], *outs)}


def _pixel_shuffle(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, r = ins["in"], values["upscale_factor"]
    if len(shape) != 4:
        raise ShapeError(f"PixelShuffle expects (N, C·r², H, W) input, gets {text(shape)}.")
    n, c, h, w = shape
    if isinstance(c, int) and c % (r * r):
        raise ShapeError(f"PixelShuffle: the {c} channels of {text(shape)} are not divisible "
                         f"by upscale_factor² ({r}² = {r * r}).")
    scaled = [v * r if isinstance(v, int) else "?" for v in (h, w)]
    return {"out": (n, c // (r * r) if isinstance(c, int) else "?", *scaled)}


def _pad(layer: str, mode: str) -> Rule:
    def rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
        shape, padding = ins["in"], values["padding"]
        left, right, top, bottom = _per_axis(padding, 4)
        if mode == "constant":
            if len(shape) < 3:
                raise ShapeError(f"{layer} pads the last two axes (H, W) of (N, …, H, W) input, "
                                 f"gets {text(shape)}.")
        elif len(shape) not in (3, 4):
            raise ShapeError(f"{layer} expects (N, C, H, W) or (N, H, W) input, gets "
                             f"{text(shape)}.")
        elif min(left, right, top, bottom) < 0:
            raise ShapeError(f"{layer}: padding {padding} must not be negative.")
        h, w = shape[-2:]
        if mode == "reflect":
            for name, size, pads in (("height", h, (top, bottom)), ("width", w, (left, right))):
                if isinstance(size, int) and max(pads) >= size:
                    raise ShapeError(f"{layer}: padding {max(pads)} must be less than the "
                                     f"{name} it mirrors, but {text(shape)} has {name} {size}.")
        outs = [size + a + b if isinstance(size, int) else "?"
                for size, a, b in ((h, top, bottom), (w, left, right))]
        out = (*shape[:-2], *outs)
        if any(isinstance(o, int) and o < 1 for o in outs):
            raise ShapeError(f"{layer}: padding {padding} crops {text(shape)} to {text(out)}, "
                             "which is empty.")
        return {"out": out}

    return rule


RULES: dict[str, Rule] = {
    "MaxPool2d": _window_pool("MaxPool2d", 2, "max"),
    "AvgPool2d": _window_pool("AvgPool2d", 2, "avg"),
    "MaxPool1d": _window_pool("MaxPool1d", 1, "max"),
    "AvgPool1d": _window_pool("AvgPool1d", 1, "avg"),
    "MaxPool3d": _window_pool("MaxPool3d", 3, "max"),
    "AvgPool3d": _window_pool("AvgPool3d", 3, "avg"),
    "AdaptiveAvgPool1d": _adaptive("AdaptiveAvgPool1d", 1),
    "AdaptiveMaxPool1d": _adaptive("AdaptiveMaxPool1d", 1),
    "AdaptiveAvgPool2d": _adaptive("AdaptiveAvgPool2d", 2),
    "AdaptiveMaxPool2d": _adaptive("AdaptiveMaxPool2d", 2),
    "Upsample": _upsample,
    "PixelShuffle": _pixel_shuffle,
    "ZeroPad2d": _pad("ZeroPad2d", "constant"),
    "ConstantPad2d": _pad("ConstantPad2d", "constant"),
    "ReflectionPad2d": _pad("ReflectionPad2d", "reflect"),
    "ReplicationPad2d": _pad("ReplicationPad2d", "replicate"),
}
PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {}
FOLLOWING: dict[str, tuple[str, ...]] = {}
FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {}
OP_CELLS: dict[str, type] = {}
