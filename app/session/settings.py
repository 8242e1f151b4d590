"""Training settings as the project stores them (`project.training`), checked, with defaults.

`project.training` is plain JSON so it survives the project file as it is:

    {"dataset": "spirals" | {"builtin": "moons", "options": {"n_samples": 300}}
                | {"csv": "points.csv", "label_column": "label", ..., "missing": "refuse"}
                | {"npz": "data.npz", "x_key": "x", "y_key": "y", "missing": "drop"}
                | {"csv": "series.csv", "windows": {"window": 24, "horizon": 1,
                   "stride": 1, "targets": ["temp"], "features": null}}
                | {"text": "book.txt", "context": 32, "stride": 1,
                   "vocabulary": ["\\n", " ", "A", ...]},
     "loss": "CrossEntropyLoss", "optimizer": "Adam", "optimizer_options": {},
     "learning_rate": 0.01, "batch_size": 32, "epochs": 10,
     "validation_fraction": 0.2, "seed": 0, "history_steps": 2000,
     "grad_clip": {"mode": "none" | "norm" | "value", "value": 1.0},
     "lr_schedule": {"kind": "constant" | "step" | "exponential" | "cosine",
                     <its parameters: app.catalogue.training>, "warmup_steps": 0},
     "augmentation": null | {"flip": 0.5, "shift": 2, "rotate": 10, "brightness": 0.1,
                             "contrast": 0.1, "noise": 0.05, "seed": 0, "enabled": true},
     "state": {...}}    # progress written by the session, see app.session.progress

`grad_clip` clips the gradients before every update: "norm" scales them so their global
L2 norm is at most `value` (ops.clip_by_global_norm), "value" clamps each element into
[-value, value] (ops.clip_by_value). `lr_schedule` moves the learning rate over the run
(see `RateSchedule`): the Run dock's learning rate is its base rate, so a rate typed
while training runs rescales the whole schedule from the next step on. A schedule spans a
run of `epochs` epochs: a run that goes on after a pause or a stop goes on along it, a
new run (Start after one that finished) follows it from its start again. `augmentation`
changes every training batch (never validation or prediction) with its own seed; what
each amount means, and which data takes which, is in app.datasets.augment. A CSV's or
NPZ's rows with an empty, NaN or infinite value are refused (`missing` "refuse", the
default), or dropped and told in the data set's note ("drop").

A relative CSV/NPZ/text path is read from the project file's folder. A CSV setting with
`windows` is a time series cut into sliding windows (app.datasets.csv_windows); a text
file is a char-level language-modelling set whose `vocabulary` (the character of each
token id) is saved with the project once read, so token ids keep their meaning when the
file changes (app.datasets.text). `history_steps` is how
many steps every curve and hook capture keeps exactly at the start and at the end of a
run; the middle is a uniform sample of as many (see app.session.history).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from app.catalogue import LOSSES as CATALOGUE_LOSSES
from app.catalogue import training as training_choices
from app.catalogue.training import (
    CLIP_MODES,
    OPTIMIZERS,
    SCHEDULE_KINDS,
    SCHEDULE_OPTIONS,
    RateSchedule,
    SettingRefused,
    optimizer_keywords,
)
from app.datasets import Dataset, augment
from app.datasets.loading import KINDS, DatasetRefused, read_dataset
from app.session.history import HISTORY_STEPS
from app.session.progress import TrainingState
from engine import nn

LOSSES = tuple(CATALOGUE_LOSSES)  # every loss the Output node offers
SETTING_KEYS = (
    "dataset", "loss", "optimizer", "optimizer_options", "learning_rate", "batch_size",
    "epochs", "validation_fraction", "seed", "history_steps", "grad_clip", "lr_schedule",
    "augmentation", "state",
)  # fmt: skip
HISTORY_STEPS_RANGE = (100, 1_000_000)
DEFAULTS: dict[str, Any] = {
    **training_choices.DEFAULTS,  # optimizer, learning_rate, epochs, grad_clip, lr_schedule
    "batch_size": 32,
    "validation_fraction": 0.2,
    "seed": 0,
    "history_steps": HISTORY_STEPS,
}
__all__ = [
    "CLIP_MODES", "DEFAULTS", "HISTORY_STEPS_RANGE", "LOSSES", "OPTIMIZERS", "SCHEDULE_KINDS",
    "SCHEDULE_OPTIONS", "SETTING_KEYS", "RateSchedule", "SchedulePlan", "TrainingError",
    "TrainingSettings", "check_augmentation", "check_grad_clip", "check_history_steps",
    "check_learning_rate", "check_lr_schedule", "load_dataset", "make_loss", "make_optimizer",
    "plan_for", "run_start_epoch", "steps_per_epoch",
]  # fmt: skip


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
    grad_clip: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS["grad_clip"]))
    lr_schedule: Mapping[str, Any] = field(
        default_factory=lambda: dict(DEFAULTS["lr_schedule"]))
    augmentation: Mapping[str, Any] | None = None  # None: the batches as they are

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
        check_grad_clip(self.grad_clip)
        check_lr_schedule(self.lr_schedule)
        check_augmentation(self.augmentation)
        fraction = self.validation_fraction
        if not _number(fraction) or not 0.0 <= fraction < 1.0:
            raise TrainingError(
                f"The validation fraction must be at least 0 and below 1, not {fraction!r}."
            )

    def schedule(self) -> RateSchedule:
        """The learning-rate schedule over `epochs` epochs (the settings are checked)."""
        spec = check_lr_schedule(self.lr_schedule)
        options = {k: v for k, v in spec.items() if k not in ("kind", "warmup_steps")}
        return RateSchedule(spec["kind"], options, spec["warmup_steps"], self.epochs)

    def clipping(self) -> tuple[str, float]:
        """(mode, value) of the gradient clipping: ('none', …), ('norm', …) or ('value', …)."""
        spec = check_grad_clip(self.grad_clip)
        return spec["mode"], spec["value"]

    def describe_dataset(self) -> str:
        spec = self.dataset
        if isinstance(spec, str):
            return spec
        if not isinstance(spec, Mapping):  # a damaged setting (a number, a list): say what
            return f"data set {spec!r}"[:80]
        for kind in KINDS:
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


def check_grad_clip(value: Any) -> dict[str, Any]:
    """The `grad_clip` setting with its defaults filled in, or TrainingError saying why not."""
    try:
        return training_choices.check_grad_clip(value)
    except SettingRefused as exc:
        raise TrainingError(str(exc)) from None


def check_lr_schedule(value: Any) -> dict[str, Any]:
    """The `lr_schedule` setting with its kind's defaults filled in, or TrainingError."""
    try:
        return training_choices.check_lr_schedule(value)
    except SettingRefused as exc:
        raise TrainingError(str(exc)) from None


