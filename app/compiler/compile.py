"""Graph → engine Cell tree: compile a project, and keep its Parameter values with the document."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.catalogue import CATALOGUE, LOSSES, NO_LOSS, Catalogue
from app.catalogue.schema import read_params
from app.compiler import cells, kinds
from app.compiler.cells import BackwardHooks, GraphCell, Step
from app.compiler.network_io import input_nodes, output_nodes, trained_output
from app.compiler.shapes import INSIDE, ShapeReport, infer_shapes
from app.document import COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Graph, Node, Project
from engine import nn
from engine.parameter import Parameter

_OP_CELLS = {"Add": cells.Add, "Mul": cells.Mul, "MatMul": cells.MatMul,
             "Concat": cells.Concat, "Reshape": cells.Reshape, **kinds.OP_CELLS}


class CompileError(Exception):
    """The graph can't become a network; `problems` maps node id (None: the whole graph) → reason.

    `names` gives each node id's dotted path ('group1.dense1') for messages.
    """

    def __init__(self, problems: Mapping[str | None, str], names: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        self.names = dict(names)
        lines = [f"- {self.names.get(nid, 'network') if nid else 'network'}: {reason}"
                 for nid, reason in self.problems.items()]
        super().__init__("The network can't be built:\n" + "\n".join(lines))


@dataclass(eq=False)
class CompiledNetwork:
    """A compiled project: the engine Cell, its loss, and how it maps back to the graph.

    - `network(*inputs)` takes one batch per Input node, in `input_names` order, and
      returns what reaches the Output node.
    - `loss_fn(prediction, labels)` is the Output node's loss Cell (None for 'none').
    - `cells[node_id]` is each node's Cell (attach forward/backward hooks there).
    - `parameter_owner[param_name] = (node_id, local_name)`, e.g.
      'dense1.weight' → (id of dense1, 'weight').
    - `edge_hooks` sets backward hooks on edges and HookBackward nodes (see BackwardHooks).
    - `trainable` names the Parameters training updates by their nature (not BatchNorm's
      moving statistics); those the project froze have `requires_grad=False` but are
      listed, so the optimizer holds them and unfreezing needs no new optimizer.
    """

    network: GraphCell
    loss_fn: nn.Cell | None
    input_names: list[str]
    input_ids: list[str]
    input_shapes: list[tuple]
    input_dtypes: list[str]
    output_shape: tuple | None
    parameter_owner: dict[str, tuple[str, str]]
    cells: dict[str, nn.Cell]
    edge_hooks: BackwardHooks
    report: ShapeReport
    loaded: list[str] = field(default_factory=list)  # parameter names taken from the project
    trainable: list[str] = field(default_factory=list)

    def trainable_params(self) -> list[Parameter]:
        """The Parameters an optimizer should hold: trainable by nature, frozen or not."""
        params = self.parameters()
        return [params[name] for name in self.trainable]

    def apply_frozen(self, project: Project) -> None:
        """Set `requires_grad` from the project's frozen names (trainable Parameters only)."""
        params = self.parameters()
        for name in self.trainable:
            node_id, local = self.parameter_owner[name]
            params[name].requires_grad = not project.is_frozen(node_id, local)

    def parameters(self) -> dict[str, Parameter]:
        """The network's Parameters by name ('dense1.weight'), in network order."""
        return dict(self.network.parameters_and_names())

    def load_values(self, project: Project) -> list[str]:
        """Copy `project.param_values` into the Parameters whose shape still fits; their names."""
        loaded = []
        for name, param in self.parameters().items():
            node_id, local = self.parameter_owner[name]
            value = project.param_values.get(node_id, {}).get(local)
            if value is not None and tuple(np.shape(value)) == tuple(param.shape):
                param.set_data(np.asarray(value))
                loaded.append(name)
        return loaded

    def store_values(self, project: Project) -> None:
        """Write every Parameter's current value (moving statistics too) into the project.

        An array the project already has for it (same shape and dtype) is written in place,
        so a view holding it sees the new values.
        """
        for name, param in self.parameters().items():
            node_id, local = self.parameter_owner[name]
            arrays = project.param_values.setdefault(node_id, {})
            value, old = param.asnumpy(), arrays.get(local)
            if (isinstance(old, np.ndarray) and old.shape == value.shape
                    and old.dtype == value.dtype and old.flags.writeable):  # fmt: skip
                np.copyto(old, value)
            else:
                arrays[local] = value.copy()


