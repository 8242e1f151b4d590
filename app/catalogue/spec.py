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
_NOT_FINITE = {"nan", "inf", "infinity"}

# Typed numbers are read strictly: ASCII digits only, no '1_000', no '٣'.
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# In a list of numbers: a number ends at a space, a separator or the end ('5x7' is 5 × 7,
# '5xy' and '5.5' are words), and 'x' is a separator unless a word goes on ('xy').
_LIST_NUMBER = re.compile(r"[+-]?[0-9]+(?=$|[\s,×*]|x(?![A-Za-z_.]))")
_LIST_SEPARATOR = re.compile(r",|[×*]|x(?![A-Za-z_.])")
_LIST_WORD = re.compile(r"[^\s,]+")
_BRACKETS = {"(": ")", "[": "]"}


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

    def _fail(self, what: str, why: str = "") -> CatalogueError:
        """'<name> must be <what>. <Why>.': what the value should be, then what was wrong."""
        because = f" {why[:1].upper()}{why[1:]}." if why else ""
        return CatalogueError(f"{self.name} must be {what}.{because}")

    def _limits(self) -> str:
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return f" between {_num(lo)} and {_num(hi)}"
        if lo is not None:
            return f" ≥ {_num(lo)}"
        return f" ≤ {_num(hi)}" if hi is not None else ""

    def _out_of_limits(self, number: float) -> str:
        """Why `number` is outside the limits ('0 is less than 1'), or '' when it is inside."""
        if self.minimum is not None and number < self.minimum:
            return f"{_num(number)} is less than {_num(self.minimum)}"
        if self.maximum is not None and number > self.maximum:
            return f"{_num(number)} is more than {_num(self.maximum)}"
        return ""

    def _parse_int(self, value: Any) -> int:
        what = "a whole number" + self._limits()
        number = _whole(value)
        if number is None:
            raise self._fail(what, _not_a(value, "a whole number"))
        if why := self._out_of_limits(number):
            raise self._fail(what, why)
        return number

    def _parse_float(self, value: Any) -> float:
        what = "a number" + self._limits()
        number = _number(value)
        if number is None:
            raise self._fail(what, _not_a(value, "a number"))
        if not math.isfinite(number):
            raise self._fail(what, f"{_shown(value)} is not a finite number")
        if why := self._out_of_limits(number):
            raise self._fail(what, why)
        return number

    def _parse_bool(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower() if isinstance(value, str | int) else None
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise self._fail("true or false", f"{_shown(value)} is neither")

    def _parse_str(self, value: Any) -> str:
        if not isinstance(value, str):
            raise self._fail("text", f"{_shown(value)} is not text")
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
        raise self._fail(f"one of {names}", f"{_shown(value)} is not one of them")

    _parse_dtype = _parse_choice

    def _parse_int_or_pair(self, value: Any) -> int | tuple[int, ...]:
        runs = sorted(set(self.lengths))
        if len(runs) > 2 and runs == list(range(runs[0], runs[-1] + 1)):
            lengths = f"{runs[0]} to {runs[-1]}"  # 'axis must be … or 2 to 6 of them'
        else:
            lengths = " or ".join(str(n) for n in self.lengths)
        what = f"a whole number{self._limits()} or {lengths} of them"
        try:
            numbers = _numbers(value)
        except ValueError as exc:
            raise self._fail(what, str(exc)) from None
        if len(numbers) != 1 and len(numbers) not in self.lengths:
            raise self._fail(what, f"{len(numbers)} numbers were given")
        for number in numbers:
            if why := self._out_of_limits(number):
                raise self._fail(what, why)
        return numbers[0] if len(numbers) == 1 else tuple(numbers)

    def _parse_shape(self, value: Any) -> tuple[int, ...]:
        wildcard = self.minimum == -1
        extra = " (one of them may be -1 for the rest)" if wildcard else ""
        what = f"a list of sizes ≥ 1 such as (1, 28, 28){extra}"
        try:
            numbers = _numbers(value)
        except ValueError as exc:
            raise self._fail(what, str(exc)) from None
        for number in numbers:
            if number < 1 and not (wildcard and number == -1):
                why = f"{number} is neither a size ≥ 1 nor -1" if wildcard else \
                    f"{number} is less than 1"
                raise self._fail(what, why)
        if numbers.count(-1) > 1:
            raise self._fail(what, "-1 is given more than once")
        return tuple(numbers)


def _num(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    return str(int(value)) if float(value).is_integer() else str(value)


def _shown(value: Any) -> str:
    """`value` as a refusal names it: text quoted (and cut short), anything else as is."""
    if isinstance(value, str):
        return repr(value if len(value) <= 24 else value[:23] + "…")
    return str(value)


def _not_a(value: Any, what: str) -> str:
    """'<value> is not <what>' ('it is empty' for blank text)."""
    if isinstance(value, str) and not value.strip():
        return "it is empty"
    return f"{_shown(value)} is not {what}"


def _whole(value: Any) -> int | None:
    """An int from an int, an integral float or text of digits; None when it isn't one.

    Text is read strictly: an optional sign and ASCII digits ('3.0', '1_000', '1e3' are not).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text) if _INT_TEXT.fullmatch(text) else None
        except ValueError:  # beyond Python's 4300 digits
            return None
    item = getattr(value, "item", None)  # NumPy integers
    return _whole(item()) if callable(item) and getattr(value, "shape", None) == () else None


def _number(value: Any) -> float | None:
    """A float from a number or from decimal text ('0.25', '-1e-3'); None when it isn't one.

    Text other than a decimal number (1_000, '0x10') is refused; 'nan' and 'inf' come
    back as such, for the caller to refuse as not finite.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.lower().lstrip("+-") in _NOT_FINITE:
            return math.nan
        return float(text) if _FLOAT_TEXT.fullmatch(text) else None
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _numbers(value: Any) -> list[int]:
    """The whole numbers of a tuple/list, a number, or text (see `_numbers_in_text`).

    Raises ValueError saying what is wrong ("'x' is not a whole number").
    """
    if isinstance(value, str):
        return _numbers_in_text(value)
    if isinstance(value, tuple | list):
        items = list(value)
    elif _whole(value) is not None:
        items = [value]
    else:
        raise ValueError(f"{_shown(value)} is not a whole number or a list of them")
    if not items:
        raise ValueError("the list is empty")
    numbers = [_whole(item) for item in items]
    for item, number in zip(items, numbers, strict=True):
        if number is None:
            raise ValueError(_not_a(item, "a whole number"))
    return numbers


def _numbers_in_text(text: str) -> list[int]:
    """The whole numbers of text like '3', '3, 3', '(1, 28, 28)', '[2 2]', '3×3' or '(5,)'.

    Numbers are separated by a comma, 'x', '×' or '*' (with any spaces around) or by
    spaces alone; one pair of brackets may go around them and one comma may end them.
    Anything else is refused: ValueError saying what is wrong.
    """
    text = text.strip()
    if text[:1] in _BRACKETS:
        if len(text) < 2 or text[-1] != _BRACKETS[text[0]]:
            raise ValueError(f"{text[0]!r} is not closed")
        text = text[1:-1]
    if any(bracket in text for bracket in "()[]"):
        raise ValueError("brackets may only go once around the whole list")
    numbers: list[int] = []
    want_number, separator, pos = True, "", 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        if not want_number:  # _LIST_NUMBER ends a number at a space or a separator
            match = _LIST_SEPARATOR.match(text, pos)
            separator, pos = (" ", pos) if match is None else (match.group(), match.end())
            want_number = True
            continue
        match = _LIST_NUMBER.match(text, pos)
        number = None if match is None else _whole(match.group())
        if number is not None:
            numbers.append(number)
            want_number, pos = False, match.end()
        elif text[pos] == ",":
            raise ValueError("a number is missing between two commas" if separator == ","
                             else "a number is missing before ','")
        else:
            raise ValueError(f"{_shown(_LIST_WORD.match(text, pos).group())} is not "
                             "a whole number")
    if not numbers:
        raise ValueError("it is empty")
    if want_number and separator != ",":  # '5x': a trailing comma is fine, 'x' is not
        raise ValueError(f"a number is missing after {separator!r}")
    return numbers


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
    and their ports); `keywords` are more words the palette search finds the type by
    ("deconvolution" for Conv2dTranspose); `ports(values)`, when given, names the output
    ports for these values (Split's count follows its `output_num`).
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
    keywords: tuple[str, ...] = ()
    ports: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None

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

    def output_ports(self, params: Mapping[str, Any]) -> tuple[str, ...]:
        """The output ports a node of this type has with these hyper-parameters: `ports`
        of its values, or the declared outputs. CatalogueError for a bad value."""
        if self.ports is None:
            return tuple(p.name for p in self.outputs)
        return tuple(self.ports(self.values(params)))

    def new_node(self, *, name: str = "", position=(0.0, 0.0),
                 params: Mapping[str, Any] | None = None) -> Node:
        if not self.in_palette:
            raise CatalogueError(f"{self.name} nodes are made by the editor, not from the palette.")
        values = self.values(params or {})
        return Node(
            self.name,
            name,
            inputs=tuple(p.name for p in self.inputs),
            outputs=self.output_ports(values),
            params=values,
            position=position,
        )
