"""The training choices the Run dock offers: optimizers, learning-rate schedules, clipping.

Below both the training session (app.session.settings, which checks a project's
settings with these) and the exporters (app.export, which write them as code): one
list of optimizers, one schema of the `lr_schedule` and `grad_clip` settings, and one
`RateSchedule` that turns a schedule into the rate of every step. The checks raise
SettingRefused with a message meant for the user (the session raises it as its own
TrainingError).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine import Tensor, nn

OPTIMIZERS = ("SGD", "Momentum", "Adam", "AdamW", "RMSProp", "Adagrad")
CLIP_MODES = ("none", "norm", "value")
SCHEDULE_KINDS = ("constant", "step", "exponential", "cosine")
# Each schedule kind's parameters and their defaults (warmup_steps goes with every kind).
SCHEDULE_OPTIONS: dict[str, dict[str, Any]] = {
    "constant": {},
    "step": {"step_epochs": 10, "factor": 0.5},
    "exponential": {"decay_rate": 0.9, "decay_epochs": 1, "stair": False},
    "cosine": {"min_factor": 0.0},
}
DEFAULTS: dict[str, Any] = {
    "optimizer": "Adam",
    "learning_rate": 0.01,
    "epochs": 10,
    "grad_clip": {"mode": "none", "value": 1.0},
    "lr_schedule": {"kind": "constant", "warmup_steps": 0},
}


class SettingRefused(ValueError):
    """A training setting that can't be used; the message says why, for the user."""


