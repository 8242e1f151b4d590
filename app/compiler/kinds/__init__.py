"""Compiler tables added family by family (see app.catalogue.kinds for the node types).

A family module declares:
- RULES: {type name: rule(values, {input port: shape}) -> {output port: shape}}, raising
  ShapeError with the reason (helpers in app.compiler.rules);
- PARAM_SHAPES: {type name: fn(values) -> {Parameter name: shape}} for types with
  Parameters: sizing a network before building it, and checking saved arrays;
- FOLLOWING: {type name: hyper-parameters that follow the width arriving};
- FITTING: {type name: fn(arriving shape) -> {those hyper-parameters: values}};
- OP_CELLS: {type name: Cell class} for op nodes (built as cls(**values)).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds import merge_tables
from app.compiler.kinds import activation, attention, conv, norm, ops, pool, recurrent, sequence

FAMILIES = (conv, pool, norm, activation, ops, sequence, recurrent, attention)


def _merged(table: str) -> dict[str, Any]:
    return merge_tables(FAMILIES, table)


RULES = _merged("RULES")
PARAM_SHAPES = _merged("PARAM_SHAPES")
FOLLOWING = _merged("FOLLOWING")
FITTING = _merged("FITTING")
OP_CELLS = _merged("OP_CELLS")


def parameter_shapes(type_name: str, values: Mapping[str, Any]) -> dict[str, tuple] | None:
    """{Parameter name: shape} for a family type with Parameters; None for other types."""
    fn = PARAM_SHAPES.get(type_name)
    return None if fn is None else fn(values)


def parameter_count(type_name: str, values: Mapping[str, Any]) -> int:
    shapes = parameter_shapes(type_name, values)
    return 0 if shapes is None else sum(math.prod(s) for s in shapes.values())
