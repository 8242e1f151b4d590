"""A project: the graph with its trained Parameter values, hooks, training settings and view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from app.document.events import Events, TrainingChanged
from app.document.graph import Graph
from app.document.node import ABSENT, DocumentError, check_id, new_id, same_value

NODE_HOOK_KINDS = ("forward_pre", "forward", "backward")  # attached to a node's Cell
EDGE_HOOK_KINDS = ("hook_backward",)  # a HookBackward placed on an edge
HOOK_KINDS = NODE_HOOK_KINDS + EDGE_HOOK_KINDS


@dataclass(frozen=True)
class Hook:
    """A hook the user attached, and the plot pane showing what it captures.

    `target` is a node id for node kinds and an edge id for `hook_backward`, at any
    level of the graph. `settings` holds the pane's JSON-able options.
    """

    kind: str
    target: str
    pane: str = "histogram"
    settings: Mapping[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_id)

    def __post_init__(self) -> None:
        if self.kind not in HOOK_KINDS:
            raise DocumentError(
                f"Unknown hook kind {self.kind!r} (known: {', '.join(HOOK_KINDS)})."
            )
        check_id(self.id, "A hook id")
        check_id(self.target, "A hook target")
        if not isinstance(self.pane, str) or not self.pane:
            raise DocumentError("A hook's pane must be named.")
        object.__setattr__(self, "settings", MappingProxyType(dict(self.settings)))

    @property
    def on_edge(self) -> bool:
        return self.kind in EDGE_HOOK_KINDS


@dataclass(eq=False)
class Project:
    """Everything a project file holds.

    `param_values[node_id][param_name]` keeps Parameter values with the document, so a
    recompile after an edit keeps the trained weights of unchanged nodes. Values of
    nodes no longer in the graph are kept in memory (an undo may bring the node back)
    but are not saved.
    """

    graph: Graph = field(default_factory=Graph)
    name: str = "Untitled"
    training: dict[str, Any] = field(default_factory=dict)
    hooks: list[Hook] = field(default_factory=list)
    view: dict[str, Any] = field(default_factory=dict)
    param_values: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    # TrainingChanged after each `set_training` (the graph has its own `graph.events`).
    events: Events = field(default_factory=Events, repr=False, compare=False)

    def set_training(self, key: str, value: Any) -> None:
        """Set one training setting (ABSENT removes it) and tell the project's listeners."""
        if not isinstance(key, str) or not key or key == "state":
            raise DocumentError(f"{key!r} is not a training setting one can set.")
        old = self.training.get(key, ABSENT)
        if same_value(old, value):
            return
        if value is ABSENT:
            del self.training[key]
        else:
            self.training[key] = value
        self.events.emit(TrainingChanged(key, old, value))

    def node_ids(self) -> set[str]:
        """Ids of the nodes at every level of the graph."""
        return {node.id for _, node in self.graph.walk()}

    def edge_ids(self) -> set[str]:
        """Ids of the edges at every level of the graph."""
        ids = set(self.graph.edges)
        for _, node in self.graph.walk():
            if node.subgraph is not None:
                ids |= set(node.subgraph.edges)
        return ids

    def live_param_values(self) -> dict[str, dict[str, np.ndarray]]:
        """Parameter values of nodes still in the graph (what a save writes)."""
        present = self.node_ids()
        return {nid: dict(v) for nid, v in self.param_values.items() if nid in present and v}

    def live_hooks(self) -> list[Hook]:
        """Hooks whose target is still in the graph (what a save writes)."""
        nodes, edges = self.node_ids(), self.edge_ids()
        return [h for h in self.hooks if h.target in (edges if h.on_edge else nodes)]