def optimizer_keywords(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments the optimizer `name` is made with from its stored options
    (Momentum, whose momentum the engine requires, gets 0.9 unless one is given)."""
    keywords = dict(options)
    if name == "Momentum":
        keywords.setdefault("momentum", 0.9)
    return keywords


def check_grad_clip(value: Any) -> dict[str, Any]:
    """The `grad_clip` setting with its defaults filled in, or SettingRefused saying why not."""
    if not isinstance(value, Mapping):
        raise SettingRefused(f"The gradient clipping setting must be an object like "
                            f"{{'mode': 'norm', 'value': 1.0}}, not {value!r}.")  # fmt: skip
    unknown = sorted(set(value) - {"mode", "value"})
    if unknown:
        raise SettingRefused(f"Gradient clipping has no setting {unknown[0]!r} (only 'mode' "
                            "and 'value').")  # fmt: skip
    spec = {**DEFAULTS["grad_clip"], **value}
    if spec["mode"] not in CLIP_MODES:
        raise SettingRefused(f"Gradient clipping must be 'none', 'norm' or 'value', not "
                            f"{spec['mode']!r}.")  # fmt: skip
    clip = spec["value"]
    if not _number(clip) or not clip > 0 or not math.isfinite(clip):
        raise SettingRefused(f"The gradient clipping value must be a number above 0, not "
                            f"{clip!r}.")  # fmt: skip
    return {"mode": spec["mode"], "value": float(clip)}


def check_lr_schedule(value: Any) -> dict[str, Any]:
    """The `lr_schedule` setting with its kind's defaults filled in, or SettingRefused."""
    if not isinstance(value, Mapping):
        raise SettingRefused(f"The learning-rate schedule must be an object like "
                            f"{{'kind': 'cosine'}}, not {value!r}.")  # fmt: skip
    kind = value.get("kind", "constant")
    if kind not in SCHEDULE_KINDS:
        raise SettingRefused(f"The learning-rate schedule must be one of "
                            f"{', '.join(SCHEDULE_KINDS)}, not {kind!r}.")  # fmt: skip
    allowed = SCHEDULE_OPTIONS[kind]
    unknown = sorted(set(value) - {"kind", "warmup_steps", *allowed})
    if unknown:
        takes = ", ".join(["warmup_steps", *allowed])
        raise SettingRefused(f"The {kind} schedule has no setting {unknown[0]!r} (it takes "
                            f"{takes}).")  # fmt: skip
    spec = {"kind": kind, **allowed, **value}
    _whole(spec.get("warmup_steps", 0), "number of warmup steps", 0)
    spec.setdefault("warmup_steps", 0)
    for key in ("step_epochs", "decay_epochs"):
        if key in spec:
            _whole(spec[key], f"{kind} schedule's {key.replace('_', ' ')}", 1)
    for key, what in (("factor", "factor"), ("decay_rate", "decay rate")):
        if key in spec and (not _number(spec[key]) or not 0 < spec[key] <= 1):
            raise SettingRefused(f"The {kind} schedule's {what} must be above 0 and at most 1, "
                                f"not {spec[key]!r}.")  # fmt: skip
    if "stair" in spec and not isinstance(spec["stair"], bool):
        raise SettingRefused(f"The exponential schedule's stair must be true or false, not "
                            f"{spec['stair']!r}.")  # fmt: skip
    low = spec.get("min_factor", 0.0)
    if not _number(low) or not 0 <= low < 1:
        raise SettingRefused(f"The cosine schedule's minimum (a fraction of the learning rate) "
                            f"must be at least 0 and below 1, not {low!r}.")  # fmt: skip
    return spec


@dataclass(frozen=True)
class RateSchedule:
    """The learning rate over a run as a multiple of the base rate, per step (0 = the first).

    `warmup_steps` rise as MindSpore's `nn.WarmUpLR` (0 at the first step, the full rate at
    step `warmup_steps`); then the `kind` runs from the end of the warmup on, step `i`
    being its step `i - warmup_steps`:

    - constant: 1;
    - step: `factor ** floor(i / (step_epochs * steps_per_epoch))` (`nn.ExponentialDecayLR`
      with `is_stair`);
    - exponential: `decay_rate ** (i / (decay_epochs * steps_per_epoch))`, floored with
      `stair` (`nn.ExponentialDecayLR`);
    - cosine: from 1 down to `min_factor` over the rest of the planned run, `epochs *
      steps_per_epoch - warmup_steps` steps (`nn.CosineDecayLR`), then held there.
    """

    kind: str = "constant"
    options: Mapping[str, Any] = field(default_factory=dict)
    warmup_steps: int = 0
    epochs: int = DEFAULTS["epochs"]

    @property
    def constant(self) -> bool:
        return self.kind == "constant" and not self.warmup_steps

    def factors(self, steps_per_epoch: int, total_steps: int | None = None) -> np.ndarray:
        """The multiple of the base rate at each step, for `total_steps` steps (the planned
        run, `epochs * steps_per_epoch`, by default); float64."""
        planned = self.epochs * steps_per_epoch
        total = planned if total_steps is None else total_steps
        steps = np.arange(max(total, 0))
        if self.constant:
            return np.ones(len(steps))
        warmup = self.warmup_steps
        after = Tensor(np.maximum(steps - warmup, 0))
        o = self.options
        if self.kind == "constant":
            decayed = np.ones(len(steps))
        elif self.kind == "step":
            cell = nn.ExponentialDecayLR(1.0, o["factor"], o["step_epochs"] * steps_per_epoch,
                                         is_stair=True)  # fmt: skip
            decayed = cell(after).asnumpy()
        elif self.kind == "exponential":
            cell = nn.ExponentialDecayLR(1.0, o["decay_rate"],
                                         o["decay_epochs"] * steps_per_epoch, o["stair"])
            decayed = cell(after).asnumpy()
        else:
            span = max(planned - warmup, 1)
            decayed = nn.CosineDecayLR(float(o["min_factor"]), 1.0, span)(after).asnumpy()
        factors = decayed.astype(np.float64)
        if warmup:
            head = steps < warmup
            rising = nn.WarmUpLR(1.0, warmup)(Tensor(steps[head])).asnumpy()
            factors[head] = rising
        return factors

    def rates(self, base: float, steps_per_epoch: int,
              total_steps: int | None = None) -> np.ndarray:  # fmt: skip
        """The learning rate at each step for base rate `base`."""
        return base * self.factors(steps_per_epoch, total_steps)

    def describe(self) -> str:
        """e.g. 'warmup 100 steps, then cosine down to 0.1×'; 'constant'."""
        o = self.options
        text = {
            "constant": "constant",
            "step": f"× {o.get('factor')} every {_epochs(o.get('step_epochs'))}",
            "exponential": f"× {o.get('decay_rate')} per {_epochs(o.get('decay_epochs'))}"
                           + (", in stairs" if o.get("stair") else ""),
            "cosine": f"cosine down to {o.get('min_factor')}×",
        }[self.kind]
        if self.warmup_steps:
            return f"warmup {self.warmup_steps} steps, then {text}"
        return text


def _epochs(count: Any) -> str:
    return "1 epoch" if count == 1 else f"{count} epochs"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _whole(value: Any, what: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SettingRefused(
            f"The {what} must be a whole number of {minimum} or more, not {value!r}."
        )
