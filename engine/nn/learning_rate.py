"""Learning rates that change over training (MindSpore 2.x `nn.*_lr` and `LearningRateSchedule`).

MindSpore offers two forms, and so does the engine:

- functions (`exponential_decay_lr`, `cosine_decay_lr`, `warmup_lr`, ...) return a list
  with one rate per step, computed epoch by epoch (`current_epoch = floor(i /
  step_per_epoch)`); pass the list as an optimizer's `learning_rate` and step `i` uses
  entry `i`;
- `LearningRateSchedule` Cells (`ExponentialDecayLR`, `CosineDecayLR`, `WarmUpLR`, ...)
  return the rate for a `global_step` Tensor, step by step; an optimizer given one as its
  `learning_rate` calls it before every step with the number of steps taken.

The formulas are MindSpore's, including its quirks (`NaturalExpDecayLR` decays with the
step itself unless `is_stair`, as its code does). The schedules return float32, as
MindSpore's; they also take a 1-D Tensor of steps and return the rate of each (the
formulas are elementwise), which is how a whole run's rates are had in one call.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from engine.nn.cell import Cell
from engine.tensor import Tensor, wrap

__all__ = [
    "piecewise_constant_lr",
    "exponential_decay_lr",
    "natural_exp_decay_lr",
    "inverse_decay_lr",
    "cosine_decay_lr",
    "polynomial_decay_lr",
    "warmup_lr",
    "LearningRateSchedule",
    "ExponentialDecayLR",
    "NaturalExpDecayLR",
    "InverseDecayLR",
    "CosineDecayLR",
    "PolynomialDecayLR",
    "WarmUpLR",
]


# ----------------------------------------------------------------------------- checks


def _int(who: str, name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{who}: {name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{who}: {name} must be at least {minimum}, got {value}")
    return int(value)


def _float(who: str, name: str, value, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{who}: {name} must be a float, got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or (value <= 0 if positive else value < 0):
        bound = "greater than 0" if positive else "at least 0"
        raise ValueError(f"{who}: {name} must be a finite number {bound}, got {value}")
    return value


def _bool(who: str, name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{who}: {name} must be a bool, got {type(value).__name__}")
    return bool(value)


def _per_epoch(who: str, total_step, step_per_epoch, decay_epoch, name="decay_epoch"):
    return (_int(who, "total_step", total_step), _int(who, "step_per_epoch", step_per_epoch),
            _int(who, name, decay_epoch))  # fmt: skip


def _decay_inputs(who, learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                  is_stair):  # fmt: skip
    return (_float(who, "learning_rate", learning_rate, positive=True),
            _float(who, "decay_rate", decay_rate, positive=True),
            *_per_epoch(who, total_step, step_per_epoch, decay_epoch),
            _bool(who, "is_stair", is_stair))  # fmt: skip


# ----------------------------------------------------------------------------- per-step lists


def piecewise_constant_lr(milestone, learning_rates) -> list:
    """`learning_rates[t]` for every step `i` in `[milestone[t-1], milestone[t])`.

    `milestone` is a non-decreasing list of positive step counts; the list has
    `milestone[-1]` entries. e.g. ([2, 5, 10], [0.1, 0.05, 0.01]) gives 0.1 twice,
    0.05 three times, then 0.01 five times.
    """
    who = "piecewise_constant_lr"
    if not isinstance(milestone, (list, tuple)) or not isinstance(learning_rates, (list, tuple)):
        raise TypeError(f"{who}: milestone and learning_rates must be lists or tuples")
    if len(milestone) != len(learning_rates):
        raise ValueError(f"{who}: milestone has {len(milestone)} entries but learning_rates has "
                         f"{len(learning_rates)}; give one rate per milestone")  # fmt: skip
    lr: list = []
    last = 0
    for i, (item, rate) in enumerate(zip(milestone, learning_rates, strict=True)):
        item = _int(who, f"milestone[{i}]", item)
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real):
            raise TypeError(f"{who}: learning_rates[{i}] must be a float, got {rate!r}")
        if item < last:
            raise ValueError(f"{who}: milestone[{i}] ({item}) must not be less than "
                             f"milestone[{i - 1}] ({last})")  # fmt: skip
        lr += [rate] * (item - last)
        last = item
    return lr


def exponential_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False) -> list:  # fmt: skip
    """`learning_rate * decay_rate ** (current_epoch / decay_epoch)` per step (floored with
    `is_stair`), `current_epoch = floor(i / step_per_epoch)`."""
    lr, rate, total, per_epoch, decay, stair = _decay_inputs(
        "exponential_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch,
        decay_epoch, is_stair)  # fmt: skip
    out = []
    for i in range(total):
        p = math.floor(i / per_epoch) / decay
        out.append(lr * rate ** (math.floor(p) if stair else p))
    return out


def natural_exp_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                         is_stair=False) -> list:  # fmt: skip
    """`learning_rate * e ** (-decay_rate * current_epoch)` per step; with `is_stair` the
    epoch is first rounded down to a multiple of `decay_epoch`."""
    lr, rate, total, per_epoch, decay, stair = _decay_inputs(
        "natural_exp_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch,
        decay_epoch, is_stair)  # fmt: skip
    out = []
    for i in range(total):
        epoch = math.floor(i / per_epoch)
        if stair:
            epoch = math.floor(epoch / decay) * decay
        out.append(lr * math.e ** (-rate * epoch))
    return out


def inverse_decay_lr(learning_rate, decay_rate, total_step, step_per_epoch, decay_epoch,
                     is_stair=False) -> list:  # fmt: skip
    """`learning_rate / (1 + decay_rate * current_epoch / decay_epoch)` per step (the ratio
    floored with `is_stair`)."""
    lr, rate, total, per_epoch, decay, stair = _decay_inputs(
        "inverse_decay_lr", learning_rate, decay_rate, total_step, step_per_epoch,
        decay_epoch, is_stair)  # fmt: skip
    out = []
    for i in range(total):
        epoch = math.floor(i / per_epoch)
        p = math.floor(epoch / decay) if stair else epoch / decay
        out.append(lr / (1 + rate * p))
    return out


def cosine_decay_lr(min_lr, max_lr, total_step, step_per_epoch, decay_epoch) -> list:
    """`min_lr + 0.5 (max_lr - min_lr)(1 + cos(pi min(current_epoch, decay_epoch) /
    decay_epoch))` per step: from `max_lr` down to `min_lr` over `decay_epoch` epochs."""
    who = "cosine_decay_lr"
    low = _float(who, "min_lr", min_lr, positive=False)
    high = _float(who, "max_lr", max_lr, positive=True)
    total, per_epoch, decay = _per_epoch(who, total_step, step_per_epoch, decay_epoch)
    if low >= high:
        raise ValueError(f"{who}: max_lr ({high}) must be greater than min_lr ({low})")
    delta = 0.5 * (high - low)
    out = []
    for i in range(total):
        epoch = min(math.floor(i / per_epoch), decay)
        out.append(low + delta * (1 + math.cos(math.pi * epoch / decay)))
    return out


def polynomial_decay_lr(learning_rate, end_learning_rate, total_step, step_per_epoch,
                        decay_epoch, power, update_decay_epoch=False) -> list:  # fmt: skip
    """`(learning_rate - end_learning_rate) (1 - e / d) ** power + end_learning_rate` per
    step, `e = min(current_epoch, decay_epoch)` and `d = decay_epoch`; with
    `update_decay_epoch`, `e = current_epoch` and `d` the next multiple of `decay_epoch`."""
    who = "polynomial_decay_lr"
    lr = _float(who, "learning_rate", learning_rate, positive=True)
    end = _float(who, "end_learning_rate", end_learning_rate, positive=False)
    power = _float(who, "power", power, positive=True)
    total, per_epoch, decay = _per_epoch(who, total_step, step_per_epoch, decay_epoch)
    update = _bool(who, "update_decay_epoch", update_decay_epoch)
    out = []
    for i in range(total):
        epoch = math.floor(i / per_epoch)
        if update:
            span, e = decay * max(math.ceil(epoch / decay), 1), epoch
        else:
            span, e = decay, min(epoch, decay)
        out.append((lr - end) * (1 - e / span) ** power + end)
    return out


def warmup_lr(learning_rate, total_step, step_per_epoch, warmup_epoch) -> list:
    """`learning_rate * min(current_epoch, warmup_epoch) / warmup_epoch` per step: 0 in the
    first epoch, the full rate from epoch `warmup_epoch` on."""
    who = "warmup_lr"
    lr = _float(who, "learning_rate", learning_rate, positive=False)
    total, per_epoch, warmup = _per_epoch(who, total_step, step_per_epoch, warmup_epoch,
                                          "warmup_epoch")  # fmt: skip
    return [lr * min(math.floor(i / per_epoch), warmup) / warmup for i in range(total)]


# ----------------------------------------------------------------------------- schedules


class LearningRateSchedule(Cell):
    """Base of the schedules: `schedule(global_step)` is the rate for that step (a Tensor).

    Subclasses give `_rate(step)`: the rate for a float64 array of steps, in float64.
    """

    def construct(self, global_step):
        steps = _steps(global_step)
        return wrap(np.asarray(self._rate(steps), dtype=np.float32))

    def _rate(self, step: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} must define how the rate follows "
                                  "the step")  # fmt: skip


def _steps(global_step) -> np.ndarray:
    data = global_step._data if isinstance(global_step, Tensor) else np.asarray(global_step)
    if data.dtype.kind not in "iuf" or data.ndim > 1:
        raise TypeError(f"global_step must be a number or a 1-D Tensor of step numbers, got "
                        f"{data.dtype} of shape {data.shape}")  # fmt: skip
    # MindSpore casts the step to float32 before the formula; steps are exact in float32
    # up to 2**24, well past any run here.
    return data.astype(np.float64)


class _Decay(LearningRateSchedule):
    def __init__(self, learning_rate, decay_rate, decay_steps, is_stair=False):
        super().__init__()
        who = type(self).__name__
        self.decay_steps = _int(who, "decay_steps", decay_steps)
        self.learning_rate = _float(who, "learning_rate", learning_rate, positive=True)
        self.decay_rate = _float(who, "decay_rate", decay_rate, positive=True)
        self.is_stair = _bool(who, "is_stair", is_stair)


class ExponentialDecayLR(_Decay):
    """`learning_rate * decay_rate ** p`, `p = step / decay_steps` (floored with `is_stair`)."""

    def _rate(self, step):
        p = step / self.decay_steps
        if self.is_stair:
            p = np.floor(p)
        return self.learning_rate * np.power(self.decay_rate, p)


class NaturalExpDecayLR(_Decay):
    """`learning_rate * e ** (-decay_rate * p)` with `p = step`, or with `is_stair` the step
    rounded down to a multiple of `decay_steps` (MindSpore's code; its docs say
    `step / decay_steps`)."""

    def _rate(self, step):
        p = step
        if self.is_stair:
            p = np.floor(step / self.decay_steps) * self.decay_steps
        return self.learning_rate * np.exp(-self.decay_rate * p)


class InverseDecayLR(_Decay):
    """`learning_rate / (1 + decay_rate * p)`, `p = step / decay_steps` (floored with
    `is_stair`)."""

    def _rate(self, step):
        p = step / self.decay_steps
        if self.is_stair:
            p = np.floor(p)
        return self.learning_rate / (1 + self.decay_rate * p)


class CosineDecayLR(LearningRateSchedule):
    """`min_lr + 0.5 (max_lr - min_lr)(1 + cos(pi min(step, decay_steps) / decay_steps))`:
    from `max_lr` at step 0 down to `min_lr` at `decay_steps`, then held there."""

    def __init__(self, min_lr, max_lr, decay_steps):
        super().__init__()
        who = "CosineDecayLR"
        self.min_lr = _float(who, "min_lr", min_lr, positive=False)
        self.max_lr = _float(who, "max_lr", max_lr, positive=True)
        self.decay_steps = _int(who, "decay_steps", decay_steps)
        if self.min_lr >= self.max_lr:
            raise ValueError(f"{who}: max_lr ({self.max_lr}) must be greater than min_lr "
                             f"({self.min_lr})")  # fmt: skip
        self.delta = 0.5 * (self.max_lr - self.min_lr)

    def _rate(self, step):
        p = np.minimum(step, self.decay_steps)
        return self.min_lr + self.delta * (1.0 + np.cos(math.pi * p / self.decay_steps))


class PolynomialDecayLR(LearningRateSchedule):
    """`(learning_rate - end_learning_rate) (1 - s / d) ** power + end_learning_rate` with
    `s = min(step, decay_steps)`, `d = decay_steps`; with `update_decay_steps`, `s = step`
    and `d` the next multiple of `decay_steps` (at least `decay_steps`)."""

    def __init__(self, learning_rate, end_learning_rate, decay_steps, power,
                 update_decay_steps=False):  # fmt: skip
        super().__init__()
        who = "PolynomialDecayLR"
        self.start_learning_rate = _float(who, "learning_rate", learning_rate, positive=True)
        self.end_learning_rate = _float(who, "end_learning_rate", end_learning_rate,
                                        positive=False)  # fmt: skip
        self.decay_steps = _int(who, "decay_steps", decay_steps)
        self.update_decay_steps = _bool(who, "update_decay_steps", update_decay_steps)
        self.power = _float(who, "power", power, positive=True)
        self.diff_learning_rate = self.start_learning_rate - self.end_learning_rate

    def _rate(self, step):
        span = float(self.decay_steps)
        if self.update_decay_steps:
            span = span * np.maximum(np.ceil(step / span), 1.0)
        else:
            step = np.minimum(step, span)
        p = step / span
        return self.diff_learning_rate * np.power(1.0 - p, self.power) + self.end_learning_rate


class WarmUpLR(LearningRateSchedule):
    """`learning_rate * min(step, warmup_steps) / warmup_steps`: 0 at step 0, rising
    linearly to `learning_rate` at `warmup_steps`, then held."""

    def __init__(self, learning_rate, warmup_steps):
        super().__init__()
        who = "WarmUpLR"
        self.learning_rate = _float(who, "learning_rate", learning_rate, positive=False)
        self.warmup_steps = _int(who, "warmup_steps", warmup_steps)

    def _rate(self, step):
        return self.learning_rate * np.minimum(step, self.warmup_steps) / self.warmup_steps
