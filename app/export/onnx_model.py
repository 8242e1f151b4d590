"""Export a project's network as an ONNX model (the `onnx` extra: pip install 'cellwright[onnx]').

The model is the network's forward pass in predict mode: BatchNorm on its moving
statistics, Dropout as identity; HookBackward nodes (they only show gradients) are
dropped with a note, and so is the Output node's loss. Composites are inlined, their
nodes' tensors named by dotted path ('block.dense1'); weights are initializers named as
the network's Parameters ('dense1.weight'). There is one graph input per Input node,
named after it, with a dynamic batch axis 'N', and one graph output per Output node.
Anything else (a user-written Cell, a node type ONNX export doesn't know) is refused
with an ExportError naming the node. `onnx` is imported only when exporting.
"""

from __future__ import annotations

import contextlib
import math
import os
from pathlib import Path

import numpy as np

from app import __version__
from app.catalogue import CATALOGUE, NO_LOSS, Catalogue
from app.compiler import CompiledNetwork, compile_project
from app.document import COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Graph, Node, Project
from app.export import kinds
from app.export.python_script import ExportError, connected_inputs
from app.export.report import ExportReport
from engine import nn
from engine.ops._conv import same_pads

OPSET = 17
IR_VERSION = 8  # the IR that opset 17 came with: older runtimes load the model too
MISSING_ONNX = "ONNX export needs the onnx extra: pip install 'cellwright[onnx]'"
_INPUTS, _OUTPUTS = ("Input", SUBGRAPH_INPUT), ("Output", SUBGRAPH_OUTPUT)
# Parameter-free engine layers that are one ONNX op: node type -> (op, attribute from the Cell).
_SIMPLE = {"ReLU": ("Relu", None), "Sigmoid": ("Sigmoid", None), "Tanh": ("Tanh", None),
           "LeakyReLU": ("LeakyRelu", "alpha"), "Softmax": ("Softmax", "axis"),
           "LogSoftmax": ("LogSoftmax", "axis"), "Identity": ("Identity", None),
           "Dropout": ("Identity", None)}  # fmt: skip
_LAYERS = frozenset({*_SIMPLE, "GELU", "Dense", "Conv2d", "BatchNorm1d", "BatchNorm2d",
                     "Flatten"})  # the pools are app.export.kinds.pool's, as the 1-D/3-D
_BINARY = {"Add": "Add", "Mul": "Mul", "MatMul": "MatMul"}
_ACTIVATIONS = {nn.ReLU: "ReLU", nn.Sigmoid: "Sigmoid", nn.Tanh: "Tanh", nn.GELU: "GELU",
                nn.LeakyReLU: "LeakyReLU", nn.Softmax: "Softmax",
                nn.LogSoftmax: "LogSoftmax"}  # fmt: skip

Value = tuple[str, tuple]  # an ONNX tensor name and its shape ('N' for the batch axis)


class Args(list):
    """A node's inputs as its ONNX rule gets them: one Value per connected input port, in
    port order (a plain list to rules that only need that), and `ports`, the port each
    came from. A node with an unconnected optional port before a connected one (a
    MultiheadAttention fed query and attn_mask only) needs `ports` to read its args right;
    `by_port()` gives them as {port: Value}."""

    def __init__(self, values: list[Value], ports: tuple[str, ...]) -> None:
        super().__init__(values)
        if len(ports) != len(values):
            raise ValueError(f"Args: {len(values)} values for {len(ports)} ports")
        self.ports = ports

    def by_port(self) -> dict[str, Value]:
        return dict(zip(self.ports, self, strict=True))


def export_onnx(project: Project, path: str | os.PathLike[str], *,
                catalogue: Catalogue = CATALOGUE) -> ExportReport:  # fmt: skip
    """Write the project's network to `path` as an ONNX model; what was written and left out.

    Raises ExportError when the onnx extra is missing, for a node ONNX can't express (the
    message names it) or a file that can't be written; CompileError for a graph that does
    not compile. Nothing is written unless the whole model is valid.
    """
    onnx = _import_onnx()
    target = Path(path)
    compiled = compile_project(project, catalogue=catalogue)
    builder = _Builder(onnx, compiled, catalogue)
    model = builder.model(project)
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        raise ExportError(f"The ONNX model of this network is not valid: {exc}") from exc
    try:
        _write_bytes(target, model.SerializeToString())
    except OSError as exc:
        raise ExportError(f"Could not write {exc.filename or target}: {exc.strerror}.") from None
    return ExportReport(written=[target], left_out=builder.left_out)


