"""LayerNorm, GroupNorm, InstanceNorm2d, LRN and channel dropout.

PyTorch, ONNX and engine-script export (see app.export.kinds for each table's form).
What changes on the way:
- LayerNorm: torch's and ONNX's layer norm normalise over exactly the axes the weight
  spans. With begin_norm_axis = begin_params_axis that is nn.LayerNorm (ONNX's
  LayerNormalization); otherwise the torch module only holds gamma and beta and the call
  is spelled out with F.layer_norm, and ONNX gets the mean and variance as ReduceMeans.
- GroupNorm and InstanceNorm2d keep gamma and beta as torch's weight and bias, also with
  affine off (they are frozen then, as in the engine, and still applied). InstanceNorm2d's
  moving statistics are left out: MindSpore never updates or uses them. ONNX opset 17
  has no GroupNormalization: a reshape to (N, groups, -1) around InstanceNormalization.
- LRN: torch's LocalResponseNorm and ONNX's LRN divide alpha by the window size
  2·depth_radius + 1; MindSpore does not, so they get alpha times that size.
The engine script writes each layer's own constructor (nothing here).
"""

from __future__ import annotations

import numpy as np

from app.document import Node
from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState
from app.export.report import ExportError

Value = tuple[str, tuple]


def _axes(cell, path: str, in_shape) -> tuple[int, int, int]:
    """(rank, begin_norm_axis, begin_params_axis) of a LayerNorm, both axes from 0."""
    if in_shape is None:
        raise ExportError(f"Node {path}: LayerNorm needs its input's shape to be exported.")
    rank = len(in_shape)
    return rank, cell.begin_norm_axis % rank, cell.begin_params_axis % rank


# ----------------------------------------------------------------------------- PyTorch


def _layer_norm(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    _, norm, params = _axes(cell, path, in_shape)
    module = f"nn.LayerNorm({tuple(cell.normalized_shape)!r}, eps={cell.epsilon!r})"
    if norm == params:
        return module, "{}"
    # The module holds gamma (weight) and beta (bias); statistics over the axes from
    # begin_norm_axis on, which torch's LayerNorm can't take apart from its weight's.
    return module, (f"F.layer_norm({{0}}, {{0}}.shape[{norm}:], eps={cell.epsilon!r}) "
                    "* {m}.weight + {m}.bias")


def _group_norm(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    return f"nn.GroupNorm({cell.num_groups}, {cell.num_channels}, eps={cell.eps!r})", "{}"


def _instance_norm(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    momentum = "" if cell.momentum == 0.1 else f", momentum={cell.momentum!r}"
    return (f"nn.InstanceNorm2d({cell.num_features}, eps={cell.eps!r}{momentum}, affine=True)",
            "{}")


def _lrn(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    size = 2 * cell.depth_radius + 1
    return (f"nn.LocalResponseNorm({size}, alpha={cell.alpha * size!r}, beta={cell.beta!r}, "
            f"k={cell.bias!r})", "{}")


TORCH: dict[str, TorchLayer] = {
    "LayerNorm": _layer_norm,
    "GroupNorm": _group_norm,
    "InstanceNorm2d": _instance_norm,
    "LRN": _lrn,
}

TORCH_OPS: dict[str, TorchOp] = {}

_AFFINE = {"gamma": "weight", "beta": "bias"}


def _affine_state(local: str, array: np.ndarray) -> tuple[str, np.ndarray] | None:
    return _AFFINE.get(local, local), array


def _instance_state(local: str, array: np.ndarray) -> tuple[str, np.ndarray] | None:
    return (_AFFINE[local], array) if local in _AFFINE else None


TORCH_STATE: dict[str, TorchState] = {
    "LayerNorm": _affine_state,
    "GroupNorm": _affine_state,
    "InstanceNorm2d": _instance_state,
}

# ----------------------------------------------------------------------------- ONNX


def _weight(w, cell, local: str, path: str, shape: tuple | None = None) -> str:
    array = getattr(cell, local).asnumpy().astype(np.float32)
    return w._const(f"{path}.{local}", array if shape is None else array.reshape(shape))


def _onnx_layer_norm(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x, shape = args[0]
    rank, norm, params = _axes(cell, path, shape)
    gamma, beta = _weight(w, cell, "gamma", path), _weight(w, cell, "beta", path)
    eps = float(cell.epsilon)
    if norm == params:
        return [w._op("LayerNormalization", [x, gamma, beta], path, axis=norm, epsilon=eps)]
    axes = list(range(norm, rank))
    mean = w._op("ReduceMean", [x], f"{path}/mean", axes=axes, keepdims=1)
    centred = w._op("Sub", [x, mean], f"{path}/centred")
    square = w._op("Mul", [centred, centred], f"{path}/square")
    var = w._op("ReduceMean", [square], f"{path}/var", axes=axes, keepdims=1)
    std = w._op("Sqrt", [w._op("Add", [var, w._const(f"{path}/eps", eps)], f"{path}/var_eps")],
                f"{path}/std")
    normed = w._op("Div", [centred, std], f"{path}/normalised")
    return [w._op("Add", [w._op("Mul", [normed, gamma], f"{path}/scaled"), beta], path)]


def _onnx_group_norm(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x, shape = args[0]
    groups, c = cell.num_groups, cell.num_channels
    grouped_shape = w._const(f"{path}/grouped_shape", np.asarray([0, groups, -1], np.int64))
    grouped = w._op("Reshape", [x, grouped_shape], f"{path}/grouped")
    ones = w._const(f"{path}/ones", np.ones(groups, np.float32))
    zeros = w._const(f"{path}/zeros", np.zeros(groups, np.float32))
    normed = w._op("InstanceNormalization", [grouped, ones, zeros], f"{path}/normalised",
                   epsilon=float(cell.eps))
    sizes = np.asarray([0, *(int(d) for d in shape[1:])], np.int64)
    back = w._op("Reshape", [normed, w._const(f"{path}/shape", sizes)], f"{path}/ungrouped")
    per_channel = (c,) + (1,) * (len(shape) - 2)
    gamma = _weight(w, cell, "gamma", path, per_channel)
    beta = _weight(w, cell, "beta", path, per_channel)
    return [w._op("Add", [w._op("Mul", [back, gamma], f"{path}/scaled"), beta], path)]


def _onnx_instance_norm(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    inputs = [args[0][0], _weight(w, cell, "gamma", path), _weight(w, cell, "beta", path)]
    return [w._op("InstanceNormalization", inputs, path, epsilon=float(cell.eps))]


def _onnx_lrn(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    size = 2 * cell.depth_radius + 1
    return [w._op("LRN", [args[0][0]], path, size=size, alpha=float(cell.alpha * size),
                  beta=float(cell.beta), bias=float(cell.bias))]


ONNX: dict[str, OnnxRule] = {
    "LayerNorm": _onnx_layer_norm,
    "GroupNorm": _onnx_group_norm,
    "InstanceNorm2d": _onnx_instance_norm,
    "LRN": _onnx_lrn,
}

# ----------------------------------------------------------------------------- engine script

PYTHON_OPS: dict[str, PythonOp] = {}
