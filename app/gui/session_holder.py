"""The training session of one window, for every view that shows or uses it.

The Run controller makes and drops sessions and sets them here; the hook panes, the
Parameters, the Predict dock, the decision boundary and autosave follow `changed` and
read `session`, `bridge` and `problem`, without knowing the Run controller.
"""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.document import Project
from app.document.data import graph_to_data
from app.session import READY, TrainingSession


class SessionHolder(QObject):
    """The current TrainingSession (None until one can be made) and its GUI-thread bridge."""

    changed = Signal()  # `session` was replaced or dropped (emitted by the Run controller)
    weights_changed = Signal()  # Parameter values were edited: views of the weights redraw
    refresh_requested = Signal()  # make the session again if nothing runs (code trusted)
    run_starting = Signal()  # a run is about to start (autosave keeps unsaved edits)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session: TrainingSession | None = None
        self.bridge: Any = None  # `arrived` signal (queued events), `paused` Event
        self.problem: str | None = None  # why no session could be made

    @property
    def status(self) -> str:
        return self.session.status if self.session is not None else READY


def fingerprint(project: Any) -> str:
    """What a session is made from: the network (not where nodes sit) and the settings."""
    if not isinstance(project, Project):
        return ""
    graph = _without_positions(graph_to_data(project.graph))
    training = {k: v for k, v in project.training.items()
                if k not in ("state", "learning_rate")}  # fmt: skip
    return json.dumps([graph, training], sort_keys=True, default=repr)


def _without_positions(graph: dict) -> dict:
    """Graph data (`graph_to_data`) without where its nodes sit, inside composites too."""
    return {**graph, "nodes": [_node_without_position(node) for node in graph["nodes"]]}


def _node_without_position(node: dict) -> dict:
    node = {k: v for k, v in node.items() if k != "position"}
    if "subgraph" in node:
        node["subgraph"] = _without_positions(node["subgraph"])
    return node
