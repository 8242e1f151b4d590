"""Sequence samples in the Predict panel: which data are sequences, and a sample drawn over
time with its forecast after the window."""

import numpy as np
import pytest

from app.datasets import Dataset, make_digits, make_moons
from app.datasets.sequences import make_multisine, make_running_sign
from app.document import Project
from app.session import TrainingSession
from app.session.predict import Predictor
from app.session.predict_sequence import is_sequence, sequence_picture, uses_sequence_layers
from tests.app.session.session_samples import chain
from tests.app.session.test_predict_text import text_dataset, text_project


def forecast_project(window: int = 12, horizon: int = 3) -> Project:
    graph = chain(
        ("Input", {"shape": (window, 1)}),
        ("Flatten", {}),
        ("Dense", {"in_channels": window, "out_channels": 16}),
        ("Tanh", {}),
        ("Dense", {"in_channels": 16, "out_channels": horizon}),
        ("Output", {"loss": "MSELoss"}),
    )
    settings = {"dataset": {"builtin": "multisine"}, "learning_rate": 0.01, "batch_size": 16,
                "epochs": 2, "seed": 0, "optimizer": "Adam"}  # fmt: skip
    return Project(graph=graph, name="forecast", training=settings)


def test_sequences_are_told_from_images_and_points():
    assert is_sequence(make_multisine(40, window=16))  # (16, 1): many steps, one feature
    assert is_sequence(make_running_sign(40, length=10))
    assert is_sequence(text_dataset())  # tokens with a vocabulary
    assert not is_sequence(make_digits(n_samples=20))  # (1, 8, 8) images
    assert not is_sequence(make_moons(n_samples=20))  # points
    square = Dataset(np.zeros((4, 8, 8)), np.arange(4) % 2)  # an (H, W) image
    assert not is_sequence(square)
    data = text_dataset()
    project = text_project(len(data.vocabulary))
    assert uses_sequence_layers(project.graph)  # its Embedding is a sequence layer
    assert is_sequence(Dataset(np.zeros((4, 6)), np.arange(4) % 2), project)
    assert not uses_sequence_layers(forecast_project().graph)


def test_a_forecast_is_drawn_after_its_window_beside_the_true_values():
    data = make_multisine(60, window=12, horizon=3)
    session = TrainingSession(forecast_project(), dataset=data)
    session.run()
    predictor = Predictor(session)
    assert predictor.sequence and predictor.image(data.x[0]) is None  # not a 12×1 image
    x, target = predictor.row("validation", 2)
    output = predictor.predict(x).output
    picture = sequence_picture(data, x, target, output)
    np.testing.assert_array_equal(picture.window, x.astype(np.float64))
    np.testing.assert_array_equal(picture.steps, np.arange(12))
    np.testing.assert_array_equal(picture.forecast_steps, [12, 13, 14])
    np.testing.assert_array_equal(picture.forecast, output.astype(np.float64))
    np.testing.assert_array_equal(picture.target, target.astype(np.float64))
    assert picture.forecast_names == data.target_names == ("y (t+1)", "y (t+2)", "y (t+3)")


def test_a_sequence_classification_shows_its_window_and_no_forecast():
    data = make_running_sign(30, length=10)
    picture = sequence_picture(data, data.x[0], int(data.y[0]), np.array([0.2, 0.8]))
    assert picture.window.shape == (10, 1) and picture.forecast is None
    assert picture.forecast_steps.size == 0 and picture.features == ("value",)


@pytest.mark.parametrize("features", [3, 12])
def test_several_features_are_lines_named_by_the_data_set(features):
    x = np.arange(20 * features, dtype=np.float32).reshape(1, 20, features)
    data = Dataset(np.repeat(x, 2, axis=0), np.array([0, 1]))
    picture = sequence_picture(data, data.x[0])
    shown = min(features, 8)
    assert picture.window.shape == (20, shown)
    assert picture.features == tuple(f"feature {i + 1}" for i in range(shown))


def test_token_ids_are_drawn_as_ids():
    data = text_dataset()
    picture = sequence_picture(data, data.x[0])
    assert picture.features == ("token id",)
    np.testing.assert_array_equal(picture.window[:, 0], data.x[0])
