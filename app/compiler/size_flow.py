"""Sizes that follow their input: after an edit, the widths the user did not type catch up.

A Dense's `in_channels` (a Conv2d's, a BatchNorm's `num_features`) is set from what
arrives when a connection is made. When something upstream then changes width (a
Dense from 32 to 16 units, the Input from (2,) to (3,)), those sizes follow, down the
whole graph and through composites, as Keras and Deep Network Designer infer them. A
size the user typed (`Node.typed`) stays, and `misfits` says why it no longer fits.

Files from before sizes were marked typed carry no marks: there, a size that did not
fit what reached it before the edit counts as typed (the user must have set it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.catalogue import CATALOGUE, Catalogue
from app.compiler import kinds
from app.compiler.rules import Shape, text
from app.compiler.shapes import ShapeReport, _Inference, fitting_params
from app.document import Graph, Node, ParamValue

log = logging.getLogger(__name__)

# The sizes of each type that follow the width arriving at its first input (the keys
# `fitting_params` fills in when a connection is made).
FOLLOWING: Mapping[str, tuple[str, ...]] = {
    "Dense": ("in_channels",),
    "Conv2d": ("in_channels",),
    "BatchNorm1d": ("num_features",),
    "BatchNorm2d": ("num_features",),
}


def following_keys(type_name: str) -> tuple[str, ...]:
    """The hyper-parameters of this node type that follow their input unless typed."""
    return FOLLOWING.get(type_name) or kinds.FOLLOWING.get(type_name, ())


@dataclass(frozen=True)
class SizeChange:
    """One node's sizes brought in line with what arrives: old and new values by name."""

    path: tuple[str, ...]  # composite ids from the root to the graph holding the node
    node_id: str
    old: Mapping[str, ParamValue]
    new: Mapping[str, ParamValue]


def follow(root: Graph, before: ShapeReport | None = None, *,
           catalogue: Catalogue = CATALOGUE) -> list[SizeChange]:
    """The size changes that make every size nobody typed fit what reaches it now.

    `before` is the shape report of the graph as it was before the edit (None: the
    graph carries typed marks for everything, old files aside); a size that did not fit
    then is left alone, as one the user set. Never raises: on a bug, no change.
    """
    try:
        inference = _Following(catalogue, before)
        inference.graph(root, None)
    except Exception:  # sizes not following is a lesser evil than an edit that fails
        log.exception("sizes could not follow the edit")
        return []
    paths = _paths(root)
    return [SizeChange(paths.get(node.id, ()), node.id,
                       {k: node.params.get(k) for k in new}, new)
            for node, new in inference.changes.values()]


def misfits(node: Node, into: Shape | None) -> dict[str, str]:
    """Why each of the node's following sizes does not fit `into` (the shape arriving)."""
    if into is None:
        return {}
    wanted = fitting_params(node.type, into)
    found = {}
    for key in following_keys(node.type):
        if key in wanted and key in node.params and node.params[key] != wanted[key]:
            how = "You typed" if key in node.typed else "It is"
            found[key] = (f"{how} {node.params[key]} here, but {text(into)} arrives: "
                          f"{key} {wanted[key]} would fit. Type {wanted[key]}, or clear the "
                          "field to follow the input.")
    return found


def arriving(report: ShapeReport, graph: Graph, node: Node) -> Shape | None:
    """The shape reaching the node's first input, if known."""
    if not node.inputs:
        return None
    edge = graph.edge_into(node.id, node.inputs[0])
    return None if edge is None else report.edge_shapes.get(edge.id)


class _Following(_Inference):
    """Shape inference that, node by node in order, fits the sizes that follow."""

    def __init__(self, catalogue: Catalogue, before: ShapeReport | None) -> None:
        super().__init__(catalogue)
        self.before = before
        self.changes: dict[str, tuple[Node, dict[str, Any]]] = {}

    def node(self, node: Node, graph: Graph, into: Mapping, given: Mapping[str, Shape],
             found: dict[str, Shape], top: bool) -> dict[str, Shape] | None:
        keys = following_keys(node.type)
        if keys and node.inputs:
            edge = into.get((node.id, node.inputs[0]))
            shape = None if edge is None else self.report.shape(edge.src_node, edge.src_port)
            if shape is not None:
                new = self._fit(node, keys, shape, edge.id)
                if new:
                    self.changes[node.id] = (node, new)
                    node = node.replace(params={**node.params, **new})
        return super().node(node, graph, into, given, found, top)

    def _fit(self, node: Node, keys: tuple[str, ...], shape: Shape, edge_id: str) -> dict:
        wanted = fitting_params(node.type, shape)
        then = self.before.edge_shapes.get(edge_id) if self.before is not None else None
        fitted_then = fitting_params(node.type, then) if then is not None else None
        new = {}
        for key in keys:
            value = wanted.get(key)
            if (key in node.typed or not _size(value) or node.params.get(key) == value):
                continue
            if fitted_then is not None and fitted_then.get(key) != node.params.get(key):
                continue  # it did not fit before either: set by hand (a file without marks)
            new[key] = value
        return new


def _size(value: Any) -> bool:
    """A width that can follow: a size ≥ 1, or a non-empty tuple of them (LayerNorm's
    normalized_shape); not a symbolic size ('N', '?')."""
    if isinstance(value, tuple):
        return bool(value) and all(_size(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _paths(root: Graph) -> dict[str, tuple[str, ...]]:
    """Every node id at every level, with the composite ids leading to its graph."""
    found: dict[str, tuple[str, ...]] = {}
    todo: list[tuple[Graph, tuple[str, ...]]] = [(root, ())]
    while todo:
        graph, path = todo.pop()
        for node in graph.nodes.values():
            found[node.id] = path
            if node.subgraph is not None:
                todo.append((node.subgraph, (*path, node.id)))
    return found
