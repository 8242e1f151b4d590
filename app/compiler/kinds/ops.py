"""Op nodes: arithmetic, reductions, shape ops, Split, Stack, Cast, Constant.

Shape rules, Parameter shapes, following sizes and op Cells (see app.compiler.kinds).
Axes count as in the whole tensor: 0 is the batch, which no op here reduces, moves or
cuts; a rule refusing an axis names the shape it doesn't fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import ShapeError
from app.compiler import op_cells
from app.compiler.op_cells import OP_CELLS as _CELLS
from app.compiler.op_cells import size_one_axes
from app.compiler.rules import Rule, Shape, _axis, _weights, broadcast, same, text
from app.compiler.time_axes import batch_axis, full_perm

Values = Mapping[str, Any]
Ins = Mapping[str, Shape]


def _sample_axis(layer: str, axis: int, rank: int, shape: Shape, doing: str) -> int:
    """`axis` of a rank-`rank` result counted from 0; refuses one out of range or the batch
    (axis 0, or wherever a Transpose moved 'N')."""
    found = _axis(layer, axis, rank, shape)
    batch = batch_axis(shape)
    batch = 0 if batch is None else batch
    if found == batch:
        others = "1 or more, or -1 for the last" if batch == 0 else "any but that one"
        raise ShapeError(f"{layer} can't {doing} the batch axis ({batch}); use a sample axis "
                         f"({others}).")
    return found


def _elementwise(layer: str) -> Rule:
    def rule(values: Values, ins: Ins) -> dict[str, Shape]:
        return {"out": broadcast(layer, ins["x"], ins["y"])}

    return rule


def clip(values: Values, ins: Ins) -> dict[str, Shape]:
    low, high = values["min"], values["max"]
    if low is None and high is None:
        raise ShapeError("Clip: give min, max or both (none of them limits nothing).")
    if low is not None and high is not None and low > high:
        raise ShapeError(f"Clip: min ({low:g}) is more than max ({high:g}).")
    return {"out": ins["in"]}


def _reduce(layer: str) -> Rule:
    def rule(values: Values, ins: Ins) -> dict[str, Shape]:
        shape = ins["in"]
        given = values["axis"]
        given = (given,) if isinstance(given, int) else tuple(given)
        axes = [_sample_axis(layer, a, len(shape), shape, "reduce over") for a in given]
        for a, original in zip(axes, given, strict=True):
            if axes.count(a) > 1:
                raise ShapeError(f"{layer}: axis {original} is given twice for {text(shape)} "
                                 f"(axes {', '.join(map(str, given))}).")
        if values["keep_dims"]:
            return {"out": tuple(1 if i in axes else d for i, d in enumerate(shape))}
        return {"out": tuple(d for i, d in enumerate(shape) if i not in axes)}

    return rule


def constant(values: Values, ins: Ins) -> dict[str, Shape]:
    size = tuple(values["shape"])
    _weights("Constant", math.prod(size))
    return {"out": (1, *size)}


def transpose(values: Values, ins: Ins) -> dict[str, Shape]:
    shape = ins["in"]
    given = values["perm"]
    given = (given,) if isinstance(given, int) else tuple(given)
    perm = full_perm(given)
    if sorted(perm) != list(range(len(shape))):
        axes = ", ".join(map(str, range(1, len(shape))))
        example = _tuple(tuple(range(len(shape) - 1, 0, -1)))
        raise ShapeError(f"Transpose: perm {_tuple(given)} is not an order of the sample axes "
                         f"of {text(shape)}: give each of {axes} once, e.g. {example}.")
    return {"out": tuple(shape[a] for a in perm)}


def squeeze(values: Values, ins: Ins) -> dict[str, Shape]:
    shape, axis = ins["in"], values["axis"]
    if axis is None:
        axes = size_one_axes(shape)
    else:
        axes = (_sample_axis("Squeeze", axis, len(shape), shape, "remove"),)
        if shape[axes[0]] != 1:
            raise ShapeError(f"Squeeze: axis {axis} of {text(shape)} has size "
                             f"{shape[axes[0]]}, not 1.")
    return {"out": tuple(d for i, d in enumerate(shape) if i not in axes)}


def unsqueeze(values: Values, ins: Ins) -> dict[str, Shape]:
    shape = ins["in"]
    at = _new_axis("Unsqueeze", values["axis"], shape)
    return {"out": (*shape[:at], 1, *shape[at:])}


def _new_axis(layer: str, axis: int, shape: Shape) -> int:
    """Where a new axis goes in a result one rank above `shape` (never before the batch)."""
    rank = len(shape) + 1
    if not -rank <= axis < rank:
        raise ShapeError(f"{layer}: axis {axis} is out of range for a new axis of "
                         f"{text(shape)} (from {-rank} to {rank - 1}).")
    if axis % rank == 0:
        raise ShapeError(f"{layer} can't put a new axis before the batch (axis {axis}); use "
                         "axis 1 or more, or -1 for the last.")
    return axis % rank


def slice_rule(values: Values, ins: Ins) -> dict[str, Shape]:
    shape = ins["in"]
    axis = _sample_axis("Slice", values["axis"], len(shape), shape, "cut")
    start, end, step = values["start"], values["end"], values["step"]
    size = shape[axis]
    if not isinstance(size, int):
        return {"out": (*shape[:axis], "?", *shape[axis + 1:])}
    kept = len(range(size)[start:end:step])
    if kept == 0:
        cut = f"{start}:{'' if end is None else end}" + ("" if step == 1 else f":{step}")
        raise ShapeError(f"Slice [{cut}] keeps nothing of the {size} entries along axis "
                         f"{values['axis']} of {text(shape)}.")
    return {"out": (*shape[:axis], kept, *shape[axis + 1:])}


def split(values: Values, ins: Ins) -> dict[str, Shape]:
    shape, count = ins["in"], values["output_num"]
    axis = _sample_axis("Split", values["axis"], len(shape), shape, "split")
    size = shape[axis]
    if not isinstance(size, int):
        raise ShapeError(f"Split needs a known size along axis {values['axis']} to cut it into "
                         f"{count} parts, gets {text(shape)}.")
    if size % count:
        raise ShapeError(f"Split: the size {size} along axis {values['axis']} of {text(shape)} "
                         f"doesn't divide into {count} equal parts.")
    part = (*shape[:axis], size // count, *shape[axis + 1:])
    return {f"out{i}": part for i in range(count)}


def stack(values: Values, ins: Ins) -> dict[str, Shape]:
    x, y = ins["x"], ins["y"]
    if x != y:
        raise ShapeError(f"Stack needs x and y of the same shape, gets {text(x)} and {text(y)}.")
    at = _new_axis("Stack", values["axis"], x)
    return {"out": (*x[:at], 2, *x[at:])}


def _tuple(values: tuple) -> str:
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


RULES: dict[str, Rule] = {
    "Sub": _elementwise("Sub"), "Div": _elementwise("Div"),
    "Neg": same, "Abs": same, "Exp": same, "Log": same, "Sqrt": same, "Pow": same,
    "Clip": clip, "Rescale": same, "Cast": same,
    "Mean": _reduce("Mean"), "Sum": _reduce("Sum"), "Max": _reduce("Max"),
    "Constant": constant, "Transpose": transpose, "Squeeze": squeeze, "Unsqueeze": unsqueeze,
    "Slice": slice_rule, "Split": split, "Stack": stack,
}
PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {
    "Constant": lambda values: {"value": tuple(values["shape"])},
}
FOLLOWING: dict[str, tuple[str, ...]] = {}
FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {}
class Transpose(op_cells.Transpose):
    """Reorders the sample axes (the batch stays first), or all axes when perm names 0."""

    def __init__(self, perm=(2, 1)):
        super().__init__(perm)
        self.perm = full_perm(perm)


OP_CELLS: dict[str, type] = {**_CELLS, "Transpose": Transpose}
