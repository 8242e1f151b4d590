"""Per-batch augmentation: each operation does what its amount says, one seed gives the same
batches, bad settings and unsuited data are refused with the reason, and training applies it
to training batches only (never validation or prediction), also through `cellwright train`."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from app import cli
from app.compiler import compile_project
from app.datasets import Dataset, make_builtin
from app.datasets.augment import (
    AugmentationRefused,
    augment_rng,
    augmenter_for,
    check_augmentation,
    describe,
    preview,
)
from app.document import Project
from app.io.project_file import load_project, save_project
from app.session import TrainingError, TrainingSession, TrainingSettings
from app.session.metrics import Metrics
from app.session.progress import TrainingState
from app.session.run_control import RunControl
from app.session.settings import make_optimizer
from app.session.trainer import Trainer
from engine import _random
from tests.app.session.session_samples import chain, mlp_project, weights


def images(n: int = 24, shape=(1, 8, 8), seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    x = rng.random((n, *shape)).astype(np.float32) + 0.5  # no zeros: padding shows
    return Dataset(x, rng.integers(0, 3, n), num_classes=3, name="Images")


def augment(data: Dataset, seed: int = 0, epoch: int = 0, batch: int = 0, **amounts):
    return augmenter_for({**amounts, "seed": seed}, data)(data.x, epoch, batch)


# ---- the setting -------------------------------------------------------------------------

def test_a_setting_gets_its_defaults_and_none_means_no_augmentation():
    spec = check_augmentation({"flip": 0.5, "noise": 0.05})
    assert spec == {"flip": 0.5, "shift": 0, "rotate": 0.0, "brightness": 0.0,
                    "contrast": 0.0, "noise": 0.05, "seed": 0, "enabled": True}  # fmt: skip
    assert check_augmentation(None) is None
    assert augmenter_for(None, images()) is None
    assert augmenter_for({"flip": 0.0}, images()) is None  # nothing to do: no per-step work
    assert augmenter_for({"flip": 1.0, "enabled": False}, images()) is None
    assert describe(spec) == "flip 50%, noise σ 0.05"


@pytest.mark.parametrize(("setting", "words"), [
    ({"flip": 1.5}, ["flip", "chance from 0 to 1", "1.5"]),
    ({"flip": "half"}, ["flip", "'half'"]),
    ({"flip": True}, ["flip", "True"]),
    ({"shift": 2.5}, ["shift", "whole number of pixels", "2.5"]),
    ({"shift": -1}, ["shift", "from 0 to 256"]),
    ({"rotate": 200}, ["rotate", "degrees from 0 to 180", "200"]),
    ({"brightness": 1.0}, ["brightness", "not including) 1"]),
    ({"contrast": -0.2}, ["contrast", "-0.2"]),
    ({"noise": float("nan")}, ["noise", "standard deviation of 0 or more", "nan"]),
    ({"noise": float("inf")}, ["noise", "inf"]),
    ({"seed": -3}, ["seed", "whole number"]),
    ({"enabled": "yes"}, ["enabled", "true or false"]),
    ({"blur": 2}, ["Unknown augmentation 'blur'", "flip, shift, rotate"]),
    ([0.5], ["mapping of amounts"]),
])  # fmt: skip
def test_each_bad_amount_is_refused_saying_what_it_may_be(setting, words):
    with pytest.raises(AugmentationRefused) as caught:
        check_augmentation(setting)
    for word in words:
        assert word in str(caught.value)
    # The project's settings refuse it the same way, before any data is read.
    with pytest.raises(TrainingError) as caught:
        TrainingSettings.from_project({"dataset": "spirals", "augmentation": setting})
    assert words[0] in str(caught.value)


# ---- the operations ----------------------------------------------------------------------

def test_flip_mirrors_the_chosen_samples_left_to_right_and_leaves_the_rest():
    data = images(40)
    assert np.array_equal(augment(data, flip=1.0), data.x[..., ::-1])
    out = augment(data, flip=0.5)
    mirrored = np.array([np.array_equal(o, x[..., ::-1]) for o, x in zip(out, data.x, strict=True)])
    same = np.array([np.array_equal(o, x) for o, x in zip(out, data.x, strict=True)])
    assert np.all(mirrored ^ same) and 5 < mirrored.sum() < 35


def test_shift_moves_each_image_whole_pixels_within_the_amount_filling_zeros():
    data = images(30, shape=(3, 6, 7))
    out = augment(data, shift=2)
    moved = []
    for o, x in zip(out, data.x, strict=True):
        found = [(dy, dx) for dy in range(-2, 3) for dx in range(-2, 3)
                 if np.array_equal(o, _shifted(x, dy, dx))]  # fmt: skip
        assert found, "each sample is its image shifted by at most 2 pixels"
        moved.append(found[0])
    assert len(set(moved)) > 5  # drawn per sample


def _shifted(x: np.ndarray, dy: int, dx: int) -> np.ndarray:
    out = np.zeros_like(x)
    h, w = x.shape[-2:]
    out[..., max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \
        x[..., max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
    return out


def test_rotation_matches_a_per_pixel_reference_taking_the_nearest_source_pixel():
    data = images(6, shape=(2, 9, 8))
    amounts = {"rotate": 30.0, "shift": 1, "flip": 0.5}
    out = augment(data, seed=4, epoch=1, batch=2, **amounts)
    draws = augment_rng(4, 1, 2).random((6, len(data)))
    for i, x in enumerate(data.x):
        dy, dx = (int(np.floor(d * 3)) - 1 for d in draws[1:3, i])
        angle = np.radians((2 * draws[3, i] - 1) * 30.0)
        expected = _rotated(x, angle, dy, dx, mirror=draws[0, i] < 0.5)
        np.testing.assert_array_equal(out[i], expected)
    assert not np.allclose(out, data.x)


def _rotated(x, angle, dy, dx, mirror):
    """Pixel by pixel: flip, then shift and rotate about the centre; the nearest source
    pixel, 0 outside."""
    c, h, w = x.shape
    cy, cx = (h - 1) / 2, (w - 1) / 2
    source = x[..., ::-1] if mirror else x
    out = np.zeros_like(x)
    for i in range(h):
        for j in range(w):
            r, q = i - cy - dy, j - cx - dx
            sy = round(np.cos(angle) * r + np.sin(angle) * q + cy)
            sx = round(np.cos(angle) * q - np.sin(angle) * r + cx)
            if 0 <= sy < h and 0 <= sx < w:
                out[:, i, j] = source[:, sy, sx]
    return out


def test_brightness_scales_and_contrast_stretches_about_the_mean_within_their_amounts():
    data = images(50, shape=(8, 8))  # (N, H, W) images take them too
    factors = augment(data, brightness=0.2).reshape(50, -1) / data.x.reshape(50, -1)
    assert np.allclose(factors, factors[:, :1], rtol=1e-5)  # one factor a sample
    assert factors.min() >= 0.8 - 1e-6 and factors.max() <= 1.2 + 1e-6 and factors.std() > 0.05
    out = augment(data, contrast=0.3).reshape(50, -1)
    x = data.x.reshape(50, -1)
    np.testing.assert_allclose(out.mean(1), x.mean(1), rtol=1e-5)
    stretch = (out - out.mean(1, keepdims=True)) / (x - x.mean(1, keepdims=True))
    assert stretch.min() >= 0.7 - 1e-4 and stretch.max() <= 1.3 + 1e-4


def test_noise_works_on_tabular_data_and_image_operations_are_refused_for_it():
    data = make_builtin("spirals", n_samples=400)
    out = augment(data, noise=0.2)
    assert out.shape == data.x.shape and out.dtype == np.float32
    assert abs((out - data.x).std() - 0.2) < 0.02 and abs((out - data.x).mean()) < 0.02
    with pytest.raises(AugmentationRefused, match=r"flip, rotate work on images.*shape \(2\)"):
        augmenter_for({"flip": 0.5, "rotate": 5, "noise": 0.1}, data)


@pytest.mark.parametrize(("data", "setting", "reason"), [
    (images(shape=(3, 3)), {"rotate": 5}, "at least 4×4 pixels"),
    (images(shape=(1, 8, 5)), {"shift": 5}, "give at most 4"),
    (Dataset(np.zeros((4, 6), np.int64), np.zeros(4, np.int64), vocabulary="ab"),
     {"noise": 0.1}, "Token ids"),
    (Dataset(np.zeros((5, 8, 8), np.float32), np.zeros((5, 1)), "regression",
             chronological=True), {"flip": 0.5}, "Sliding windows"),
])  # fmt: skip
def test_data_that_cant_take_the_augmentation_is_refused_with_the_reason(data, setting, reason):
    with pytest.raises(AugmentationRefused, match=reason):
        augmenter_for(setting, data)


def test_one_seed_gives_the_same_batches_and_leaves_the_engines_generator_alone():
    data = images(16)
    amounts = {"flip": 0.5, "shift": 2, "rotate": 15, "brightness": 0.1, "noise": 0.1}
    engine.set_seed(1)
    first = augment(data, seed=3, epoch=2, batch=5, **amounts)
    drawn = (_random.rng().random(4), np.random.random(4))
    engine.set_seed(2)
    assert np.array_equal(augment(data, seed=3, epoch=2, batch=5, **amounts), first)
    engine.set_seed(1)
    again = (_random.rng().random(4), np.random.random(4))
    for after, before in zip(again, drawn, strict=True):  # augmenting moved neither
        assert np.array_equal(after, before)
    for other in ({"seed": 4}, {"epoch": 3}, {"batch": 6}):
        key = {"seed": 3, "epoch": 2, "batch": 5, **other}
        assert not np.allclose(augment(data, **key, **amounts), first)


def test_turning_one_operation_on_leaves_the_others_draws_as_they_were():
    data = images(30)
    flipped = augment(data, flip=0.5)
    with_noise = augment(data, flip=0.5, noise=1e-3)
    np.testing.assert_allclose(with_noise, flipped, atol=1e-2)


def test_the_preview_shows_a_batch_before_and_after():
    data = make_builtin("digits")
    shown = preview(data, {"flip": 1.0, "noise": 0.1, "seed": 2}, count=16)
    assert shown.before.shape == shown.after.shape == (16, 1, 8, 8)
    np.testing.assert_array_equal(shown.before, data.x[shown.indices])
    np.testing.assert_array_equal(shown.labels, data.y[shown.indices])
    assert np.abs(shown.after - shown.before[..., ::-1]).std() > 0.05
    assert shown.text == "flip 100%, noise σ 0.1"
    other = preview(data, {"flip": 1.0, "seed": 2}, count=16, batch=1)
    assert not np.array_equal(other.indices, shown.indices)
    off = preview(data, None, count=4)
    np.testing.assert_array_equal(off.after, off.before)
    with pytest.raises(AugmentationRefused, match="flip"):
        preview(make_builtin("spirals"), {"flip": 0.5})


# ---- in training -------------------------------------------------------------------------

def image_project(**training) -> Project:
    graph = chain(("Input", {"shape": (1, 8, 8)}), ("Flatten", {}),
                  ("Dense", {"in_channels": 64, "out_channels": 3}),
                  ("Output", {"loss": "CrossEntropyLoss"}))  # fmt: skip
    return Project(graph=graph, name="images", training={
        "dataset": "digits", "batch_size": 8, "epochs": 1, **training})


def recorded_trainer(setting, train, val):
    """A Trainer of a Flatten-Dense network on `train`, and the inputs its network gets:
    (in train mode?, the samples)."""
    compiled = compile_project(image_project())
    seen: list[tuple[bool, np.ndarray]] = []
    compiled.network.register_forward_pre_hook(
        lambda cell, inputs: seen.append((cell.training, inputs[0].asnumpy().copy())))
    settings = TrainingSettings.from_project({"dataset": "digits", "augmentation": setting})
    trainer = Trainer(compiled.network, compiled.loss_fn,
                      make_optimizer(settings, compiled.trainable_params()), train, val,
                      batch_size=8, seed=0, state=TrainingState(), metrics=Metrics(100),
                      emit=lambda event: None, augmentation=setting)  # fmt: skip
    return trainer, seen


def test_training_batches_are_augmented_and_validation_batches_are_not():
    train, val = images(40), images(10, seed=1)
    setting = {"flip": 0.5, "shift": 1, "rotate": 10, "noise": 0.1, "seed": 7}
    trainer, seen = recorded_trainer(setting, train, val)
    augmenter = augmenter_for(setting, train, 8)
    assert augmenter.per_chunk == trainer._augment.per_chunk == 16  # small samples
    chunk = augmenter.per_chunk = trainer._augment.per_chunk = 2  # to see chunks: 0-1, 2-3, 4
    trainer.run(2, RunControl())
    trained = [x for training, x in seen if training]
    validated = [x for training, x in seen if not training]
    expected = []
    for epoch in range(2):
        batches = [x for x, _ in train.batches(8, True, 0, epoch)]
        for c in range(3):
            together = augmenter(np.concatenate(batches[c * chunk:][:chunk]), epoch, c)
            expected += np.split(together, range(8, len(together), 8))
    assert len(trained) == len(expected) == 10
    for got, want in zip(trained, expected, strict=True):
        np.testing.assert_array_equal(got, want)
    assert len(validated) == 2
    for got in validated:  # the whole validation set, as it is, after each epoch
        np.testing.assert_array_equal(got, val.x)
    # Predicting (the Predict panel) and evaluating see the samples as they are, too.
    seen.clear()
    trainer.evaluate(train)
    np.testing.assert_array_equal(seen[0][1], train.x)


def test_a_run_that_goes_on_mid_chunk_gets_the_batches_of_an_uninterrupted_one():
    train, val = images(40), images(4, seed=1)
    setting = {"shift": 2, "brightness": 0.2, "noise": 0.1, "seed": 1}
    whole, seen_whole = recorded_trainer(setting, train, val)
    whole._augment.per_chunk = 3
    whole.run(1, RunControl())
    parts, seen_parts = recorded_trainer(setting, train, val)
    parts._augment.per_chunk = 3
    for steps in (1, 3, 1):  # stops after batch 1 and 4: inside chunks 0 and 1
        parts.run(1, RunControl(), max_steps=steps)
    got = [x for training, x in seen_parts if training]
    want = [x for training, x in seen_whole if training]
    assert len(got) == len(want) == 5
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def test_training_refuses_an_augmentation_the_data_cant_take():
    project = mlp_project(augmentation={"rotate": 10})
    with pytest.raises(TrainingError, match="rotate works on images"):
        TrainingSession(project)


def test_the_setting_is_saved_with_the_project_and_used_when_it_trains(tmp_path, capsys):
    setting = {"noise": 0.3, "seed": 5}
    path = tmp_path / "net.cwproj"
    save_project(mlp_project(epochs=1, augmentation=setting), path)
    assert load_project(path).training["augmentation"] == setting
    plain = tmp_path / "plain.cwproj"
    save_project(mlp_project(epochs=1), plain)
    twice = tmp_path / "twice.cwproj"
    save_project(mlp_project(epochs=1, augmentation=setting), twice)
    for file in (path, plain, twice):
        assert cli.main(["train", str(file), "--quiet"]) == 0
    capsys.readouterr()
    trained = [weights(TrainingSession(load_project(f))) for f in (path, plain, twice)]
    for name, value in trained[0].items():
        np.testing.assert_array_equal(value, trained[2][name])  # same seed: same run
    assert any(not np.array_equal(v, trained[1][k]) for k, v in trained[0].items())


def test_cellwright_train_refuses_a_bad_setting_in_one_line(tmp_path, capsys):
    path = tmp_path / "net.cwproj"
    save_project(mlp_project(augmentation={"noise": -1}), path)
    assert cli.main(["train", str(path)]) != 0
    err = capsys.readouterr().err
    assert "noise augmentation must be a standard deviation of 0 or more, not -1" in err
    assert load_project(path).training["augmentation"] == {"noise": -1}  # kept as written
