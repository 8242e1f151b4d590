"""A trained network measured on a whole split in predict mode, down to each sample.

    evaluation = evaluate(session)                  # the validation set; or "training"
    evaluation.classification.confusion            # counts: rows true class, columns predicted
    evaluation.classification.cell(2, 7)           # indices of the 2s taken for 7s
    evaluation.classification.scores.f1            # per class; .macro_f1, .accuracy
    evaluation.classification.roc                  # two classes: a Curve with its area
    evaluation.worst(50)                           # indices, highest loss first
    evaluation.regression.r2                       # a regression instead

Indices are rows of the split evaluated (`session.train_set` or `session.val_set`), as
`Predictor.row(split, index)` reads them. Each sample's loss is the loss the training
uses, unreduced, then reduced over that sample alone (its mean, or its sum for a 'sum'
or 'batchmean' loss): with a 'mean' loss their mean is the split's loss the session
reports. Probabilities are made as the Predict panel makes them (`probabilities_of`).

`Evaluator(session)` runs on a copy of the session's network, as `Predictor` does, so it
may run on any thread: during a run (also paused) it copies the weights the run serves
at a step boundary (`session.snapshot`), never weights halfway through a step; with no
run going on, from the network itself. Make the Evaluator while
nothing trains (compiling draws from the engine's generator, which is put back after).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import engine
from app.compiler import CompiledNetwork, compile_project
from app.datasets import CLASSIFICATION, Dataset
from app.session.evaluation_metrics import (
    ClassScores,
    Curve,
    RegressionScores,
    class_scores,
    confusion_matrix,
    precision_recall_curve,
    regression_scores,
    roc_curve,
    row_normalised,
)
from app.session.events import TrainingPaused
from app.session.predict import CLIPPED, LOGIT_LOSSES, SIGMOID, SOFTMAX
from app.session.session import PAUSED, READY, TrainingSession
from app.session.targets import Targets
from engine import _random

VALIDATION, TRAINING = "validation", "training"
SPLITS = (VALIDATION, TRAINING)
EVALUATION_BATCH = 512  # samples run at a time
WORST = 50  # "most confidently wrong": how many a view shows
SUMMED = frozenset({"sum", "batchmean"})  # reductions whose per-sample figure is a sum


class EvaluationError(ValueError):
    """An evaluation that can't be made; the message is meant for the user."""


class EvaluationCancelled(Exception):
    """`should_stop()` said so between two batches; nothing was produced."""


