"""(stub) The attention family's compiler tables; see app.compiler.kinds for each table's form."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.compiler.rules import Rule, Shape

RULES: dict[str, Rule] = {}
PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {}
FOLLOWING: dict[str, tuple[str, ...]] = {}
FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {}
OP_CELLS: dict[str, type] = {}
