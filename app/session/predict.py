"""Running the network on one chosen input, in predict mode and in train mode (headless).

    predictor = Predictor(session)          # its own copy of the network; CompileError, ValueError
    x, label = predictor.row("validation", 3)
    predictor.predict(x)                    # Prediction: Dropout off, BatchNorm moving statistics
    predictor.train_mode(x)                 # Prediction: Dropout on (seed 0), batch statistics
    parse_vector("0.5, -1", 2)              # a typed sample; ValueError says why not

The predictor never runs the session's network: it compiles a copy, and before every run
copies the session's current weights into it — straight from the network while nothing
trains (no run, or a paused one: weights edited during a pause count), else from the
session's `ParameterSnapshot` (served by the training thread between two steps). Train
mode runs on the chosen sample plus a fixed reference batch of training rows (BatchNorm
on a batch of one would normalise every feature to its beta), with Dropout drawing from
a generator of its own, fixed seed: the same input gives the same output every time,
and the training run's generator is not touched. BatchNorm's moving statistics change
in the copy during a train-mode run; the next run reloads them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine
from app.compiler import compile_project
from app.datasets import Dataset
from app.session.predict_sequence import is_sequence
from app.session.session import RUNNING, STOPPING, TrainingSession
from engine import _random

PREDICT, TRAIN = "predict", "train"
TRAIN_SEED = 0  # Dropout's masks in the train-mode view
REFERENCE_ROWS = 31  # training rows run beside the chosen sample in train mode
SPLITS = ("train", "validation")
# Losses reading the outputs as logits, or as log-probabilities (NLLLoss, KLDivLoss): the
# softmax of log-probabilities is the probabilities themselves, normalised.
LOGIT_LOSSES = frozenset({"CrossEntropyLoss", "SoftmaxCrossEntropyWithLogits", "NLLLoss",
                          "KLDivLoss"})
SOFTMAX, SIGMOID, CLIPPED = "softmax", "sigmoid", "clipped"
PIXEL_NAME = re.compile(r"pixel (\d+),(\d+)$")  # flat image features: "pixel 3,5"


class PredictError(ValueError):
    """A prediction that can't be made now; the message is meant for the user."""


@dataclass(frozen=True, eq=False)
class Prediction:
    """The network's answer for one sample.

    `output` is the raw output for the sample (what `session.predict(x[None])[0]` gives).
    For a classification, `probabilities` has one entry per class, made from the outputs
    as the loss reads them (`scale`: softmax of logits, sigmoid of a logit, or outputs
    clipped to 0–1), and `predicted` is the class the accuracy counts. For a regression
    both are None and `values` are the outputs. `names` names each entry of `values`.
    """

    output: np.ndarray
    mode: str  # PREDICT or TRAIN
    step: int  # the weights are those after this many training steps
    names: tuple[str, ...]
    probabilities: np.ndarray | None = None
    predicted: int | None = None
    scale: str = ""
    batch_size: int = 1  # samples run together (train mode: with the reference rows)
    seed: int | None = None  # Dropout's seed in train mode

    @property
    def classification(self) -> bool:
        return self.probabilities is not None

    @property
    def values(self) -> np.ndarray:
        """What to draw: the class probabilities, or the output values of a regression."""
        if self.probabilities is not None:
            return self.probabilities
        return np.asarray(self.output, dtype=np.float64).reshape(-1)

    @property
    def predicted_name(self) -> str | None:
        index = self.predicted
        if index is None:
            return None
        return self.names[index] if index < len(self.names) else str(index)