@dataclass(frozen=True, eq=False)
class Classification:
    """What the network makes of each sample's class, and the figures over the split."""

    true: np.ndarray  # (N,) int64, the labels
    predicted: np.ndarray  # (N,) int64, the class the accuracy counts
    probabilities: np.ndarray  # (N, C) float64, as the loss reads the outputs
    scale: str  # SOFTMAX, SIGMOID or CLIPPED: how `probabilities` were made
    confusion: np.ndarray  # (C, C) int64 counts, [true, predicted]
    scores: ClassScores
    roc: Curve | None = None  # two classes with both present: class 1 is the positive one
    precision_recall: Curve | None = None

    @property
    def num_classes(self) -> int:
        return len(self.confusion)

    @property
    def binary(self) -> bool:
        return self.num_classes == 2

    @property
    def accuracy(self) -> float:
        return self.scores.accuracy

    @property
    def correct(self) -> np.ndarray:
        """(N,) bool: predicted right."""
        return self.true == self.predicted

    def normalised(self) -> np.ndarray:
        """The confusion matrix with each row divided by its class's support."""
        return row_normalised(self.confusion)

    def cell(self, true_class: int, predicted_class: int) -> np.ndarray:
        """Indices of the samples of `true_class` predicted as `predicted_class`, in order."""
        return np.flatnonzero((self.true == true_class) & (self.predicted == predicted_class))

    def cells(self) -> dict[tuple[int, int], np.ndarray]:
        """Every non-empty cell → its samples' indices."""
        size = self.num_classes
        key = self.true * size + self.predicted
        order = np.argsort(key, kind="stable")
        keys, starts = np.unique(key[order], return_index=True)
        groups = np.split(order, starts[1:])
        return {(int(k) // size, int(k) % size): g for k, g in zip(keys, groups, strict=True)}


@dataclass(frozen=True, eq=False)
class Regression:
    """Predicted against true values, (N, k) each, and the figures over the split."""

    true: np.ndarray
    predicted: np.ndarray
    scores: RegressionScores

    @property
    def residuals(self) -> np.ndarray:
        """true − predicted, (N, k)."""
        return self.true - self.predicted

    @property
    def r2(self) -> float:
        return self.scores.r2

    @property
    def mae(self) -> float:
        return self.scores.mae

    @property
    def rmse(self) -> float:
        return self.scores.rmse


@dataclass(frozen=True, eq=False)
class Evaluation:
    """One split measured in predict mode: outputs, per-sample losses and the figures."""

    split: str  # VALIDATION or TRAINING
    data: Dataset  # the split's samples (not copied): index i is data.x[i], data.y[i]
    step: int  # the weights are those after this many training steps
    loss_name: str
    outputs: np.ndarray  # (N, ...) raw outputs
    losses: np.ndarray  # (N,) float64, each sample's loss
    classification: Classification | None = None
    regression: Regression | None = None

    def __len__(self) -> int:
        return len(self.losses)

    @property
    def task(self) -> str:
        return self.data.task

    @property
    def names(self) -> tuple[str, ...]:
        """The class names, or the targets' names."""
        return self.data.class_names if self.classification else self.data.target_names

    @property
    def loss(self) -> float:
        """The mean of the samples' losses."""
        return float(self.losses.mean()) if len(self.losses) else math.nan

    @property
    def accuracy(self) -> float | None:
        return None if self.classification is None else self.classification.accuracy

    def worst(self, n: int = WORST, wrong_only: bool = False) -> np.ndarray:
        """Indices of the `n` samples of highest loss, highest first (ties: lower index
        first); `wrong_only` keeps those predicted wrong (a classification)."""
        order = np.argsort(-self.losses, kind="stable")
        if wrong_only and self.classification is not None:
            order = order[~self.classification.correct[order]]
        return order[: max(int(n), 0)]


# ---- running ------------------------------------------------------------------------------


class Evaluator:
    """A copy of one session's network that evaluates its splits, off the GUI thread."""

    def __init__(self, session: TrainingSession) -> None:
        self.session = session
        with _random.fork_rng():  # the engine's generator is left where it was
            compiled = compile_project(session.project)
        self.network = compiled.network
        self._params = compiled.parameters()
        theirs = session.compiled.parameters()
        if {n: tuple(p.shape) for n, p in self._params.items()} != {
                n: tuple(p.shape) for n, p in theirs.items()}:  # fmt: skip
            raise EvaluationError("The network changed since training was set up; it is "
                                  "compiled again when no run is going on.")  # fmt: skip
        self._live = list(zip(self._params.values(), theirs.values(), strict=True))
        self.input_dtype = session.compiled.input_dtypes[0]
        self._paused_version = -1  # the snapshot taken as the run last paused
        session.events.subscribe(self._on_event)  # weakly: it goes with the Evaluator

    def _on_event(self, event: object) -> None:
        if isinstance(event, TrainingPaused):  # on the training thread, just after serving it
            self._paused_version = self.session.snapshot.version

    def split(self, split: str) -> Dataset:
        split = split_name(split)
        return self.session.train_set if split == TRAINING else self.session.val_set

    def evaluate(self, split: str = VALIDATION, *, batch_size: int = EVALUATION_BATCH,
                 should_stop: Callable[[], bool] | None = None,
                 wait: float = 5.0) -> Evaluation:  # fmt: skip
        """Evaluate `split` with the session's weights as they are now. During a run (also
        paused), the weights of a step boundary: those of the pause, or of the next
        boundary, waited for up to `wait` seconds (else the latest ones served).
        EvaluationError if there are none yet; EvaluationCancelled."""
        name = split_name(split)
        data = self.split(name)
        step = self._load_weights(wait)
        return evaluate_network(self.network, data, self.session.loss_fn, split=name,
                                step=step, input_dtype=self.input_dtype,
                                batch_size=batch_size, should_stop=should_stop)  # fmt: skip

    def _load_weights(self, wait: float) -> int:
        session = self.session
        snapshot = session.snapshot
        if session.status != READY and not self._paused_here():
            before = snapshot.version
            snapshot.request()
            deadline = time.monotonic() + max(wait, 0.0)
            while (snapshot.version == before and session.status != READY
                   and not self._paused_here() and time.monotonic() < deadline):  # fmt: skip
                time.sleep(0.005)
        if session.status == READY:  # no run: the network itself holds the weights
            for mine, theirs in self._live:
                np.copyto(mine.asnumpy(), theirs.asnumpy())
            return session.state.step
        if snapshot.version == 0:
            raise EvaluationError("Waiting for the training run's first weights…")
        return snapshot.copy_into(self._params)

    def _paused_here(self) -> bool:
        """Paused, and the latest snapshot is the one the pause took."""
        return (self.session.status == PAUSED
                and self._paused_version == self.session.snapshot.version)  # fmt: skip


def evaluate(source: TrainingSession | Evaluator | CompiledNetwork, split: str = VALIDATION,
             *, data: Dataset | None = None, batch_size: int = EVALUATION_BATCH,
             should_stop: Callable[[], bool] | None = None) -> Evaluation:  # fmt: skip
    """Evaluate a session's split (on a copy of its network), or a compiled network on the
    samples `data` (its own network, in predict mode; the Output node's loss; `split` only
    names them). Nothing that trains is disturbed."""
    if isinstance(source, TrainingSession):
        source = Evaluator(source)
    if isinstance(source, Evaluator):
        if data is not None:
            raise TypeError("A session evaluates its own splits; pass `data` with a "
                            "compiled network only.")  # fmt: skip
        return source.evaluate(split, batch_size=batch_size, should_stop=should_stop)
    if data is None:
        raise TypeError("A compiled network needs the samples to evaluate (`data`).")
    if source.loss_fn is None:
        raise EvaluationError("The Output node has no loss: choose one to evaluate the network.")
    return evaluate_network(source.network, data, source.loss_fn, split=split_name(split),
                            input_dtype=source.input_dtypes[0], batch_size=batch_size,
                            should_stop=should_stop)  # fmt: skip


def split_name(split: str) -> str:
    """'validation' or 'training' ('train' too); EvaluationError names the choices."""
    name = TRAINING if split == "train" else split
    if name not in SPLITS:
        raise EvaluationError(f"Unknown set {split!r}: evaluate 'validation' or 'training'.")
    return name


def evaluate_network(network: engine.nn.Cell, data: Dataset, loss_fn: engine.nn.Cell, *,
                     split: str = VALIDATION, step: int = 0, input_dtype=np.float32,
                     batch_size: int = EVALUATION_BATCH,
                     should_stop: Callable[[], bool] | None = None) -> Evaluation:  # fmt: skip
    """Run `network` in predict mode over every sample of `data`, in batches, and measure
    it; its train/predict mode is put back afterwards."""
    if not len(data):
        if split == VALIDATION:
            raise EvaluationError("The validation set is empty: the training settings hold no "
                                  "sample out (validation fraction 0); evaluate the training "
                                  "set instead.")  # fmt: skip
        raise EvaluationError(f"The {split} set is empty: there is nothing to evaluate.")
    loss_name = type(loss_fn).__name__
    try:
        targets = Targets(loss_name, data.task)
    except ValueError as exc:
        raise EvaluationError(str(exc)) from None
    unreduced = _unreduced(loss_fn)
    outputs, losses = [], []
    was_training = network.training
    network.set_train(False)
    try:
        with engine.no_grad(), np.errstate(all="ignore"):
            for x, y in data.batches(batch_size, shuffle=False):
                if should_stop is not None and should_stop():
                    raise EvaluationCancelled
                out = network(engine.Tensor(x.astype(input_dtype, copy=False)))
                losses.append(_sample_losses(loss_fn, unreduced, targets, out, y))
                outputs.append(out.asnumpy().copy())
    finally:
        network.set_train(was_training)
    output = np.concatenate(outputs)
    per_sample = np.concatenate(losses)
    if data.task == CLASSIFICATION:
        found = classify(output, data.y, data.num_classes, targets)
        return Evaluation(split, data, step, loss_name, output, per_sample, classification=found)
    true = data.y.astype(np.float64)
    predicted = output.reshape(len(output), -1).astype(np.float64)
    if predicted.shape != true.shape:
        predicted = predicted.reshape(true.shape)  # same size: the loss compared them so
    found = Regression(true, predicted, regression_scores(true, predicted))
    return Evaluation(split, data, step, loss_name, output, per_sample, regression=found)


def classify(output: np.ndarray, true: np.ndarray, num_classes: int,
             targets: Targets) -> Classification:  # fmt: skip
    """The classification figures of raw `output` (N, ...) against the labels `true`."""
    predicted = targets.predicted(output)
    probabilities, scale = probabilities_of_batch(output, targets.loss_name)
    matrix = confusion_matrix(true, predicted, num_classes)
    roc = curve = None
    if len(matrix) == 2:
        flat = np.asarray(output, dtype=np.float64).reshape(len(output), -1)
        # A rank of the samples by class 1: clipping would tie all outputs beyond 0 or 1.
        score = flat[:, -1] if scale == CLIPPED else probabilities[:, 1]
        roc = roc_curve(true == 1, score)
        curve = precision_recall_curve(true == 1, score)
    return Classification(true.astype(np.int64), predicted, probabilities, scale, matrix,
                          class_scores(matrix), roc, curve)  # fmt: skip


def probabilities_of_batch(output: np.ndarray, loss_name: str) -> tuple[np.ndarray, str]:
    """`predict.probabilities_of` for every row of `output` at once: (N, C) and the scale."""
    flat = np.asarray(output, dtype=np.float64).reshape(len(output), -1)
    with np.errstate(all="ignore"):
        if flat.shape[1] == 1:
            if loss_name == "BCEWithLogitsLoss":
                p, scale = 1.0 / (1.0 + np.exp(-flat[:, 0])), SIGMOID
            else:
                p, scale = np.clip(flat[:, 0], 0.0, 1.0), CLIPPED
            return np.column_stack((1.0 - p, p)), scale
        if loss_name in LOGIT_LOSSES:
            shifted = np.exp(flat - flat.max(axis=1, keepdims=True))
            return shifted / shifted.sum(axis=1, keepdims=True), SOFTMAX
        if loss_name == "BCEWithLogitsLoss":
            return 1.0 / (1.0 + np.exp(-flat)), SIGMOID
        return np.clip(flat, 0.0, 1.0), CLIPPED


def _unreduced(loss_fn: engine.nn.Cell) -> engine.nn.Cell | None:
    """A copy of the loss giving one value per element (reduction 'none'), or None."""
    if not hasattr(loss_fn, "reduction"):
        return None
    clone = copy.copy(loss_fn)  # its own attributes: the training's loss is not touched
    clone.reduction = "none"
    return clone


def _sample_losses(loss_fn, unreduced, targets: Targets, out: engine.Tensor,
                   y: np.ndarray) -> np.ndarray:  # fmt: skip
    """Each sample's loss in the batch: the unreduced loss reduced per sample; a loss that
    can't give one value per element is run on one sample at a time instead."""
    count = len(y)
    reduction = getattr(loss_fn, "reduction", "mean")
    if unreduced is not None:
        try:
            raw = np.asarray(unreduced(out, targets.for_loss(y, out.shape)).asnumpy(),
                             dtype=np.float64)  # fmt: skip
        except (ValueError, TypeError):
            raw = None
        if raw is not None and raw.ndim >= 1 and raw.shape[0] == count:
            flat = raw.reshape(count, -1)
            return flat.sum(axis=1) if reduction in SUMMED else flat.mean(axis=1)
    values = out.asnumpy()
    single = np.empty(count, dtype=np.float64)
    for i in range(count):
        row = engine.Tensor(values[i : i + 1])
        single[i] = float(loss_fn(row, targets.for_loss(y[i : i + 1], row.shape)).asnumpy())
    return single
