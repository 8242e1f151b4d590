"""LayerNorm, GroupNorm, InstanceNorm2d, LRN and channel dropout.

Shape rules, Parameter shapes, following sizes and op Cells (see app.compiler.kinds).
GroupNorm's `num_channels` and InstanceNorm2d's `num_features` follow the channels
(axis 1) arriving; LayerNorm's `normalized_shape` follows the input's last axis, the
size gamma and beta have with the default begin_params_axis (-1). LayerNorm's axes are
MindSpore's: from 0 (the batch axis) up to the rank, or -1 for the last.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import ShapeError
from app.compiler.rules import Rule, Shape, _image, _weights, text


def _begin(name: str, axis: int, shape: Shape) -> int:
    rank = len(shape)
    if not -1 <= axis < rank:
        raise ShapeError(f"LayerNorm: {name} {axis} is out of range for {text(shape)}; it must "
                         f"be -1 (the last axis) or 0 to {rank - 1}.")
    return axis % rank


def _layer_norm(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, want = ins["in"], tuple(values["normalized_shape"])
    _weights("LayerNorm", 2 * math.prod(want))
    _begin("begin_norm_axis", values["begin_norm_axis"], shape)
    begin = _begin("begin_params_axis", values["begin_params_axis"], shape)
    if begin == 0:
        raise ShapeError("LayerNorm: begin_params_axis 0 would give gamma and beta the batch "
                         "size; use 1 or more (or -1).")
    got = tuple(shape[begin:])
    if got != want:
        raise ShapeError(f"LayerNorm: normalized_shape {text(want)} must equal the input's "
                         f"sizes from begin_params_axis {values['begin_params_axis']} on, but "
                         f"{text(shape)} arrives, which has {text(got)} there.")
    return {"out": shape}


def _group_norm(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, groups, c = ins["in"], values["num_groups"], values["num_channels"]
    _weights("GroupNorm", 2 * c)
    if c % groups:
        raise ShapeError(f"GroupNorm: num_channels ({c}) must be divisible by num_groups "
                         f"({groups}).")
    if len(shape) < 2:
        raise ShapeError(f"GroupNorm expects (N, {c}, …) input, gets {text(shape)}.")
    if shape[1] != c:
        raise ShapeError(f"GroupNorm expects {c} channels (num_channels), but {text(shape)} "
                         f"arrives with {shape[1]}.")
    return {"out": shape}


def _instance_norm(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, c = ins["in"], values["num_features"]
    _weights("InstanceNorm2d", 4 * c)
    _image("InstanceNorm2d", shape, str(c))
    if shape[1] != c:
        raise ShapeError(f"InstanceNorm2d expects {c} channels (num_features), but "
                         f"{text(shape)} arrives with {shape[1]}.")
    return {"out": shape}


def _lrn(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    _image("LRN", ins["in"])
    return {"out": ins["in"]}


RULES: dict[str, Rule] = {
    "LayerNorm": _layer_norm,
    "GroupNorm": _group_norm,
    "InstanceNorm2d": _instance_norm,
    "LRN": _lrn,
}


def _affine(key: str) -> Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]:
    def shapes(values: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
        size = values[key]
        shape = tuple(size) if isinstance(size, tuple | list) else (size,)
        return {"gamma": shape, "beta": shape}

    return shapes


def _instance_shapes(values: Mapping[str, Any]) -> dict[str, tuple[int, ...]]:
    c = (values["num_features"],)
    return {"gamma": c, "beta": c, "moving_mean": c, "moving_variance": c}


PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {
    "LayerNorm": _affine("normalized_shape"),
    "GroupNorm": _affine("num_channels"),
    "InstanceNorm2d": _instance_shapes,
}

FOLLOWING: dict[str, tuple[str, ...]] = {
    "LayerNorm": ("normalized_shape",),
    "GroupNorm": ("num_channels",),
    "InstanceNorm2d": ("num_features",),
}


def _channels(key: str) -> Callable[[Shape], dict[str, Any]]:
    def fit(shape: Shape) -> dict[str, Any]:
        if len(shape) >= 2 and isinstance(shape[1], int):
            return {key: shape[1]}
        return {}

    return fit


def _last_axis(shape: Shape) -> dict[str, Any]:
    # The default begin_params_axis (-1): gamma and beta span the last axis.
    if len(shape) >= 2 and isinstance(shape[-1], int):
        return {"normalized_shape": (shape[-1],)}
    return {}


FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {
    "LayerNorm": _last_axis,
    "GroupNorm": _channels("num_channels"),
    "InstanceNorm2d": _channels("num_features"),
}

OP_CELLS: dict[str, type] = {}
