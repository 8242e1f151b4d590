"""Embedding, positional encodings and Select.

PyTorch, ONNX and engine-script export (see app.export.kinds for each table's form).
What changes on the way:
- Embedding is torch's nn.Embedding (its `weight` is MindSpore's `embedding_table`) and
  ONNX's Gather on the table (the ids cast to int64 first: the ONNX model casts every
  Input that is not float32 to float32, which holds ids up to 2^24 exactly).
- PositionalEncoding computes its sine/cosine table in the scripts for the length that
  arrives (a one-line function on the node's module); ONNX gets it as a constant for the
  sequence length the graph was exported with.
- LearnedPositionalEncoding's table is a torch nn.Embedding's weight, of which the first
  T rows are added; ONNX slices the initializer to T rows.
- Select is `x[:, index]` in both scripts and ONNX's Gather with a scalar index.
The engine script writes Embedding's own constructor (nothing here).
"""

from __future__ import annotations

import numpy as np

from app.compiler.sequence_cells import select_index, sinusoid_table
from app.document import Node
from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState
from app.export.report import ExportError

Value = tuple[str, tuple]

# The sine/cosine table of length t and width e, as sequence_cells.sinusoid_table makes it
# (float64, the same operations): sin of each angle, then its cos, interleaved.
_TABLE = ("lambda t, e: (lambda a: np.stack([np.sin(a), np.cos(a)], -1).reshape(t, -1)"
          "[:, :e])(np.arange(t, dtype=np.float64)[:, None] * np.exp(np.arange(0, e, 2, "
          "dtype=np.float64) * (-np.log(10000.0) / e)))")


# ----------------------------------------------------------------------------- engine script


def _positional_python(v, args: list[str]) -> tuple[str, list[str], str]:
    (x,) = args
    return ("nn.Cell()", [f"{{}}.table = {_TABLE}"],
            f"ops.add({x}, {{}}.table({x}.shape[1], {x}.shape[2])"
            f".astype({x}.asnumpy().dtype))")


def _learned_python(v, args: list[str]) -> tuple[str, list[str], str]:
    (x,) = args
    size = (v["max_len"], v["embedding_size"])
    return ("nn.Cell()", [f"{{}}.embedding_table = engine.Parameter(np.zeros({size!r}, "
                          "np.float32))"],
            f"ops.add({x}, {{}}.embedding_table[:{x}.shape[1]])")


PYTHON_OPS: dict[str, PythonOp] = {
    "PositionalEncoding": _positional_python,
    "LearnedPositionalEncoding": _learned_python,
    "Select": lambda v, args: args[0] + select_index(v["axis"], v["index"]),
}

# ----------------------------------------------------------------------------- PyTorch


def _embedding(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    pad = "" if cell.padding_idx is None else f", padding_idx={cell.padding_idx}"
    return f"nn.Embedding({cell.vocab_size}, {cell.embedding_size}{pad})", "{}"


def _positional_torch(cell, args: list[str]) -> tuple[str, list[str], str]:
    (x,) = args
    return ("nn.Module()", [f"{{}}.table = {_TABLE}"],
            f"{x} + torch.from_numpy({{}}.table({x}.shape[1], {x}.shape[2])).to({x}.dtype)")


def _learned_torch(cell, args: list[str]) -> tuple[str, list[str], str]:
    (x,) = args
    return (f"nn.Embedding({cell.max_len}, {cell.embedding_size})", [],
            f"{x} + {{}}.weight[:{x}.shape[1]]")


def _table_state(local: str, array: np.ndarray) -> tuple[str, np.ndarray] | None:
    return ("weight", array) if local == "embedding_table" else (local, array)


TORCH: dict[str, TorchLayer] = {"Embedding": _embedding}
TORCH_OPS: dict[str, TorchOp] = {
    "PositionalEncoding": _positional_torch,
    "LearnedPositionalEncoding": _learned_torch,
    "Select": lambda cell, args: args[0] + select_index(cell.axis, cell.index),
}
TORCH_STATE: dict[str, TorchState] = {
    "Embedding": _table_state,
    "LearnedPositionalEncoding": _table_state,
}

# ----------------------------------------------------------------------------- ONNX


def _ints(w, name: str, values) -> str:
    return w._const(name, np.asarray(values, dtype=np.int64))


def _steps(path: str, shape: tuple) -> int:
    steps = shape[1] if len(shape) == 3 else None
    if not isinstance(steps, int):
        raise ExportError(f"Node {path}: ONNX export needs the sequence length, which is not "
                          f"known here ({shape}).")
    return steps


def _onnx_embedding(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    ids = w._op("Cast", [args[0][0]], f"{path}/ids", to=w.onnx.TensorProto.INT64)
    return [w._op("Gather", [w._param(cell, "embedding_table", path), ids], path, axis=0)]


def _onnx_positional(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x, shape = args[0]
    table = sinusoid_table(_steps(path, shape), int(shape[2]))
    return [w._op("Add", [x, w._const(f"{path}/table", table)], path)]


def _onnx_learned(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x, shape = args[0]
    steps = _steps(path, shape)
    table = w._param(cell, "embedding_table", path)
    rows = w._op("Slice", [table, _ints(w, f"{path}/starts", [0]),
                           _ints(w, f"{path}/ends", [steps]), _ints(w, f"{path}/axes", [0])],
                 f"{path}/rows")
    return [w._op("Add", [x, rows], path)]


def _onnx_select(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    x, shape = args[0]
    index = w._name(f"{path}/index")  # a scalar (w._const makes arrays at least 1-D)
    w.initializers.append(w.onnx.numpy_helper.from_array(np.array(cell.index, np.int64), index))
    return [w._op("Gather", [x, index], path, axis=cell.axis % len(shape))]


ONNX: dict[str, OnnxRule] = {
    "Embedding": _onnx_embedding,
    "PositionalEncoding": _onnx_positional,
    "LearnedPositionalEncoding": _onnx_learned,
    "Select": _onnx_select,
}
