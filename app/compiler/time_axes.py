"""Which tensors of a graph are sequences, and where their time and batch axes are.

A pass over the graph after shape inference marks the tensors with a time axis: what
goes into and comes out of the sequence nodes (Embedding, positional encodings,
recurrent and attention layers), and, both ways from there, what passes through nodes
that keep the leading axes (Dense on the last axis, activations, Dropout, LayerNorm,
Add, …) or reorders them (Transpose). Their edges read '(N, T 20, F 8)', or
'(T 20, N, F 8)' with the batch on axis 1 (batch_first off). A Transpose may move the
batch axis ('N') off the front; the nodes that need it first refuse such a tensor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue import BATCH
from app.document import DocumentError

# Node types whose sequence inputs and outputs are marked, and those ports.
SEQUENCE_TYPES = frozenset({
    "Embedding", "PositionalEncoding", "LearnedPositionalEncoding", "RNN", "LSTM", "GRU",
    "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
    "TransformerDecoderLayer",
})
TIME_INPUTS = frozenset({"in", "query", "key", "value", "src", "tgt", "memory"})
TIME_OUTPUTS = frozenset({"out", "output"})
# Node types that take a tensor whose batch axis is not first (the others refuse it).
BATCH_ANYWHERE = frozenset({
    "Dense", "Dropout", "LayerNorm", "Transpose", "Select", "Slice", "Split", "Mean", "Sum",
    "Max", "Add", "Sub", "Mul", "Div", "Identity", "HookBackward", "Softmax", "LogSoftmax",
    "Cast", "Clip", "Rescale", "Pow", "RNN", "LSTM", "GRU", "MultiheadAttention",
    "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
})
_BOUNDARIES = frozenset({"Input", "Output", "SubgraphInput", "SubgraphOutput"})

Shape = tuple


def full_perm(perm: Any) -> tuple[int, ...]:
    """The permutation of every axis: `perm` orders the sample axes (the batch stays
    first), or, when it names axis 0 somewhere, all of them ((1, 0, 2): time first)."""
    perm = (perm,) if isinstance(perm, int) else tuple(perm)
    return perm if 0 in perm else (0, *perm)


def label(shape: Shape, time: int) -> str:
    """'(N, T 20, F 8)': the time axis and the features (the last axis) named."""
    parts = []
    for i, size in enumerate(shape):
        if size == BATCH:
            parts.append(BATCH)
        elif i == time:
            parts.append(f"T {size}")
        elif i == len(shape) - 1:
            parts.append(f"F {size}")
        else:
            parts.append(str(size))
    return "(" + ", ".join(parts) + ")"


def batch_axis(shape: Shape) -> int | None:
    return shape.index(BATCH) if BATCH in shape else None


def batch_problem(type_name: str, same_shape: bool, ins: Mapping[str, Shape]) -> str | None:
    """Why a node can't take an input whose batch axis is not first, or None.
    `same_shape`: the node's rule passes its input's shape on unchanged (activations)."""
    if same_shape or type_name in BATCH_ANYWHERE:
        return None
    for shape in ins.values():
        axis = batch_axis(shape)
        if axis is not None and axis != 0:
            shown = label(shape, 0 if axis == 1 else -1)
            return (f"{type_name} needs the batch axis first, (N, …), but gets {shown}; put "
                    "a Transpose (1, 0, 2) before it to bring the batch to the front.")
    return None


def _natural(shape: Shape | None) -> int | None:
    """The time axis of a sequence tensor as the sequence nodes give and take it:
    (N, T), (N, T, F) or (T, N, F); None for any other shape."""
    if shape is None or batch_axis(shape) is None:
        return None
    if len(shape) == 2 and shape[0] == BATCH:
        return 1
    if len(shape) == 3 and BATCH in shape[:2]:
        return 1 if shape[0] == BATCH else 0
    return None


def _carried(node, time: int, src: Shape, dst: Shape, forward: bool) -> int | None:
    """The time axis on the other side of `node` (from input `src` to output `dst`, or
    back when not `forward`), or None when the node doesn't carry it through."""
    if node.type == "Transpose":
        perm = full_perm(node.params.get("perm", (2, 1)))
        if len(perm) != len(src) or len(src) != len(dst):
            return None
        return perm.index(time) if forward else perm[time]
    keeps = len(src) == len(dst) and src[:-1] == dst[:-1]
    if not keeps or (time == len(src) - 1 and src != dst):
        return None
    return time


def mark(graph, report) -> set[str]:
    """Set `report.time_axes` for the edges of `graph` and its composites; the ids of the
    edges whose mark changed."""
    before = dict(report.time_axes)
    report.time_axes.clear()
    todo = [graph]
    while todo:
        level = todo.pop()
        _mark_level(level, report)
        todo += [n.subgraph for n in level.nodes.values() if n.subgraph is not None]
    return {e for e in before.keys() | report.time_axes.keys()
            if before.get(e) != report.time_axes.get(e)}


def _mark_level(graph, report) -> None:
    nodes = graph.nodes
    tensors: dict[tuple[str, str], int] = {}

    def put(key: tuple[str, str], time: int | None) -> None:
        shape = report.shape(*key)
        if time is not None and shape is not None and -len(shape) <= time < len(shape) \
                and shape[time] != BATCH:  # fmt: skip
            tensors.setdefault(key, time % len(shape))

    for node in nodes.values():
        if node.type not in SEQUENCE_TYPES:
            continue
        for port in TIME_INPUTS.intersection(node.inputs):
            edge = graph.edge_into(node.id, port)
            if edge is not None:
                put((edge.src_node, edge.src_port), _natural(report.shape(edge.src_node,
                                                                          edge.src_port)))
        for port in TIME_OUTPUTS.intersection(node.outputs):
            put((node.id, port), _natural(report.shape(node.id, port)))
    try:
        order = [nodes[n] for n in graph.topological_order()]
    except DocumentError:  # a loop (marked by shape inference): no sequences marked here
        return
    passing = [n for n in order if n.type not in SEQUENCE_TYPES | _BOUNDARIES]
    for node in reversed(passing):  # back from the sequence nodes
        for port in node.outputs:
            time, out = tensors.get((node.id, port)), report.shape(node.id, port)
            if time is None or out is None:
                continue
            for edge in _edges_in(graph, node):
                src = report.shape(edge.src_node, edge.src_port)
                if src is not None:
                    put((edge.src_node, edge.src_port), _carried(node, time, src, out, False))
    for node in passing:  # and on from every marked tensor
        for edge in _edges_in(graph, node):
            time = tensors.get((edge.src_node, edge.src_port))
            src = report.shape(edge.src_node, edge.src_port)
            if time is None or src is None:
                continue
            for port in node.outputs:
                out = report.shape(node.id, port)
                if out is not None:
                    put((node.id, port), _carried(node, time, src, out, True))
    for edge in graph.edges.values():
        time = tensors.get((edge.src_node, edge.src_port))
        if time is not None:
            report.time_axes[edge.id] = time


def _edges_in(graph, node) -> list:
    return [e for port in node.inputs if (e := graph.edge_into(node.id, port)) is not None]