class Predictor:
    """One session's network, copied, run on single samples for the Predict panel.

    Make it while nothing trains (as the session is made): compiling draws initial
    weights from the engine's generator, which is put back afterwards.
    """

    def __init__(self, session: TrainingSession) -> None:
        self.session = session
        self.dataset: Dataset = session.dataset
        with _random.fork_rng():  # the engine's generator is left where it was
            compiled = compile_project(session.project)
        self.network = compiled.network
        self.network.set_train(False)
        self._params = compiled.parameters()
        theirs = session.compiled.parameters()
        shapes = {name: tuple(p.shape) for name, p in self._params.items()}
        if shapes != {name: tuple(p.shape) for name, p in theirs.items()}:
            raise PredictError("The network changed since training was set up; "
                               "it is compiled again when no run is going on.")  # fmt: skip
        self._live = list(zip(self._params.values(), theirs.values(), strict=True))
        self.input_dtype = session.compiled.input_dtypes[0]
        self.sample_shape: tuple[int, ...] = self.dataset.sample_shape
        self.n_features = math.prod(self.sample_shape)
        # A sample with a time axis is drawn over time, never as an image.
        self.sequence = is_sequence(self.dataset, session.project)
        self.image_shape = None if self.sequence else image_shape(self.dataset)
        train_x = session.train_set.x
        self.reference = np.asarray(train_x[:REFERENCE_ROWS], dtype=self.input_dtype)
        self.step = 0  # of the weights last loaded

    # ---- inputs ----------------------------------------------------------------------------

    @property
    def takes_points(self) -> bool:
        """True for 2-feature data: a point of the decision boundary's plane is a sample."""
        return self.sample_shape == (2,)

    def split(self, split: str) -> Dataset:
        if split not in SPLITS:
            raise ValueError(f"Unknown split {split!r}: use 'train' or 'validation'.")
        return self.session.train_set if split == "train" else self.session.val_set

    def row(self, split: str, index: int) -> tuple[np.ndarray, Any]:
        """Sample `index` of the training or validation set, and its label (class index or
        target values); IndexError names the range."""
        data = self.split(split)
        if not 0 <= index < len(data):
            raise IndexError(f"The {split} set has rows 0 to {len(data) - 1}, not {index}.")
        label = data.y[index]
        return data.x[index].copy(), int(label) if data.y.ndim == 1 else label.copy()

    def label_text(self, label: Any) -> str:
        """A label as the user reads it: the class name, or the target values."""
        data = self.dataset
        if isinstance(label, int | np.integer):
            index = int(label)
            name = data.class_names[index] if index < len(data.class_names) else str(index)
            return name if name == str(index) else f"{name} (class {index})"
        values = np.asarray(label, dtype=np.float64).reshape(-1)
        return ", ".join(f"{n} = {format_value(v)}" for n, v in
                         zip(data.target_names, values, strict=False))  # fmt: skip

    def sample(self, values: np.ndarray | Sequence[float]) -> np.ndarray:
        """A typed vector (or a point) in the shape of one sample."""
        flat = np.asarray(values, dtype=np.float64).reshape(-1)
        if flat.size != self.n_features:
            raise ValueError(f"A sample has {self.n_features} values, not {flat.size}.")
        return flat.reshape(self.sample_shape).astype(np.float32)

    def image(self, x: np.ndarray) -> np.ndarray | None:
        """The sample as a (H, W) or (H, W, 3) image to look at, or None if it is no image."""
        if self.image_shape is None:
            return None
        x = np.asarray(x, dtype=np.float64)
        if len(self.sample_shape) == 3 and self.sample_shape[0] == 3:
            return np.moveaxis(x.reshape(self.sample_shape), 0, -1)
        return x.reshape(self.image_shape)

    # ---- running ---------------------------------------------------------------------------

    def load_weights(self) -> int:
        """Copy the session's current weights into the copy; the step they are from.

        While nothing trains (no run, or paused) from the network itself, as
        `session.predict` reads them; while a run trains from the snapshot, asking for a
        fresh one at the next step boundary. PredictError if the run has not yet served
        its first snapshot.
        """
        session = self.session
        if session.status not in (RUNNING, STOPPING):
            for mine, theirs in self._live:
                np.copyto(mine.asnumpy(), theirs.asnumpy())
            self.step = session.state.step
            return self.step
        snapshot = session.snapshot
        snapshot.request()
        if snapshot.version == 0:
            raise PredictError("Waiting for the training run's first weights…")
        self.step = snapshot.copy_into(self._params)
        return self.step

    def predict(self, x: np.ndarray) -> Prediction:
        """The output for sample `x` in predict mode: Dropout passes all, BatchNorm uses its
        moving statistics. The same as `session.predict(x[None])[0]`, bit for bit."""
        step = self.load_weights()
        batch = np.asarray(np.asarray(x)[None], dtype=self.input_dtype)
        self._check(batch)
        network = self.network
        network.set_train(False)
        with engine.no_grad(), np.errstate(all="ignore"):  # huge weights: say so in the output
            out = network(engine.Tensor(batch)).asnumpy()[0].copy()
        return self._prediction(out, PREDICT, step)

    def train_mode(self, x: np.ndarray) -> Prediction:
        """The output for sample `x` in train mode: run with the reference training rows
        (BatchNorm normalises with that batch's statistics), Dropout masks from a fixed seed.

        PredictError while a run is training: Dropout draws from the engine's one generator,
        which the training thread is using, and the two must not mix.
        """
        session = self.session
        if session.status in (RUNNING, STOPPING):
            raise PredictError("Train mode is shown while training is paused or stopped: "
                               "its Dropout would share the run's random generator.")  # fmt: skip
        step = self.load_weights()  # also undoes what the last train-mode run did to BatchNorm
        row = np.asarray(np.asarray(x)[None], dtype=self.input_dtype)
        self._check(row)
        batch = np.concatenate((row, self.reference))
        network = self.network
        try:  # a generator of its own: the training's is not touched
            network.set_train(True)
            with _random.fork_rng(TRAIN_SEED), engine.no_grad(), np.errstate(all="ignore"):
                out = network(engine.Tensor(batch)).asnumpy()[0].copy()
        finally:
            network.set_train(False)
        self.load_weights()  # the copy's BatchNorm statistics as they were
        return self._prediction(out, TRAIN, step, batch_size=len(batch), seed=TRAIN_SEED)

    def _check(self, batch: np.ndarray) -> None:
        if tuple(batch.shape[1:]) != self.sample_shape:
            raise ValueError(f"A sample has shape {self.sample_shape}, not "
                             f"{tuple(batch.shape[1:])}.")  # fmt: skip

    def _prediction(self, output: np.ndarray, mode: str, step: int, **extra) -> Prediction:
        session = self.session
        flat = np.asarray(output, dtype=np.float64).reshape(-1)
        if not session.targets.classification:
            names = tuple(self.dataset.target_names)
            if len(names) != flat.size:
                names = tuple(f"output {i + 1}" for i in range(flat.size))
            return Prediction(output, mode, step, names, **extra)
        probabilities, scale = probabilities_of(flat, session.targets.loss_name)
        predicted = int(session.targets.predicted(np.asarray(output)[None])[0])
        names = list(self.dataset.class_names[: len(probabilities)])
        names += [f"output {i + 1}" for i in range(len(names), len(probabilities))]
        return Prediction(output, mode, step, tuple(names), probabilities, predicted, scale,
                          **extra)  # fmt: skip


