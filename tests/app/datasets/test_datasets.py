"""Built-in data sets, and the Dataset's checks, split and seeded batches."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.datasets import (
    BUILTIN,
    CLASSIFICATION,
    REGRESSION,
    Dataset,
    DatasetError,
    make_builtin,
    make_circles,
    make_digits,
    make_moons,
    make_sine,
    make_spirals,
    make_xor,
)
from app.resources_path import CHECKOUT_RESOURCES, resource_path

TWO_CLASS = [make_spirals, make_moons, make_circles, make_xor]


def numbered(n: int, task: str = CLASSIFICATION, classes: int = 3) -> Dataset:
    """A data set whose one feature is the sample's own index, to follow samples around."""
    x = np.arange(n, dtype=np.float32)[:, None]
    if task == REGRESSION:
        return Dataset(x, x * 2, REGRESSION)
    return Dataset(x, np.arange(n) % classes, num_classes=classes)


# --- built-ins ----------------------------------------------------------------------------


@pytest.mark.parametrize("make", TWO_CLASS)
def test_two_class_sets_are_balanced_2d_points(make):
    data = make(n_samples=101, seed=3)
    assert data.x.shape == (101, 2) and data.x.dtype == np.float32
    assert data.y.shape == (101,) and data.y.dtype == np.int64
    assert data.task == CLASSIFICATION and data.num_classes == 2 and data.output_size == 2
    assert data.sample_shape == (2,) and data.feature_names == ("x1", "x2")
    assert data.class_counts().tolist() == [51, 50]
    assert np.abs(data.x).max() < 2.5  # about [-1, 1]² plus noise
    assert not np.all(data.y[:-1] <= data.y[1:]), "classes come mixed, not sorted"


@pytest.mark.parametrize("make", [*TWO_CLASS, make_sine])
def test_same_seed_same_data_other_seed_other_data(make):
    a, b, c = make(seed=5), make(seed=5), make(seed=6)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    assert not np.array_equal(a.x, c.x)


@pytest.mark.parametrize("make", [*TWO_CLASS, make_sine])
def test_noise_moves_points_and_zero_noise_is_allowed(make):
    clean, noisy = make(noise=0.0, seed=1), make(noise=0.3, seed=1)
    assert not np.allclose(clean.x, noisy.x) or not np.allclose(clean.y, noisy.y)


def best_linear_accuracy(data: Dataset) -> float:
    """Accuracy of the best straight-line boundary (180 directions, every threshold)."""
    best = 0.0
    positive = data.y == 1
    for angle in np.linspace(0, np.pi, 180, endpoint=False):
        projection = data.x @ np.array([np.cos(angle), np.sin(angle)])
        order = np.argsort(projection)
        ones_below = np.concatenate([[0], np.cumsum(positive[order])])
        below = np.arange(len(order) + 1)
        # class 0 below the threshold and 1 above, or the other way round
        correct = (below - ones_below) + (positive.sum() - ones_below)
        best = max(best, correct.max() / len(order), (len(order) - correct.min()) / len(order))
    return best


def logistic_regression_accuracy(data: Dataset) -> float:
    """Held-out accuracy of a linear classifier trained by gradient descent."""
    train, test = data.split(0.25, seed=0)
    inputs, w = np.c_[train.x, np.ones(len(train))], np.zeros(3)
    for _ in range(500):
        w -= 0.5 * inputs.T @ (1 / (1 + np.exp(-inputs @ w)) - train.y) / len(train)
    return float(((np.c_[test.x, np.ones(len(test))] @ w > 0) == test.y).mean())


def nearest_neighbour_accuracy(data: Dataset) -> float:
    train, test = data.split(0.25, seed=0)
    distance = ((test.x[:, None, :] - train.x[None, :, :]) ** 2).sum(-1)
    return float((train.y[distance.argmin(1)] == test.y).mean())


