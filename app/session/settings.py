"""Training settings as the project stores them (`project.training`), checked, with defaults.

`project.training` is plain JSON so it survives the project file as it is:

    {"dataset": "spirals" | {"builtin": "moons", "options": {"n_samples": 300}}
                | {"csv": "points.csv", "label_column": "label", ...}
                | {"npz": "data.npz", "x_key": "x", "y_key": "y"},
     "loss": "CrossEntropyLoss", "optimizer": "Adam", "optimizer_options": {},
     "learning_rate": 0.01, "batch_size": 32, "epochs": 10,
     "validation_fraction": 0.2, "seed": 0, "history_steps": 2000,
     "state": {...}}    # progress written by the session, see app.session.progress

A relative CSV/NPZ path is read from the project file's folder. `history_steps` is how
many steps every curve and hook capture keeps exactly at the start and at the end of a
run; the middle is a uniform sample of as many (see app.session.history).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.catalogue import LOSSES as CATALOGUE_LOSSES
from app.datasets import Dataset
from app.datasets.loading import DatasetRefused, read_dataset
from app.session.history import HISTORY_STEPS
from engine import nn

LOSSES = tuple(CATALOGUE_LOSSES)  # every loss the Output node offers
OPTIMIZERS = ("SGD", "Momentum", "Adam", "AdamW")
SETTING_KEYS = (
    "dataset", "loss", "optimizer", "optimizer_options", "learning_rate", "batch_size",
    "epochs", "validation_fraction", "seed", "history_steps", "state",
)  # fmt: skip
HISTORY_STEPS_RANGE = (100, 1_000_000)
DEFAULTS: dict[str, Any] = {
    "optimizer": "Adam",
    "learning_rate": 0.01,
    "batch_size": 32,
    "epochs": 10,
    "validation_fraction": 0.2,
    "seed": 0,
    "history_steps": HISTORY_STEPS,
}


class TrainingError(Exception):
    """Training can't start or had to stop; the message is meant for the user."""


@dataclass(frozen=True)
class TrainingSettings:
    """What to train on and how; `from_project` checks every value with a readable message."""

    dataset: str | Mapping[str, Any]
    loss: str | None = None  # None: the Output node's loss, else one that suits the data
    optimizer: str = DEFAULTS["optimizer"]
    optimizer_options: Mapping[str, Any] = field(default_factory=dict)
    learning_rate: float = DEFAULTS["learning_rate"]
    batch_size: int = DEFAULTS["batch_size"]
    epochs: int = DEFAULTS["epochs"]
    validation_fraction: float = DEFAULTS["validation_fraction"]
    seed: int = DEFAULTS["seed"]
    history_steps: int = DEFAULTS["history_steps"]

    @classmethod
    def from_project(cls, training: Mapping[str, Any]) -> TrainingSettings:
        # Entries this version does not know (a newer app's, the GUI's own) are left alone.
        if training.get("dataset") is None:
            raise TrainingError("Choose a data set to train on (training setting 'dataset').")
        given = {k: v for k, v in training.items() if k in SETTING_KEYS and k != "state"}
        values = {**DEFAULTS, **given}
        settings = cls(**values)
        settings.check()
        return settings

    def check(self) -> None:
        if self.loss is not None and self.loss not in LOSSES:
            raise TrainingError(f"Unknown loss {self.loss!r}; choose one of {', '.join(LOSSES)}.")
        if self.optimizer not in OPTIMIZERS:
            raise TrainingError(
                f"Unknown optimizer {self.optimizer!r}; choose one of {', '.join(OPTIMIZERS)}."
            )
        if not isinstance(self.optimizer_options, Mapping):
            raise TrainingError("The optimizer options must be a mapping of name to value.")
        check_learning_rate(self.learning_rate)
        _whole(self.batch_size, "batch size", 1)
        _whole(self.epochs, "number of epochs", 1)
        _whole(self.seed, "seed", 0)
        check_history_steps(self.history_steps)
        fraction = self.validation_fraction
        if not _number(fraction) or not 0.0 <= fraction < 1.0:
            raise TrainingError(
                f"The validation fraction must be at least 0 and below 1, not {fraction!r}."
            )

    def describe_dataset(self) -> str:
        spec = self.dataset
        if isinstance(spec, str):
            return spec
        if not isinstance(spec, Mapping):  # a damaged setting (a number, a list): say what
            return f"data set {spec!r}"[:80]
        for kind in ("builtin", "csv", "npz"):
            if kind in spec:
                return str(spec[kind])
        return "data set"


def check_learning_rate(value: Any) -> float:
    """The learning rate as a float, or TrainingError if it is not a finite number > 0."""
    if not _number(value) or not value > 0 or not math.isfinite(value):
        raise TrainingError(f"The learning rate must be a number above 0, not {value!r}.")
    return float(value)


def check_history_steps(value: Any) -> int:
    """The history setting, or TrainingError if it is not a whole number in range."""
    low, high = HISTORY_STEPS_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TrainingError(
            f"The history (steps kept exactly at the start and at the end of a run) must be "
            f"a whole number from {low:,} to {high:,}, not {value!r}."
        )
    return value


def load_dataset(spec: str | Mapping[str, Any], folder: Path | None = None) -> Dataset:
    """The data set a `dataset` setting names; TrainingError with the reason if it can't be had."""
    try:
        return read_dataset(spec, folder)  # the Run dock's form reads through it too
    except DatasetRefused as exc:
        raise TrainingError(str(exc)) from None


def make_loss(name: str) -> nn.Cell:
    if name == "SoftmaxCrossEntropyWithLogits":
        return nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return getattr(nn, name)()


def make_optimizer(settings: TrainingSettings, params: list) -> nn.Optimizer:
    options = dict(settings.optimizer_options)
    if settings.optimizer == "Momentum":
        options.setdefault("momentum", 0.9)
    try:
        return getattr(nn, settings.optimizer)(
            params, learning_rate=float(settings.learning_rate), **options
        )
    except (TypeError, ValueError) as exc:
        raise TrainingError(f"The {settings.optimizer} optimizer can't be made: {exc}.") from None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _whole(value: Any, what: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TrainingError(
            f"The {what} must be a whole number of {minimum} or more, not {value!r}."
        )
