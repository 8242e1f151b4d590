"""Sequence patterns fused before conversion (attention blocks, recurrent wrappers)."""

from __future__ import annotations

from app.onnx_import.fold import Folded
from app.onnx_import.ir import OnnxNode


def fuse(folded: Folded, nodes: list[OnnxNode]) -> list[OnnxNode]:
    return nodes
