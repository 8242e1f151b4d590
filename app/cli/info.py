"""`cellwright info PROJECT`: the network, its parameters and the training settings, as text."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from app.catalogue import CATALOGUE, CatalogueError
from app.cli import EXIT_OK, fail, say
from app.cli.opening import open_project
from app.compiler import CompileError, compile_project, infer_shapes
from app.compiler.network_io import input_nodes, output_nodes, trained_output
from app.compiler.rules import text as shape_text
from app.datasets.loading import KINDS
from app.document import COMPOSITE, Graph, Project
from app.io.project_file import ProjectFileError, paused_gc
from app.session import DEFAULTS, TrainingError, TrainingSettings, TrainingState
from app.session.metrics import Metrics


def run(args: argparse.Namespace) -> int:
    with paused_gc():  # one answer, then the process ends: see paused_gc
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    try:
        project = open_project(path, args)
    except ProjectFileError as exc:
        return fail(str(exc))
    lines = [f"{path.name}: project '{project.name}'", ""]
    problem = compiled = None
    try:
        compiled = compile_project(project)
    except CompileError as exc:
        problem = f"{path.name}: {exc}"
    report = compiled.report if compiled is not None else infer_shapes(project.graph)
    lines += network_lines(project.graph, report)
    lines += ["", *boundary_lines(project.graph, report)]
    if compiled is not None:
        lines += ["", *parameter_lines(compiled)]
    lines += ["", *training_lines(project)]
    say("\n".join(lines))
    if problem:
        return fail(problem)
    return EXIT_OK


def network_lines(graph: Graph, report, indent: str = "  ") -> list[str]:
    """One line per node in run order: name, type, key hyper-parameters, output shape."""
    lines = [] if indent != "  " else [f"Network ({_count(graph)} nodes, in run order):"]
    rows = []
    for node_id in graph.topological_order():
        node = graph.nodes[node_id]
        if node.type == COMPOSITE:
            summary = f"composite '{node.definition}'"
        else:
            try:
                summary = CATALOGUE.get(node.type).describe(node.params)
            except CatalogueError:
                summary = "(unknown type)"
        shapes = report.output_shapes.get(node_id, {})
        shown = ", ".join(shape_text(s) for s in shapes.values())
        error = report.errors.get(node_id)
        rows.append((node, summary, f"→ {shown}" if shown else "", f"  ! {error}" if error else ""))
    name_width = max((len(n.name) for n, *_ in rows), default=0)
    type_width = max((len(n.type) for n, *_ in rows), default=0)
    summary_width = max((len(s) for _, s, *_ in rows), default=0)
    for node, summary, shape, error in rows:
        line = f"{indent}{node.name:<{name_width}}  {node.type:<{type_width}}  "
        lines.append((line + f"{summary:<{summary_width}}  {shape}").rstrip() + error)
        if node.subgraph is not None:
            lines += network_lines(node.subgraph, report, indent + "    ")
    return lines


def boundary_lines(graph: Graph, report) -> list[str]:
    """The Input and Output nodes in the order the network takes and gives them (the order
    of `cellwright predict`'s --input and --output files), with their shapes."""
    lines = ["Inputs and outputs (in the order predict takes them):"]
    inputs, outputs = input_nodes(graph), output_nodes(graph)
    width = max((len(n.name) for n in inputs + outputs), default=0)
    for node in inputs:
        try:
            dtype = CATALOGUE.get("Input").values(node.params)["dtype"]
        except (CatalogueError, ValueError):
            dtype = "(unknown dtype)"
        lines.append(f"  input   {node.name:<{width}}  {shape_text(report.shape(node.id) or ())}"
                     f" {dtype}")  # fmt: skip
    for node in outputs:
        edge = graph.edge_into(node.id, "in")
        shape = report.shape(edge.src_node, edge.src_port)
        lines.append(f"  output  {node.name:<{width}}  {shape_text(shape) if shape else '?'}")
    return lines


def _count(graph: Graph) -> int:
    return sum(1 for _ in graph.walk())


def parameter_lines(compiled) -> list[str]:
    params = compiled.parameters()
    trainable = sum(p.size for p in params.values() if p.requires_grad)
    fixed = sum(p.size for p in params.values() if not p.requires_grad)
    lines = [f"Parameters: {trainable + fixed:,} ({trainable:,} trainable, {fixed:,} not trained)"]
    width = max((len(n) for n in params), default=0)
    for name, p in params.items():
        shape = "×".join(str(s) for s in p.shape) or "scalar"
        kind = "" if p.requires_grad else "  (not trained)"
        lines.append(f"  {name:<{width}}  {shape:<12} {p.size:>10,}  {np.dtype(p.asnumpy().dtype)}"
                     f"{kind}")  # fmt: skip
    if not params:
        lines.append("  (none)")
    return lines


def training_lines(project: Project) -> list[str]:
    training = project.training
    lines = ["Training settings:"]
    try:
        settings = TrainingSettings.from_project(training)
    except TrainingError as exc:
        return [*lines, f"  ! {exc}"]
    loss = settings.loss or _output_loss(project.graph)
    rows = [
        ("data set", "dataset", describe_dataset(settings.dataset)),
        ("loss", "loss", loss),
        ("optimizer", "optimizer", settings.optimizer + _options(settings.optimizer_options)),
        ("learning rate", "learning_rate", f"{settings.learning_rate:g}"),
        ("batch size", "batch_size", str(settings.batch_size)),
        ("epochs", "epochs", str(settings.epochs)),
        ("validation", "validation_fraction", f"{settings.validation_fraction:.0%} of the samples"),
        ("seed", "seed", str(settings.seed)),
        ("history", "history_steps", f"first and last {settings.history_steps:,} steps exactly"),
    ]
    for label, key, value in rows:
        default = "  (default)" if key in DEFAULTS and key not in training else ""
        lines.append(f"  {label:<14}{value}{default}")
    lines += progress_lines(training.get("state"))
    return lines


def describe_dataset(spec) -> str:
    """What the `dataset` setting names, or why it can't name anything (a file may hold
    any JSON there: `train` refuses such a setting, `info` shows it)."""
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping):
        kinds = [kind for kind in KINDS if kind in spec]
        if len(kinds) == 1:
            return str(spec[kinds[0]])
        return "! the setting needs exactly one of 'builtin', 'csv', 'npz', 'text' or 'images'"
    return f"! the setting must be a name or a mapping, not {spec!r}"


# What reading a damaged saved state may raise (it is only shown here, never used).
DAMAGED_STATE = (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError)


def progress_lines(saved) -> list[str]:
    try:
        state = TrainingState.from_json(saved)
    except DAMAGED_STATE as exc:
        return [f"Progress: ! the saved progress is damaged ({exc})"]
    if state.step == 0:
        return ["Progress: not trained yet"]
    where = f"{state.step} steps, {state.epoch} epochs done"
    if state.unfinished:
        where += f" (a run to epoch {state.target_epoch} was interrupted; train continues it)"
    lines = [f"Progress: {where}"]
    metrics = Metrics()
    try:
        metrics.load_json((saved or {}).get("history"))
        last = metrics.last_epoch()
    except DAMAGED_STATE:
        return lines
    if last is not None:
        lines.append(f"  last epoch ({last.epoch}): {last.describe()}")
    return lines


def _output_loss(graph: Graph) -> str:
    node = trained_output(graph)  # with several Output nodes, the one trained
    if node is None:
        return "none (there is no Output node)"
    return f"{node.params.get('loss', 'none')} (Output node '{node.name}')"


def _options(options) -> str:
    return f" ({', '.join(f'{k}={v!r}' for k, v in options.items())})" if options else ""
