"""Small projects for the session, CLI and export tests, built through the catalogue."""

from __future__ import annotations

import numpy as np

from app.catalogue import CATALOGUE
from app.document import Graph, Project


def chain(*layers: tuple[str, dict]) -> Graph:
    graph = Graph()
    previous = None
    for i, (type_name, params) in enumerate(layers):
        node = graph.add_node(CATALOGUE.new_node(type_name, position=(i * 150, 0), params=params))
        if previous is not None:
            graph.connect(previous.id, "out", node.id, "in")
        previous = node
    return graph


def mlp_project(hidden: int = 16, loss: str = "CrossEntropyLoss", inputs: int = 2,
                outputs: int = 2, **training) -> Project:  # fmt: skip
    """Input → Dense → Tanh → Dense → Output on spirals, trained a few quick epochs."""
    graph = chain(
        ("Input", {"shape": (inputs,)}),
        ("Dense", {"in_channels": inputs, "out_channels": hidden}),
        ("Tanh", {}),
        ("Dense", {"in_channels": hidden, "out_channels": outputs}),
        ("Output", {"loss": loss}),
    )
    settings = {"dataset": {"builtin": "spirals", "options": {"n_samples": 200}},
                "learning_rate": 0.02, "batch_size": 16, "epochs": 3, "seed": 0}  # fmt: skip
    settings.update(training)
    return Project(graph=graph, name="mlp", training=settings)


def bn_dropout_project(**training) -> Project:
    """Dense → BatchNorm1d → ReLU → Dropout → Dense on moons: state beyond the weights."""
    graph = chain(
        ("Input", {"shape": (2,)}),
        ("Dense", {"in_channels": 2, "out_channels": 16}),
        ("BatchNorm1d", {"num_features": 16}),
        ("ReLU", {}),
        ("Dropout", {"p": 0.3}),
        ("Dense", {"in_channels": 16, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    settings = {"dataset": {"builtin": "moons", "options": {"n_samples": 150}},
                "learning_rate": 0.02, "batch_size": 16, "epochs": 4, "seed": 1}  # fmt: skip
    settings.update(training)
    return Project(graph=graph, name="moons", training=settings)


def weights(session) -> dict[str, np.ndarray]:
    """Copies of every Parameter of the session's network, by name."""
    return {name: p.asnumpy().copy() for name, p in session.compiled.parameters().items()}


def node_named(project: Project, name: str):
    return project.graph.node_named(name)
