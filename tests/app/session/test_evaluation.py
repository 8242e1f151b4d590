"""Evaluation of a whole split in predict mode: confusion matrix, per-class figures, curves,
per-sample losses and regression figures, checked by hand on tiny fixed networks and
against the session's own figures on the shipped examples."""

import math
import threading
from pathlib import Path

import numpy as np
import pytest

from app.compiler import compile_project
from app.datasets import Dataset
from app.document import Project
from app.io.project_file import load_project
from app.session import TrainingSession
from app.session.evaluation import (
    EvaluationCancelled,
    EvaluationError,
    Evaluator,
    evaluate,
    evaluate_network,
    probabilities_of_batch,
)
from app.session.evaluation_metrics import (
    precision_recall_curve,
    regression_scores,
    roc_curve,
    trapezoid,
)
from app.session.predict import probabilities_of
from app.session.targets import Targets
from engine import nn
from tests.app.session.session_samples import chain, mlp_project, weights

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"

# Three classes; a Dense layer that passes x through gives the logits x itself.
X3 = np.array([[2, 0, 0], [0, 3, 0], [0, 1, 0], [0, 2, 0], [1, 0, 0], [0, 0, 5], [0, 0, 1]],
              dtype=np.float32)  # fmt: skip
Y3 = np.array([0, 0, 1, 1, 2, 2, 2])
# Predicted (argmax): 0, 1, 1, 1, 0, 2, 2.
CONFUSION = [[1, 1, 0], [0, 2, 0], [1, 0, 2]]


def identity_project(width: int = 3, loss: str = "CrossEntropyLoss", weight=None,
                     **training) -> Project:  # fmt: skip
    graph = chain(("Input", {"shape": (width,)}),
                  ("Dense", {"in_channels": width, "out_channels": width}),
                  ("Output", {"loss": loss}))  # fmt: skip
    settings = {"dataset": "moons", "validation_fraction": 0.0, "batch_size": 4}
    settings.update(training)
    project = Project(graph=graph, name="identity", training=settings)
    dense = graph.node_named("dense1")
    w = np.eye(width, dtype=np.float32) if weight is None else np.asarray(weight, np.float32)
    project.param_values[dense.id] = {"weight": w, "bias": np.zeros(len(w), np.float32)}
    return project


def three_classes(**kw) -> TrainingSession:
    data = Dataset(X3, Y3, class_names=("ant", "bee", "cat"), name="three")
    return TrainingSession(identity_project(**kw), dataset=data)


def test_confusion_matrix_and_class_figures_by_hand():
    found = evaluate(three_classes(), "training", batch_size=3)  # batches of 3, 3 and 1
    c = found.classification
    assert c.confusion.tolist() == CONFUSION
    assert c.predicted.tolist() == [0, 1, 1, 1, 0, 2, 2]
    s = c.scores
    assert s.precision == pytest.approx([1 / 2, 2 / 3, 1.0])
    assert s.recall == pytest.approx([1 / 2, 1.0, 2 / 3])
    assert s.f1 == pytest.approx([0.5, 0.8, 0.8])
    assert s.support.tolist() == [2, 2, 3]
    assert s.macro_precision == pytest.approx((1 / 2 + 2 / 3 + 1) / 3)
    assert s.macro_recall == pytest.approx((1 / 2 + 1 + 2 / 3) / 3)
    assert s.macro_f1 == pytest.approx(0.7)
    assert s.accuracy == pytest.approx(5 / 7) and found.accuracy == s.accuracy
    assert c.normalised() == pytest.approx(np.array([[.5, .5, 0], [0, 1, 0], [1 / 3, 0, 2 / 3]]))
    assert found.names == ("ant", "bee", "cat") and found.task == "classification"
    assert c.roc is None and c.precision_recall is None  # three classes: no curves


def test_each_cell_names_its_samples():
    c = evaluate(three_classes(), "training").classification
    assert c.cell(0, 1).tolist() == [1] and c.cell(2, 0).tolist() == [4]
    assert c.cell(2, 2).tolist() == [5, 6] and c.cell(1, 0).tolist() == []
    cells = c.cells()
    assert {k: v.tolist() for k, v in cells.items()} == {
        (0, 0): [0], (0, 1): [1], (1, 1): [2, 3], (2, 0): [4], (2, 2): [5, 6]}
    for (i, j), indices in cells.items():
        assert len(indices) == c.confusion[i, j]