def test_spirals_interleave_no_line_separates_them_but_neighbours_do():
    data = make_spirals(seed=0)
    assert logistic_regression_accuracy(data) < 0.70
    assert best_linear_accuracy(data) < 0.72  # even a line fitted to these very points
    assert nearest_neighbour_accuracy(data) > 0.95


@pytest.mark.parametrize("make", [make_xor, make_circles])
def test_xor_and_circles_need_a_curved_boundary(make):
    data = make(seed=0)
    assert logistic_regression_accuracy(data) < 0.70
    assert best_linear_accuracy(data) < 0.80
    assert nearest_neighbour_accuracy(data) > 0.95


def test_moons_are_mostly_but_not_perfectly_linear():
    data = make_moons(seed=0)
    assert 0.75 < best_linear_accuracy(data) < 0.95
    assert nearest_neighbour_accuracy(data) > 0.95


def test_sine_is_a_1d_regression_on_minus_3_to_3():
    data = make_sine(n_samples=500, noise=0.0, seed=2)
    assert data.x.shape == (500, 1) and data.y.shape == (500, 1)
    assert data.x.dtype == data.y.dtype == np.float32
    assert data.task == REGRESSION and data.num_classes is None and data.output_size == 1
    assert data.x.min() >= -3 and data.x.max() <= 3
    np.testing.assert_allclose(data.y, np.sin(data.x), atol=1e-6)
    residual = make_sine(n_samples=2000, noise=0.1, seed=2)
    assert 0.08 < float(np.std(residual.y - np.sin(residual.x))) < 0.12


@pytest.mark.parametrize(
    "options, fragment",
    [
        ({"n_samples": 1}, "at least 2"),
        ({"n_samples": 10.5}, "whole number"),
        ({"noise": -0.1}, "noise"),
        ({"noise": float("nan")}, "noise"),
        ({"seed": -1}, "seed"),
    ],
)
def test_bad_options_are_refused(options, fragment):
    with pytest.raises(DatasetError, match=fragment):
        make_spirals(**options)


def test_registry_lists_every_builtin_with_title_and_description():
    assert list(BUILTIN) == ["spirals", "moons", "circles", "xor", "sine", "digits",
                             "digit_images", "iris", "wine", "breast_cancer", "multisine",
                             "adding", "running_sign", "text"]
    for key, entry in BUILTIN.items():
        assert entry.key == key and entry.title and entry.description[-1] in ".)"
        assert "\n" not in entry.description and len(entry.description) < 90
    assert BUILTIN["sine"].task == REGRESSION and BUILTIN["spirals"].default_samples == 400
    assert BUILTIN["moons"].default_noise == 0.1
    data = make_builtin("moons", n_samples=20, seed=1)
    assert np.array_equal(data.x, make_moons(n_samples=20, seed=1).x)
    with pytest.raises(DatasetError, match="no built-in data set 'mnist'"):
        make_builtin("mnist")


# --- digits -----------------------------------------------------------------------------


def test_the_digits_file_is_in_the_checkout_and_found():
    assert (CHECKOUT_RESOURCES / "data" / "digits.npz").is_file()
    assert resource_path("data", "digits.npz").is_file()


def test_digits_from_the_bundled_file():
    data = make_digits()
    assert data.x.shape == (1797, 1, 8, 8) and data.x.dtype == np.float32
    assert data.x.min() == 0.0 and data.x.max() == 1.0
    assert data.y.dtype == np.int64 and data.num_classes == 10
    assert data.class_names == tuple("0123456789")
    assert data.class_counts().min() >= 174 and data.feature_names == ()
    flat = make_digits(flat=True)
    assert flat.x.shape == (1797, 64) and np.array_equal(flat.x, data.x.reshape(1797, 64))
    assert flat.feature_names[0] == "pixel 1,1" and len(flat.feature_names) == 64