class _Builder:
    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self.hooks = BackwardHooks()
        self.cells: dict[str, nn.Cell] = {}
        self.paths: dict[str, str] = {}  # node id -> dotted path of its Cell
        self.problems: dict[str | None, str] = {}

    def graph(self, graph: Graph, prefix: str, definition: str) -> GraphCell:
        steps, children = [], []
        for node_id in graph.topological_order():
            node = graph.nodes[node_id]
            if node.type in ("Input", "Output", SUBGRAPH_INPUT, SUBGRAPH_OUTPUT):
                continue
            path = prefix + node.name
            self.paths[node_id] = path
            cell = self.node(node, path)
            if cell is None:
                continue
            inputs, keywords, gap = [], [], False
            for port in node.inputs:
                edge = graph.edge_into(node_id, port)
                if edge is None:
                    gap = True  # an optional port left open: later ones go by name
                    continue
                inputs.append(((edge.src_node, edge.src_port), edge.id))
                if gap:
                    keywords.append(port)
            outputs = tuple((node_id, p) for p in node.outputs)
            steps.append(Step(node.name, tuple(inputs), outputs, tuple(keywords)))
            children.append((node.name, cell))
        ins = [(n.id, "out") for n in graph.nodes.values()
               if n.type in ("Input", SUBGRAPH_INPUT)]
        outs = []
        for n in graph.nodes.values():
            edge = graph.edge_into(n.id, "in") if n.type in ("Output", SUBGRAPH_OUTPUT) else None
            if edge is not None:
                outs.append(((edge.src_node, edge.src_port), edge.id))
        network = GraphCell(self.hooks, steps, ins, outs, definition)
        for name, cell in children:
            setattr(network, name, cell)
        return network

    def node(self, node: Node, path: str) -> nn.Cell | None:
        try:
            if node.type == COMPOSITE:
                cell = self.graph(node.subgraph, path + ".", node.definition)
            elif node.type == "HookBackward":
                cell = cells.HookBackward(self.hooks, node.id)
            else:
                node_type = self.catalogue.get(node.type)
                values = node_type.values(node.params)
                if node.type in _OP_CELLS:
                    cell = _OP_CELLS[node.type](**values)
                elif node_type.cell is not None:
                    cell = node_type.cell(**values)
                elif node_type.build is not None:
                    cell = node_type.build(values)
                else:
                    raise ValueError(f"{node.type} nodes can't be compiled.")
                if not isinstance(cell, nn.Cell):
                    raise TypeError(f"{node.type} built a {type(cell).__name__}, not a Cell.")
        except Exception as exc:  # the engine's own checks speak for the node
            self.problems[node.id] = str(exc)
            return None
        self.cells[node.id] = cell
        return cell


def _loss(output: Node, catalogue: Catalogue) -> nn.Cell | None:
    values = catalogue.get("Output").values(output.params)
    if values["loss"] == NO_LOSS:
        return None
    cls = LOSSES[values["loss"]]
    return cls(**{spec.name: values[spec.name] for spec in read_params(cls)})


def _names(graph: Graph, prefix: str = "") -> dict[str, str]:
    names = {}
    for node in graph.nodes.values():
        names[node.id] = prefix + node.name
        if node.subgraph is not None:
            names.update(_names(node.subgraph, f"{prefix}{node.name}."))
    return names


def compile_project(project: Project, *, catalogue: Catalogue = CATALOGUE) -> CompiledNetwork:
    """Build the project's network; Parameter values of unchanged nodes come from the project.

    The same graph always gives the same structure (Cells in topological order, ties by
    insertion order). Raises CompileError listing every offending node with its reason.
    """
    graph = project.graph
    report = infer_shapes(graph, catalogue=catalogue)
    problems: dict[str | None, str] = {
        nid: reason for nid, reason in report.errors.items() if report.error_kinds[nid] != INSIDE
    }
    sources = input_nodes(graph)
    sinks = [n for n in graph.nodes.values() if n.type == "Output"]  # connected or not
    if not sources:
        problems[None] = "There is no Input node: add one to feed the network."
    elif not sinks:
        problems[None] = "There is no Output node: add one after the last layer."
    names = _names(graph)
    if problems:
        raise CompileError(problems, names)
    builder = _Builder(catalogue)
    network = builder.graph(graph, "", project.name if project.name.isidentifier() else "Network")
    if builder.problems:
        raise CompileError(builder.problems, names)
    leaves = {path: nid for nid, path in builder.paths.items()
              if not isinstance(builder.cells.get(nid), GraphCell)}
    owner = {}
    for name, _param in network.parameters_and_names():
        head, local = _owner(name, leaves)
        owner[name] = (leaves[head], local)
    inputs = [report.shape(n.id) for n in sources]
    trained = trained_output(graph)
    edge = graph.edge_into(trained.id, "in")
    connected = output_nodes(graph)
    if len(connected) > 1:  # the network gives the trained output; pick=None gives all
        network.pick = [n.id for n in connected].index(trained.id)
    try:
        loss_fn = _loss(trained, catalogue)
    except Exception as exc:  # the loss's own checks speak for the Output node
        raise CompileError({trained.id: str(exc)}, names) from exc
    compiled = CompiledNetwork(
        network=network,
        loss_fn=loss_fn,
        input_names=[n.name for n in sources],
        input_ids=[n.id for n in sources],
        input_shapes=inputs,
        input_dtypes=[catalogue.get("Input").values(n.params)["dtype"] for n in sources],
        output_shape=report.shape(edge.src_node, edge.src_port),
        parameter_owner=owner,
        cells=builder.cells,
        edge_hooks=builder.hooks,
        report=report,
    )
    compiled.loaded = compiled.load_values(project)
    compiled.trainable = [n for n, p in compiled.parameters().items() if p.requires_grad]
    compiled.apply_frozen(project)
    return compiled


def _owner(name: str, leaves: Mapping[str, Any]) -> tuple[str, str]:
    """Split 'group1.dense1.weight' into the owning node's path and the local name."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        head = ".".join(parts[:cut])
        if head in leaves:
            return head, ".".join(parts[cut:])
    raise AssertionError(f"Parameter {name} has no owning node")  # every Cell is a node's
