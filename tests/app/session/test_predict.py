"""Predictor: one input through a copy of the session's network, in predict and train mode."""

import threading

import numpy as np
import pytest

from app.datasets import make_digits
from app.io.project_file import load_project
from app.resources_path import resource_path
from app.session import PAUSED, READY, RUNNING, TrainingPaused, TrainingSession
from app.session.predict import (
    CLIPPED,
    PREDICT,
    REFERENCE_ROWS,
    SIGMOID,
    SOFTMAX,
    TRAIN,
    TRAIN_SEED,
    PredictError,
    Predictor,
    image_shape,
    parse_vector,
    probabilities_of,
)
from app.session.progress import rng_state
from tests.app.session.session_samples import mlp_project, weights

MOONS = resource_path("examples", "moons_bn_dropout.cwproj")
DIGITS = resource_path("examples", "digits_cnn.cwproj")


@pytest.fixture(scope="module")
def moons():
    """The shipped BatchNorm/Dropout example, trained a little (moving statistics moved)."""
    session = TrainingSession(load_project(MOONS))
    session.run(epochs=2)
    return session


def test_predict_mode_equals_session_predict_bit_for_bit(moons):
    predictor = Predictor(moons)
    for split in ("train", "validation"):
        for index in (0, 3, 17):
            x, _ = predictor.row(split, index)
            prediction = predictor.predict(x)
            np.testing.assert_array_equal(prediction.output, moons.predict(x[None])[0])
            assert prediction.mode == PREDICT and prediction.step == moons.state.step


def test_predict_mode_follows_the_session_weights_as_they_train():
    session = TrainingSession(load_project(MOONS))
    predictor = Predictor(session)
    x = session.val_set.x[3]
    before = predictor.predict(x).output
    session.run(steps=5)
    after = predictor.predict(x)
    assert not np.array_equal(after.output, before) and after.step == 5
    np.testing.assert_array_equal(after.output, session.predict(x[None])[0])


def test_train_mode_is_repeatable_and_differs_from_predict_mode(moons):
    predictor = Predictor(moons)
    x, _ = predictor.row("validation", 3)
    first, second = predictor.train_mode(x), predictor.train_mode(x)
    np.testing.assert_array_equal(first.output, second.output)
    assert first.mode == TRAIN and first.seed == TRAIN_SEED
    assert first.batch_size == REFERENCE_ROWS + 1
    predicted = predictor.predict(x)
    np.testing.assert_array_equal(predicted.output, predictor.predict(x).output)  # no drift
    assert not np.allclose(first.output, predicted.output)  # Dropout and BatchNorm at work


def test_neither_mode_touches_the_session_network_nor_its_random_generator(moons):
    before, generator = weights(moons), rng_state()
    moons.network.set_train(False)
    predictor = Predictor(moons)  # compiling draws initial weights: the generator is put back
    x, _ = predictor.row("train", 0)
    predictor.train_mode(x)
    predictor.predict(x)
    predictor.train_mode(x)
    for name, value in weights(moons).items():
        np.testing.assert_array_equal(value, before[name])
    assert rng_state() == generator
    assert not moons.network.training


def test_a_train_mode_run_leaves_the_copys_batchnorm_statistics_as_they_were(moons):
    predictor = Predictor(moons)
    x, _ = predictor.row("train", 5)
    predictor.train_mode(x)
    mine = {n: p.asnumpy() for n, p in predictor.network.parameters_and_names()}
    for name, value in weights(moons).items():
        np.testing.assert_array_equal(mine[name], value)


def test_class_probabilities_and_the_predicted_class(moons):
    predictor = Predictor(moons)
    x, label = predictor.row("validation", 0)
    prediction = predictor.predict(x)
    assert prediction.classification and prediction.scale == SOFTMAX
    assert prediction.names == moons.dataset.class_names
    assert prediction.probabilities.sum() == pytest.approx(1.0)
    wanted = moons.targets.predicted(moons.predict(x[None]))[0]
    assert prediction.predicted == wanted == int(np.argmax(prediction.probabilities))
    assert prediction.predicted_name == moons.dataset.class_names[wanted]
    assert predictor.label_text(label) == moons.dataset.class_names[label]


def test_probabilities_follow_how_the_loss_reads_the_outputs():
    soft, scale = probabilities_of(np.array([1.0, 3.0]), "CrossEntropyLoss")
    assert scale == SOFTMAX and soft == pytest.approx(np.exp([1, 3]) / np.exp([1, 3]).sum())
    single, scale = probabilities_of(np.array([0.0]), "BCEWithLogitsLoss")
    assert scale == SIGMOID and single == pytest.approx([0.5, 0.5])
    clipped, scale = probabilities_of(np.array([1.3]), "MSELoss")
    assert scale == CLIPPED and clipped == pytest.approx([0.0, 1.0])
    big = probabilities_of(np.array([1000.0, 0.0]), "CrossEntropyLoss")[0]
    assert np.isfinite(big).all() and big == pytest.approx([1.0, 0.0])
    for loss in ("NLLLoss", "KLDivLoss"):  # log-probabilities in, probabilities out
        read, _ = probabilities_of(np.log(np.array([0.2, 0.8])), loss)
        assert read == pytest.approx([0.2, 0.8])