def test_per_sample_loss_probabilities_and_the_worst_samples():
    session = three_classes()
    found = evaluate(session, "training")
    logits = X3.astype(np.float64)
    softmax = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    by_hand = np.log(np.exp(logits).sum(axis=1)) - logits[np.arange(7), Y3]
    assert found.losses == pytest.approx(by_hand, rel=1e-5)
    assert found.classification.probabilities == pytest.approx(softmax, rel=1e-5)
    assert found.loss == pytest.approx(session.evaluate(session.train_set)[0], rel=1e-6)
    assert found.worst(3).tolist() == list(np.argsort(-by_hand, kind="stable")[:3])
    assert found.worst(2).tolist() == [1, 4]  # the two wrong ones lose most here
    assert found.worst(10, wrong_only=True).tolist() == [1, 4]
    assert len(found.worst(100)) == 7 and found.worst(0).tolist() == []
    assert found.outputs.shape == (7, 3) and found.step == 0


def test_roc_and_precision_recall_by_hand():
    positive = np.array([1, 0, 1, 1, 0, 0], dtype=bool)
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.55, 0.3])
    roc = roc_curve(positive, scores)
    third = 1 / 3
    assert roc.x == pytest.approx([0, 0, third, third, third, 2 * third, 1])
    assert roc.y == pytest.approx([0, third, third, 2 * third, 1, 1, 1])
    assert roc.area == pytest.approx(7 / 9)  # 7 of the 9 (positive, negative) pairs in order
    assert roc.thresholds[0] == math.inf and roc.thresholds[1:].tolist() == scores.tolist()
    pr = precision_recall_curve(positive, scores)
    assert pr.x == pytest.approx([0, third, third, 2 * third, 1, 1, 1])
    assert pr.y == pytest.approx([1, 1, 1 / 2, 2 / 3, 3 / 4, 3 / 5, 1 / 2])
    assert pr.area == pytest.approx(1 / 3 + 7 / 36 + 17 / 72)
    # Tied scores are one threshold: a chance-level diagonal.
    tied = roc_curve(np.array([True, False]), np.array([0.5, 0.5]))
    assert tied.x.tolist() == [0, 1] and tied.y.tolist() == [0, 1] and tied.area == 0.5
    assert roc_curve(np.array([True, True]), np.array([0.1, 0.2])) is None
    assert precision_recall_curve(np.array([False]), np.array([0.1])) is None
    assert trapezoid([0, 1, 3], [0, 2, 2]) == 5.0


def test_a_two_class_session_gets_curves_ranking_by_the_probability_of_class_1():
    session = TrainingSession(mlp_project(epochs=2))
    session.run()
    c = evaluate(session).classification
    assert c.binary and c.confusion.sum() == len(session.val_set)
    p1, true = c.probabilities[:, 1], c.true
    pairs = [(a > b) + 0.5 * (a == b) for a in p1[true == 1] for b in p1[true == 0]]
    assert c.roc.area == pytest.approx(np.mean(pairs))  # the Mann–Whitney statistic
    assert 0 <= c.precision_recall.area <= 1 and c.precision_recall.x[-1] == 1.0


def test_a_single_logit_output_reads_as_two_classes():
    project = identity_project(width=1, loss="BCEWithLogitsLoss", weight=[[1.0]])
    x = np.array([[-2.0], [0.5], [3.0], [-0.1]], dtype=np.float32)
    data = Dataset(x, np.array([0, 0, 1, 1]), name="one logit")
    found = evaluate(TrainingSession(project, dataset=data), "training")
    c = found.classification
    assert c.predicted.tolist() == [0, 1, 1, 0] and c.confusion.tolist() == [[1, 1], [1, 1]]
    p = 1 / (1 + np.exp(-x[:, 0].astype(np.float64)))
    assert c.probabilities == pytest.approx(np.column_stack((1 - p, p)), rel=1e-6)
    y = np.array([0, 0, 1, 1])
    bce = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert found.losses == pytest.approx(bce, rel=1e-5)
    assert c.roc.area == pytest.approx(0.75)  # 3 of the 4 pairs ranked right


