"""An ONNX model read into plain Python: nodes, initializers and the graph's inputs and outputs.

The importer never works on protobuf objects past this module. `read_model` loads a
file (or bytes), inlines local functions, turns `Constant` nodes into initializers and
checks what a model must have; an ONNX file that is not one is refused with the reason.
`onnx` is imported only here, and only when a model is read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

MISSING_ONNX = "Importing ONNX needs the onnx extra: pip install 'cellwright[onnx]'"
STANDARD_DOMAINS = ("", "ai.onnx")


class OnnxImportError(ValueError):
    """A model that can't be imported; the message is meant for the user."""


@dataclass
class OnnxNode:
    """One ONNX node: `inputs` keep '' where an optional input is left out."""

    op: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any] = field(default_factory=dict)
    domain: str = ""

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    @property
    def label(self) -> str:
        """How messages name the node: its name, or its op and first output."""
        return self.name or f"{self.op} → {self.outputs[0] if self.outputs else '?'}"


@dataclass(frozen=True)
class ValueSpec:
    """A graph input or output: its name, shape (ints, or text for a named axis, None for
    unknown) and NumPy dtype (None when the model does not say)."""

    name: str
    shape: tuple[int | str | None, ...] | None
    dtype: np.dtype | None


@dataclass
class OnnxModel:
    inputs: list[ValueSpec]
    outputs: list[ValueSpec]
    nodes: list[OnnxNode]
    initializers: dict[str, np.ndarray]
    opset: int
    name: str = ""
    producer: str = ""

    def consumers(self) -> dict[str, list[OnnxNode]]:
        """Each tensor name and the nodes reading it, in graph order."""
        users: dict[str, list[OnnxNode]] = {}
        for node in self.nodes:
            for name in node.inputs:
                if name:
                    users.setdefault(name, []).append(node)
        return users


def import_onnx_module():
    try:
        import onnx
    except ImportError:
        raise OnnxImportError(MISSING_ONNX) from None
    return onnx


def read_model(source: str | os.PathLike[str] | bytes | Any) -> OnnxModel:
    """The model in `source` (a path, the file's bytes, or a loaded ModelProto)."""
    onnx = import_onnx_module()
    proto = _load(onnx, source)
    if proto.functions:
        from onnx import inliner

        proto = inliner.inline_local_functions(proto)
    opset = next((o.version for o in proto.opset_import if o.domain in STANDARD_DOMAINS), 0)
    if not opset:
        raise OnnxImportError("The model names no version of the standard ONNX operator set.")
    graph = proto.graph
    numpy_helper = onnx.numpy_helper
    initializers = {t.name: _array(numpy_helper, t) for t in graph.initializer}
    for sparse in graph.sparse_initializer:
        raise OnnxImportError(f"Sparse initializer '{sparse.values.name}' is not supported.")
    nodes = []
    for node in graph.node:
        attrs = {a.name: _attribute(onnx, a) for a in node.attribute}
        if node.op_type == "Constant" and node.domain in STANDARD_DOMAINS:
            initializers[node.output[0]] = _constant(attrs, node)
            continue
        nodes.append(OnnxNode(node.op_type, node.name or "", list(node.input),
                              list(node.output), attrs, node.domain or ""))  # fmt: skip
        if any(a.type == onnx.AttributeProto.GRAPH for a in node.attribute):
            nodes[-1].attrs["__subgraph__"] = True
    inputs = [_spec(onnx, v) for v in graph.input if v.name not in initializers]
    outputs = [_spec(onnx, v) for v in graph.output]
    if not inputs:
        raise OnnxImportError("The model has no inputs: there is nothing to feed it.")
    if not outputs:
        raise OnnxImportError("The model has no outputs.")
    return OnnxModel(inputs, outputs, nodes, initializers, opset, graph.name,
                     proto.producer_name)  # fmt: skip


def _load(onnx, source):
    if isinstance(source, onnx.ModelProto):
        return source
    try:
        if isinstance(source, bytes | bytearray):
            if not source:
                raise OnnxImportError("The data is empty: it holds no ONNX model.")
            return onnx.load_from_string(bytes(source))
        path = Path(source)
        if not path.is_file():
            raise OnnxImportError(f"{path}: no such file.")
        if path.stat().st_size == 0:
            raise OnnxImportError(f"{path.name} is empty: it holds no ONNX model.")
        return onnx.load(str(path))
    except OnnxImportError:
        raise
    except Exception as exc:  # protobuf's DecodeError and friends: not an ONNX model
        what = Path(source).name if not isinstance(source, bytes | bytearray) else "The data"
        raise OnnxImportError(f"{what} is not a readable ONNX model ({exc}).") from None


def _array(numpy_helper, tensor) -> np.ndarray:
    try:
        return np.array(numpy_helper.to_array(tensor))
    except Exception as exc:
        raise OnnxImportError(f"Tensor '{tensor.name}' can't be read ({exc}); if the model "
                              "keeps its weights in a separate file, keep it beside the "
                              "model.") from None


def _attribute(onnx, attribute) -> Any:
    kind = onnx.AttributeProto
    if attribute.type == kind.TENSOR:
        return np.array(onnx.numpy_helper.to_array(attribute.t))
    if attribute.type == kind.GRAPH:
        return None
    value = onnx.helper.get_attribute_value(attribute)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode("utf-8", "replace") for v in value]
    if isinstance(value, list):
        return list(value)
    return value


def _constant(attrs: dict, node) -> np.ndarray:
    if "value" in attrs:
        return np.asarray(attrs["value"])
    for key, dtype in (("value_float", np.float32), ("value_int", np.int64)):
        if key in attrs:
            return np.asarray(attrs[key], dtype=dtype)
    for key, dtype in (("value_floats", np.float32), ("value_ints", np.int64)):
        if key in attrs:
            return np.asarray(attrs[key], dtype=dtype)
    raise OnnxImportError(f"Constant node '{node.name or node.output[0]}' holds a kind of value "
                          "Cellwright can't read.")


def _spec(onnx, value) -> ValueSpec:
    tensor = value.type.tensor_type
    if not value.type.HasField("tensor_type"):
        raise OnnxImportError(f"Graph input/output '{value.name}' is not a tensor.")
    dtype = None
    if tensor.elem_type:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    shape = None
    if tensor.HasField("shape"):
        dims = []
        for dim in tensor.shape.dim:
            if dim.HasField("dim_value"):
                dims.append(int(dim.dim_value))
            elif dim.HasField("dim_param"):
                dims.append(dim.dim_param)
            else:
                dims.append(None)
        shape = tuple(dims)
    return ValueSpec(value.name, shape, dtype)
