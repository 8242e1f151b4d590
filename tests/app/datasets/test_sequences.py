"""Generated sets with a time axis: shapes, dtypes, seeding, options and refusals."""

import numpy as np
import pytest

from app.datasets import (
    BUILTIN,
    CLASSIFICATION,
    REGRESSION,
    DatasetError,
    make_adding,
    make_builtin,
    make_multisine,
    make_running_sign,
)
from app.datasets.loading import read_dataset
from app.datasets.options import OPTIONS
from app.datasets.sequences import SIGN_MARGIN, SINE_AMPLITUDES

MAKERS = {"multisine": make_multisine, "adding": make_adding, "running_sign": make_running_sign}


def test_multisine_windows_and_horizon():
    data = make_multisine(n_samples=50, noise=0.0, seed=3, window=20, horizon=4)
    assert data.x.shape == (50, 20, 1) and data.x.dtype == np.float32
    assert data.y.shape == (50, 4) and data.y.dtype == np.float32
    assert data.task == REGRESSION and data.target_names[-1] == "y (t+4)"
    assert np.abs(data.x).max() <= sum(SINE_AMPLITUDES) + 1e-6
    # Noise-free, the series is a sum of sines: the targets continue the window smoothly.
    steps = np.abs(np.diff(np.concatenate([data.x[:, :, 0], data.y], axis=1), axis=1))
    assert steps.max() < 0.6
    noisy = make_multisine(n_samples=50, noise=0.2, seed=3, window=20, horizon=4)
    assert 0.1 < np.std(noisy.y - data.y) < 0.3  # the same phases, noise on top


def test_adding_problem_marks_two_values_and_sums_them():
    data = make_adding(n_samples=200, seed=1, length=12)
    assert data.x.shape == (200, 12, 2) and data.y.shape == (200, 1)
    values, markers = data.x[:, :, 0], data.x[:, :, 1]
    assert np.array_equal(markers.sum(axis=1), np.full(200, 2.0))
    assert (markers[:, :6].sum(axis=1) == 1).all()  # one in each half
    assert np.allclose((values * markers).sum(axis=1), data.y[:, 0], atol=1e-6)
    assert ((values >= 0) & (values <= 1)).all()


def test_running_sign_labels_follow_the_sum_with_a_margin_and_balance():
    data = make_running_sign(n_samples=301, seed=2, length=15)
    assert data.x.shape == (301, 15, 1) and data.task == CLASSIFICATION
    assert data.class_names == ("negative", "positive")
    sums = data.x[:, :, 0].sum(axis=1)
    assert np.array_equal(data.y, (sums > 0).astype(np.int64))
    assert np.abs(sums).min() >= SIGN_MARGIN * np.sqrt(15) - 1e-5
    assert list(data.class_counts()) == [151, 150]


@pytest.mark.parametrize("key", list(MAKERS))
def test_the_same_seed_makes_the_same_set_and_another_one_differs(key):
    make = MAKERS[key]
    a, b, c = make(n_samples=30, seed=5), make(n_samples=30, seed=5), make(n_samples=30, seed=6)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    assert not np.array_equal(a.x, c.x)


@pytest.mark.parametrize("key", list(MAKERS))
def test_every_sequence_set_is_built_in_with_known_options(key):
    entry = BUILTIN[key]
    assert entry.make is MAKERS[key]
    assert set(entry.options) <= set(OPTIONS)  # the form has a field for each
    data = read_dataset({"builtin": key, "options": {"n_samples": 10, "seed": 1}})
    assert len(data) == 10 and data.x.ndim == 3


@pytest.mark.parametrize(
    "key, options, words",
    [
        ("multisine", {"window": 0}, "Window must be from 1"),
        ("multisine", {"horizon": 2.5}, "Horizon must be a whole number"),
        ("multisine", {"noise": -1.0}, "Noise must be a number from 0"),
        ("multisine", {"n_samples": 0}, "Samples must be from 1"),
        ("adding", {"length": 1}, "Length must be from 2"),
        ("adding", {"seed": -3}, "Seed must be from 0"),
        ("running_sign", {"length": True}, "Length must be a whole number"),
        ("running_sign", {"n_samples": 1_000_000, "length": 10_000}, "too many values"),
    ],
)
def test_bad_options_are_refused_with_the_reason(key, options, words):
    with pytest.raises(DatasetError, match=words):
        make_builtin(key, **options)
