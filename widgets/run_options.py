"""The Run panel's optimizer options: which the form shows, how, and what the engine says."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np

from app.session import TrainingError, TrainingSettings
from app.session.settings import make_optimizer
from engine import nn
from engine.parameter import Parameter

# The options shown for each optimizer, in order; others a project holds (loss_scale, …)
# are kept as they are.
SHOWN_OPTIONS = {
    "SGD": ("momentum", "dampening", "nesterov", "weight_decay"),
    "Momentum": ("momentum", "use_nesterov", "weight_decay"),
    "Adam": ("beta1", "beta2", "eps", "weight_decay", "use_nesterov"),
    "AdamW": ("beta1", "beta2", "eps", "weight_decay"),
    "RMSProp": ("decay", "momentum", "epsilon", "centered", "weight_decay"),
    "Adagrad": ("accum", "update_slots", "weight_decay"),
}
# option -> (label, minimum, maximum, step, tooltip); a bool option is a check box
OPTION_LOOKS: dict[str, tuple] = {
    "momentum": ("Momentum", 0.0, 1.0, 0.05, "How much of the previous step carries on."),
    "dampening": ("Dampening", 0.0, 1.0, 0.05, "How much of each new gradient is held back."),
    "weight_decay": ("Weight decay", 0.0, 1.0, 1e-4, "Pulls every weight towards zero."),
    "beta1": ("Beta 1", 0.0, 1.0, 0.01, "Decay of the running mean of the gradients."),
    "beta2": ("Beta 2", 0.0, 1.0, 0.001, "Decay of the running mean of squared gradients."),
    "eps": ("Epsilon", 0.0, 1.0, 1e-8, "Added to the divisor so it is never zero."),
    "nesterov": ("Nesterov", "Look ahead along the momentum (needs momentum > 0)."),
    "use_nesterov": ("Nesterov", "Look ahead along the momentum."),
    "decay": ("Decay", 0.0, 1.0, 0.01, "Decay of the running mean of squared gradients."),
    "epsilon": ("Epsilon", 0.0, 1.0, 1e-10, "Added under the square root so it is never zero."),
    "centered": ("Centered", "Divide by the gradients' estimated variance, not their mean "
                 "square."),
    "accum": ("Accumulator start", 0.0, 1e6, 0.1, "Where the sum of squared gradients starts."),
    "update_slots": ("Accumulate", "Add each squared gradient to the accumulator (off: it "
                     "keeps its start)."),
}


def optimizer_defaults(name: str) -> dict[str, Any]:
    """Every keyword option the optimizer `name` takes, with its default value."""
    params = inspect.signature(getattr(nn, name).__init__).parameters
    skip = ("self", "params", "learning_rate")
    defaults = {k: p.default for k, p in params.items() if k not in skip}
    if name == "Momentum":
        defaults["momentum"] = 0.9  # required by the engine; make_optimizer fills in 0.9
    return defaults


def optimizer_problem(name: str, options: Mapping[str, Any]) -> str | None:
    """Why the engine refuses these options (its own words), or None."""
    settings = TrainingSettings(dataset="", optimizer=name, optimizer_options=options)
    probe = Parameter(np.zeros(1, np.float32), name="probe")
    try:
        make_optimizer(settings, [probe])
    except TrainingError as exc:
        return str(exc)
    except Exception as exc:  # e.g. float("abc") inside the engine
        return f"The {name} optimizer can't be made: {exc}."
    return None
