"""Convolutions: Conv1d, Conv3d, Conv2dTranspose, Conv1dTranspose.

Shape rules, Parameter shapes, following sizes and op Cells (see app.compiler.kinds).
Output sizes are MindSpore's, as the engine computes them: a convolution's 'same' keeps
ceil(size / stride); a transposed one gives size × stride ('same'), size × stride +
max(reach − stride, 0) ('valid') or (size − 1) × stride + reach − padding ('pad', then
output_padding more), reach = dilation × (kernel − 1) + 1. in_channels follows the
channels arriving, as Conv2d's does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import ShapeError
from app.compiler.rules import Rule, Shape, _weights, _window, text

_DIMS = {"Conv1d": 1, "Conv3d": 3, "Conv2dTranspose": 2, "Conv1dTranspose": 1}
_TRANSPOSED = frozenset({"Conv2dTranspose", "Conv1dTranspose"})
_AXES = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}
_WHAT = {1: "sequences", 2: "images", 3: "volumes"}


def _per_axis(value: Any, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


def _pads(value: Any, dims: int) -> tuple[tuple[int, int], ...]:
    sides = _per_axis(value, 2 * dims)
    return tuple((sides[2 * i], sides[2 * i + 1]) for i in range(dims))


def _checks(layer: str, values: Mapping[str, Any], shape: Shape, dims: int) -> None:
    c_in, c_out, group = values["in_channels"], values["out_channels"], values["group"]
    mode = values["pad_mode"]
    if c_in % group or c_out % group:
        raise ShapeError(f"{layer}: in_channels ({c_in}) and out_channels ({c_out}) must both "
                         f"be divisible by group ({group}).")
    if mode != "pad" and any(_per_axis(values["padding"], 2 * dims)):
        raise ShapeError(f"{layer}: padding must be 0 unless pad_mode is 'pad' (it is "
                         f"'{mode}').")
    extra = _per_axis(values.get("output_padding", 0), dims)
    if any(extra):
        limits = [max(s, d) for s, d in zip(_per_axis(values["stride"], dims),
                                            _per_axis(values["dilation"], dims), strict=True)]
        if any(e >= m for e, m in zip(extra, limits, strict=True)):
            raise ShapeError(f"{layer}: output_padding {values['output_padding']} must be less "
                             f"than max(stride, dilation) on each axis "
                             f"({', '.join(map(str, limits))}).")
        if mode != "pad":
            raise ShapeError(f"{layer}: output_padding applies only with pad_mode 'pad' (it "
                             f"is '{mode}'); set it to 0 or choose 'pad'.")
    layout = "(" + ", ".join(("N", str(c_in), *_AXES[dims])) + ")"
    if len(shape) != dims + 2:
        raise ShapeError(f"{layer} expects {layout} {_WHAT[dims]}, gets {text(shape)}.")
    if shape[1] != c_in:
        raise ShapeError(f"{layer} expects {c_in} input channels, gets {shape[1]} "
                         f"({text(shape)}).")


def _transposed_size(layer: str, size: Any, axis: str, k: int, s: int, d: int, mode: str,
                     pads: tuple[int, int], extra: int) -> Any:  # fmt: skip
    if not isinstance(size, int):
        return "?"
    reach = (k - 1) * d + 1
    if mode == "same":
        return size * s
    if mode == "valid":
        return size * s + max(reach - s, 0)
    full = (size - 1) * s + reach
    if full - sum(pads) < 1:
        raise ShapeError(f"{layer}: padding {pads[0]} + {pads[1]} crops away the whole output "
                         f"along {axis}: it is only {full} long there (input {size}).")
    return full - sum(pads) + extra


def _rule(layer: str) -> Rule:
    dims = _DIMS[layer]

    def rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
        shape = ins["in"]
        _checks(layer, values, shape, dims)
        kernel = _per_axis(values["kernel_size"], dims)
        strides = _per_axis(values["stride"], dims)
        dilation = _per_axis(values["dilation"], dims)
        pads = _pads(values["padding"], dims)
        c_in, c_out, group = values["in_channels"], values["out_channels"], values["group"]
        per_tap = c_out * (c_in // group)
        _weights(layer, per_tap * math.prod(kernel))
        mode = values["pad_mode"]
        if layer in _TRANSPOSED:
            extra = _per_axis(values.get("output_padding", 0), dims)
            sizes = [_transposed_size(layer, shape[2 + i], _AXES[dims][i], kernel[i],
                                      strides[i], dilation[i], mode, pads[i], extra[i])
                     for i in range(dims)]  # fmt: skip
        else:
            sizes = [_window(layer, shape[2 + i], (kernel[i] - 1) * dilation[i] + 1,
                             strides[i], mode, pads[i]) for i in range(dims)]  # fmt: skip
        return {"out": (shape[0], c_out, *sizes)}

    return rule


def _param_shapes(layer: str) -> Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]:
    dims = _DIMS[layer]

    def shapes(values: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
        c_in, c_out = values["in_channels"], values["out_channels"]
        group = max(values["group"], 1)
        kernel = _per_axis(values["kernel_size"], dims)
        if dims == 1:
            kernel = (1, *kernel)  # MindSpore keeps a 1-D kernel as (1, k)
        lead = (c_in, c_out // group) if layer in _TRANSPOSED else (c_out, c_in // group)
        bias = {"bias": (c_out,)} if values.get("has_bias", False) else {}
        return {"weight": (*lead, *kernel), **bias}

    return shapes


def _fitting(dims: int) -> Callable[[Shape], dict[str, Any]]:
    def fit(shape: Shape) -> dict[str, Any]:
        if len(shape) == dims + 2 and isinstance(shape[1], int):
            return {"in_channels": shape[1]}
        return {}

    return fit


RULES: dict[str, Rule] = {name: _rule(name) for name in _DIMS}
PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {
    name: _param_shapes(name) for name in _DIMS}
FOLLOWING: dict[str, tuple[str, ...]] = {name: ("in_channels",) for name in _DIMS}
FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {
    name: _fitting(dims) for name, dims in _DIMS.items()}
OP_CELLS: dict[str, type] = {}
