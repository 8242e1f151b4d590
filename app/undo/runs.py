"""Undo commands for the run history: delete runs, rename one, restore a run's weights into
the network, and apply a run's settings (a sweep's best, or the LR finder's rate).

Deleting and renaming only touch the history (not structural: allowed while training).
Restoring weights and applying settings change what the network computes, so they are
refused while a run is going on, like every other such edit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from app.document import ABSENT, DocumentError, Graph, Project, RunRecord
from app.undo.commands import DocumentCommand

__all__ = [
    "ApplySettingsCommand", "DeleteRunsCommand", "RenameRunCommand", "RestoreWeightsCommand",
    "restorable",
]  # fmt: skip


class DeleteRunsCommand(DocumentCommand):
    structural = False

    def __init__(self, project: Project, run_ids: Iterable[str]) -> None:
        self._ids = tuple(run_ids)
        names = [r.name for r in (project.runs.get(i) for i in self._ids) if r is not None]
        text = (f"Delete run {names[0]}" if len(names) == 1
                else f"Delete {len(names)} runs")  # fmt: skip
        super().__init__(project.graph, (), text)
        self._project = project
        self._taken: list[tuple[int, RunRecord]] = []

    def _do(self, graph: Graph) -> None:
        self._taken = self._project.runs.remove(self._ids)

    def _undo(self, graph: Graph) -> None:
        self._project.runs.insert(self._taken)


class RenameRunCommand(DocumentCommand):
    structural = False

    def __init__(self, project: Project, run_id: str, name: str) -> None:
        super().__init__(project.graph, (), f"Rename run to {name.strip()}")
        self._project, self._id, self._name = project, run_id, name
        record = project.runs.get(run_id)
        self._old = (record.name, record.named) if record is not None else ("", False)

    def _do(self, graph: Graph) -> None:
        self._project.runs.rename(self._id, self._name)

    def _undo(self, graph: Graph) -> None:
        record = self._project.runs.get(self._id)
        if record is not None:
            self._project.runs.rename(self._id, self._old[0])
            record.named = self._old[1]


def restorable(project: Project, record: RunRecord) -> tuple[dict[str, dict[str, np.ndarray]],
                                                             list[str]]:  # fmt: skip
    """The kept weights of `record` that fit the network as it is now (node id -> name ->
    values), and a line for each Parameter that does not (gone, or another shape)."""
    if record.weights is None:
        raise DocumentError(f"The weights of {record.name} were not kept.")
    fits: dict[str, dict[str, np.ndarray]] = {}
    misfits: list[str] = []
    present = project.node_ids()
    for node_id, arrays in record.weights.items():
        held = project.param_values.get(node_id, {})
        for name, values in arrays.items():
            now = held.get(name)
            if node_id not in present or now is None:
                misfits.append(f"{name} of a node no longer in the network")
            elif now.shape != values.shape or now.dtype != values.dtype:
                misfits.append(f"{name}: {values.shape} kept, {now.shape} now")
            else:
                fits.setdefault(node_id, {})[name] = values
    return fits, misfits


class RestoreWeightsCommand(DocumentCommand):
    """Put a kept run's weights into the network: every Parameter that still fits."""

    def __init__(self, project: Project, record: RunRecord) -> None:
        super().__init__(project.graph, (), f"Restore the weights of {record.name}")
        self._project, self._record = project, record
        self._old: list[tuple[str, str, np.ndarray]] = []

    def _do(self, graph: Graph) -> None:
        fits, _ = restorable(self._project, self._record)
        if not fits:
            raise DocumentError(f"None of the weights of {self._record.name} fit the network "
                                "as it is now.")  # fmt: skip
        old = []
        for node_id, arrays in fits.items():
            for name, values in arrays.items():
                old.append((node_id, name, self._project.set_values(node_id, name, (), values)))
        self._old = old

    def _undo(self, graph: Graph) -> None:
        for node_id, name, values in reversed(self._old):
            self._project.set_values(node_id, name, (), values)


class ApplySettingsCommand(DocumentCommand):
    """Set several training settings and node hyper-parameters as one undo step.

    `settings`: training setting key -> value (ABSENT removes it); `params`: node id ->
    {hyper-parameter: value}, nodes of the root graph or inside composites.
    """

    def __init__(self, project: Project, settings: Mapping[str, Any],
                 params: Mapping[str, Mapping[str, Any]] | None = None,
                 text: str = "Apply settings") -> None:  # fmt: skip
        super().__init__(project.graph, (), text)
        self._project = project
        self._settings = [(k, project.training.get(k, ABSENT), v) for k, v in settings.items()]
        self._params = {nid: dict(values) for nid, values in (params or {}).items()}
        self._old_params: dict[str, dict[str, Any]] = {}

    def _graph_of(self, node_id: str) -> Graph:
        for graph, node in self._project.graph.walk():
            if node.id == node_id:
                return graph
        raise DocumentError("That node is no longer in the network.")

    def _do(self, graph: Graph) -> None:
        old_params: dict[str, dict[str, Any]] = {}
        for node_id, values in self._params.items():
            inside = self._graph_of(node_id)
            node = inside.nodes[node_id]
            old_params[node_id] = {k: node.params.get(k, ABSENT) for k in values}
            inside.set_params(node_id, values)
        self._old_params = old_params
        for key, _, new in self._settings:
            self._project.set_training(key, new)

    def _undo(self, graph: Graph) -> None:
        for key, old, _ in reversed(self._settings):
            self._project.set_training(key, old)
        for node_id, values in self._old_params.items():
            self._graph_of(node_id).set_params(node_id, values)