@pytest.mark.parametrize("loss", ["CrossEntropyLoss", "BCEWithLogitsLoss", "MSELoss",
                                  "BCELoss", "NLLLoss", "KLDivLoss"])  # fmt: skip
def test_batch_probabilities_match_the_predict_panel(loss):
    rng = np.random.default_rng(3)
    for width in (1, 3):
        outputs = rng.normal(size=(5, width))
        if loss == "BCELoss":
            outputs = 1 / (1 + np.exp(-outputs))
        batch, scale = probabilities_of_batch(outputs, loss)
        for row, got in zip(outputs, batch, strict=True):
            one, one_scale = probabilities_of(row, loss)
            assert got == pytest.approx(one) and scale == one_scale


@pytest.mark.parametrize("loss", ["CrossEntropyLoss", "MSELoss", "L1Loss", "BCEWithLogitsLoss",
                                  "SmoothL1Loss", "HuberLoss", "NLLLoss", "KLDivLoss"])  # fmt: skip
def test_the_mean_of_sample_losses_is_the_session_loss(loss):
    session = TrainingSession(mlp_project(loss=loss, epochs=1))
    session.run()
    for split, data in (("validation", session.val_set), ("training", session.train_set)):
        found = evaluate(session, split)
        loss_value, accuracy = session.evaluate(data)
        assert found.loss == pytest.approx(loss_value, rel=1e-5)
        assert found.accuracy == pytest.approx(accuracy)
        assert len(found) == len(data) and np.isfinite(found.losses).all()


def test_regression_figures_by_hand():
    project = identity_project(width=1, loss="MSELoss", weight=[[2.0]])
    x = np.array([[0.0], [1.0], [2.0], [3.0]], dtype=np.float32)
    y = np.array([0.0, 2.0, 5.0, 6.0], dtype=np.float32)
    data = Dataset(x, y, task="regression", target_names=("price",), name="line")
    found = evaluate(TrainingSession(project, dataset=data), "training")
    r = found.regression
    assert found.classification is None and found.accuracy is None
    assert r.predicted[:, 0].tolist() == [0, 2, 4, 6] and r.true[:, 0].tolist() == [0, 2, 5, 6]
    assert r.residuals[:, 0].tolist() == [0, 0, 1, 0]
    assert found.losses.tolist() == [0, 0, 1, 0] and found.worst(1).tolist() == [2]
    assert r.mae == 0.25 and r.rmse == 0.5
    assert r.r2 == pytest.approx(1 - 1 / 22.75)  # total spread about the mean 3.25: 22.75
    assert r.scores.counts.sum() == 4 and len(r.scores.edges) == len(r.scores.counts) + 1
    assert found.names == ("price",)


class NoReduction(nn.Cell):
    """A loss with no `reduction` to switch off: each sample is run through it alone."""

    def __init__(self):
        super().__init__()
        self.inner = nn.MSELoss()

    def construct(self, logits, labels):
        return self.inner(logits, labels)


def test_a_loss_that_cannot_be_unreduced_is_run_one_sample_at_a_time():
    compiled = compile_project(identity_project(width=1, loss="MSELoss", weight=[[2.0]]))
    x = np.array([[0.0], [1.0], [2.0], [3.0]], dtype=np.float32)
    data = Dataset(x, np.array([0.0, 2.0, 5.0, 7.0]), task="regression", name="line")
    found = evaluate_network(compiled.network, data, NoReduction(), split="training")
    assert found.losses.tolist() == [0, 0, 1, 1] and found.loss_name == "NoReduction"


def test_r2_of_a_constant_target_and_the_residual_histogram():
    scores = regression_scores(np.array([[1.0], [1.0]]), np.array([[1.0], [1.0]]))
    assert scores.r2 == 1.0
    assert regression_scores(np.array([[1.0], [1.0]]), np.array([[2.0], [1.0]])).r2 == 0.0
    wide = regression_scores(np.zeros((400, 2)), np.random.default_rng(0).normal(size=(400, 2)))
    assert len(wide.counts) == 29 and wide.counts.sum() == 800  # about √800, at most 30