def test_digits_subset_and_noise_follow_the_seed():
    a, b, c = (make_digits(n_samples=50, noise=0.1, seed=s) for s in (1, 1, 2))
    assert a.x.shape == (50, 1, 8, 8) and np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)
    assert not np.array_equal(a.x, c.x)
    assert a.x.min() >= 0.0 and a.x.max() <= 1.0
    with pytest.raises(DatasetError, match="1797 images; 1800"):
        make_digits(n_samples=1800)


def test_digits_from_a_small_file_of_the_same_layout(tmp_path):
    path = tmp_path / "digits.npz"
    images = np.arange(3 * 64).reshape(3, 8, 8) % 17
    np.savez(path, images=images.astype(np.uint8), labels=np.array([7, 0, 3]))
    data = make_digits(path=path)
    assert data.y.tolist() == [7, 0, 3]
    np.testing.assert_allclose(data.x[:, 0], images / 16.0)


@pytest.mark.parametrize(
    "arrays, fragment",
    [
        (None, "missing"),
        ({"images": np.zeros((2, 8, 8))}, "lacks labels"),
        ({"images": np.zeros((2, 7, 7), np.uint8), "labels": np.zeros(2, int)}, "8×8"),
        ({"images": np.full((2, 8, 8), 17, np.uint8), "labels": np.zeros(2, int)}, "8×8"),
    ],
)
def test_a_broken_digits_file_is_reported(tmp_path, arrays, fragment):
    path = tmp_path / "digits.npz"
    if arrays is not None:
        np.savez(path, **arrays)
    with pytest.raises(DatasetError, match=fragment):
        make_digits(path=path)


# --- the Dataset itself -----------------------------------------------------------------


def test_a_dataset_converts_and_describes_itself():
    data = Dataset([[1, 2], [3, 4], [5, 6]], [0, 2, 1], name="Mine")
    assert data.x.dtype == np.float32 and data.y.dtype == np.int64 and data.num_classes == 3
    assert data.class_names == ("0", "1", "2") and len(data) == 3
    assert data.describe() == "Mine: 3 samples of 2 features, 3 classes"
    reg = Dataset(np.zeros((1, 1, 8, 8)), np.zeros(1), REGRESSION, name="R")
    assert (
        reg.y.shape == (1, 1)
        and reg.describe() == "R: 1 sample of shape 1×8×8, regression to 1 target"
    )


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"x": np.zeros(3), "y": np.zeros(3, int)}, "shape \\(N, ...\\)"),
        ({"x": np.zeros((3, 2)), "y": np.zeros(2, int)}, "3 samples but 2 labels"),
        ({"x": np.full((3, 2), np.nan), "y": np.zeros(3, int)}, "NaN"),
        ({"x": np.zeros((3, 2)), "y": np.array([0.5, 0, 1])}, "whole numbers"),
        ({"x": np.zeros((3, 2)), "y": np.array([0, -1, 1])}, "negative"),
        ({"x": np.zeros((3, 2)), "y": np.array([0, 5, 1]), "num_classes": 2}, "out of range"),
        ({"x": np.array([["a", "b"]]), "y": np.zeros(1, int)}, "must be numbers"),
        ({"x": np.zeros((1, 2)), "y": np.zeros(1, int), "task": "ranking"}, "Unknown task"),
        ({"x": np.zeros((1, 2)), "y": np.zeros(1), "task": REGRESSION, "num_classes": 2}, "no cl"),
    ],
)
def test_an_inconsistent_dataset_is_refused(kwargs, fragment):
    with pytest.raises(DatasetError, match=fragment):
        Dataset(**kwargs)


def test_split_is_seeded_stratified_and_keeps_order():
    data = numbered(100, classes=4)
    train, val = data.split(0.2, seed=7)
    again_train, again_val = data.split(0.2, seed=7)
    other_train, _ = data.split(0.2, seed=8)
    assert len(val) == 20 and len(train) == 80 and val.name.endswith("(validation)")
    assert val.class_counts().tolist() == [5, 5, 5, 5]
    assert np.array_equal(val.x, again_val.x) and np.array_equal(train.x, again_train.x)
    assert not np.array_equal(train.x, other_train.x)
    assert np.all(np.diff(train.x[:, 0]) > 0) and np.all(np.diff(val.x[:, 0]) > 0)
    assert np.array_equal(np.sort(np.concatenate([train.x, val.x])[:, 0]), np.arange(100))
    assert train.num_classes == val.num_classes == 4