def _import_onnx():
    try:
        import onnx
        import onnx.checker
        import onnx.shape_inference
    except ImportError:
        raise ExportError(MISSING_ONNX) from None
    return onnx


class _Builder:
    """Collects ONNX nodes and initializers for a graph and, inlined, its composites."""

    def __init__(self, onnx, compiled: CompiledNetwork, catalogue: Catalogue) -> None:
        self.onnx = onnx
        self.helper = onnx.helper
        self.compiled = compiled
        self.catalogue = catalogue
        self.nodes: list = []
        self.initializers: list = []
        self.names: set[str] = set()
        self.left_out: list[str] = []

    def model(self, project: Project):
        helper, graph = self.helper, project.graph
        inputs, given = [], []
        for node in graph.nodes.values():
            if node.type != "Input":
                continue
            values = self.catalogue.get("Input").values(node.params)
            name = self._name(node.name)
            shape = self.compiled.report.shape(node.id)
            dtype = helper.np_dtype_to_tensor_dtype(np.dtype(values["dtype"]))
            inputs.append(helper.make_tensor_value_info(name, dtype, list(shape)))
            if values["dtype"] != "float32":
                name = self._op("Cast", [name], f"{name}/float32",
                                to=self.onnx.TensorProto.FLOAT)  # fmt: skip
                self.left_out.append(f"{node.name}: {values['dtype']} samples are cast to "
                                     "float32 inside the model")  # fmt: skip
            given.append((name, shape))
        results = self.graph(graph, "", given)
        outputs = []
        sinks = [n for n in graph.nodes.values() if n.type == "Output"]
        for node, (value, shape) in zip(sinks, results, strict=True):
            name = self._op("Identity", [value], node.name)
            outputs.append(helper.make_tensor_value_info(name, self.onnx.TensorProto.FLOAT,
                                                         list(shape)))  # fmt: skip
            loss = self.catalogue.get("Output").values(node.params)["loss"]
            if loss != NO_LOSS:
                self.left_out.append(f"{node.name}: the loss ({loss}); the model holds the "
                                     "network's forward pass only")  # fmt: skip
        onnx_graph = helper.make_graph(self.nodes, _graph_name(project.name), inputs, outputs,
                                       self.initializers)  # fmt: skip
        model = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="Cellwright", producer_version=__version__,
                                  doc_string=f"The network of '{project.name}'.")  # fmt: skip
        model.ir_version = IR_VERSION
        return model

    def graph(self, graph: Graph, prefix: str, given: list[Value]) -> list[Value]:
        """Add the graph's nodes, fed `given` (one per input, in node order); its results."""
        values: dict[tuple[str, str], Value] = {}
        sources = [n for n in graph.nodes.values() if n.type in _INPUTS]
        for node, value in zip(sources, given, strict=True):
            values[(node.id, "out")] = value
        for node_id in graph.topological_order():
            node = graph.nodes[node_id]
            if node.type in _INPUTS + _OUTPUTS:
                continue
            connected = connected_inputs(graph, node)
            args = Args([values[(e.src_node, e.src_port)] for _, e, _ in connected],
                        tuple(port for port, _, _ in connected))
            outs = self.node(node, prefix + node.name, args)
            for port, name in zip(node.outputs, outs, strict=True):
                values[(node_id, port)] = (name, self.compiled.report.shape(node_id, port))
        results = []
        for node in graph.nodes.values():
            edge = graph.edge_into(node.id, "in") if node.type in _OUTPUTS else None
            if edge is not None:
                results.append(values[(edge.src_node, edge.src_port)])
        return results

    def node(self, node: Node, path: str, args: list[Value]) -> list[str]:
        """Add one node's ops; the tensor names of its outputs, in port order."""
        if node.type == COMPOSITE:
            return [name for name, _ in self.graph(node.subgraph, path + ".", args)]
        if node.type == "HookBackward":
            self.left_out.append(f"{path}: HookBackward, dropped (it only shows gradients; "
                                 "the forward pass is unchanged)")  # fmt: skip
            return [args[0][0]]
        cell = self.compiled.cells[node.id]
        names = [a for a, _ in args]
        if node.type in _BINARY:
            return [self._op(_BINARY[node.type], names, path)]
        if node.type == "Concat":
            return [self._op("Concat", names, path, axis=cell.axis)]
        if node.type == "Reshape":
            return [self._reshape(names[0], node, path)]
        if node.type in kinds.ONNX:
            return kinds.ONNX[node.type](self, node, cell, args, path)
        if type(cell) is not getattr(nn, node.type, None) or node.type not in _LAYERS:
            cls = self.catalogue.get(node.type).cell
            kind = "a user-written Cell" if cls is None or getattr(nn, cls.__name__, None) \
                is not cls else "a node type"
            raise ExportError(f"Node {path} is a {node.type}, {kind} that ONNX export can't "
                              "express; replace it with built-in nodes to export.")  # fmt: skip
        x, shape = args[0]
        if node.type == "Dense":
            return [self._dense(cell, x, shape, path)]
        if node.type == "Conv2d":
            return [self._conv(cell, x, shape, path)]
        if node.type in ("BatchNorm1d", "BatchNorm2d"):
            return [self._batch_norm(cell, x, path)]
        if node.type == "Flatten":
            return [self._flatten(cell, x, shape, node, path)]
        return [self._activation(cell, node.type, x, path)]

    # ------------------------------------------------------------------ one op per node type

    def _activation(self, cell: nn.Cell, type_name: str, x: str, out: str) -> str:
        if type_name == "GELU":
            return self._gelu(x, out, cell.approximate)
        op, attribute = _SIMPLE[type_name]
        attrs = {} if attribute is None else {attribute: getattr(cell, attribute)}
        return self._op(op, [x], out, **attrs)

    def _gelu(self, x: str, out: str, approximate: bool) -> str:
        half = self._const(f"{out}/half", 0.5)
        one = self._const(f"{out}/one", 1.0)
        if approximate:  # 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
            cube = self._op("Mul", [self._op("Mul", [x, x], f"{out}/x2"), x], f"{out}/x3")
            cubic = self._op("Mul", [cube, self._const(f"{out}/k", 0.044715)], f"{out}/kx3")
            inner = self._op("Add", [x, cubic], f"{out}/sum")
            scaled = self._op("Mul", [inner, self._const(f"{out}/c", math.sqrt(2 / math.pi))],
                              f"{out}/inner")  # fmt: skip
            curve = self._op("Tanh", [scaled], f"{out}/tanh")
        else:  # 0.5·x·(1 + erf(x/√2))
            scaled = self._op("Mul", [x, self._const(f"{out}/c", 1 / math.sqrt(2))],
                              f"{out}/scaled")  # fmt: skip
            curve = self._op("Erf", [scaled], f"{out}/erf")
        shifted = self._op("Add", [curve, one], f"{out}/plus1")
        return self._op("Mul", [self._op("Mul", [x, shifted], f"{out}/times_x"), half], out)

    def _dense(self, cell: nn.Dense, x: str, shape: tuple, path: str) -> str:
        weight = self._param(cell, "weight", path)  # (out, in), as MindSpore keeps it
        bias = self._param(cell, "bias", path) if cell.has_bias else None
        out = f"{path}/linear" if cell.activation_flag else path
        if len(shape) == 2:
            linear = self._op("Gemm", [x, weight] + ([bias] if bias else []), out, transB=1)
        else:  # (N, ..., in): Gemm takes matrices only
            turned = self._op("Transpose", [weight], f"{path}/weight_t", perm=[1, 0])
            linear = self._op("MatMul", [x, turned], f"{path}/matmul" if bias else out)
            if bias:
                linear = self._op("Add", [linear, bias], out)
        if not cell.activation_flag:
            return linear
        kind = _ACTIVATIONS.get(type(cell.activation))
        if kind is None:
            raise ExportError(f"Node {path}: its activation {type(cell.activation).__name__} "
                              "has no ONNX form.")  # fmt: skip
        return self._activation(cell.activation, kind, linear, path)

    def _conv(self, cell: nn.Conv2d, x: str, shape: tuple, path: str) -> str:
        kernel, stride, dilation = cell.kernel_size, cell.stride, cell.dilation
        reach = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True))
        pads = _pads(cell.pad_mode, cell.padding, shape, reach, stride)
        inputs = [x, self._param(cell, "weight", path)]
        if cell.has_bias:
            inputs.append(self._param(cell, "bias", path))
        return self._op("Conv", inputs, path, kernel_shape=list(kernel), strides=list(stride),
                        dilations=list(dilation), group=cell.group, pads=pads)  # fmt: skip

    def _batch_norm(self, cell, x: str, path: str) -> str:
        if cell.use_batch_statistics:
            raise ExportError(f"Node {path} normalises with batch statistics when predicting "
                              "(use_batch_statistics=True); ONNX export needs the moving "
                              "statistics: set it to None or False.")  # fmt: skip
        inputs = [x] + [self._param(cell, name, path)
                        for name in ("gamma", "beta", "moving_mean", "moving_variance")]
        return self._op("BatchNormalization", inputs, path, epsilon=float(cell.eps))

    def _flatten(self, cell: nn.Flatten, x: str, shape: tuple, node: Node, path: str) -> str:
        rank = len(shape)
        start, end = cell.start_dim % rank, cell.end_dim % rank
        if start == 1 and end == rank - 1:
            return self._op("Flatten", [x], path, axis=1)
        return self._reshaped(x, self.compiled.report.shape(node.id), path,
                              keep_batch=start != 0)

    def _reshape(self, x: str, node: Node, path: str) -> str:
        return self._reshaped(x, self.compiled.report.shape(node.id), path, keep_batch=True)

    def _reshaped(self, x: str, shape: tuple, path: str, keep_batch: bool) -> str:
        # 0 keeps the incoming batch size; every other axis is known from shape inference.
        sizes = [0 if keep_batch else -1, *(int(s) for s in shape[1:])]
        target = self._const(f"{path}/shape", np.asarray(sizes, dtype=np.int64))
        return self._op("Reshape", [x, target], path)

    # ------------------------------------------------------------------ plumbing

    def _op(self, op_type: str, inputs: list[str], out: str, **attrs) -> str:
        out = self._name(out)
        self.nodes.append(self.helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def _param(self, cell: nn.Cell, local: str, path: str) -> str:
        value = getattr(cell, local).asnumpy()
        return self._const(f"{path}.{local}", value)

    def _const(self, name: str, value) -> str:
        array = np.asarray(value, dtype=np.float32) if isinstance(value, float) else value
        name = self._name(name)
        self.initializers.append(self.onnx.numpy_helper.from_array(np.ascontiguousarray(array),
                                                                   name))  # fmt: skip
        return name

    def _name(self, base: str) -> str:
        name, n = base, 1
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        return name


def _pads(mode: str, padding, shape: tuple, reach: tuple, stride: tuple) -> list[int]:
    """ONNX `pads` (top, left, bottom, right) for the engine's pad_mode on a (N, C, H, W) input."""
    if mode == "same":  # output ceil(size / stride); an odd pad goes after, as in MindSpore
        (top, bottom), (left, right) = (same_pads(size, k, s) for size, k, s in
                                        zip(shape[2:], reach, stride, strict=True))  # fmt: skip
    elif mode == "valid":
        top = bottom = left = right = 0
    else:
        top, bottom, left, right = (padding,) * 4 if isinstance(padding, int) else padding
    return [int(top), int(left), int(bottom), int(right)]


def _graph_name(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text) or "network"


def _write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.exporting")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