# ---- helpers -----------------------------------------------------------------------------------


def probabilities_of(output: np.ndarray, loss_name: str) -> tuple[np.ndarray, str]:
    """Class probabilities from one sample's outputs, read as the loss reads them.

    Cross-entropy losses take logits: softmax. BCEWithLogits takes logits: a sigmoid per
    output. Other losses compare the outputs with 0/1 targets: they are clipped to 0–1.
    A single output is the probability of class 1 (so two entries come back).
    """
    flat = np.asarray(output, dtype=np.float64).reshape(-1)
    with np.errstate(all="ignore"):
        if flat.size == 1:
            if loss_name == "BCEWithLogitsLoss":
                p, scale = 1.0 / (1.0 + np.exp(-flat[0])), SIGMOID
            else:
                p, scale = float(np.clip(flat[0], 0.0, 1.0)), CLIPPED
            return np.array([1.0 - p, p]), scale
        if loss_name in LOGIT_LOSSES:
            shifted = np.exp(flat - flat.max())
            return shifted / shifted.sum(), SOFTMAX
        if loss_name == "BCEWithLogitsLoss":
            return 1.0 / (1.0 + np.exp(-flat)), SIGMOID
        return np.clip(flat, 0.0, 1.0), CLIPPED


def parse_vector(text: str, n_features: int) -> np.ndarray:
    """A typed sample: `n_features` finite numbers separated by commas and/or spaces.

    ValueError with the reason otherwise (not a number, NaN or infinity, a wrong count).
    """
    parts = [p for p in re.split(r"[,\s]+", str(text).strip()) if p]
    if not parts:
        raise ValueError(f"Type {n_features} number{'s' if n_features != 1 else ''}, "
                         "separated by commas or spaces.")  # fmt: skip
    values = []
    for i, part in enumerate(parts, start=1):
        try:
            number = float(part)
        except ValueError:
            raise ValueError(f"{part!r} (value {i}) is not a number.") from None
        if not math.isfinite(number):
            raise ValueError(f"{part!r} (value {i}) is not allowed: the values must be finite "
                             "numbers.")  # fmt: skip
        if abs(number) > float(np.finfo(np.float32).max):
            raise ValueError(f"{part} (value {i}) is too large for float32.")
        values.append(number)
    if len(values) != n_features:
        raise ValueError(f"{len(values)} value{'s' if len(values) != 1 else ''} typed; a "
                         f"sample has {n_features}.")  # fmt: skip
    return np.array(values, dtype=np.float32)


def image_shape(dataset: Dataset) -> tuple[int, ...] | None:
    """The (H, W) a sample is shown as, or None when samples are no images.

    Image-shaped samples (C, H, W) with 1 or 3 channels, or (H, W); flat samples whose
    features are named "pixel r,c" (the digits set with `flat`).
    """
    shape = dataset.sample_shape
    if len(shape) == 3 and shape[0] in (1, 3):
        return shape[1:]
    if len(shape) == 2:
        return shape
    if len(shape) == 1 and dataset.feature_names:
        places = [PIXEL_NAME.match(name) for name in dataset.feature_names]
        if all(places):
            rows = max(int(m.group(1)) for m in places)
            cols = max(int(m.group(2)) for m in places)
            if rows * cols == shape[0]:
                return rows, cols
    return None


def format_value(value: float) -> str:
    """A number in few characters: 0.973, -12.4, 1.2e-05."""
    return f"{value:.4g}".replace("-", "−")
