"""What a project's saved Parameter values may be, known from the network before any is read.

A file's params.npz holds one array per `<node id>/<name>`: a Parameter's value, or the
optimizer's state for it (`_optimizer.<slot>.<name>`, the same shape, or a single number:
SGD's first-step flag). For the built-in
types with Parameters the shape of each follows from the node's hyper-parameters alone
(`parameter_shapes`), so an array's declared shape is checked against it from the .npy
header, before its data is unpacked, and the archive's unpacked size is capped by what
the network can hold (`ParamLayout.most_bytes`), not by a compression ratio alone. An
array that does not fit its node is refused, naming the node: a silently dropped value
would be a weight lost without a word.

Nodes whose Parameters can't be known without running code (a CustomCell) or whose
hyper-parameters don't parse may hold any arrays; those count against the network-wide
cap on Parameters (MAX_TOTAL_PARAMETERS), as a network's own Parameters do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from app.catalogue import CATALOGUE, Catalogue, CatalogueError
from app.compiler import kinds
from app.compiler.size import MAX_TOTAL_PARAMETERS
from app.document import BOUNDARY_TYPES, Graph, Node

OPTIMIZER_PREFIX = "_optimizer."  # app.session.progress: `_optimizer.<slot>.<Parameter name>`
MOST_SLOTS = 3  # optimizer arrays per Parameter (Adam and AdamW keep 2)
MOST_ITEMSIZE = 8  # bytes per number: float64 and int64 at most
ALLOWANCE = 1 << 20  # bytes for .npy headers and the zip's own records, beyond the numbers
MEMBER_OVERHEAD = 512  # one array's header and zip records, at most (what saving counts)
UNKNOWN = None  # parameter_shapes of a node whose Parameters can't be known from its data

Shapes = dict[str, tuple[int, ...]]


def _pair(value: Any) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    value = tuple(value)
    return value[0], value[-1]


def parameter_shapes(node_type: str, values: Mapping[str, Any]) -> Shapes | None:
    """{Parameter name: shape} of a node of a built-in type with Parameters (engine.nn's
    Dense, Conv2d, BatchNorm) with these (parsed) hyper-parameter values; None for any
    other type."""
    if node_type == "Dense":
        c_in, c_out = values["in_channels"], values["out_channels"]
        bias = {"bias": (c_out,)} if values.get("has_bias", True) else {}
        return {"weight": (c_out, c_in), **bias}
    if node_type == "Conv2d":
        c_in, c_out, group = values["in_channels"], values["out_channels"], values["group"]
        bias = {"bias": (c_out,)} if values.get("has_bias", False) else {}
        return {"weight": (c_out, c_in // max(group, 1), *_pair(values["kernel_size"])), **bias}
    if node_type in ("BatchNorm1d", "BatchNorm2d"):
        c = (values["num_features"],)
        return {"gamma": c, "beta": c, "moving_mean": c, "moving_variance": c}
    shapes = kinds.parameter_shapes(node_type, values)
    return UNKNOWN if shapes is None else shapes


# Types with Parameters (parameter_shapes)
_SHAPED = frozenset({"Dense", "Conv2d", "BatchNorm1d", "BatchNorm2d", *kinds.PARAM_SHAPES})


def node_shapes(node: Node, catalogue: Catalogue = CATALOGUE) -> Shapes | None:
    """`parameter_shapes` of a node in a graph: {} for composites and their ports, None
    when its type is unknown or its hyper-parameters don't parse (it is refused when
    compiled; its arrays are only capped)."""
    if node.is_composite or node.type in BOUNDARY_TYPES:
        return {}
    if node.type not in catalogue:
        return UNKNOWN
    node_type = catalogue.get(node.type)
    if node.type not in _SHAPED:  # (no values parsed for these: 100,000 ReLUs load fast)
        engine_layer = node_type.cell is not None and node_type.cell.__module__.startswith(
            "engine.")  # fmt: skip
        parameterless = node_type.build is None and (node_type.cell is None or engine_layer)
        return {} if parameterless else UNKNOWN  # (CustomCell, a user's Cell class: UNKNOWN)
    try:
        shapes = parameter_shapes(node.type, node_type.values(node.params))
    except (CatalogueError, KeyError, TypeError, ValueError, IndexError, ZeroDivisionError):
        return UNKNOWN
    if shapes is not None and not all(
        isinstance(d, int) and d >= 0 for shape in shapes.values() for d in shape
    ):
        return UNKNOWN
    return shapes


class ParamLayout:
    """The Parameters of every node of a graph, for checking saved arrays against."""

    def __init__(self, graph: Graph, catalogue: Catalogue = CATALOGUE) -> None:
        self.names: dict[str, str] = {}
        self.shapes: dict[str, Shapes | None] = {}
        known = 0
        self.unknown = 0  # nodes whose Parameters are not known
        for _, node in graph.walk():
            self.names[node.id] = node.name
            shapes = self.shapes[node.id] = node_shapes(node, catalogue)
            if shapes is None:
                self.unknown += 1
            else:
                known += sum(math.prod(shape) for shape in shapes.values())
        self.known_numbers = known
        self._unknown_numbers = 0  # read so far, for nodes of unknown Parameters

    @property
    def most_numbers(self) -> int:
        """Numbers all saved arrays together may hold: each Parameter's value and its
        optimizer slots, and for nodes of unknown Parameters up to the network cap."""
        unknown = MAX_TOTAL_PARAMETERS if self.unknown else 0
        return (1 + MOST_SLOTS) * (self.known_numbers + unknown)

    @property
    def most_bytes(self) -> int:
        """What params.npz may unpack to: the numbers at MOST_ITEMSIZE each, headers and
        a small allowance."""
        members = (1 + MOST_SLOTS) * sum(len(s) if s else 0 for s in self.shapes.values())
        return self.most_numbers * MOST_ITEMSIZE + members * MEMBER_OVERHEAD + ALLOWANCE

    def problem(self, owner: str, part: str, shape: tuple[int, ...]) -> str | None:
        """Why array `part` of node `owner` with this declared shape can't be its node's,
        or None. Called from the .npy header, before the data is read."""
        shapes = self.shapes.get(owner, {})
        node = f"'{self.names.get(owner, owner)}'"
        name = part
        if part.startswith(OPTIMIZER_PREFIX):  # `_optimizer.<slot>.<Parameter name>`
            slot, _, name = part[len(OPTIMIZER_PREFIX):].partition(".")
            if not slot or not name:
                return f"{node} holds optimizer state {part!r} that names no Parameter"
        if shapes is None:
            self._unknown_numbers += math.prod(shape)
            most = (1 + MOST_SLOTS) * MAX_TOTAL_PARAMETERS
            if self._unknown_numbers > most:
                return (f"the values of nodes like {node} hold more than {most:,} numbers "
                        "in all, more than a network may have")  # fmt: skip
            return None
        expected = shapes.get(name)
        if expected is None:
            held = ", ".join(shapes) or "none"
            return f"{node} has no Parameter {name!r} (its Parameters: {held})"
        if name != part and tuple(shape) == ():
            return None  # a per-Parameter flag of the optimizer (SGD's first-step `stat`)
        if tuple(shape) != expected:
            what = f"the optimizer state {part!r}" if name != part else f"its {name}"
            return (f"{node}'s {name} is {_shape(expected)}, but {what} in the file is "
                    f"{_shape(shape)}")  # fmt: skip
        return None


def fitting_values(values: Mapping[str, Mapping[str, Any]], layout: ParamLayout,
                   shape_of) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The arrays of `values` (node id -> name -> array) that fit their node (what a save
    writes: an array left from before its node was resized is no use, and a file
    holding it would be refused)."""
    kept: dict[str, dict[str, Any]] = {}
    for owner, arrays in values.items():
        for part, value in arrays.items():
            if layout.shapes.get(owner) is None or layout.problem(owner, part, shape_of(value)) \
                    is None:  # fmt: skip
                kept.setdefault(owner, {})[part] = value
    return kept


def _shape(shape: tuple[int, ...]) -> str:
    return "×".join(str(d) for d in shape) if shape else "a single number"