def test_a_single_output_binary_classifier_gets_two_probabilities():
    session = TrainingSession(mlp_project(loss="BCEWithLogitsLoss", outputs=1, epochs=1))
    session.run()
    predictor = Predictor(session)
    x, _ = predictor.row("validation", 1)
    prediction = predictor.predict(x)
    p = 1.0 / (1.0 + np.exp(-float(prediction.output[0])))
    assert prediction.scale == SIGMOID and prediction.probabilities == pytest.approx([1 - p, p])
    assert prediction.predicted == session.targets.predicted(session.predict(x[None]))[0]


def test_a_regression_shows_its_output_values():
    project = mlp_project(loss="MSELoss", inputs=1, outputs=1, dataset="sine", epochs=1)
    session = TrainingSession(project)
    session.run()
    predictor = Predictor(session)
    x, target = predictor.row("validation", 2)
    prediction = predictor.predict(x)
    assert not prediction.classification and prediction.predicted is None
    assert prediction.names == session.dataset.target_names
    np.testing.assert_array_equal(prediction.values, prediction.output.astype(np.float64))
    np.testing.assert_array_equal(prediction.output, session.predict(x[None])[0])
    assert predictor.label_text(target).startswith(f"{session.dataset.target_names[0]} = ")
    assert predictor.image(x) is None and not predictor.takes_points


def test_rows_typed_vectors_and_points_become_samples(moons):
    predictor = Predictor(moons)
    x, label = predictor.row("validation", 3)
    np.testing.assert_array_equal(x, moons.val_set.x[3])
    assert label == moons.val_set.y[3]
    with pytest.raises(IndexError, match="rows 0 to 99"):
        predictor.row("validation", 100)
    with pytest.raises(ValueError, match="Unknown split"):
        predictor.row("test", 0)
    assert predictor.takes_points and predictor.n_features == 2
    sample = predictor.sample(parse_vector("0.5, -1", predictor.n_features))
    assert sample.shape == (2,) and sample.dtype == np.float32
    np.testing.assert_array_equal(predictor.predict(sample).output,
                                  moons.predict(np.array([[0.5, -1.0]]))[0])  # fmt: skip


@pytest.mark.parametrize("text", ["0.5, -1", "0.5 -1", " 0.5,\t-1 ", "5e-1,-1"])
def test_parse_vector_takes_numbers_separated_by_commas_or_spaces(text):
    np.testing.assert_array_equal(parse_vector(text, 2), np.array([0.5, -1.0], np.float32))


@pytest.mark.parametrize(("text", "reason"), [
    ("abc", "'abc' \\(value 1\\) is not a number"),
    ("1, x", "'x' \\(value 2\\) is not a number"),
    ("nan, 1", "must be finite"),
    ("1, inf", "must be finite"),
    ("1e40, 1", "too large for float32"),
    ("1, 2, 3", "3 values typed; a sample has 2"),
    ("1", "1 value typed; a sample has 2"),
    ("", "Type 2 numbers"),
])  # fmt: skip
def test_parse_vector_refuses_with_the_reason(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_vector(text, 2)


def test_digit_images_are_shown_as_images():
    session = TrainingSession(load_project(DIGITS))
    predictor = Predictor(session)
    x, _ = predictor.row("train", 0)
    image = predictor.image(x)
    assert image.shape == (8, 8) and predictor.n_features == 64
    np.testing.assert_array_equal(image, x[0])
    typed = predictor.sample(np.arange(64))
    assert typed.shape == (1, 8, 8) and predictor.image(typed)[1, 0] == 8
    flat = make_digits(n_samples=20, flat=True)
    assert image_shape(flat) == (8, 8)
    assert image_shape(session.dataset) == (8, 8)
    assert predictor.predict(x).names == tuple(str(d) for d in range(10))


def test_during_a_run_weights_come_from_the_snapshot_and_train_mode_waits_for_a_pause():
    project = load_project(MOONS)
    project.training["epochs"] = 10_000
    session = TrainingSession(project)
    predictor = Predictor(session)
    paused = threading.Event()
    session.events.subscribe(lambda e: paused.set() if isinstance(e, TrainingPaused) else None)
    x = session.val_set.x[3]
    session.start()
    try:
        assert session.status == RUNNING
        with pytest.raises(PredictError, match="paused or stopped"):
            predictor.train_mode(x)
        for _ in range(200):  # the first snapshot is served at a step boundary
            try:
                predictor.predict(x)
                break
            except PredictError:
                paused.wait(0.01)
        else:
            pytest.fail("no snapshot was served")
        session.pause()
        assert paused.wait(10) and session.status == PAUSED
        prediction = predictor.predict(x)
        assert prediction.step == session.state.step
        np.testing.assert_array_equal(prediction.output, session.predict(x[None])[0])
        bias = session.compiled.parameters()["dense3.bias"]
        bias.asnumpy()[...] = [5.0, -5.0]  # an edit during the pause (the Parameter editor's)
        edited = predictor.predict(x)
        assert edited.predicted == 0
        np.testing.assert_array_equal(edited.output, session.predict(x[None])[0])
        np.testing.assert_array_equal(predictor.train_mode(x).output,
                                      predictor.train_mode(x).output)  # fmt: skip
    finally:
        session.stop()
        session.wait(30)
    assert session.status == READY
