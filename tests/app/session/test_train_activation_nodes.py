"""Every activation and channel-dropout node trains in a real session: the project compiles,
runs a few epochs, and its loss stays finite and goes down."""

import numpy as np
import pytest

from app.document import Project
from app.session import STEP_COLUMNS, TrainingSession
from tests.app.session.session_samples import chain, weights

# Three activations between the Dense layers of a small MLP on moons.
GROUPS = {
    "elu family": (("ELU", {"alpha": 0.8}), ("SeLU", {}), ("CELU", {"alpha": 1.2})),
    "gates": (("PReLU", {"channel": 16}), ("Softsign", {}), ("SiLU", {})),
    "smooth and hard": (("Mish", {}), ("HSwish", {}), ("HSigmoid", {})),
    "clipping": (("ReLU6", {}), ("Hardtanh", {"min_val": -2.0, "max_val": 2.0}),
                 ("LogSigmoid", {})),
    "axis ones": (("Softplus", {"beta": 2.0}), ("Softmin", {"axis": 1}), ("GLU", {"axis": 1})),
}


def mlp_with(acts) -> Project:
    last = 8 if acts[-1][0] == "GLU" else 16  # GLU halves the features
    graph = chain(
        ("Input", {"shape": (2,)}), ("Dense", {"in_channels": 2, "out_channels": 16}), acts[0],
        ("Dense", {"in_channels": 16, "out_channels": 16}), acts[1],
        ("Dense", {"in_channels": 16, "out_channels": 16}), acts[2],
        ("Dense", {"in_channels": last, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    settings = {"dataset": {"builtin": "moons", "options": {"n_samples": 240}},
                "learning_rate": 0.02, "batch_size": 16, "epochs": 6, "seed": 0}  # fmt: skip
    return Project(graph=graph, name="activations", training=settings)


def cnn_with_channel_dropout() -> Project:
    """Conv → per-channel PReLU → Dropout2d → Dropout1d → Dropout3d → GLU on 8×8 digits."""
    graph = chain(
        ("Input", {"shape": (1, 8, 8)}),
        ("Conv2d", {"in_channels": 1, "out_channels": 8, "kernel_size": 3, "has_bias": True}),
        ("PReLU", {"channel": 8}), ("Dropout2d", {"p": 0.1}),
        ("Reshape", {"shape": (8, 64)}), ("Dropout1d", {"p": 0.1}),
        ("Reshape", {"shape": (8, 4, 4, 4)}), ("Dropout3d", {"p": 0.1}),
        ("Reshape", {"shape": (8, 8, 8)}), ("GLU", {"axis": 1}), ("Flatten", {}),
        ("Dense", {"in_channels": 256, "out_channels": 10}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    settings = {"dataset": {"builtin": "digits", "options": {"n_samples": 256}},
                "learning_rate": 0.01, "batch_size": 32, "epochs": 5, "seed": 0}  # fmt: skip
    return Project(graph=graph, name="channel dropout", training=settings)


def losses_after_training(project: Project) -> tuple[np.ndarray, TrainingSession]:
    session = TrainingSession(project)
    session.run()
    steps = session.metrics.steps.snapshot()
    return steps[:, STEP_COLUMNS.index("loss")], session


def assert_learns(losses: np.ndarray) -> None:
    assert len(losses) >= 30 and np.all(np.isfinite(losses))
    third = len(losses) // 3
    assert losses[-third:].mean() < 0.8 * losses[:third].mean(), losses


@pytest.mark.parametrize("group", GROUPS)
def test_an_mlp_with_these_activations_trains(group):
    project = mlp_with(GROUPS[group])
    before = weights(TrainingSession(mlp_with(GROUPS[group])))
    losses, session = losses_after_training(project)
    assert_learns(losses)
    after = weights(session)
    assert all(not np.array_equal(before[k], after[k]) for k in before)


def test_a_cnn_with_prelu_glu_and_channel_dropout_trains():
    losses, session = losses_after_training(cnn_with_channel_dropout())
    assert_learns(losses)
    slopes = weights(session)["prelu1.w"]
    assert slopes.shape == (8,) and not np.allclose(slopes, 0.25)  # the slopes learned
    loss, accuracy = session.evaluate()
    assert np.isfinite(loss) and accuracy > 0.3
