"""Activations beyond the basic ones, Softplus included, and channel dropout.

Shape rules, Parameter shapes, following sizes and op Cells (see app.compiler.kinds).
PReLU's `channel` does not follow what arrives: 1 (one shared slope) fits any input, and
a per-channel PReLU is the user's choice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import BATCH, ShapeError
from app.compiler.rules import Rule, Shape, _axis, _weights, same, text
from engine import nn, ops


class Softplus(nn.Cell):
    """The Softplus op node: `ops.softplus(x, beta, threshold)`."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        if not beta > 0:
            raise ValueError(f"Softplus: beta must be more than 0, got {beta}")
        self.beta = float(beta)
        self.threshold = float(threshold)

    def construct(self, x):
        return ops.softplus(x, self.beta, self.threshold)

    def extend_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


def _celu(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    if values["alpha"] == 0:
        raise ShapeError("CELU: alpha must not be 0 (it divides x).")
    return {"out": ins["in"]}


def _prelu(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, channel = ins["in"], values["channel"]
    _weights("PReLU", channel)
    if channel == 1:
        return {"out": shape}
    if len(shape) < 2:
        raise ShapeError(f"PReLU with {channel} slopes needs channels on axis 1, gets "
                         f"{text(shape)}; set channel to 1 for one shared slope.")
    if shape[1] != channel:
        raise ShapeError(f"PReLU has {channel} slopes (channel) but its input {text(shape)} "
                         f"has {shape[1]} channels on axis 1; set channel to {shape[1]} or 1.")
    return {"out": shape}


def _hardtanh(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    if values["max_val"] < values["min_val"]:
        raise ShapeError(f"Hardtanh: max_val ({values['max_val']:g}) must not be less than "
                         f"min_val ({values['min_val']:g}).")
    return {"out": ins["in"]}


def _softmin(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    _axis("Softmin", values["axis"], len(ins["in"]), ins["in"])
    return {"out": ins["in"]}


def _glu(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape = ins["in"]
    axis = _axis("GLU", values["axis"], len(shape), shape)
    if axis == 0:
        raise ShapeError(f"GLU can't split the batch axis (0) of {text(shape)}; use axis 1 "
                         "or more.")
    size = shape[axis]
    if not isinstance(size, int):
        raise ShapeError(f"GLU needs a known size along axis {axis} to halve it, gets "
                         f"{text(shape)}.")
    if size % 2:
        raise ShapeError(f"GLU halves axis {axis}, but its size in {text(shape)} is {size}, "
                         "which is odd.")
    return {"out": (*shape[:axis], size // 2, *shape[axis + 1 :])}


def _channel_dropout(layer: str, rank: int, layout: str) -> Rule:
    def rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
        shape = ins["in"]
        if len(shape) == rank:
            return {"out": shape}
        if layer == "Dropout1d" and len(shape) == 2:
            if shape[0] != BATCH:  # a batch folded in: the unbatched (C, L) form
                return {"out": shape}
            raise ShapeError(f"Dropout1d expects {layout} sequences, gets {text(shape)}: a 2-D "
                             "input is read as unbatched (C, L), which would drop whole "
                             "samples; use Dropout for features.")
        raise ShapeError(f"{layer} expects {layout} input, gets {text(shape)}.")

    return rule


def _softplus(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    if not values["beta"] > 0:
        raise ShapeError(f"Softplus: beta must be more than 0, it is {values['beta']:g}.")
    return {"out": ins["in"]}


RULES: dict[str, Rule] = {
    "ELU": same, "SeLU": same, "CELU": _celu, "PReLU": _prelu, "Softsign": same,
    "SiLU": same, "Mish": same, "HSwish": same, "HSigmoid": same, "ReLU6": same,
    "Hardtanh": _hardtanh, "LogSigmoid": same, "Softmin": _softmin, "GLU": _glu,
    "Softplus": _softplus,
    "Dropout1d": _channel_dropout("Dropout1d", 3, "(N, C, L)"),
    "Dropout2d": _channel_dropout("Dropout2d", 4, "(N, C, H, W)"),
    "Dropout3d": _channel_dropout("Dropout3d", 5, "(N, C, D, H, W)"),
}
PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {
    "PReLU": lambda values: {"w": (values["channel"],)},
}
FOLLOWING: dict[str, tuple[str, ...]] = {}
FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {}
OP_CELLS: dict[str, type] = {"Softplus": Softplus}