def test_split_of_zero_means_no_validation():
    train, val = numbered(10).split(0.0)
    assert len(train) == 10 and len(val) == 0 and val.x.shape == (0, 1)
    assert list(val.batches(4)) == [] and val.batch_count(4) == 0


@pytest.mark.parametrize("fraction, fragment", [(1.0, "below 1"), (-0.1, "at least 0")])
def test_split_refuses_fractions_outside_0_to_1(fraction, fragment):
    with pytest.raises(ValueError, match=fragment):
        numbered(10).split(fraction)


@pytest.mark.parametrize("n, fraction, side", [(10, 0.01, "validation"), (3, 0.9, "training")])
def test_split_refuses_to_leave_a_side_empty(n, fraction, side):
    with pytest.raises(DatasetError, match=f"{side} set empty"):
        numbered(n, REGRESSION).split(fraction)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    batch_size=st.integers(1, 64),
    seed=st.integers(0, 2**32),
    epoch=st.integers(0, 1000),
    shuffle=st.booleans(),
)
def test_each_epoch_gives_every_sample_exactly_once(n, batch_size, seed, epoch, shuffle):
    data = numbered(n)
    batches = list(data.batches(batch_size, shuffle=shuffle, seed=seed, epoch=epoch))
    assert len(batches) == data.batch_count(batch_size)
    assert all(len(x) == batch_size for x, _ in batches[:-1]) and len(batches[-1][0]) > 0
    seen = np.concatenate([x[:, 0] for x, _ in batches]).astype(int)
    assert sorted(seen) == list(range(n))
    for x, y in batches:
        assert np.array_equal(y, x[:, 0].astype(int) % 3)  # labels travel with their samples


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 200), fraction=st.floats(0.05, 0.95), seed=st.integers(0, 10**6))
def test_split_parts_are_disjoint_and_cover_everything(n, fraction, seed):
    data = numbered(n)
    try:
        train, val = data.split(fraction, seed)
    except DatasetError:
        assert round(n * fraction) in (0, n)
        return
    assert len(val) == round(n * fraction)
    together = np.concatenate([train.x[:, 0], val.x[:, 0]])
    assert sorted(together.astype(int)) == list(range(n))


def test_shuffle_depends_on_seed_and_epoch_only():
    data = numbered(50)

    def order(**kw):
        return np.concatenate([x[:, 0] for x, _ in data.batches(8, **kw)])

    assert np.array_equal(order(seed=1, epoch=2), order(seed=1, epoch=2))
    assert not np.array_equal(order(seed=1, epoch=2), order(seed=1, epoch=3))
    assert not np.array_equal(order(seed=1, epoch=2), order(seed=2, epoch=2))
    assert np.array_equal(order(shuffle=False), np.arange(50))


@pytest.mark.parametrize("size", [0, -3, 2.5, True])
def test_a_bad_batch_size_is_refused(size):
    with pytest.raises(DatasetError, match="batch size"):
        numbered(5).batches(size)


def test_digit_images_are_their_own_clean_targets_even_with_noise():
    data = make_builtin("digit_images", n_samples=50, noise=0.3, seed=2)
    clean = make_builtin("digits", n_samples=50, seed=2)
    assert data.task == REGRESSION and data.x.shape == (50, 1, 8, 8) and data.y.shape == (50, 64)
    assert np.array_equal(data.y, clean.x.reshape(50, 64))  # the targets stay clean
    assert not np.array_equal(data.x, clean.x)  # the inputs are noisy
    assert data.x.min() >= 0.0 and data.x.max() <= 1.0
    assert np.array_equal(make_builtin("digit_images", n_samples=50, seed=2).x, clean.x)