def check_augmentation(value: Any) -> dict[str, Any] | None:
    """The `augmentation` setting with its defaults filled in (None for none), or
    TrainingError naming the amount that is refused and what it may be."""
    try:
        return augment.check_augmentation(value)
    except augment.AugmentationRefused as exc:
        raise TrainingError(str(exc)) from None


@dataclass(frozen=True, eq=False)
class SchedulePlan:
    """A run's planned learning rate per step (`rates[0]` is step 1's), for a view to draw."""

    rates: np.ndarray
    steps_per_epoch: int
    text: str  # e.g. 'warmup 100 steps, then cosine down to 0×'
    first_step: int = 1  # the project's step number of `rates[0]` (its run's first step)

    def same_as(self, other: SchedulePlan | None) -> bool:
        return (other is not None and self.text == other.text
                and (self.steps_per_epoch, self.first_step)
                == (other.steps_per_epoch, other.first_step)
                and np.array_equal(self.rates, other.rates))  # fmt: skip


def plan_for(training: Mapping[str, Any], samples: int) -> SchedulePlan | None:
    """The rates `training` plans over a data set of `samples` samples; None for a constant
    rate (nothing to plan). TrainingError if a setting is refused."""
    settings = TrainingSettings.from_project({**training, "dataset": training.get("dataset")
                                              or "-"})  # fmt: skip
    schedule = settings.schedule()
    if schedule.constant:
        return None
    per_epoch = steps_per_epoch(samples, settings.validation_fraction, settings.batch_size)
    try:
        state = TrainingState.from_json(training.get("state"))
    except ValueError:  # damaged progress: a session would refuse it; plan a fresh run
        state = TrainingState()
    state.use_batch_size(settings.batch_size)  # as the session does
    target = state.target_epoch if state.unfinished else state.epoch + settings.epochs
    start = run_start_epoch(state.epoch, target, settings.epochs)
    done = (state.epoch - start) * per_epoch + state.batch  # steps of the run already taken
    rates = schedule.rates(settings.learning_rate, per_epoch, (target - start) * per_epoch)
    return SchedulePlan(rates, per_epoch, schedule.describe(), max(state.step - done, 0) + 1)


def run_start_epoch(epoch: int, target_epoch: int, epochs: int) -> int:
    """The epoch at which the schedule of a run heading for `target_epoch` began, the run
    being at `epoch`: `epochs` before the target for a run that goes on (after a pause or
    a stop), `epoch` itself for a new one (and for one longer than `epochs`)."""
    return min(epoch, max(target_epoch - epochs, 0))


def steps_per_epoch(samples: int, validation_fraction: float, batch_size: int) -> int:
    """Training steps per epoch of a data set of `samples`, as the session splits it
    (Dataset.split holds round(samples * fraction) back) and batches it."""
    held = round(samples * validation_fraction) if validation_fraction else 0
    return max(-(-(samples - held) // batch_size), 1)


def load_dataset(spec: str | Mapping[str, Any], folder: Path | None = None) -> Dataset:
    """The data set a `dataset` setting names; TrainingError with the reason if it can't be had."""
    try:
        return read_dataset(spec, folder)  # the Run dock's form reads through it too
    except DatasetRefused as exc:
        raise TrainingError(str(exc)) from None


def make_loss(name: str) -> nn.Cell:
    if name == "SoftmaxCrossEntropyWithLogits":
        return nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    if name == "SmoothL1Loss":  # MindSpore's default reduction is 'none': training needs one
        return nn.SmoothL1Loss(reduction="mean")
    return getattr(nn, name)()


def make_optimizer(settings: TrainingSettings, params: list) -> nn.Optimizer:
    options = optimizer_keywords(settings.optimizer, settings.optimizer_options)
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
