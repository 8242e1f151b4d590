"""Number types flowing through a graph at shape-check time, and the refusals they cause.

Each node's outputs get one dtype name ('float32', 'int64', …): an Input's or a Cast's
own, float32 out of an Embedding, the input's own through the ops that only move or pick
values (reshaping, Select, Max, …), and float32 out of everything else. Integer tensors
carry token ids: an Embedding needs them, and a float layer (Dense, LSTM, …) refuses
them, each with the reason, shown at the node like a shape error. Custom and user Cells
and composites are not checked (their insides are, by the same rules).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from app.catalogue import ShapeError

FLOAT = "float32"
# Ops that only move, pick or compare values: the result has the input's number type.
KEEP = frozenset({
    "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Slice", "Split", "Stack",
    "Concat", "Select", "Identity", "HookBackward", "Max", "Sum", "Neg", "Abs", "Add", "Sub",
    "Mul",
})
# Types that take any number type and are not checked here.
UNCHECKED = frozenset({"Output", "Cast", "CustomCell"})

# An arriving tensor: (dtype name, the name of the node it comes from).
Arriving = Mapping[str, tuple[str, str]]


def is_int(dtype: str) -> bool:
    return np.dtype(dtype).kind in "iu"


def leaving(type_name: str, values: Mapping[str, Any], arriving: Arriving,
            checked: bool = True) -> str:
    """The dtype of the node's outputs given what arrives at its inputs; ShapeError when
    the node can't take it. `checked` False (a user Cell, say): no refusal, float32 out."""
    if type_name in ("Input", "Cast"):
        return values["dtype"]
    if type_name == "Embedding":
        dtype, source = arriving.get("in", (FLOAT, "?"))
        if not is_int(dtype):
            raise ShapeError(f"Embedding needs integer token ids, but {dtype} arrives from "
                             f"{source}; set the Input's dtype to int32 or int64 (token ids).")
        return FLOAT
    if type_name in KEEP and arriving:
        kinds = {dtype for dtype, _ in arriving.values()}
        if len(kinds) > 1:
            found = " and ".join(f"{dtype} from {source}" for dtype, source in arriving.values())
            raise ShapeError(f"{type_name} needs inputs of one number type, gets {found}; "
                             "put a Cast before one of them.")
        return kinds.pop()
    if checked and type_name not in UNCHECKED:
        for dtype, source in arriving.values():
            if is_int(dtype):
                raise ShapeError(f"{type_name} computes with float numbers, but {dtype} "
                                 f"arrives from {source}; token ids go through an Embedding "
                                 "first (or a Cast to float32).")
    return FLOAT


def describe(dtype: str) -> str:
    """'' for float32 (the usual), else the dtype name, e.g. for an edge's tooltip."""
    return "" if dtype == FLOAT else dtype


def arriving(report, graph, node, into) -> dict[str, tuple[str, str]]:
    """{input port: (dtype, name of the node it comes from)} for the node's connected inputs."""
    found = {}
    for port in node.inputs:
        edge = into.get((node.id, port))
        if edge is not None:
            source = graph.nodes.get(edge.src_node)
            dtype = report.dtype(edge.src_node, edge.src_port) or FLOAT
            found[port] = (dtype, source.name if source is not None else "?")
    return found


def named(arriving: Arriving) -> dict[str, str]:
    """{port: dtype} of what `arriving` gives."""
    return {port: dtype for port, (dtype, _) in arriving.items()}


def token_problem(graph, x: np.ndarray, data_name: str = "The data set") -> str | None:
    """Why samples `x` can't feed `graph`'s Input as token ids, or None: whole numbers for
    an Input of an int dtype, and every id below the vocab_size of each Embedding it reaches
    (through ops that only move values). Checked before training starts, on all the data."""
    inputs = [n for n in graph.nodes.values() if n.type == "Input"]
    if len(inputs) != 1 or not is_int(inputs[0].params.get("dtype", FLOAT)):
        return None
    source = inputs[0]
    x = np.asarray(x)
    if x.size == 0:
        return None
    if x.dtype.kind == "f" and not np.array_equal(x, np.round(x)):
        return (f"{data_name} holds numbers that are not whole, but the Input "
                f"'{source.name}' takes {source.params['dtype']} token ids; set its dtype to "
                "float32, or pick a data set of token ids.")
    low, high = int(np.min(x)), int(np.max(x))
    for node in graph.nodes.values():
        if node.type != "Embedding" or _fed_from(graph, node) is not source:
            continue
        vocab = node.params["vocab_size"]
        if low < 0 or high >= vocab:
            bad = low if low < 0 else high
            fix = (f"raise its vocab_size to {high + 1} or more" if low >= 0 else
                   "token ids can't be negative")
            return (f"{data_name} holds token id {bad}, but the Embedding '{node.name}' has "
                    f"vocab_size {vocab} (ids 0 to {vocab - 1}); {fix}.")
    return None


def _fed_from(graph, node):
    """The node at the start of the chain of value-moving ops that ends in `node`."""
    seen = set()
    while node is not None and node.id not in seen:
        seen.add(node.id)
        edge = graph.edge_into(node.id, node.inputs[0]) if node.inputs else None
        if edge is None:
            return None
        node = graph.nodes.get(edge.src_node)
        if node is None or node.type not in KEEP:
            return node
    return None
