"""What a node type declares: its ports, its hyper-parameters and how to read a typed value."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.document import Node

KINDS = frozenset({"int", "float", "bool", "str", "choice", "int_or_pair", "shape", "dtype"})
DTYPES = ("float32", "float64", "int32", "int64")

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_NONE = {"none", "", "default", "auto"}
_SPLIT = re.compile(r"[\s,x×*]+")


BATCH = "N"  # the symbolic batch size, first entry of every inferred shape


class CatalogueError(ValueError):
    """A node type or a hyper-parameter value the catalogue refuses; the message is for the user."""


class ShapeError(ValueError):
    """Why a node can't take the shapes it is given (raised by shape rules); for the user."""


@dataclass(frozen=True)
class ParamSpec:
    """One hyper-parameter of a node type: its kind, default and limits.

    `parse` turns what the user typed (or a stored value) into the value kept on the node.
    Extras beyond the common fields: `optional` (None is allowed, typed as 'none'),
    `maximum` (inclusive), `lengths` (tuple lengths an 'int_or_pair' takes besides a
    single int) and `when` (the param only applies while another param has one of
    some values, e.g. the Output node's `sparse` only with SoftmaxCrossEntropyWithLogits).
    For 'shape', `minimum=-1` allows one -1 entry (Reshape: "the rest").
    """

    name: str
    kind: str
    default: Any
    choices: tuple = ()
    minimum: float | None = None
    description: str = ""
    optional: bool = False
    maximum: float | None = None
    lengths: tuple[int, ...] = (2,)
    when: Mapping[str, tuple] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise CatalogueError(f"Unknown hyper-parameter kind {self.kind!r} for {self.name}.")
        if self.kind == "dtype" and not self.choices:
            object.__setattr__(self, "choices", DTYPES)

    def parse(self, value: Any) -> Any:
        """The value to store for `value` (text typed by the user, or a value); CatalogueError."""
        if isinstance(value, str):
            value = value.strip()
        if self.optional and (value is None or (isinstance(value, str) and value.lower() in _NONE)):
            return None
        return getattr(self, f"_parse_{self.kind}")(value)

    def format(self, value: Any) -> str:
        """Text for a stored value, which `parse` reads back to the same value."""
        if value is None:
            return "none"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, tuple):
            return "(" + ", ".join(str(v) for v in value) + (",)" if len(value) == 1 else ")")
        return str(value)

    def applies(self, values: Mapping[str, Any]) -> bool:
        """Whether this param matters given the node's other values (see `when`)."""
        return all(values.get(key) in allowed for key, allowed in self.when.items())

    # ---- one parser per kind ---------------------------------------------------------------

    def _fail(self, what: str) -> CatalogueError:
        return CatalogueError(f"{self.name} must be {what}.")

    def _limits(self) -> str:
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return f" between {_num(lo)} and {_num(hi)}"
        if lo is not None:
            return f" ≥ {_num(lo)}"
        return f" ≤ {_num(hi)}" if hi is not None else ""

    def _in_limits(self, number: float) -> bool:
        return (self.minimum is None or number >= self.minimum) and (
            self.maximum is None or number <= self.maximum
        )

    def _parse_int(self, value: Any) -> int:
        number = _whole(value)
        if number is None or not self._in_limits(number):
            raise self._fail("a whole number" + self._limits())
        return number

    def _parse_float(self, value: Any) -> float:
        try:
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number) or not self._in_limits(number):
            raise self._fail("a number" + self._limits())
        return number

    def _parse_bool(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower() if isinstance(value, str | int) else None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise self._fail("true or false")

    def _parse_str(self, value: Any) -> str:
        if not isinstance(value, str):
            raise self._fail("text")
        return value

    def _parse_choice(self, value: Any) -> Any:
        for choice in self.choices:
            if value is choice or (type(value) is type(choice) and value == choice):
                return choice
        if isinstance(value, str):
            for choice in self.choices:
                if self.format(choice).lower() == value.lower():
                    return choice
        names = ", ".join(self.format(c) for c in self.choices)
        raise self._fail(f"one of {names}")

    _parse_dtype = _parse_choice

    def _parse_int_or_pair(self, value: Any) -> int | tuple[int, ...]:
        lengths = " or ".join(str(n) for n in self.lengths)
        items = _items(value)
        numbers = None if items is None else [_whole(v) for v in items]
        ok = numbers is not None and (len(numbers) == 1 or len(numbers) in self.lengths)
        if not ok or any(n is None or not self._in_limits(n) for n in numbers):
            raise self._fail(f"a whole number{self._limits()} or {lengths} of them")
        return numbers[0] if len(numbers) == 1 else tuple(numbers)

    def _parse_shape(self, value: Any) -> tuple[int, ...]:
        items = _items(value)
        numbers = [] if items is None else [_whole(v) for v in items]
        wildcard = self.minimum == -1
        ok = bool(numbers) and all(n is not None and (n >= 1 or (wildcard and n == -1))
                                   for n in numbers)
        if not ok or numbers.count(-1) > 1:
            extra = " (one of them may be -1 for the rest)" if wildcard else ""
            raise self._fail(f"a list of sizes ≥ 1 such as (1, 28, 28){extra}")
        return tuple(numbers)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _whole(value: Any) -> int | None:
    """An int from an int, an integral float or text; None when it isn't one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    item = getattr(value, "item", None)  # NumPy integers
    return _whole(item()) if callable(item) and getattr(value, "shape", None) == () else None


def _items(value: Any) -> list | None:
    """Entries of a tuple/list, or of text like '3', '3, 3', '(1, 28, 28)' or '3×3'."""
    if isinstance(value, tuple | list):
        return list(value)
    if isinstance(value, str):
        text = value.strip().strip("()[]").strip()
        return [p for p in _SPLIT.split(text) if p] if text else []
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    return None


@dataclass(frozen=True)
class PortSpec:
    """An input or output port of a node type."""

    name: str
    description: str = ""
    optional: bool = False


@dataclass(frozen=True, eq=False)
class NodeType:
    """Everything the editor and the compiler know about one kind of node.

    `summary(params)` is the short text on the node ('Dense 784→256'). Extras beyond the
    common fields: `cell` is the engine Cell class built as `cell(**values)` for layer
    types; `build(values) -> Cell` builds any other type (user Cells); `infer(values,
    {input port: shape}) -> {output port: shape}` gives a user type's output shapes
    (raising ShapeError with a reason), built-in types have their rules
    in the compiler; `in_palette` is False for types the editor makes itself (composites
    and their ports).
    """

    name: str
    category: str
    description: str
    inputs: tuple[PortSpec, ...]
    outputs: tuple[PortSpec, ...]
    params: tuple[ParamSpec, ...]
    summary: Callable[[Mapping[str, Any]], str]
    cell: type | None = None
    build: Callable[[Mapping[str, Any]], Any] | None = None
    infer: Callable[[Mapping[str, Any], Mapping[str, tuple]], dict[str, tuple]] | None = None
    in_palette: bool = True

    def param(self, name: str) -> ParamSpec:
        for spec in self.params:
            if spec.name == name:
                return spec
        raise CatalogueError(f"{self.name} has no hyper-parameter '{name}'.")

    def defaults(self) -> dict[str, Any]:
        return {spec.name: spec.default for spec in self.params}

    def values(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Every hyper-parameter's value: `params` checked and parsed over the defaults.

        Raises CatalogueError naming the first bad or unknown hyper-parameter.
        """
        known = {spec.name for spec in self.params}
        for key in params:
            if key not in known:
                raise CatalogueError(f"{self.name} has no hyper-parameter '{key}'.")
        return {s.name: s.parse(params[s.name]) if s.name in params else s.default
                for s in self.params}

    def visible_params(self, params: Mapping[str, Any]) -> tuple[ParamSpec, ...]:
        """The params that apply given the node's values (the inspector shows these)."""
        values = {**self.defaults(), **params}
        return tuple(spec for spec in self.params if spec.applies(values))

    def describe(self, params: Mapping[str, Any]) -> str:
        """`summary` that never raises: falls back to the type name."""
        try:
            return self.summary({**self.defaults(), **params})
        except Exception:  # a summary must never break drawing a node
            return self.name

    def new_node(self, *, name: str = "", position=(0.0, 0.0),
                 params: Mapping[str, Any] | None = None) -> Node:
        if not self.in_palette:
            raise CatalogueError(f"{self.name} nodes are made by the editor, not from the palette.")
        return Node(
            self.name,
            name,
            inputs=tuple(p.name for p in self.inputs),
            outputs=tuple(p.name for p in self.outputs),
            params=self.values(params or {}),
            position=position,
        )
