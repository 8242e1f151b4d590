"""What a family of node types declares, and the helpers their summaries share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from app.catalogue.spec import PortSpec

IN = (PortSpec("in", "The tensor coming in."),)
OUT = (PortSpec("out", "The result."),)
XY = (PortSpec("x", "First operand."), PortSpec("y", "Second operand."))

Summary = Callable[[Mapping[str, Any]], str]
# An engine.nn class shown as a node: (category, one-line description, summary on the node).
Layer = tuple[str, str, Summary]
# ParamSpec fields to change for one hyper-parameter of one type, e.g.
# {"when": {"pad_mode": ("pad",)}} or {"description": "...", "minimum": 1}.
Tweak = dict[str, Any]


@dataclass(frozen=True)
class Preset:
    """A palette entry that adds a node of `type_name` with some values preset
    ("Global average pooling" is an AdaptiveAvgPool2d with output_size 1)."""

    label: str
    type_name: str
    params: Mapping[str, Any]
    description: str
    category: str = ""  # "" : the type's own category
    keywords: tuple[str, ...] = field(default=())


def pair(value: Any) -> str:
    """'3×3' for 3 or (3, 3); '3×5' for (3, 5); '3×3×3' for a triple."""
    if isinstance(value, int):
        return f"{value}×{value}"
    return "×".join(str(v) for v in value)


def stride(value: Any) -> str:
    """'2' for 2 or (2, 2); '2×1' for (2, 1)."""
    if isinstance(value, int):
        return str(value)
    values = tuple(value)
    return str(values[0]) if len(set(values)) == 1 else "×".join(str(v) for v in values)


def shape(value: Any) -> str:
    """'(N, 1, 28, 28)' for (1, 28, 28): a sample's shape with the batch axis in front."""
    return "(" + ", ".join(["N", *(str(v) for v in value)]) + ")"
