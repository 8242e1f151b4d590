"""A copy of a project to train on the side (an LR finder's, a sweep run's): its own graph,
settings, Parameter values and frozen marks; no hooks, no run history, no progress."""

from __future__ import annotations

import copy

from app.document import Project
from app.document.data import graph_from_data, graph_to_data


def copy_project(project: Project, *, fresh: bool = False) -> Project:
    """A project to train apart from `project`, which is left as it is.

    `fresh`: the copy starts from freshly initialized weights (as Restart does: the same
    seed gives the same start), without the trained values; else it starts from a copy of
    the project's weights (the optimizer's state is never copied: its entries are left out).
    """
    training = copy.deepcopy({k: v for k, v in project.training.items() if k != "state"})
    values = {} if fresh else {
        node_id: {name: array.copy() for name, array in arrays.items()
                  if not name.startswith("_optimizer.")}
        for node_id, arrays in project.param_values.items()
    }  # fmt: skip
    return Project(
        graph=graph_from_data(graph_to_data(project.graph)),
        name=project.name,
        training=training,
        param_values={k: v for k, v in values.items() if v},
        frozen={k: set(v) for k, v in project.frozen.items()},
        metadata=copy.deepcopy(project.metadata),
    )
