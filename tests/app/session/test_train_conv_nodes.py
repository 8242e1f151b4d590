"""Every convolution node is reachable in a project that trains end to end: built through
the catalogue, compiled, trained on the 8×8 digits, its loss finite and going down."""

import numpy as np
import pytest

from app.document import Project
from app.session import STEP_COLUMNS, TrainingSession
from tests.app.session.session_samples import chain

# Each on the digits (1, 8, 8): a Reshape makes sequences (8 rows of 8) or a volume.
PROJECTS = {
    "Conv1d": [("Reshape", {"shape": (8, 8)}),
               ("Conv1d", {"in_channels": 8, "out_channels": 8, "kernel_size": 3,
                           "has_bias": True}),
               ("ReLU", {}), ("Flatten", {}),
               ("Dense", {"in_channels": 64, "out_channels": 10})],
    "Conv3d": [("Reshape", {"shape": (1, 1, 8, 8)}),
               ("Conv3d", {"in_channels": 1, "out_channels": 4, "kernel_size": (1, 3, 3),
                           "has_bias": True}),
               ("ReLU", {}), ("Flatten", {}),
               ("Dense", {"in_channels": 256, "out_channels": 10})],
    "Conv2dTranspose": [("Conv2dTranspose", {"in_channels": 1, "out_channels": 2,
                                             "has_bias": True}),
                        ("ReLU", {}), ("Flatten", {}),
                        ("Dense", {"in_channels": 512, "out_channels": 10})],
    "Conv1dTranspose": [("Reshape", {"shape": (8, 8)}),
                        ("Conv1dTranspose", {"in_channels": 8, "out_channels": 4,
                                             "has_bias": True}),
                        ("ReLU", {}), ("Flatten", {}),
                        ("Dense", {"in_channels": 64, "out_channels": 10})],
}


@pytest.mark.parametrize("kind", PROJECTS)
def test_a_project_with_the_node_trains(kind):
    graph = chain(("Input", {"shape": (1, 8, 8)}), *PROJECTS[kind],
                  ("Output", {"loss": "CrossEntropyLoss"}))
    project = Project(graph=graph, name=kind, training={
        "dataset": {"builtin": "digits", "options": {"n_samples": 256}},
        "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 32, "epochs": 3,
        "validation_fraction": 0.0, "seed": 0})
    session = TrainingSession(project)
    assert any(type(cell).__name__ == kind for cell in session.compiled.cells.values())
    session.run()
    losses = session.metrics.steps.snapshot()[:, STEP_COLUMNS.index("loss")]
    assert len(losses) == 3 * 8 and np.isfinite(losses).all()
    assert losses[-4:].mean() < 0.7 * losses[:4].mean(), losses
    node = project.graph.node_named(f"{kind.lower()}1")
    assert project.param_values[node.id]["weight"].shape == \
        session.compiled.parameters()[f"{kind.lower()}1.weight"].shape