def test_an_evaluation_leaves_the_session_as_it_was():
    session = TrainingSession(mlp_project(epochs=1))
    before = weights(session)
    session.network.set_train(True)
    evaluate(session)
    assert session.network.training  # its mode untouched: the copy ran
    assert all(np.array_equal(before[k], v) for k, v in weights(session).items())


def test_evaluating_during_a_run_does_not_change_what_it_trains():
    plain = TrainingSession(mlp_project(epochs=3))
    plain.run()
    watched = TrainingSession(mlp_project(epochs=3))
    evaluator = Evaluator(watched)  # made while nothing trains
    watched.start()
    watched.pause()  # one look for certain mid-run, however fast the run ends
    seen = [evaluator.evaluate(wait=2.0).step]
    watched.resume()
    while watched.wait(0) is None and len(seen) < 5:
        seen.append(evaluator.evaluate(wait=2.0).step)
    watched.wait()
    assert seen and seen == sorted(seen)
    final = weights(watched)
    assert all(np.array_equal(final[k], v) for k, v in weights(plain).items())
    assert evaluator.evaluate().loss == pytest.approx(plain.evaluate()[0], rel=1e-6)


def test_a_paused_run_is_evaluated_from_another_thread():
    session = TrainingSession(mlp_project(epochs=50))
    evaluator = Evaluator(session)
    session.start()
    session.pause()
    result = {}
    worker = threading.Thread(target=lambda: result.update(found=evaluator.evaluate()))
    worker.start()
    worker.join(10)
    try:
        loss, accuracy = session.evaluate()  # allowed while paused
        assert result["found"].loss == pytest.approx(loss, rel=1e-6)
        assert result["found"].accuracy == pytest.approx(accuracy)
    finally:
        session.stop()
        session.wait()


def test_cancel_empty_sets_and_unknown_splits_are_refused():
    session = three_classes()
    with pytest.raises(EvaluationCancelled):
        evaluate(session, "training", should_stop=lambda: True)
    with pytest.raises(EvaluationError, match="validation set is empty"):
        evaluate(session, "validation")  # validation fraction 0
    with pytest.raises(EvaluationError, match="'validation' or 'training'"):
        evaluate(session, "test")
    assert evaluate(session, "train").split == "training"


def test_a_compiled_network_evaluates_given_samples():
    project = identity_project()
    data = Dataset(X3, Y3, name="three")
    compiled = compile_project(project)
    found = evaluate(compiled, data=data)
    assert found.classification.confusion.tolist() == CONFUSION
    with pytest.raises(TypeError):
        evaluate(compiled)
    assert Targets("CrossEntropyLoss", "classification").classification


# ---- the shipped examples ---------------------------------------------------------------------


@pytest.mark.parametrize(("name", "steps"), [("spiral_mlp", 60), ("digits_cnn", 40)])
def test_the_examples_matrix_covers_the_split_and_matches_the_session(name, steps):
    session = TrainingSession(load_project(EXAMPLES / f"{name}.cwproj"), folder=EXAMPLES)
    session.run(steps=steps)
    found = evaluate(session)
    loss, accuracy = session.evaluate()
    c = found.classification
    assert c.confusion.sum() == len(session.val_set) == len(found)
    assert c.confusion.shape == (session.dataset.num_classes,) * 2
    assert found.accuracy == pytest.approx(accuracy) and found.loss == pytest.approx(loss, rel=1e-5)
    assert found.step == steps and accuracy > 0.5  # trained: the figures mean something
    assert c.scores.support.tolist() == np.bincount(session.val_set.y,
                                                    minlength=len(c.confusion)).tolist()
    assert sum(len(v) for v in c.cells().values()) == len(found)


def test_the_lstm_forecast_example_is_a_regression():
    session = TrainingSession(load_project(EXAMPLES / "lstm_forecast.cwproj"), folder=EXAMPLES)
    session.run(steps=30)
    found = evaluate(session)
    r = found.regression
    assert found.classification is None and r.true.shape == r.predicted.shape == (200, 1)
    loss, _ = session.evaluate()
    assert found.loss == pytest.approx(loss, rel=1e-5)
    assert r.rmse == pytest.approx(math.sqrt(loss), rel=1e-5)  # MSELoss: the mean square
    assert r.r2 == pytest.approx(1 - loss / np.var(r.true), rel=1e-5)
