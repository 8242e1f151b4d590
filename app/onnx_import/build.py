"""The project an import builds: nodes and edges from ONNX tensors, Parameters from initializers.

A converter (app.onnx_import.convert_*) turns one ONNX node into one or more Cellwright
nodes through a `Builder`: `shape(name)` and `const(name)` tell it what it reads,
`add(...)` creates a node, wires its input ports to the tensors' producers and records
which tensor each output port makes. A tensor that is a constant but feeds an op node
becomes a Constant node the first time it is read that way.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from app.catalogue import CATALOGUE, Catalogue
from app.document import Project
from app.onnx_import.fold import MERGED, Folded
from app.onnx_import.ir import OnnxImportError, OnnxNode

BATCH = "N"
Source = tuple[str, str]  # (node id, output port)
Feed = str | Source | None  # an ONNX tensor name, a port made here, or nothing


class Builder:
    def __init__(self, folded: Folded, *, opset: int, name: str = "Imported",
                 catalogue: Catalogue = CATALOGUE) -> None:  # fmt: skip
        self.folded, self.catalogue, self.opset = folded, catalogue, opset
        self.project = Project(name=name)
        self.graph = self.project.graph
        self.sources: dict[str, Source] = {}
        self.constants = 0  # Constant nodes made
        self.aliases: dict[str, str] = {}  # a tensor that is another one (Identity, Dropout)

    # ---- what a converter reads ---------------------------------------------------------

    def const(self, name: str) -> np.ndarray | None:
        """The value of a constant tensor (an initializer or folded), else None."""
        if not name:
            return None
        return self.folded.consts.get(self.aliases.get(name, name))

    def is_const(self, name: str) -> bool:
        return self.const(name) is not None

    def varying(self, name: str) -> tuple[np.ndarray, np.ndarray] | None:
        """A folded tensor that follows the batch size: its values at batch 2 and at 3."""
        return self.folded.varying.get(self.aliases.get(name, name))

    def shape(self, name: str) -> tuple | None:
        """A computed tensor's shape with 'N' on its batch axis (None when unknown)."""
        name = self.aliases.get(name, name)
        value = self.const(name)
        if value is not None:
            return value.shape
        shape = self.folded.shapes.get(name)
        if shape is None:
            return None
        axis = self.folded.batch_axis.get(name)
        if axis is None or axis == MERGED:
            return shape
        return tuple(BATCH if i == axis else d for i, d in enumerate(shape))

    def rank(self, name: str) -> int | None:
        shape = self.shape(name)
        return None if shape is None else len(shape)

    def batch_axis(self, node: OnnxNode, name: str) -> int | None:
        """Where `name`'s batch axis is; refuses a tensor whose batch merged with an axis."""
        axis = self.folded.batch_axis.get(self.aliases.get(name, name))
        if axis == MERGED:
            raise OnnxImportError(
                f"Node '{node.label}' ({node.op}) reads a tensor whose batch axis is merged "
                "with another axis; Cellwright keeps the batch axis on its own.")
        return axis

    # ---- what a converter makes ---------------------------------------------------------

    def alias(self, new: str, old: str) -> None:
        """Tensor `new` is tensor `old` (a node that passes its input through)."""
        old = self.aliases.get(old, old)
        self.aliases[new] = old
        if old in self.sources:
            self.sources[new] = self.sources[old]

    def add(self, type_name: str, onnx: OnnxNode | None, *, params: Mapping[str, Any] = (),
            inputs: Sequence[Feed] = (), outputs: Sequence[str | None] = (),
            weights: Mapping[str, np.ndarray] = (), name: str = "") -> str:
        """A new node of `type_name`; its input ports in order get `inputs`, its output ports
        in order make the tensors `outputs`; `weights` are its Parameter values."""
        node = self.catalogue.new_node(type_name, params=dict(params))
        wanted = name or (_legal(onnx.name) or _module_path(onnx.name) if onnx else "")
        if wanted and onnx is not None and self.graph.node_named(wanted) is not None:
            wanted = f"{wanted}_{type_name.lower()}"  # a module's second op: 'block_add'
        if wanted:
            node = node.replace(name=self.graph.free_name(wanted))
        node = self.graph.add_node(node)
        for port, feed in zip(node.inputs, inputs, strict=False):
            if feed is None:
                continue
            source = feed if isinstance(feed, tuple) else self.source(feed, onnx)
            self.graph.connect(source[0], source[1], node.id, port)
        for port, tensor in zip(node.outputs, outputs, strict=False):
            if tensor:
                self.sources[tensor] = (node.id, port)
        if weights:
            self.project.param_values[node.id] = {
                key: np.ascontiguousarray(value, dtype=np.float32) for key, value in
                dict(weights).items()}  # fmt: skip
        return node.id

    def source(self, name: str, onnx: OnnxNode | None = None, *,
               rank: int | None = None) -> Source:  # fmt: skip
        """The port making tensor `name`; a constant becomes a Constant node, its leading
        size-1 axes dropped so that its batch axis of 1 lines up (`rank`: of what it meets)."""
        name = self.aliases.get(name, name)
        if name in self.sources:
            return self.sources[name]
        value = self.const(name)
        if value is None:
            where = f" (read by '{onnx.label}', {onnx.op})" if onnx is not None else ""
            if self.varying(name) is not None:
                raise OnnxImportError(
                    f"Tensor '{name}'{where} is made from the batch size alone (such as "
                    "zeros shaped like the batch); Cellwright's nodes can't compute it.")
            raise OnnxImportError(f"Tensor '{name}'{where} is made by nothing Cellwright "
                                  "imported.")
        shape = _sample_shape(value.shape, rank, name, onnx)
        node = self.add("Constant", None, params={"shape": shape or (1,)},
                        weights={"value": value.reshape(shape or (1,))},
                        name=f"const_{_legal(name) or 'value'}"[:48])
        self.constants += 1
        source = (node, "out")
        self.sources[name] = source
        return source


def _sample_shape(shape: tuple[int, ...], rank: int | None, name: str, onnx) -> tuple[int, ...]:
    """A constant's shape without the axes its Constant node's batch axis stands for."""
    keep = len(shape) if rank is None else min(len(shape), rank - 1)
    drop = shape[: len(shape) - keep]
    if any(d != 1 for d in drop):
        where = f" for '{onnx.label}'" if onnx is not None else ""
        raise OnnxImportError(f"Constant '{name}' {tuple(shape)}{where} varies along the batch "
                              "axis; Cellwright's constants are the same for every sample.")
    return tuple(shape[len(drop):])


def _legal(name: str) -> str:
    """`name` when it can name a node (letters, digits, _; not a Python keyword), else ''."""
    if name and name.isidentifier() and not keyword.iskeyword(name) and len(name) <= 48:
        return name
    return ""


def _module_path(name: str) -> str:
    """A node name from the module path torch's legacy exporter writes: '/layer1/layer1.0/
    conv1/Conv' (module layer1.0.conv1) → 'layer1_0_conv1'; '' when there is none."""
    parts = [p for p in name.split("/") if p] if name.startswith("/") else []
    path = ""
    for part in parts[:-1]:  # the last part is the op
        path = part if path and part.startswith(path + ".") else \
            (f"{path}.{part}" if path else part)
    return _legal(re.sub(r"\W+", "_", path).strip("_"))


def sources_of(builder: Builder, names: Iterable[str]) -> list[Source]:
    return [builder.source(name) for name in names]
