"""Export tables added family by family (forms in app.export.kinds.common).

A family module declares TORCH (layers as torch.nn modules), TORCH_OPS (op nodes as torch
expressions), TORCH_STATE (Parameter names and layouts as torch keeps them), ONNX (ops
emitted per node) and PYTHON_OPS (op nodes in the engine script; layers there are their
engine.nn constructors, written from the node's values).
"""

from __future__ import annotations

from typing import Any

from app.catalogue.kinds import merge_tables
from app.export.kinds import activation, attention, conv, norm, ops, pool, recurrent, sequence

FAMILIES = (conv, pool, norm, activation, ops, sequence, recurrent, attention)


def _merged(table: str) -> dict[str, Any]:
    return merge_tables(FAMILIES, table)


TORCH = _merged("TORCH")
TORCH_OPS = _merged("TORCH_OPS")
TORCH_STATE = _merged("TORCH_STATE")
ONNX = _merged("ONNX")
PYTHON_OPS = _merged("PYTHON_OPS")
