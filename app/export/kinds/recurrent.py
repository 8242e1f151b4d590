"""RNN, LSTM and GRU nodes: PyTorch, ONNX and engine-script export.

What changes on the way:
- PyTorch: nn.RNN/LSTM/GRU take the same arguments, and their Parameters have the same
  names, layouts and gate orders (LSTM i, f, g, o; GRU r, z, n), so the state_dict is the
  engine's as it is. Each node's call is flattened to one value per port; an LSTM's
  initial state is the pair (hx, cx), both connected or neither (the shape rule says so).
- ONNX: one LSTM/GRU/RNN op per layer, chained (an ONNX op is one layer, its directions
  inside); weights re-laid in ONNX's gate order (LSTM i, o, f, c; GRU z, r, h, with
  linear_before_reset=1 as MindSpore's GRU computes) and its biases as [W_b, R_b]. The ops
  take (T, N, features): batch-first inputs and outputs go through a Transpose. Between
  layers dropout is left out (the model predicts). h_n (and c_n) concatenate the layers'.
- Engine script: the layer itself, its outputs flattened as the node's op Cell does.
"""

from __future__ import annotations

import numpy as np

from app.document import Node
from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState

Value = tuple[str, tuple]
_KINDS = ("RNN", "LSTM", "GRU")
# ONNX's gate blocks, as indices of the engine's blocks.
_ONNX_GATES = {"LSTM": (0, 3, 1, 2), "GRU": (1, 0, 2), "RNN": (0,)}


def _arguments(values, bias_name: str) -> str:
    args = [str(values["input_size"]), str(values["hidden_size"])]
    if values["num_layers"] != 1:
        args.append(f"num_layers={values['num_layers']}")
    if values.get("nonlinearity", "tanh") != "tanh":
        args.append(f"nonlinearity={values['nonlinearity']!r}")
    if not values["has_bias"]:
        args.append(f"{bias_name}=False")
    if values["batch_first"]:
        args.append("batch_first=True")
    if values["dropout"]:
        args.append(f"dropout={values['dropout']!r}")
    if values["bidirectional"]:
        args.append("bidirectional=True")
    return ", ".join(args)


def _call(kind: str, args: list[str]) -> str:
    """The layer's call on the node's connected inputs, flattened to one value per port."""
    if kind != "LSTM":
        return f"{{}}({', '.join(args)})"
    state = f", ({args[1]}, {args[2]})" if len(args) == 3 else ""
    return f"(lambda out: (out[0], *out[1]))({{}}({args[0]}{state}))"


def _values(cell) -> dict:
    return {"input_size": cell.input_size, "hidden_size": cell.hidden_size,
            "num_layers": cell.num_layers, "has_bias": cell.has_bias,
            "batch_first": cell.batch_first, "dropout": cell.dropout,
            "bidirectional": cell.bidirectional,
            "nonlinearity": getattr(cell, "nonlinearity", "tanh")}


# ----------------------------------------------------------------------------- PyTorch


def _torch_op(kind: str) -> TorchOp:
    def op(cell, args: list[str]):
        return f"nn.{kind}({_arguments(_values(cell), 'bias')})", [], _call(kind, args)

    return op


TORCH: dict[str, TorchLayer] = {}
TORCH_OPS: dict[str, TorchOp] = {kind: _torch_op(kind) for kind in _KINDS}
TORCH_STATE: dict[str, TorchState] = {}  # the same names, layouts and gate orders

# ----------------------------------------------------------------------------- engine script


def _python_op(kind: str) -> PythonOp:
    def op(values, args: list[str]):
        return f"nn.{kind}({_arguments(values, 'has_bias')})", [], _call(kind, args)

    return op


PYTHON_OPS: dict[str, PythonOp] = {kind: _python_op(kind) for kind in _KINDS}

# ----------------------------------------------------------------------------- ONNX


def _relaid(kind: str, array: np.ndarray, hidden: int) -> np.ndarray:
    blocks = [array[k * hidden:(k + 1) * hidden] for k in _ONNX_GATES[kind]]
    return np.concatenate(blocks, axis=0).astype(np.float32)


def _onnx_rule(kind: str) -> OnnxRule:
    def rule(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
        x = args[0][0]
        hidden, dirs = cell.hidden_size, cell.num_directions
        if cell.batch_first:
            x = w._op("Transpose", [x], f"{path}/time_major", perm=[1, 0, 2])
        states = [a for a, _ in args[1:]]
        h_list, c_list = [], []
        for k in range(cell.num_layers):
            tag = f"{path}/l{k}"
            suffixes = ["", "_reverse"][:dirs]
            weights = []
            for name in ("weight_ih", "weight_hh"):
                stacked = np.stack([_relaid(kind, getattr(cell, f"{name}_l{k}{s}").asnumpy(),
                                            hidden) for s in suffixes])
                weights.append(w._const(f"{path}.{name}_l{k}", stacked))
            bias = ""
            if cell.has_bias:
                stacked = np.stack([np.concatenate([
                    _relaid(kind, getattr(cell, f"{name}_l{k}{s}").asnumpy(), hidden)
                    for name in ("bias_ih", "bias_hh")]) for s in suffixes])
                bias = w._const(f"{path}.bias_l{k}", stacked)
            inputs = [x, *weights, bias, ""]
            for state, which in zip(states, ("h", "c"), strict=False):  # this layer's rows
                inputs.append(_rows(w, state, k * dirs, (k + 1) * dirs, f"{tag}/initial_{which}"))
            while inputs and inputs[-1] == "":
                inputs.pop()
            outs = [w._name(f"{tag}/Y"), w._name(f"{tag}/Y_h")]
            if kind == "LSTM":
                outs.append(w._name(f"{tag}/Y_c"))
            attrs = {"hidden_size": hidden,
                     "direction": "bidirectional" if dirs == 2 else "forward"}
            if kind == "GRU":
                attrs["linear_before_reset"] = 1
            if kind == "RNN":
                act = "Relu" if cell.nonlinearity == "relu" else "Tanh"
                attrs["activations"] = [act] * dirs
            w.nodes.append(w.helper.make_node(kind, inputs, outs, name=outs[0], **attrs))
            h_list.append(outs[1])
            if kind == "LSTM":
                c_list.append(outs[2])
            # Y (T, D, N, H) -> (T, N, D·H), the next layer's input
            turned = w._op("Transpose", [outs[0]], f"{tag}/turned", perm=[0, 2, 1, 3])
            x = w._op("Reshape", [turned, w._const(f"{tag}/shape",
                                                   np.asarray([0, 0, -1], np.int64))],
                      f"{tag}/output")
        output = x
        if cell.batch_first:
            output = w._op("Transpose", [x], f"{path}/output", perm=[1, 0, 2])
        found = [output, _joined(w, h_list, f"{path}/h_n")]
        if kind == "LSTM":
            found.append(_joined(w, c_list, f"{path}/c_n"))
        return found

    return rule


def _rows(w, state: str, start: int, end: int, name: str) -> str:
    starts = w._const(f"{name}/starts", np.asarray([start], np.int64))
    ends = w._const(f"{name}/ends", np.asarray([end], np.int64))
    axes = w._const(f"{name}/axes", np.asarray([0], np.int64))
    return w._op("Slice", [state, starts, ends, axes], f"{name}/rows")


def _joined(w, names: list[str], out: str) -> str:
    if len(names) == 1:
        return w._op("Identity", names, out)
    return w._op("Concat", names, out, axis=0)


ONNX: dict[str, OnnxRule] = {kind: _onnx_rule(kind) for kind in _KINDS}
