"""Shape rules: each node type's output shapes from its input shapes and hyper-parameters."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import BATCH, ShapeError

# A shape is a tuple whose first entry is the symbolic batch size 'N' (other symbolic sizes
# are text too, e.g. after flattening the batch axis). Rules are worked out analytically,
# never by running the engine; a rule raises ShapeError with the reason.
Shape = tuple
Rule = Callable[[Mapping[str, Any], Mapping[str, Shape]], dict[str, Shape]]


MAX_WEIGHTS = 100_000_000  # per node: 400 MB of float32; more is a typo, not a network


def _weights(layer: str, count: int) -> None:
    if count > MAX_WEIGHTS:
        raise ShapeError(f"{layer} would hold {count:,} weights; at most {MAX_WEIGHTS:,} per node.")


def text(shape: Shape) -> str:
    """'(N, 256)'; a one-entry shape '(N)'."""
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _pair(value: Any) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (value[0], value[-1])


def _image(layer: str, shape: Shape, channels: str = "C") -> None:
    if len(shape) != 4:
        raise ShapeError(f"{layer} expects (N, {channels}, H, W) images, gets {text(shape)}.")


def _window(layer: str, size: Any, k: int, s: int, mode: str, pads: tuple[int, int]) -> Any:
    """Output length of a sliding window along one axis (MindSpore's 'same', 'valid', 'pad')."""
    if not isinstance(size, int):
        return "?"
    if mode == "same":
        return -(-size // s)
    padded = size + sum(pads) if mode == "pad" else size
    if padded < k:
        raise ShapeError(f"{layer}: the window of {k} doesn't fit a size of {padded}.")
    return (padded - k) // s + 1


def same(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    return {"out": ins["in"]}


def input_rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    return {"out": (BATCH, *values["shape"])}


def output_rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    loss, shape = values["loss"], ins["in"]
    if loss in ("CrossEntropyLoss", "SoftmaxCrossEntropyWithLogits", "NLLLoss") and len(shape) < 2:
        raise ShapeError(f"{loss} needs class scores (N, classes), gets {text(shape)}.")
    if values.get("reduction") == "batchmean" and loss != "KLDivLoss":
        raise ShapeError(f"{loss} can't reduce by 'batchmean' (KLDivLoss only); choose mean, "
                         "sum or none.")
    return {}


def dense(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, want = ins["in"], values["in_channels"]
    _weights("Dense", want * values["out_channels"])
    if len(shape) < 2:
        raise ShapeError(f"Dense expects (N, {want}) input, gets {text(shape)}.")
    if shape[-1] != want:
        got = shape[-1]
        hint = " (add a Flatten before it)" if len(shape) > 2 else ""
        raise ShapeError(f"Dense expects {want} input features, gets {got}{hint}.")
    return {"out": (*shape[:-1], values["out_channels"])}


def conv2d(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, c_in, c_out = ins["in"], values["in_channels"], values["out_channels"]
    group, mode, padding = values["group"], values["pad_mode"], values["padding"]
    if c_in % group or c_out % group:
        raise ShapeError(f"Conv2d: in_channels ({c_in}) and out_channels ({c_out}) must both "
                         f"be divisible by group ({group}).")
    pads = (padding,) * 4 if isinstance(padding, int) else tuple(padding)
    if mode != "pad" and any(pads):
        raise ShapeError(f"Conv2d: padding must be 0 unless pad_mode is 'pad' (it is '{mode}').")
    _image("Conv2d", shape, str(c_in))
    if shape[1] != c_in:
        raise ShapeError(f"Conv2d expects {c_in} input channels, gets {shape[1]}.")
    (kh, kw), (sh, sw), (dh, dw) = (_pair(values[k]) for k in ("kernel_size", "stride",
                                                                "dilation"))
    _weights("Conv2d", c_out * (c_in // group) * kh * kw)
    h = _window("Conv2d", shape[2], (kh - 1) * dh + 1, sh, mode, pads[:2])
    w = _window("Conv2d", shape[3], (kw - 1) * dw + 1, sw, mode, pads[2:])
    return {"out": (shape[0], c_out, h, w)}


def _batch_norm(layer: str, ranks: tuple[int, ...], layout: str) -> Rule:
    def rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
        shape, c = ins["in"], values["num_features"]
        _weights(layer, 4 * c)
        if len(shape) not in ranks:
            raise ShapeError(f"{layer} expects {layout.format(c=c)} input, gets {text(shape)}.")
        if shape[1] != c:
            raise ShapeError(f"{layer} expects {c} features, gets {shape[1]}.")
        return {"out": shape}

    return rule


def _axis(layer: str, axis: int, rank: int, shape: Shape) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"{layer}: axis {axis} is out of range for {text(shape)}.")
    return axis % rank


def _softmax(layer: str) -> Rule:
    def rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
        _axis(layer, values["axis"], len(ins["in"]), ins["in"])
        return {"out": ins["in"]}

    return rule


def dropout(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    if values["keep_prob"] is not None and values["p"] is not None:
        raise ShapeError("Dropout: give keep_prob or p, not both.")
    if values["keep_prob"] == 0.0:
        raise ShapeError("Dropout: keep_prob must be more than 0.")
    if values["p"] == 1.0:
        raise ShapeError("Dropout: p must be less than 1.")
    return {"out": ins["in"]}


def _size(dims: tuple) -> Any:
    if all(isinstance(d, int) for d in dims):
        return math.prod(dims)
    return "×".join(str(d) for d in dims)


def flatten(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape = ins["in"]
    start = _axis("Flatten", values["start_dim"], len(shape), shape)
    end = _axis("Flatten", values["end_dim"], len(shape), shape)
    if start > end:
        raise ShapeError(f"Flatten: start_dim comes after end_dim for {text(shape)}.")
    return {"out": (*shape[:start], _size(shape[start : end + 1]), *shape[end + 1 :])}


def reshape(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shape, target = ins["in"], tuple(values["shape"])
    size = _size(shape[1:])
    if not isinstance(size, int):
        raise ShapeError(f"Reshape needs a known sample size, gets {text(shape)}.")
    known = math.prod(d for d in target if d != -1)
    if -1 in target:
        if size % known:
            raise ShapeError(f"Reshape can't make {text((BATCH, *target))} from {text(shape)}: "
                             f"{size} values per sample don't divide by {known}.")
        target = tuple(size // known if d == -1 else d for d in target)
    elif known != size:
        raise ShapeError(f"Reshape can't make {text((BATCH, *target))} from {text(shape)}: "
                         f"{size} values per sample, not {known}.")
    return {"out": (shape[0], *target)}


def concat(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    shapes = list(ins.values())
    first = shapes[0]
    if any(len(s) != len(first) for s in shapes):
        ranks = " and ".join(text(s) for s in shapes)
        raise ShapeError(f"Concat needs inputs of the same rank, gets {ranks}.")
    axis = _axis("Concat", values["axis"], len(first), first)
    if axis == 0:
        raise ShapeError("Concat along the batch axis (0) isn't supported; use axis 1 or more.")
    for other in shapes[1:]:
        for i, (a, b) in enumerate(zip(first, other, strict=True)):
            if i != axis and a != b:
                raise ShapeError(f"Concat along axis {axis} needs the other sizes to match, "
                                 f"gets {text(first)} and {text(other)}.")
    sizes = [s[axis] for s in shapes]
    joined = sum(sizes) if all(isinstance(d, int) for d in sizes) else "+".join(map(str, sizes))
    return {"out": (*first[:axis], joined, *first[axis + 1 :])}


def broadcast(layer: str, a: Shape, b: Shape) -> Shape:
    """NumPy broadcasting with symbolic sizes: a text size only matches itself or 1."""
    out = []
    for x, y in zip(reversed((1,) * (len(b) - len(a)) + a),
                    reversed((1,) * (len(a) - len(b)) + b), strict=True):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError(f"{layer} can't combine {text(a)} with {text(b)}.")
    return tuple(reversed(out))


def _elementwise(layer: str) -> Rule:
    def rule(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
        return {"out": broadcast(layer, ins["x"], ins["y"])}

    return rule


def matmul(values: Mapping[str, Any], ins: Mapping[str, Shape]) -> dict[str, Shape]:
    a, b = ins["x"], ins["y"]
    a2, b2 = (1, *a) if len(a) == 1 else a, (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ShapeError(f"MatMul: x {text(a)} has {a2[-1]} columns but y {text(b)} has "
                         f"{b2[-2]} rows.")
    out = (*broadcast("MatMul", a2[:-2], b2[:-2]), a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return {"out": out}


RULES: dict[str, Rule] = {
    "Input": input_rule, "Output": output_rule, "Dense": dense, "Conv2d": conv2d,
    "BatchNorm1d": _batch_norm("BatchNorm1d", (2, 3), "(N, {c}) or (N, {c}, L)"),
    "BatchNorm2d": _batch_norm("BatchNorm2d", (4,), "(N, {c}, H, W)"),
    "ReLU": same, "LeakyReLU": same, "Sigmoid": same, "Tanh": same, "GELU": same,
    "Identity": same, "HookBackward": same, "Softmax": _softmax("Softmax"),
    "LogSoftmax": _softmax("LogSoftmax"),
    "Dropout": dropout, "Flatten": flatten, "Reshape": reshape, "Concat": concat,
    "Add": _elementwise("Add"), "Mul": _elementwise("Mul"), "MatMul": matmul,
}
