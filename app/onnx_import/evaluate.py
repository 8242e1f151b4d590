"""NumPy versions of the ONNX ops that compute shapes and constants, for folding.

Exporters (torch.onnx above all) compute shapes at run time: Shape → Gather → Unsqueeze
→ Concat → Reshape. Once the input shapes are known these are constants. `EVALUATE`
maps an op type to fn(node, inputs) -> outputs, for inputs that are all known arrays.
`argument` reads an input that older opsets gave as an attribute (Unsqueeze's axes…).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.onnx_import.ir import OnnxImportError, OnnxNode

Arrays = list[np.ndarray | None]
ONNX_TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 5: np.int16, 6: np.int32, 7: np.int64,
              9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def argument(node: OnnxNode, index: int, attr: str, inputs: Arrays) -> np.ndarray | None:
    """Input `index` when given, else attribute `attr` (as an array), else None."""
    if index < len(inputs) and inputs[index] is not None:
        return inputs[index]
    value = node.attrs.get(attr)
    return None if value is None else np.asarray(value)


def onnx_dtype(code: int) -> type:
    if code not in ONNX_TYPES:
        raise OnnxImportError(f"ONNX element type {code} is not supported.")
    return ONNX_TYPES[code]


def _axes(node: OnnxNode, inputs: Arrays, index: int = 1) -> list[int] | None:
    axes = argument(node, index, "axes", inputs)
    return None if axes is None else [int(a) for a in np.ravel(axes)]


def _unsqueeze(node, inputs):
    x, axes = inputs[0], _axes(node, inputs)
    rank = x.ndim + len(axes)
    for axis in sorted(a % rank for a in axes):
        x = np.expand_dims(x, axis)
    return [x]


def _squeeze(node, inputs):
    x, axes = inputs[0], _axes(node, inputs)
    if axes is None:
        return [np.squeeze(x)]
    return [np.squeeze(x, axis=tuple(a % x.ndim for a in axes))]


def _slice(node, inputs):
    x = inputs[0]
    starts = argument(node, 1, "starts", inputs)
    ends = argument(node, 2, "ends", inputs)
    axes = argument(node, 3, "axes", inputs)
    steps = argument(node, 4, "steps", inputs)
    axes = range(len(starts)) if axes is None else [int(a) % x.ndim for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for a, s, e, k in zip(axes, starts, ends, steps, strict=True):
        index[a] = slice(_clamp(int(s)), _clamp(int(e)), int(k))
    return [x[tuple(index)]]


def _clamp(value: int) -> int | None:
    big = 2**62
    return None if value >= big else (None if value <= -big else value)


def _reshape(node, inputs):
    x, shape = inputs[0], [int(s) for s in inputs[1]]
    if not node.attr("allowzero", 0):
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return [x.reshape(shape)]


def _gather(node, inputs):
    return [np.take(inputs[0], inputs[1].astype(np.int64), axis=node.attr("axis", 0))]


def _constant_of_shape(node, inputs):
    value = node.attr("value")
    value = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    return [np.full(tuple(int(s) for s in inputs[0]), value[0], dtype=value.dtype)]


def _range(node, inputs):
    start, limit, delta = (np.asarray(a).item() for a in inputs[:3])
    return [np.arange(start, limit, delta, dtype=inputs[0].dtype)]


def _expand(node, inputs):
    x, shape = inputs[0], tuple(int(s) for s in inputs[1])
    target = np.broadcast_shapes(x.shape, shape)
    return [np.broadcast_to(x, target).copy()]


def _cast(node, inputs):
    return [inputs[0].astype(onnx_dtype(node.attr("to")))]


def _concat(node, inputs):
    return [np.concatenate([np.atleast_1d(a) if a.ndim == 0 else a for a in inputs],
                           axis=node.attr("axis", 0))]  # fmt: skip


def _transpose(node, inputs):
    perm = node.attr("perm")
    return [np.transpose(inputs[0], perm)]


def _reduce(fn: Callable) -> Callable:
    def run(node, inputs):
        axes = _axes(node, inputs)
        keep = bool(node.attr("keepdims", 1))
        if axes is None and node.attr("noop_with_empty_axes", 0):
            return [inputs[0]]
        return [fn(inputs[0], axis=None if axes is None else tuple(axes), keepdims=keep)]

    return run


def _split(node, inputs):
    x, axis = inputs[0], node.attr("axis", 0)
    sizes = argument(node, 1, "split", inputs)
    count = len(node.outputs)
    if sizes is None:
        step = -(-x.shape[axis] // count)
        sizes = [min(step, x.shape[axis] - i * step) for i in range(count)]
    edges = np.cumsum([int(s) for s in sizes])[:-1]
    return list(np.split(x, edges, axis=axis))


def _where(node, inputs):
    return [np.where(inputs[0], inputs[1], inputs[2])]


def _binary(fn: Callable) -> Callable:
    def run(node, inputs):
        a, b = inputs[0], inputs[1]
        out = fn(a, b)
        if np.issubdtype(a.dtype, np.integer) and fn is np.divide:
            out = np.trunc(out)
        return [np.asarray(out).astype(np.result_type(a, b), copy=False)]

    return run


def _unary(fn: Callable) -> Callable:
    return lambda node, inputs: [np.asarray(fn(inputs[0])).astype(inputs[0].dtype, copy=False)]


def _shape(node, inputs):
    shape = np.array(inputs[0].shape, dtype=np.int64)
    start, end = node.attr("start", 0), node.attr("end")
    return [shape[start:end]]


EVALUATE: dict[str, Callable[[OnnxNode, Arrays], list[np.ndarray]]] = {
    "Identity": lambda n, i: [i[0]],
    "Shape": _shape,
    "Size": lambda n, i: [np.array(i[0].size, np.int64)],
    "Gather": _gather,
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
    "Concat": _concat,
    "ConstantOfShape": _constant_of_shape,
    "Range": _range,
    "Expand": _expand,
    "Cast": _cast,
    "CastLike": lambda n, i: [i[0].astype(i[1].dtype)],
    "Slice": _slice,
    "Reshape": _reshape,
    "Transpose": _transpose,
    "Split": _split,
    "Where": _where,
    "Add": _binary(np.add),
    "Sub": _binary(np.subtract),
    "Mul": _binary(np.multiply),
    "Div": _binary(np.divide),
    "Pow": _binary(np.power),
    "Mod": _binary(np.mod),
    "Min": _binary(np.minimum),
    "Max": _binary(np.maximum),
    "Equal": lambda n, i: [np.equal(i[0], i[1])],
    "Less": lambda n, i: [np.less(i[0], i[1])],
    "Greater": lambda n, i: [np.greater(i[0], i[1])],
    "Not": lambda n, i: [np.logical_not(i[0])],
    "And": lambda n, i: [np.logical_and(i[0], i[1])],
    "Or": lambda n, i: [np.logical_or(i[0], i[1])],
    "Neg": _unary(np.negative),
    "Abs": _unary(np.abs),
    "Sqrt": _unary(np.sqrt),
    "Floor": _unary(np.floor),
    "Ceil": _unary(np.ceil),
    "Reciprocal": _unary(np.reciprocal),
    "ReduceProd": _reduce(np.prod),
    "ReduceSum": _reduce(np.sum),
    "ReduceMax": _reduce(np.max),
    "ReduceMin": _reduce(np.min),
    "Tile": lambda n, i: [np.tile(i[0], [int(r) for r in i[1]])],
    "NonZero": lambda n, i: [np.array(np.nonzero(i[0]), dtype=np.int64)],
    "Trilu": lambda n, i: [(np.triu if n.attr("upper", 1) else np.tril)(
        i[0], int(i[1]) if len(i) > 1 and i[1] is not None else 0)],
}
