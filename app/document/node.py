"""Nodes and edges of the network graph, and the rules for their names, ports and values."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

# Node types the document itself knows about; every other type name belongs to the catalogue.
COMPOSITE = "Composite"
SUBGRAPH_INPUT = "SubgraphInput"  # inside a composite: one per input port, named after the port
SUBGRAPH_OUTPUT = "SubgraphOutput"  # inside a composite: one per output port
BOUNDARY_TYPES = frozenset({SUBGRAPH_INPUT, SUBGRAPH_OUTPUT})

MAX_NAME_LENGTH = 64
MAX_TYPE_LENGTH = 100
_MAX_VALUE_DEPTH = 8

ParamValue = None | bool | int | float | str | tuple["ParamValue", ...]


class DocumentError(Exception):
    """An edit the document refuses; the message is meant for the user, and nothing changed."""


class _Absent:
    """Marks a hyper-parameter that is not set (None is a real value)."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT = _Absent()


_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


def new_id() -> str:
    """A fresh stable id: 32 lowercase hex digits."""
    return uuid.uuid4().hex


def check_id(value: object, what: str = "An id") -> str:
    """Ids also key Parameter values in files (`<node id>/<param>`), hence the plain alphabet."""
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise DocumentError(f"{what} must be 1-64 letters, digits, _ or -, not {value!r}.")
    return value


def check_name(name: object, what: str = "Name") -> str:
    """Return `name` if it can name a node or port, else raise DocumentError saying why.

    Names become attribute and parameter paths (`dense1.weight`) and exported Python
    identifiers, hence letters, digits and underscores only.
    """
    if not isinstance(name, str) or not name:
        raise DocumentError(f"{what} can't be empty.")
    if len(name) > MAX_NAME_LENGTH:
        raise DocumentError(f"{what} '{name[:20]}…' is too long (at most {MAX_NAME_LENGTH}).")
    if not name.isidentifier():
        raise DocumentError(
            f"{what} '{name}' is not allowed: use letters, digits and _, not starting with a digit."
        )
    return name


def param_value(value: Any, where: str = "value", _depth: int = 0) -> ParamValue:
    """Normalize a hyper-parameter value: lists become tuples, NumPy scalars Python ones.

    Values are kept immutable so nobody can change a node behind the document's back,
    and they must survive JSON exactly (hence no NaN/inf, no dicts, no objects).
    """
    if _depth > _MAX_VALUE_DEPTH:
        raise DocumentError(f"{where} is nested too deeply.")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise DocumentError(f"{where} must be a finite number, not {value}.")
        return float(value)
    if isinstance(value, list | tuple):
        return tuple(param_value(v, where, _depth + 1) for v in value)
    item = getattr(value, "item", None)  # NumPy scalars
    if callable(item) and getattr(value, "shape", None) == ():
        return param_value(item(), where, _depth)
    raise DocumentError(
        f"{where} must be a number, text, true/false, none or a list of those, "
        f"not {type(value).__name__}."
    )


def same_value(a: Any, b: Any) -> bool:
    """Equality that tells 1, 1.0 and True apart, as the saved file does."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return a == b


def _ports(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise DocumentError(f"{what} must be a list of port names, not one string.")
    ports = tuple(value)
    for port in ports:
        check_name(port, f"Port name in {what}")
    if len(set(ports)) != len(ports):
        raise DocumentError(f"{what} names a port twice.")
    return ports


@dataclass(frozen=True, eq=False)
class Node:
    """One node of a graph: a catalogue type, a unique name, hyper-parameters and a place.

    A node declares its own port names (`inputs`, `outputs`); whoever creates it (the
    catalogue) fills them in, and the graph only accepts edges between declared ports,
    so a saved graph validates without the catalogue. A composite node (type COMPOSITE)
    holds a `subgraph` whose SubgraphInput/SubgraphOutput nodes are named after its ports.
    Nodes are immutable: the graph's edit methods replace them.
    """

    type: str
    name: str = ""
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    params: Mapping[str, ParamValue] = field(default_factory=dict)
    position: tuple[float, float] = (0.0, 0.0)
    subgraph: Any = None  # a composite's inside: a Graph (graph.py, which imports this module)
    definition: str = ""
    id: str = field(default_factory=new_id)
    # Sizes the user typed (e.g. a Dense's in_channels): they stay when what arrives changes,
    # while the others follow it (`app.compiler.size_flow`). Only names of set params.
    typed: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not isinstance(self.type, str) or not self.type or len(self.type) > MAX_TYPE_LENGTH:
            raise DocumentError(f"Node type {self.type!r} is not a valid type name.")
        check_id(self.id, "A node id")
        if not isinstance(self.name, str):
            raise DocumentError("Node name must be text.")
        if self.name:
            check_name(self.name)
        if (self.type == COMPOSITE) != (self.subgraph is not None):
            raise DocumentError("Only composite nodes hold a subgraph, and every composite does.")
        if self.subgraph is not None:
            check_name(self.definition, "Definition name")
        elif self.definition != "":
            raise DocumentError("Only composite nodes have a definition name.")
        set_ = object.__setattr__  # frozen: normalize once, here
        set_(self, "inputs", _ports(self.inputs, "inputs"))
        set_(self, "outputs", _ports(self.outputs, "outputs"))
        set_(self, "position", position(self.position))
        params = {}
        for key, value in dict(self.params).items():
            check_name(key, "Hyper-parameter name")
            params[key] = param_value(value, f"Hyper-parameter '{key}'")
        set_(self, "params", MappingProxyType(params))
        typed = () if isinstance(self.typed, str) else tuple(self.typed)
        if isinstance(self.typed, str) or not all(isinstance(k, str) for k in typed):
            raise DocumentError("Typed sizes must be a list of hyper-parameter names.")
        set_(self, "typed", frozenset(k for k in typed if k in params))

    @property
    def is_composite(self) -> bool:
        return self.subgraph is not None

    def replace(self, **changes: Any) -> Node:
        """A copy with some fields changed (same id unless `id` is given)."""
        return replace(self, **changes)

    def __repr__(self) -> str:
        return f"Node({self.type}, name={self.name!r}, id={self.id[:8]})"


def position(value: Any) -> tuple[float, float]:
    """A node position as two finite floats."""
    try:
        x, y = value
        x, y = float(x), float(y)
    except (TypeError, ValueError) as exc:
        raise DocumentError(f"A position must be two numbers, not {value!r}.") from exc
    if not (math.isfinite(x) and math.isfinite(y)):
        raise DocumentError(f"A position must be finite, not {value!r}.")
    return (x, y)


@dataclass(frozen=True)
class Edge:
    """A connection from an output port of one node to an input port of another."""

    src_node: str
    src_port: str
    dst_node: str
    dst_port: str
    id: str = field(default_factory=new_id)

    def __post_init__(self) -> None:
        check_id(self.id, "A connection id")
        for name in ("src_node", "src_port", "dst_node", "dst_port"):
            if not isinstance(getattr(self, name), str):
                raise DocumentError(f"Connection {name} must be text.")

    def __repr__(self) -> str:
        return (
            f"Edge({self.src_node[:8]}.{self.src_port} -> {self.dst_node[:8]}.{self.dst_port},"
            f" id={self.id[:8]})"
        )
