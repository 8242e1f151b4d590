"""The registry of node types: lookup, palette order, search, and new nodes with their ports."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.catalogue.kinds.common import Preset
from app.catalogue.spec import CatalogueError, NodeType
from app.document import Node

CATEGORIES = (
    "Inputs & outputs",
    "Layers",
    "Activations",
    "Normalization",
    "Sequences",
    "Pooling & resampling",
    "Reshaping",
    "Math",
    "Debugging",
    "Custom Cells",
)

# How well a search matched, best first: the whole name, words of the name, of the
# keywords (synonyms, or a preset's type), of the description or category.
EXACT, NAME, KEYWORD, TEXT = range(4)
_SEPARATORS = re.compile(r"[\s\-_./·,()]+")
_WORDS = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Entry:
    """One palette entry: a node type, or a preset of one (`preset` set)."""

    label: str
    category: str
    description: str
    node_type: NodeType
    preset: Preset | None = None
    keywords: tuple[str, ...] = field(default=())

    @property
    def params(self) -> dict[str, Any]:
        """The values a node added from this entry starts with (over the type's defaults)."""
        return dict(self.preset.params) if self.preset is not None else {}


def squash(text: str) -> str:
    """`text` as search compares it: any case, without spaces, hyphens or underscores."""
    return _SEPARATORS.sub("", text.casefold())


def query_words(text: str) -> list[str]:
    """The words of a search ('Global-Pool' -> ['global', 'pool'])."""
    return [word for word in _SEPARATORS.split(text.casefold()) if word]


def match_rank(entry: Entry, words: list[str]) -> int | None:
    """How well `entry` matches the search `words` (EXACT … TEXT), None if it does not.

    Every word must be found: in the name or a keyword anywhere ('pool' in 'MaxPool2d',
    'swish' in 'hard swish'), in the description or category at a word's start. The
    weakest word decides the rank.
    """
    label = squash(entry.label)
    if "".join(words) == label:
        return EXACT
    keywords = [squash(k) for k in entry.keywords]
    text_words = _WORDS.findall(f"{entry.description} {entry.category}".casefold())
    rank = NAME
    for word in words:
        if word in label:
            continue
        if any(word in keyword for keyword in keywords):
            rank = max(rank, KEYWORD)
        elif any(w.startswith(word) for w in text_words):
            rank = TEXT
        else:
            return None
    return rank


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
        """Categories that have at least one palette entry, in palette order."""
        used = {entry.category for entry in self.entries()}
        return [c for c in self._categories if c in used]

    def entries(self) -> list[Entry]:
        """Every palette entry in palette order: each type, then the presets of it (in a
        category of their own, when they name one, after that category's types)."""
        presets: dict[str, list[Preset]] = {}
        for preset in self._presets:
            presets.setdefault(preset.type_name, []).append(preset)
        found = []
        for node_type in self.types():
            found.append(Entry(node_type.name, node_type.category, node_type.description,
                               node_type, keywords=node_type.keywords))
            for preset in presets.get(node_type.name, ()):
                found.append(Entry(preset.label, preset.category or node_type.category,
                                   preset.description, node_type, preset,
                                   (node_type.name, *preset.keywords)))
        order = {c: i for i, c in enumerate(self._categories)}
        return sorted(found, key=lambda e: (order.get(e.category, len(order)),
                                            e.category != e.node_type.category))

    def find(self, text: str) -> list[Entry]:
        """Palette entries (types and presets) matching `text`, best match first.

        Forgiving: any case; spaces, hyphens and underscores don't matter ('conv 2d',
        'hard-swish'); each word is looked for in the name, the keywords (synonyms),
        the description and the category. Names that match come first, then keywords,
        then the rest; palette order within each.
        """
        words = query_words(text)
        if not words:
            return self.entries()
        ranked = []
        for index, entry in enumerate(self.entries()):
            rank = match_rank(entry, words)
            if rank is not None:
                ranked.append((rank, index, entry))
        return [entry for _, _, entry in sorted(ranked, key=lambda r: r[:2])]

    def search(self, text: str) -> list[NodeType]:
        """Palette types matching `text` as `find` does (presets left out), best first."""
        return [entry.node_type for entry in self.find(text) if entry.preset is None]

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
        if any(p.label == preset.label for p in self._presets):
            raise CatalogueError(f"There is already a palette entry called '{preset.label}'.")
        if preset.category and preset.category not in self._categories:
            self._categories.append(preset.category)
        self._presets.append(preset)

    def presets(self) -> list[Preset]:
        return list(self._presets)

    def preset(self, label: str) -> Preset:
        """The preset called `label`; CatalogueError when there is none."""
        for preset in self._presets:
            if preset.label == label:
                return preset
        raise CatalogueError(f"unknown palette entry {label!r}")

    def unregister(self, type_name: str) -> None:
        self.get(type_name)
        del self._types[type_name]
        self._presets = [p for p in self._presets if p.type_name != type_name]

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
