"""Activations beyond the basic ones, Softplus included, and channel dropout.

PyTorch, ONNX and engine-script export (see app.export.kinds for each table's form).
ONNX (opset 17) has no Mish, SiLU, LogSigmoid, Softmin or GLU op: those are written as
the few ops they are made of. Channel dropout is the identity in an ONNX model, which
holds the predict-mode forward pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from app.document import Node
from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState
from app.export.report import ExportError

Value = tuple[str, tuple]

# ----------------------------------------------------------------------------- PyTorch


def _plain(module: str) -> TorchLayer:
    return lambda node, cell, path, in_shape: (module, "{}")


def _with(template: str) -> TorchLayer:
    """'nn.ELU(alpha={alpha!r})': the Cell's attributes filled into the constructor."""
    return lambda node, cell, path, in_shape: (template.format(**vars(cell)), "{}")


def _dim(name: str) -> TorchLayer:
    def layer(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
        if not isinstance(cell.axis, int):
            raise ExportError(f"Node {path}: {name} over several axes {cell.axis} has no torch "
                              "module; use one axis.")
        return f"nn.{name}(dim={cell.axis})", "{}"

    return layer


def _dropout(name: str) -> TorchLayer:
    return lambda node, cell, path, in_shape: (f"nn.{name}({round(cell.p, 12)!r})", "{}")


TORCH: dict[str, TorchLayer] = {
    "ELU": _with("nn.ELU(alpha={alpha!r})"),
    "SeLU": _plain("nn.SELU()"),
    "CELU": _with("nn.CELU(alpha={alpha!r})"),
    "PReLU": _with("nn.PReLU({channel})"),
    "Softsign": _plain("nn.Softsign()"),
    "SiLU": _plain("nn.SiLU()"),
    "Mish": _plain("nn.Mish()"),
    "HSwish": _plain("nn.Hardswish()"),
    "HSigmoid": _plain("nn.Hardsigmoid()"),  # relu6(x + 3)/6, MindSpore's HSigmoid
    "ReLU6": _plain("nn.ReLU6()"),
    "Hardtanh": _with("nn.Hardtanh({min_val!r}, {max_val!r})"),
    "LogSigmoid": _plain("nn.LogSigmoid()"),
    "Softmin": _dim("Softmin"),
    "GLU": _dim("GLU"),
    "Dropout1d": _dropout("Dropout1d"),
    "Dropout2d": _dropout("Dropout2d"),
    "Dropout3d": _dropout("Dropout3d"),
}

TORCH_OPS: dict[str, TorchOp] = {
    "Softplus": lambda cell, args: (f"F.softplus({args[0]}, beta={cell.beta!r}, "
                                    f"threshold={cell.threshold!r})"),
}


def _prelu_state(local: str, array: np.ndarray) -> tuple[str, np.ndarray] | None:
    return ("weight", array) if local == "w" else (local, array)


TORCH_STATE: dict[str, TorchState] = {"PReLU": _prelu_state}

# ----------------------------------------------------------------------------- ONNX


def _one(op: str, **attrs_from_cell: str) -> OnnxRule:
    """One ONNX op; attributes read from the Cell (`alpha="alpha"`)."""

    def rule(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
        attrs = {k: float(getattr(cell, v)) for k, v in attrs_from_cell.items()}
        return [w._op(op, [args[0][0]], path, **attrs)]

    return rule


def _fixed(op: str, **attrs: Any) -> OnnxRule:
    return lambda w, node, cell, args, path: [w._op(op, [args[0][0]], path, **attrs)]


def _clip(low: float | None, high: float | None) -> OnnxRule:
    def rule(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
        lo = float(cell.min_val) if low is None else low
        hi = float(cell.max_val) if high is None else high
        bounds = [w._const(f"{path}/min", lo), w._const(f"{path}/max", hi)]
        return [w._op("Clip", [args[0][0], *bounds], path)]

    return rule


def _prelu(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x, shape = args[0]
    slopes = cell.w.asnumpy().astype(np.float32)
    if slopes.size > 1:  # one slope per channel of axis 1: (C, 1, ..., 1) broadcasts there
        slopes = slopes.reshape((slopes.size,) + (1,) * (len(shape) - 2))
    return [w._op("PRelu", [x, w._const(f"{path}.w", slopes)], path)]


def _silu(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x = args[0][0]
    return [w._op("Mul", [x, w._op("Sigmoid", [x], f"{path}/sigmoid")], path)]


def _mish(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x = args[0][0]
    soft = w._op("Softplus", [x], f"{path}/softplus")
    return [w._op("Mul", [x, w._op("Tanh", [soft], f"{path}/tanh")], path)]


def _logsigmoid(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    # log(sigmoid(x)) = -softplus(-x); onnxruntime's Softplus is stable in both tails.
    negated = w._op("Neg", [args[0][0]], f"{path}/neg")
    return [w._op("Neg", [w._op("Softplus", [negated], f"{path}/softplus")], path)]


def _softmin(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    if not isinstance(cell.axis, int):
        raise ExportError(f"Node {path}: Softmin over several axes {cell.axis} has no ONNX "
                          "form; use one axis.")
    negated = w._op("Neg", [args[0][0]], f"{path}/neg")
    return [w._op("Softmax", [negated], path, axis=cell.axis)]


def _glu(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x, shape = args[0]
    axis = cell.axis % len(shape)
    half = int(shape[axis]) // 2

    def part(name: str, start: int) -> str:
        bounds = [w._const(f"{path}/{name}_{k}", np.asarray([v], dtype=np.int64))
                  for k, v in (("start", start), ("end", start + half), ("axis", axis))]
        return w._op("Slice", [x, *bounds], f"{path}/{name}")

    gate = w._op("Sigmoid", [part("b", half)], f"{path}/gate")
    return [w._op("Mul", [part("a", 0), gate], path)]


def _softplus(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    # log(1 + e^(beta·x))/beta, and x itself where beta·x > threshold, as the engine computes.
    x = args[0][0]
    scaled = x if cell.beta == 1 else w._op("Mul", [x, w._const(f"{path}/beta", cell.beta)],
                                            f"{path}/scaled")  # fmt: skip
    soft = w._op("Softplus", [scaled], f"{path}/softplus")
    if cell.beta != 1:
        soft = w._op("Div", [soft, w._const(f"{path}/beta_", cell.beta)], f"{path}/divided")
    linear = w._op("Greater", [scaled, w._const(f"{path}/threshold", cell.threshold)],
                   f"{path}/linear")  # fmt: skip
    return [w._op("Where", [linear, x, soft], path)]


ONNX: dict[str, OnnxRule] = {
    "ELU": _one("Elu", alpha="alpha"),
    "SeLU": _one("Selu", alpha="alpha", gamma="scale"),
    "CELU": _one("Celu", alpha="alpha"),
    "PReLU": _prelu,
    "Softsign": _fixed("Softsign"),
    "SiLU": _silu,
    "Mish": _mish,
    "HSwish": _fixed("HardSwish"),
    "HSigmoid": _fixed("HardSigmoid", alpha=1 / 6, beta=0.5),
    "ReLU6": _clip(0.0, 6.0),
    "Hardtanh": _clip(None, None),
    "LogSigmoid": _logsigmoid,
    "Softmin": _softmin,
    "GLU": _glu,
    "Softplus": _softplus,
    "Dropout1d": _fixed("Identity"),
    "Dropout2d": _fixed("Identity"),
    "Dropout3d": _fixed("Identity"),
}

# ----------------------------------------------------------------------------- engine script


def _softplus_code(values: Mapping[str, Any], args: list[str]) -> str:
    return f"ops.softplus({args[0]}, {values['beta']!r}, {values['threshold']!r})"


PYTHON_OPS: dict[str, PythonOp] = {"Softplus": _softplus_code}
