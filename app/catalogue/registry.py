"""The registry of node types: lookup, palette order, search, and new nodes with their ports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import Preset
from app.catalogue.spec import CatalogueError, NodeType
from app.document import Node

CATEGORIES = (
    "Inputs & outputs",
    "Layers",
    "Activations",
    "Normalization",
    "Pooling & resampling",
    "Reshaping",
    "Math",
    "Debugging",
    "Custom Cells",
)


class Catalogue:
    """Every node type by name, in palette order (categories first, then registration order)."""

    def __init__(self, categories: tuple[str, ...] = CATEGORIES) -> None:
        self._types: dict[str, NodeType] = {}
        self._categories = list(categories)
        self._presets: list[Preset] = []

    def get(self, type_name: str) -> NodeType:
        """The type called `type_name`; CatalogueError (not KeyError) when there is none."""
        node_type = self._types.get(type_name) if isinstance(type_name, str) else None
        if node_type is None:
            raise CatalogueError(f"unknown node type {type_name!r}")
        return node_type

    def __contains__(self, type_name: object) -> bool:
        return type_name in self._types

    def types(self) -> list[NodeType]:
        """Palette types in palette order."""
        order = {c: i for i, c in enumerate(self._categories)}
        shown = [t for t in self._types.values() if t.in_palette]
        return sorted(shown, key=lambda t: order.get(t.category, len(order)))

    def categories(self) -> list[str]:
        """Categories that have at least one palette type, in palette order."""
        used = {t.category for t in self.types()}
        return [c for c in self._categories if c in used]

    def search(self, text: str) -> list[NodeType]:
        """Palette types whose name, description or category contains `text` (any case).

        Types whose name matches come first.
        """
        needle = text.strip().lower()
        if not needle:
            return self.types()
        by_name = [t for t in self.types() if needle in t.name.lower()]
        others = [
            t
            for t in self.types()
            if t not in by_name and needle in f"{t.description}\n{t.category}".lower()
        ]
        return by_name + others

    def register(self, node_type: NodeType, *, replace: bool = False) -> NodeType:
        """Add a node type (e.g. a user Cell); refuses a taken name unless `replace`."""
        if not isinstance(node_type, NodeType):
            raise CatalogueError(f"Expected a NodeType, not {type(node_type).__name__}.")
        if node_type.name in self._types and not replace:
            raise CatalogueError(f"There is already a node type called '{node_type.name}'.")
        if node_type.category not in self._categories:
            self._categories.append(node_type.category)
        self._types[node_type.name] = node_type
        return node_type

    def add_preset(self, preset: Preset) -> None:
        """A palette entry adding a node of a registered type with some values preset."""
        node_type = self.get(preset.type_name)
        node_type.values(preset.params)  # a preset the type refuses is a bug: say so now
        self._presets.append(preset)

    def presets(self) -> list[Preset]:
        return list(self._presets)

    def unregister(self, type_name: str) -> None:
        self.get(type_name)
        del self._types[type_name]

    def new_node(
        self,
        type_name: str,
        *,
        name: str = "",
        position: tuple[float, float] = (0, 0),
        params: Mapping[str, Any] | None = None,
    ) -> Node:
        """A node of this type with its declared ports and every hyper-parameter filled in.

        `params` may hold typed text or values; a bad one raises CatalogueError. The node
        is not in any graph yet: pass it to `graph.add_node` (an empty name gets one there).
        """
        return self.get(type_name).new_node(name=name, position=position, params=params)
