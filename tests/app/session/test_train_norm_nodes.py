"""Networks with LayerNorm, GroupNorm, InstanceNorm2d and LRN nodes compile and train: the loss
stays finite and goes down, and the trained gamma and beta reach the project."""

import numpy as np
import pytest

from app.document import Project
from app.session import STEP_COLUMNS, TrainingFinished, TrainingSession
from tests.app.session.session_samples import chain, weights

DIGITS = {"dataset": {"builtin": "digits", "options": {"n_samples": 320}}, "optimizer": "Adam",
          "learning_rate": 0.01, "batch_size": 32, "epochs": 4, "seed": 0,
          "validation_fraction": 0.0}

NETWORKS = {
    # Every node of the family in one image network.
    "image": [
        ("Input", {"shape": (1, 8, 8)}),
        ("Conv2d", {"in_channels": 1, "out_channels": 8, "kernel_size": 3, "has_bias": True}),
        ("GroupNorm", {"num_groups": 4, "num_channels": 8}),
        ("ReLU", {}),
        ("InstanceNorm2d", {"num_features": 8}),
        ("LRN", {"depth_radius": 2, "alpha": 0.1, "beta": 0.75}),
        ("LayerNorm", {"normalized_shape": (8, 8, 8), "begin_norm_axis": 1,
                       "begin_params_axis": 1}),
        ("Flatten", {}),
        ("Dense", {"in_channels": 512, "out_channels": 10}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    ],
    # LayerNorm's MindSpore axes: statistics over each whole sample, gamma on the last axis.
    "features": [
        ("Input", {"shape": (64,)}),
        ("Dense", {"in_channels": 64, "out_channels": 32}),
        ("LayerNorm", {"normalized_shape": (32,)}),
        ("Tanh", {}),
        ("Reshape", {"shape": (4, 8)}),
        ("LayerNorm", {"normalized_shape": (8,), "begin_norm_axis": 1}),
        ("GroupNorm", {"num_groups": 2, "num_channels": 4}),
        ("Flatten", {}),
        ("Dense", {"in_channels": 32, "out_channels": 10}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    ],
}


@pytest.mark.parametrize("name", NETWORKS)
def test_a_network_of_norm_nodes_trains(name):
    settings = dict(DIGITS)
    if name == "features":
        settings["dataset"] = {"builtin": "digits", "options": {"n_samples": 320, "flat": True}}
    project = Project(graph=chain(*NETWORKS[name]), name=name, training=settings)
    session = TrainingSession(project)
    before = weights(session)
    result = session.run()
    assert isinstance(result, TrainingFinished), result
    losses = session.metrics.steps.snapshot()[:, STEP_COLUMNS.index("loss")]
    assert len(losses) == 4 * 10 and np.all(np.isfinite(losses))
    assert losses[-5:].mean() < 0.7 * losses[:5].mean()
    after = weights(session)
    moved = [n for n in after if not np.array_equal(after[n], before[n])]
    assert {n.rsplit(".", 1)[1] for n in moved} >= {"gamma", "beta"}
    for param_name, value in after.items():
        if param_name.endswith(("moving_mean", "moving_variance")):  # InstanceNorm2d: never used
            np.testing.assert_array_equal(value, before[param_name])
    node = project.graph.node_named(next(n for n in after if "norm" in n).split(".")[0])
    assert set(project.param_values[node.id]) >= {"gamma", "beta"}
