"""Converters for element-wise ops, activations and reshaping ops.

Each fn(builder, node) adds the nodes that compute `node`'s outputs. Axes keep ONNX's
counting (the batch is axis 0 unless a Transpose moved it), which is how Cellwright's
op nodes count them too; Reshape's target leaves the batch axis out.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.onnx_import.build import Builder
from app.onnx_import.evaluate import argument, onnx_dtype
from app.onnx_import.ir import OnnxImportError, OnnxNode

Converter = Callable[[Builder, OnnxNode], None]
BIG = 2**62


def refuse(node: OnnxNode, why: str) -> OnnxImportError:
    return OnnxImportError(f"Node '{node.label}' ({node.op}): {why}")


def simple(type_name: str, **fixed) -> Converter:
    """An op that is one Cellwright node with fixed hyper-parameters."""

    def convert(b: Builder, n: OnnxNode) -> None:
        b.add(type_name, n, params=fixed, inputs=n.inputs[:1], outputs=n.outputs[:1])

    return convert


def attributed(type_name: str, **attrs: tuple[str, object]) -> Converter:
    """One node whose hyper-parameters come from the ONNX attributes {param: (attr, default)}."""

    def convert(b: Builder, n: OnnxNode) -> None:
        params = {key: n.attr(attr, default) for key, (attr, default) in attrs.items()}
        b.add(type_name, n, params=params, inputs=n.inputs[:1], outputs=n.outputs[:1])

    return convert


def passthrough(b: Builder, n: OnnxNode) -> None:
    b.alias(n.outputs[0], n.inputs[0])


def dropout(b: Builder, n: OnnxNode) -> None:
    if len(n.outputs) > 1 and n.outputs[1] and n.outputs[1] in _users(b):
        raise refuse(n, "its mask output is used; Cellwright's Dropout gives none.")
    ratio = argument(n, 1, "ratio", [None, b.const(n.inputs[1]) if len(n.inputs) > 1 else None])
    ratio = 0.5 if ratio is None else float(np.asarray(ratio).reshape(-1)[0])
    if n.attr("is_test", 0) or ratio <= 0:
        passthrough(b, n)
        return
    b.add("Dropout", n, params={"p": ratio}, inputs=n.inputs[:1], outputs=n.outputs[:1])


def _users(b: Builder) -> set[str]:
    return {name for node in b.folded.nodes for name in node.inputs}


def _softmax(type_name: str) -> Converter:
    def convert(b: Builder, n: OnnxNode) -> None:
        rank = b.rank(n.inputs[0])
        default = -1 if b.opset >= 13 else 1
        axis = int(n.attr("axis", default))
        if b.opset < 13 and rank is not None and axis % rank != rank - 1:
            raise refuse(n, f"before opset 13, softmax over axis {axis} flattens the axes "
                         "after it; only the last axis is supported.")
        b.add(type_name, n, params={"axis": axis}, inputs=n.inputs[:1], outputs=n.outputs[:1])

    return convert


def _scalar(b: Builder, name: str) -> float | None:
    value = b.const(name)
    if value is None or value.size != 1:
        return None
    return float(value.reshape(-1)[0])


def binary(type_name: str) -> Converter:
    """Add/Sub/Mul/Div: two computed tensors, or one and a constant (a Constant node; a
    scalar factor becomes Rescale)."""

    def convert(b: Builder, n: OnnxNode) -> None:
        x, y = n.inputs[0], n.inputs[1]
        if b.is_const(x) and b.is_const(y):
            raise refuse(n, "both inputs are constants (this should have been folded).")
        scale = None
        if type_name == "Mul":
            scale = _scalar(b, y) if b.is_const(y) else _scalar(b, x)
            data = x if b.is_const(y) else y
        elif type_name == "Div" and b.is_const(y):
            value = _scalar(b, y)
            scale, data = (None if value in (None, 0.0) else 1.0 / value), x
        if scale is not None:
            if scale == 1.0:
                b.alias(n.outputs[0], data)
            else:
                b.add("Rescale", n, params={"scale": scale}, inputs=[data], outputs=n.outputs)
            return
        rank = max(b.rank(x) or 0, b.rank(y) or 0) or None
        feeds = [b.source(t, n, rank=rank) for t in (x, y)]
        b.add(type_name, n, inputs=feeds, outputs=n.outputs)

    return convert


def variadic_sum(b: Builder, n: OnnxNode) -> None:
    """Sum of any number of tensors: a chain of Adds."""
    names = [name for name in n.inputs if name]
    if len(names) == 1:
        b.alias(n.outputs[0], names[0])
        return
    _chain(b, n, "Add", {}, names)


def _chain(b: Builder, n: OnnxNode, type_name: str, params: dict, names: list[str]) -> None:
    rank = max((b.rank(t) or 0) for t in names) or None
    current = b.source(names[0], n, rank=rank)
    for index, name in enumerate(names[1:], start=2):
        last = index == len(names)
        made = b.add(type_name, n, params=params, inputs=[current, b.source(name, n, rank=rank)],
                     outputs=n.outputs[:1] if last else ())
        current = (made, "out")


def concat(b: Builder, n: OnnxNode) -> None:
    names = [name for name in n.inputs if name]
    axis = int(n.attr("axis"))
    if len(names) == 1:
        b.alias(n.outputs[0], names[0])
        return
    _chain(b, n, "Concat", {"axis": axis}, names)


def power(b: Builder, n: OnnxNode) -> None:
    exponent = _scalar(b, n.inputs[1])
    if exponent is None:
        raise refuse(n, "only a constant scalar exponent is supported.")
    if exponent == 0.5:
        b.add("Sqrt", n, inputs=n.inputs[:1], outputs=n.outputs)
    else:
        b.add("Pow", n, params={"exponent": exponent}, inputs=n.inputs[:1], outputs=n.outputs)


def reciprocal(b: Builder, n: OnnxNode) -> None:
    b.add("Pow", n, params={"exponent": -1.0}, inputs=n.inputs[:1], outputs=n.outputs)


def clip(b: Builder, n: OnnxNode) -> None:
    low = n.attr("min") if b.opset < 11 else _scalar(b, _input(n, 1))
    high = n.attr("max") if b.opset < 11 else _scalar(b, _input(n, 2))
    if (low, high) == (0.0, 6.0):
        b.add("ReLU6", n, inputs=n.inputs[:1], outputs=n.outputs)
    elif low == 0.0 and high is None:
        b.add("ReLU", n, inputs=n.inputs[:1], outputs=n.outputs)
    else:
        b.add("Clip", n, params={"min": low, "max": high}, inputs=n.inputs[:1],
              outputs=n.outputs)  # fmt: skip


def _input(n: OnnxNode, index: int) -> str:
    return n.inputs[index] if index < len(n.inputs) else ""


def prelu(b: Builder, n: OnnxNode) -> None:
    slope = b.const(n.inputs[1])
    if slope is None:
        raise refuse(n, "the slope must be a constant.")
    flat = slope.reshape(-1)
    b.add("PReLU", n, params={"channel": int(flat.size)}, inputs=n.inputs[:1],
          outputs=n.outputs, weights={"w": flat})  # fmt: skip


def hard_sigmoid(b: Builder, n: OnnxNode) -> None:
    alpha, beta = n.attr("alpha", 0.2), n.attr("beta", 0.5)
    if not (np.isclose(alpha, 1 / 6) and np.isclose(beta, 0.5)):
        raise refuse(n, f"HardSigmoid with alpha {alpha:g}, beta {beta:g}: only alpha 1/6 and "
                     "beta 0.5 (HSigmoid) are supported.")
    b.add("HSigmoid", n, inputs=n.inputs[:1], outputs=n.outputs)


def gelu(b: Builder, n: OnnxNode) -> None:
    approximate = n.attr("approximate", "none") == "tanh"
    b.add("GELU", n, params={"approximate": approximate}, inputs=n.inputs[:1],
          outputs=n.outputs)  # fmt: skip


def selu(b: Builder, n: OnnxNode) -> None:
    alpha, gamma = n.attr("alpha", 1.67326319), n.attr("gamma", 1.05070102)
    if not (np.isclose(alpha, 1.67326319) and np.isclose(gamma, 1.05070102)):
        raise refuse(n, "only SELU's standard alpha and gamma are supported.")
    b.add("SeLU", n, inputs=n.inputs[:1], outputs=n.outputs)


def cast(b: Builder, n: OnnxNode) -> None:
    dtype = np.dtype(onnx_dtype(int(n.attr("to")))).name
    if dtype not in ("float32", "float64", "int32", "int64"):
        raise refuse(n, f"casting to {dtype} is not supported (float32, float64, int32, int64).")
    b.add("Cast", n, params={"dtype": dtype}, inputs=n.inputs[:1], outputs=n.outputs)


def flatten(b: Builder, n: OnnxNode) -> None:
    axis = int(n.attr("axis", 1))
    rank = b.rank(n.inputs[0])
    batch = b.batch_axis(n, n.inputs[0])
    if batch != 0 or (rank is not None and axis % rank != 1):
        raise refuse(n, f"flattening at axis {axis} would merge the batch axis with others; "
                     "only axis 1 (keep the batch, flatten each sample) is supported.")
    b.add("Flatten", n, params={"start_dim": 1, "end_dim": -1}, inputs=n.inputs[:1],
          outputs=n.outputs)  # fmt: skip


def reshape(b: Builder, n: OnnxNode) -> None:
    source, target = n.inputs[0], n.outputs[0]
    out = b.shape(target)
    if b.batch_axis(n, source) != 0 or out is None or b.batch_axis(n, target) != 0:
        raise refuse(n, "it moves or merges the batch axis (the first axis); Cellwright's "
                     "Reshape gives each sample a new shape.")
    if tuple(out[1:]) == (int(np.prod(b.shape(source)[1:])),):
        b.add("Flatten", n, inputs=[source], outputs=[target])
        return
    b.add("Reshape", n, params={"shape": tuple(int(d) for d in out[1:])}, inputs=[source],
          outputs=[target])  # fmt: skip


def transpose(b: Builder, n: OnnxNode) -> None:
    perm = n.attr("perm")
    rank = b.rank(n.inputs[0])
    if perm is None:
        perm = list(range(rank))[::-1]
    if list(perm) == sorted(perm):
        b.alias(n.outputs[0], n.inputs[0])
        return
    b.add("Transpose", n, params={"perm": tuple(int(p) for p in perm)}, inputs=n.inputs[:1],
          outputs=n.outputs)  # fmt: skip


def _const_axes(b: Builder, n: OnnxNode) -> list[int] | None:
    axes = argument(n, 1, "axes", [None, b.const(_input(n, 1))])
    return None if axes is None else [int(a) for a in np.ravel(axes)]


def squeeze(b: Builder, n: OnnxNode) -> None:
    axes = _const_axes(b, n)
    rank = b.rank(n.inputs[0])
    if axes is None:
        b.add("Squeeze", n, params={"axis": None}, inputs=n.inputs[:1], outputs=n.outputs)
        return
    axes = sorted((a % rank for a in axes), reverse=True)
    _steps(b, n, "Squeeze", [{"axis": a} for a in axes])


def unsqueeze(b: Builder, n: OnnxNode) -> None:
    axes = _const_axes(b, n)
    rank = (b.rank(n.inputs[0]) or 0) + len(axes)
    _steps(b, n, "Unsqueeze", [{"axis": a % rank} for a in sorted(a % rank for a in axes)])


def _steps(b: Builder, n: OnnxNode, type_name: str, params: list[dict]) -> None:
    """One node per step in a chain, the last making the output."""
    current: str | tuple = n.inputs[0]
    for index, values in enumerate(params):
        last = index == len(params) - 1
        made = b.add(type_name, n, params=values, inputs=[current],
                     outputs=n.outputs[:1] if last else ())
        current = (made, "out")
    if not params:
        b.alias(n.outputs[0], n.inputs[0])


def slice_(b: Builder, n: OnnxNode) -> None:
    consts = [None] + [b.const(_input(n, i)) for i in range(1, 5)]
    starts, ends = argument(n, 1, "starts", consts), argument(n, 2, "ends", consts)
    if starts is None or ends is None:
        raise refuse(n, "its starts and ends must be constants.")
    rank = b.rank(n.inputs[0])
    axes = argument(n, 3, "axes", consts)
    axes = list(range(len(starts))) if axes is None else [int(a) % rank for a in axes]
    steps = argument(n, 4, "steps", consts)
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    shape = b.shape(n.inputs[0])
    params = []
    for axis, start, end, step in zip(axes, starts, ends, steps, strict=True):
        start, end = int(start), int(end)
        size = shape[axis] if shape is not None else None
        if isinstance(size, int) and step > 0 and start in (0, -BIG) and end >= size:
            continue  # the whole axis
        params.append({"axis": axis, "start": max(start, -BIG // 2),
                       "end": None if abs(end) >= BIG // 2 else end, "step": step})  # fmt: skip
    _steps(b, n, "Slice", params)


def split(b: Builder, n: OnnxNode) -> None:
    axis = int(n.attr("axis", 0))
    sizes = argument(n, 1, "split", [None, b.const(_input(n, 1))])
    count = len(n.outputs)
    if sizes is None or len(set(int(s) for s in sizes)) == 1:
        b.add("Split", n, params={"axis": axis, "output_num": count}, inputs=n.inputs[:1],
              outputs=n.outputs)  # fmt: skip
        return
    start = 0
    for size, out in zip((int(s) for s in sizes), n.outputs, strict=True):
        b.add("Slice", n, params={"axis": axis, "start": start, "end": start + size, "step": 1},
              inputs=n.inputs[:1], outputs=[out])  # fmt: skip
        start += size


def gather(b: Builder, n: OnnxNode) -> None:
    data, indices = n.inputs[0], n.inputs[1]
    axis = int(n.attr("axis", 0))
    index = b.const(indices)
    if index is not None and index.ndim == 0 and not b.is_const(data):
        b.add("Select", n, params={"axis": axis, "index": int(index)}, inputs=[data],
              outputs=n.outputs)  # fmt: skip
        return
    raise refuse(n, "only a single constant index along an axis is supported here.")


def reduce(type_name: str) -> Converter:
    def convert(b: Builder, n: OnnxNode) -> None:
        axes = _const_axes(b, n)
        rank = b.rank(n.inputs[0])
        if axes is None:
            if n.attr("noop_with_empty_axes", 0):
                b.alias(n.outputs[0], n.inputs[0])
                return
            raise refuse(n, "reducing over every axis (the batch too) is not supported.")
        axes = tuple(sorted(a % rank for a in axes))
        if b.batch_axis(n, n.inputs[0]) in axes:
            raise refuse(n, "it reduces over the batch axis; Cellwright reduces within each "
                         "sample (axes 1 and up).")
        b.add(type_name, n, params={"axis": axes if len(axes) > 1 else axes[0],
                                    "keep_dims": bool(n.attr("keepdims", 1))},
              inputs=n.inputs[:1], outputs=n.outputs)  # fmt: skip

    return convert


def expand(b: Builder, n: OnnxNode) -> None:
    if b.shape(n.outputs[0]) == b.shape(n.inputs[0]):
        b.alias(n.outputs[0], n.inputs[0])
        return
    raise refuse(n, "expanding a computed tensor to a bigger shape is not supported.")


CONVERTERS: dict[str, Converter] = {
    "Identity": passthrough,
    "Dropout": dropout,
    "Relu": simple("ReLU"),
    "Sigmoid": simple("Sigmoid"),
    "Tanh": simple("Tanh"),
    "Softsign": simple("Softsign"),
    "Mish": simple("Mish"),
    "HardSwish": simple("HSwish"),
    "HardSigmoid": hard_sigmoid,
    "Gelu": gelu,
    "Selu": selu,
    "Elu": attributed("ELU", alpha=("alpha", 1.0)),
    "Celu": attributed("CELU", alpha=("alpha", 1.0)),
    "LeakyRelu": attributed("LeakyReLU", alpha=("alpha", 0.01)),
    "Softplus": simple("Softplus"),
    "PRelu": prelu,
    "Softmax": _softmax("Softmax"),
    "LogSoftmax": _softmax("LogSoftmax"),
    "Exp": simple("Exp"),
    "Log": simple("Log"),
    "Sqrt": simple("Sqrt"),
    "Neg": simple("Neg"),
    "Abs": simple("Abs"),
    "Reciprocal": reciprocal,
    "Pow": power,
    "Clip": clip,
    "Add": binary("Add"),
    "Sub": binary("Sub"),
    "Mul": binary("Mul"),
    "Div": binary("Div"),
    "Sum": variadic_sum,
    "MatMul": None,  # convert_layers: a constant weight makes a Dense
    "Concat": concat,
    "Cast": cast,
    "Flatten": flatten,
    "Reshape": reshape,
    "Transpose": transpose,
    "Squeeze": squeeze,
    "Unsqueeze": unsqueeze,
    "Slice": slice_,
    "Split": split,
    "Gather": gather,
    "ReduceMean": reduce("Mean"),
    "ReduceSum": reduce("Sum"),
    "ReduceMax": reduce("Max"),
    "Expand": expand,
}
del CONVERTERS["MatMul"]
