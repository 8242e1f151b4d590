"""Fold an ONNX model's shape computations into constants, keeping the batch axis free.

Exporters compute shapes inside the model (Shape, Gather, Concat, Range, Expand, …).
For the known input shapes all of them are constants. The model is folded twice, with a
batch of 2 and with a batch of 3, using onnx's own shape inference between rounds of
NumPy evaluation (app.onnx_import.evaluate). What comes out the same both times is a
constant; what differs follows the batch (a Reshape target holding the batch size):
`varying` keeps both values so a converter can tell which entry is the batch. The batch
axis of every tensor the network computes is where its two shapes differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from app.onnx_import.evaluate import EVALUATE
from app.onnx_import.ir import OnnxImportError, OnnxModel, OnnxNode, ValueSpec, import_onnx_module

BATCHES = (2, 3)
SMALL = 1 << 16  # constants up to this many elements go to shape inference as values
MERGED = -1  # batch_axis of a tensor whose batch was merged into another axis


@dataclass
class Folded:
    nodes: list[OnnxNode]  # the nodes left to convert, in graph order
    consts: dict[str, np.ndarray]  # initializers and folded tensors that don't follow the batch
    varying: dict[str, tuple[np.ndarray, np.ndarray]]  # folded tensors that do (at 2 and 3)
    shapes: dict[str, tuple[int, ...]]  # each computed tensor's shape with a batch of 2
    batch_axis: dict[str, int | None] = field(default_factory=dict)
    input_shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # without batch
    folded: int = 0  # nodes folded away
    outputs: tuple[str, ...] = ()  # the graph's outputs (a pattern must not swallow one)


def input_sample_shapes(model: OnnxModel,
                        given: dict[str, tuple[int, ...]] | None = None) -> dict[str, tuple]:
    """Each graph input's shape without its batch axis; refuses what can't be a batch."""
    given = dict(given or {})
    shapes = {}
    for spec in model.inputs:
        if spec.name in given:
            shapes[spec.name] = tuple(int(d) for d in given.pop(spec.name))
            continue
        shapes[spec.name] = _sample_shape(spec)
    if given:
        raise OnnxImportError(f"The model has no input named {', '.join(map(repr, given))} "
                              f"(its inputs: {', '.join(s.name for s in model.inputs)}).")
    return shapes


def _sample_shape(spec: ValueSpec) -> tuple[int, ...]:
    if spec.shape is None or not spec.shape:
        raise OnnxImportError(f"Input '{spec.name}' has no shape with a batch axis: Cellwright "
                              "takes an input's first axis as the batch.")
    first, rest = spec.shape[0], spec.shape[1:]
    if isinstance(first, int) and first != 1:
        raise OnnxImportError(
            f"Input '{spec.name}' has a fixed first axis of {first}, so it is not a batch "
            "axis: Cellwright takes the first axis of every input as the batch (re-export "
            "with a batch of 1 or a dynamic first axis).")
    for axis, dim in enumerate(rest, start=1):
        if not isinstance(dim, int) or dim < 1:
            raise OnnxImportError(
                f"Input '{spec.name}' axis {axis} has no fixed size ({dim or '?'}); give it "
                f"one (cellwright import --shape {spec.name}=…) or re-export with fixed sizes.")
    return tuple(rest)


def fold(model: OnnxModel, sample_shapes: dict[str, tuple[int, ...]]) -> Folded:
    """Fold `model` for inputs of `sample_shapes` (per input, without the batch axis)."""
    onnx = import_onnx_module()
    runs = [_Run(onnx, model, sample_shapes, batch).go() for batch in BATCHES]
    if _keep_batch_in_reshapes(model, *runs):
        runs = [_Run(onnx, model, sample_shapes, batch).go() for batch in BATCHES]
    first, second = runs
    gone = first.folded & second.folded
    consts = dict(model.initializers)
    varying = {}
    for node in model.nodes:
        if id(node) not in gone:
            continue
        for name in node.outputs:
            a, b = first.values.get(name), second.values.get(name)
            if a is None or b is None:
                continue
            if a.shape == b.shape and np.array_equal(a, b):
                consts[name] = a
            else:
                varying[name] = (a, b)
    nodes = [n for n in model.nodes if id(n) not in gone]
    shapes, axes = {}, {}
    for name, shape in first.shapes.items():
        other = second.shapes.get(name)
        if name in consts or name in varying or other is None:
            continue
        shapes[name] = shape
        axes[name] = _batch_axis(shape, other)
    for spec in model.inputs:
        shapes[spec.name] = (BATCHES[0], *sample_shapes[spec.name])
        axes[spec.name] = 0
    return Folded(nodes, consts, varying, shapes, axes, dict(sample_shapes), len(gone),
                  tuple(spec.name for spec in model.outputs))


def _keep_batch_in_reshapes(model: OnnxModel, first: _Run, second: _Run) -> bool:
    """A model made for a fixed batch of 1 reshapes to a constant such as [1, -1]: that 1
    is the batch. Where it would merge the batch into the next axis, it becomes 0 (copy the
    input's size), which is the same at a batch of 1. True if any Reshape changed."""
    if not any(spec.shape and spec.shape[0] == 1 for spec in model.inputs):
        return False
    changed = False
    for node in model.nodes:
        target = model.initializers.get(node.inputs[1]) if node.op == "Reshape" else None
        if target is None or target.ndim != 1 or not target.size or target[0] != 1:
            continue
        data, out = node.inputs[0], node.outputs[0]
        if any(name not in run.shapes for run in (first, second) for name in (data, out)):
            continue
        if (_batch_axis(first.shapes[data], second.shapes[data]) == 0
                and _batch_axis(first.shapes[out], second.shapes[out]) == MERGED):
            name = f"{node.inputs[1]}__batch"
            model.initializers[name] = np.concatenate([[0], target[1:]]).astype(target.dtype)
            node.inputs[1] = name
            changed = True
    return changed


def _batch_axis(a: tuple[int, ...], b: tuple[int, ...]) -> int | None:
    if len(a) != len(b):
        return MERGED
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if not differ:
        return None
    if len(differ) == 1 and (a[differ[0]], b[differ[0]]) == BATCHES:
        return differ[0]
    return MERGED


class _Run:
    """One folding at one batch size: NumPy evaluation and shape inference, in rounds."""

    def __init__(self, onnx, model: OnnxModel, sample_shapes, batch: int) -> None:
        self.onnx, self.model, self.batch = onnx, model, batch
        self.values: dict[str, np.ndarray] = dict(model.initializers)
        self.shapes: dict[str, tuple[int, ...]] = {
            name: (batch, *shape) for name, shape in sample_shapes.items()}
        self.dtypes = {spec.name: spec.dtype or np.dtype(np.float32) for spec in model.inputs}
        self.folded: set[int] = set()

    def go(self) -> _Run:
        for _ in range(len(self.model.nodes) + 1):
            self._infer()
            if not self._evaluate():
                break
        return self

    def _evaluate(self) -> bool:
        changed = False
        for node in self.model.nodes:
            if (id(node) in self.folded or node.op not in EVALUATE
                    or node.domain not in ("", "ai.onnx")):
                continue
            args = self._args(node)
            if args is None:
                continue
            try:
                outputs = EVALUATE[node.op](node, args)
            except Exception as exc:
                raise OnnxImportError(f"Node '{node.label}' ({node.op}) can't be computed for "
                                      f"these input shapes: {exc}") from None
            for name, value in zip(node.outputs, outputs, strict=False):
                if name:
                    self.values[name] = np.asarray(value)
                    self.shapes.pop(name, None)
            self.folded.add(id(node))
            changed = True
        return changed

    def _args(self, node: OnnxNode) -> list[np.ndarray | None] | None:
        args: list[np.ndarray | None] = []
        for index, name in enumerate(node.inputs):
            if not name:
                args.append(None)
            elif name in self.values:
                args.append(self.values[name])
            elif node.op in ("Shape", "Size") and index == 0 and self._known(name):
                args.append(np.broadcast_to(np.zeros((), bool), self.shapes[name]))
            else:
                return None
        return args

    def _known(self, name: str) -> bool:
        shape = self.shapes.get(name)
        return shape is not None and all(isinstance(d, int) and d >= 0 for d in shape)

    def _infer(self) -> None:
        onnx = self.onnx
        helper = onnx.helper
        live = [n for n in self.model.nodes if id(n) not in self.folded]
        used = {name for n in live for name in n.inputs if name}
        inputs, initializers = [], []
        for name in sorted(used):
            if name in self.values:
                value = self.values[name]
                if value.size <= SMALL:
                    initializers.append(onnx.numpy_helper.from_array(value, name))
                else:
                    inputs.append(helper.make_tensor_value_info(
                        name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
        for spec in self.model.inputs:
            inputs.append(helper.make_tensor_value_info(
                spec.name, helper.np_dtype_to_tensor_dtype(self.dtypes[spec.name]),
                self.shapes[spec.name]))
        protos = []
        for n in live:
            proto = helper.make_node(n.op, n.inputs, n.outputs, name=n.name, domain=n.domain,
                                     **_attrs(onnx, n))  # fmt: skip
            protos.append(proto)
        produced = [name for n in live for name in n.outputs if name]
        outputs = [helper.make_tensor_value_info(name, 0, None) for name in produced[-1:]]
        graph = helper.make_graph(protos, "fold", inputs, outputs, initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.model.opset)])
        model.ir_version = 8
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
        except Exception as exc:
            raise OnnxImportError(f"The model's shapes don't work out for these input shapes: "
                                  f"{exc}") from None
        for value in [*inferred.graph.value_info, *inferred.graph.output]:
            shape = _shape_of(value)
            if shape is not None:
                self.shapes[value.name] = shape


def _attrs(onnx, node: OnnxNode) -> dict:
    out = {}
    for key, value in node.attrs.items():
        if key.startswith("__"):
            continue
        if isinstance(value, np.ndarray):
            value = onnx.numpy_helper.from_array(value)
        out[key] = value
    return out


def _shape_of(value) -> tuple[int, ...] | None:
    tensor = value.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    dims = []
    for dim in tensor.shape.dim:
        if not dim.HasField("dim_value"):
            return None
        dims.append(int(dim.dim_value))
    return tuple(dims)
