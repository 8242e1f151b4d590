"""Op nodes: arithmetic, reductions, shape ops, Split, Stack, Cast, Constant.

PyTorch, ONNX and engine-script export (see app.export.kinds for each table's form).
The engine script calls the ops the compiled Cells run (app.compiler.op_cells), so its
outputs are the app's bit for bit. The Constant holds a Parameter: in the scripts it gets
a Cell (a Module) of its own, named as the node, whose `value` the weights file fills.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from app.compiler.op_cells import size_one_axes, slice_index
from app.compiler.time_axes import full_perm
from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState

Values = Mapping[str, Any]
INT64_MAX = np.iinfo(np.int64).max  # ONNX Slice's "to the end"


def _axis(axis) -> str:
    return repr(axis if isinstance(axis, int) else tuple(axis))


def _clip_args(low, high) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in (("min", low), ("max", high)) if v is not None)


def _unary(name: str) -> PythonOp:
    return lambda values, args: f"ops.{name}({args[0]})"


def _binary(name: str) -> PythonOp:
    return lambda values, args: f"ops.{name}({args[0]}, {args[1]})"


def _reduce(name: str) -> PythonOp:
    return lambda v, args: f"ops.{name}({args[0]}, {_axis(v['axis'])}, {v['keep_dims']!r})"


def _squeeze_python(v: Values, args: list[str]) -> str:
    (x,) = args
    if v["axis"] is not None:
        return f"ops.squeeze({x}, {v['axis']!r})"
    return f"ops.squeeze({x}, tuple(i for i in range(1, {x}.ndim) if {x}.shape[i] == 1))"


def _constant_python(v: Values, args: list[str]) -> tuple[str, list[str], str]:
    size = tuple(v["shape"])
    return ("nn.Cell()",
            [f"{{}}.value = engine.Parameter(np.zeros({size!r}, np.float32), "
             "requires_grad=False)"],
            "ops.expand_dims({}.value, 0)")


PYTHON_OPS: dict[str, PythonOp] = {
    "Sub": _binary("sub"), "Div": _binary("div"),
    "Neg": _unary("neg"), "Abs": _unary("abs"), "Exp": _unary("exp"), "Log": _unary("log"),
    "Sqrt": _unary("sqrt"),
    "Pow": lambda v, args: f"ops.pow({args[0]}, {v['exponent']!r})",
    "Clip": lambda v, args: f"ops.clamp({args[0]}, {v['min']!r}, {v['max']!r})",
    "Rescale": lambda v, args: f"ops.mul({args[0]}, {v['scale']!r})",
    "Mean": _reduce("mean"), "Sum": _reduce("sum"), "Max": _reduce("amax"),
    "Transpose": lambda v, args: f"ops.transpose({args[0]}, {full_perm(v['perm'])!r})",
    "Squeeze": _squeeze_python,
    "Unsqueeze": lambda v, args: f"ops.expand_dims({args[0]}, {v['axis']!r})",
    "Slice": lambda v, args: args[0] + slice_index(v["axis"], v["start"], v["end"], v["step"]),
    "Split": lambda v, args: (f"ops.split({args[0]}, {args[0]}.shape[{v['axis']}] // "
                              f"{v['output_num']}, {v['axis']})"),
    "Stack": lambda v, args: f"ops.stack(({args[0]}, {args[1]}), {v['axis']})",
    "Cast": lambda v, args: f"ops.cast({args[0]}, engine.{v['dtype']})",
    "Constant": _constant_python,
}


def _torch_unary(name: str) -> TorchOp:
    return lambda cell, args: f"torch.{name}({args[0]})"


def _torch_reduce(name: str) -> TorchOp:
    return lambda cell, args: (f"torch.{name}({args[0]}, dim={_axis(cell.axis)}, "
                               f"keepdim={cell.keep_dims!r})")


def _squeeze_torch(cell, args: list[str]) -> str:
    (x,) = args
    if cell.axis is not None:
        return f"{x}.squeeze({cell.axis})"
    return f"{x}.squeeze(tuple(range(1, {x}.dim())))"  # only size-1 axes go: never the batch


def _constant_torch(cell, args: list[str]) -> tuple[str, list[str], str]:
    sizes = ", ".join(str(size) for size in cell.shape)
    return ("nn.Module()", [f"{{}}.register_buffer('value', torch.zeros({sizes}))"],
            "{}.value.unsqueeze(0)")


TORCH: dict[str, TorchLayer] = {}
TORCH_OPS: dict[str, TorchOp] = {
    "Sub": lambda cell, args: f"{args[0]} - {args[1]}",
    "Div": lambda cell, args: f"{args[0]} / {args[1]}",
    "Neg": lambda cell, args: f"-{args[0]}",
    "Abs": _torch_unary("abs"), "Exp": _torch_unary("exp"), "Log": _torch_unary("log"),
    "Sqrt": _torch_unary("sqrt"),
    "Pow": lambda cell, args: f"torch.pow({args[0]}, {cell.exponent!r})",
    "Clip": lambda cell, args: f"torch.clamp({args[0]}, {_clip_args(cell.min, cell.max)})",
    "Rescale": lambda cell, args: f"{args[0]} * {cell.scale!r}",
    "Mean": _torch_reduce("mean"), "Sum": _torch_reduce("sum"), "Max": _torch_reduce("amax"),
    "Transpose": lambda cell, args: f"{args[0]}.permute{cell.perm!r}",
    "Squeeze": _squeeze_torch,
    "Unsqueeze": lambda cell, args: f"{args[0]}.unsqueeze({cell.axis})",
    "Slice": lambda cell, args: args[0] + slice_index(cell.axis, cell.start, cell.end,
                                                      cell.step),
    "Split": lambda cell, args: f"torch.chunk({args[0]}, {cell.output_num}, dim={cell.axis})",
    "Stack": lambda cell, args: f"torch.stack(({args[0]}, {args[1]}), dim={cell.axis})",
    "Cast": lambda cell, args: f"{args[0]}.to(torch.{cell.dtype})",
    "Constant": _constant_torch,
}
TORCH_STATE: dict[str, TorchState] = {}


# ---- ONNX (opset 17: ReduceMean/ReduceMax take axes as an attribute, ReduceSum, Squeeze,
# Unsqueeze, Slice and Split as an int64 input)


def _ints(writer, name: str, values) -> str:
    return writer._const(name, np.asarray(values, dtype=np.int64))


def _axes_of(axis, rank: int) -> list[int]:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return [a % rank for a in axes]


def _onnx_simple(op: str) -> OnnxRule:
    return lambda w, node, cell, args, path: [w._op(op, [a for a, _ in args], path)]


def _onnx_const(op: str, attribute: str) -> OnnxRule:
    """x (op) a constant from the Cell (Pow's exponent, Rescale's scale)."""
    def rule(w, node, cell, args, path):
        value = w._const(f"{path}/{attribute}", float(getattr(cell, attribute)))
        return [w._op(op, [args[0][0], value], path)]

    return rule


def _onnx_clip(w, node, cell, args, path) -> list[str]:
    low = "" if cell.min is None else w._const(f"{path}/min", float(cell.min))
    high = "" if cell.max is None else w._const(f"{path}/max", float(cell.max))
    inputs = [args[0][0], low] + ([high] if high else [])
    return [w._op("Clip", inputs, path)]


def _onnx_reduce(op: str, axes_input: bool = False) -> OnnxRule:
    def rule(w, node, cell, args, path):
        (x, shape), = args
        axes = _axes_of(cell.axis, len(shape))
        keep = int(cell.keep_dims)
        if axes_input:
            return [w._op(op, [x, _ints(w, f"{path}/axes", axes)], path, keepdims=keep)]
        return [w._op(op, [x], path, axes=axes, keepdims=keep)]

    return rule


def _onnx_squeeze(w, node, cell, args, path) -> list[str]:
    (x, shape), = args
    axes = size_one_axes(shape) if cell.axis is None else _axes_of(cell.axis, len(shape))
    if not axes:
        return [w._op("Identity", [x], path)]
    return [w._op("Squeeze", [x, _ints(w, f"{path}/axes", list(axes))], path)]


def _onnx_unsqueeze(w, node, cell, args, path) -> list[str]:
    (x, shape), = args
    axis = cell.axis % (len(shape) + 1)
    return [w._op("Unsqueeze", [x, _ints(w, f"{path}/axes", [axis])], path)]


def _onnx_slice(w, node, cell, args, path) -> list[str]:
    (x, shape), = args
    end = INT64_MAX if cell.end is None else cell.end
    inputs = [x, _ints(w, f"{path}/starts", [cell.start]), _ints(w, f"{path}/ends", [end]),
              _ints(w, f"{path}/axes", [cell.axis % len(shape)]),
              _ints(w, f"{path}/steps", [cell.step])]
    return [w._op("Slice", inputs, path)]


def _onnx_split(w, node, cell, args, path) -> list[str]:
    (x, shape), = args
    axis = cell.axis % len(shape)
    part = int(shape[axis]) // cell.output_num
    sizes = _ints(w, f"{path}/split", [part] * cell.output_num)
    outs = [w._name(f"{path}/{port}") for port in node.outputs]
    w.nodes.append(w.helper.make_node("Split", [x, sizes], outs, name=w._name(path),
                                      axis=axis))
    return outs


def _onnx_stack(w, node, cell, args, path) -> list[str]:
    (x, shape), (y, _) = args
    axis = cell.axis % (len(shape) + 1)
    axes = _ints(w, f"{path}/axes", [axis])
    parts = [w._op("Unsqueeze", [v, axes], f"{path}/{port}") for v, port in ((x, "x"), (y, "y"))]
    return [w._op("Concat", parts, path, axis=axis)]


def _onnx_cast(w, node, cell, args, path) -> list[str]:
    to = w.helper.np_dtype_to_tensor_dtype(np.dtype(cell.dtype))
    return [w._op("Cast", [args[0][0]], path, to=to)]


def _onnx_constant(w, node, cell, args, path) -> list[str]:
    value = w._param(cell, "value", path)  # the initializer is the Parameter, as saved
    return [w._op("Unsqueeze", [value, _ints(w, f"{path}/axes", [0])], path)]


ONNX: dict[str, OnnxRule] = {
    "Sub": _onnx_simple("Sub"), "Div": _onnx_simple("Div"), "Neg": _onnx_simple("Neg"),
    "Abs": _onnx_simple("Abs"), "Exp": _onnx_simple("Exp"), "Log": _onnx_simple("Log"),
    "Sqrt": _onnx_simple("Sqrt"),
    "Pow": _onnx_const("Pow", "exponent"), "Rescale": _onnx_const("Mul", "scale"),
    "Clip": _onnx_clip,
    "Mean": _onnx_reduce("ReduceMean"), "Sum": _onnx_reduce("ReduceSum", axes_input=True),
    "Max": _onnx_reduce("ReduceMax"),
    "Transpose": lambda w, node, cell, args, path: [
        w._op("Transpose", [args[0][0]], path, perm=list(cell.perm))],
    "Squeeze": _onnx_squeeze, "Unsqueeze": _onnx_unsqueeze, "Slice": _onnx_slice,
    "Split": _onnx_split, "Stack": _onnx_stack, "Cast": _onnx_cast,
    "Constant": _onnx_constant,
}
