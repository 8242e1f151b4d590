"""Activations beyond the basic ones, Softplus included, and channel dropout.

What this family adds to the catalogue (see app.catalogue.kinds for each table's form).
Softplus is an op node: MindSpore 2.x has `ops.softplus` but no `nn.Softplus`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import IN, OUT, Layer, Preset, Tweak
from app.catalogue.spec import NodeType, ParamSpec


def _named(name: str):
    return lambda p: name


def _alpha(name: str):
    return lambda p: f"{name} α={p['alpha']:g}"


def _axis(name: str):
    return lambda p: name if p["axis"] == -1 else f"{name} axis {p['axis']}"


def _prelu(p: Mapping[str, Any]) -> str:
    return "PReLU" if p["channel"] == 1 else f"PReLU ×{p['channel']}"


def _dropout(name: str):
    return lambda p: f"{name} p={p['p']:g}"


LAYERS: dict[str, Layer] = {
    "ELU": ("Activations", "Exponential linear unit: x, or alpha·(eˣ − 1) below 0.",
            _alpha("ELU")),
    "SeLU": ("Activations", "Scaled ELU (SELU): self-normalising, 1.0507·ELU with alpha 1.6733.",
             _named("SeLU")),
    "CELU": ("Activations", "Continuously differentiable ELU: x, or alpha·(e^(x/alpha) − 1) "
             "below 0.", _alpha("CELU")),
    "PReLU": ("Activations", "Parametric ReLU: x, or a learned slope·x below 0 (one slope, or "
              "one per channel).", _prelu),
    "Softsign": ("Activations", "x / (1 + |x|): squashes to (−1, 1), more gently than tanh.",
                 _named("Softsign")),
    "SiLU": ("Activations", "Sigmoid linear unit, also called swish: x·sigmoid(x).",
             _named("SiLU")),
    "Mish": ("Activations", "x·tanh(softplus(x)): a smooth, non-monotonic ReLU.",
             _named("Mish")),
    "HSwish": ("Activations", "Hard swish (hardswish): x·ReLU6(x + 3)/6, a cheap swish.",
               _named("HSwish")),
    "HSigmoid": ("Activations", "Hard sigmoid (hardsigmoid): ReLU6(x + 3)/6, a cheap sigmoid.",
                 _named("HSigmoid")),
    "ReLU6": ("Activations", "ReLU capped at 6: min(max(x, 0), 6).", _named("ReLU6")),
    "Hardtanh": ("Activations", "Clips to [min_val, max_val]: a piecewise-linear tanh.",
                 lambda p: f"Hardtanh [{p['min_val']:g}, {p['max_val']:g}]"),
    "LogSigmoid": ("Activations", "log(sigmoid(x)), computed stably.", _named("LogSigmoid")),
    "Softmin": ("Activations", "Probabilities favouring the smallest scores: softmax(−x) along "
                "an axis.", _axis("Softmin")),
    "GLU": ("Activations", "Gated linear unit: halves a, b of an axis give a·sigmoid(b).",
            _axis("GLU")),
    "Dropout1d": ("Layers", "Zeroes whole channels of (N, C, L) sequences while training; "
                  "identity when predicting.", _dropout("Dropout1d")),
    "Dropout2d": ("Layers", "Spatial dropout: zeroes whole channels of (N, C, H, W) images "
                  "while training.", _dropout("Dropout2d")),
    "Dropout3d": ("Layers", "Zeroes whole channels of (N, C, D, H, W) volumes while training; "
                  "identity when predicting.", _dropout("Dropout3d")),
}

TYPES: list[NodeType] = [
    NodeType("Softplus", "Activations",
             "Smooth ReLU: log(1 + e^(beta·x))/beta, linear above the threshold.", IN, OUT,
             (ParamSpec("beta", "float", 1.0, minimum=0.0,
                        description="Sharpness: larger beta bends closer to ReLU; more than 0."),
              ParamSpec("threshold", "float", 20.0,
                        description="Where beta·x is above this, the output is x itself "
                        "(avoids overflow).")),
             lambda p: "Softplus" if p["beta"] == 1 else f"Softplus β={p['beta']:g}"),
]

SYNONYMS: dict[str, tuple[str, ...]] = {
    "ELU": ("exponential linear unit",),
    "SeLU": ("selu", "scaled elu", "self-normalizing"),
    "CELU": ("continuous elu",),
    "PReLU": ("parametric relu", "learned leaky relu"),
    "SiLU": ("swish",),
    "HSwish": ("hard swish", "hardswish", "swish"),
    "HSigmoid": ("hard sigmoid", "hardsigmoid"),
    "ReLU6": ("clipped relu",),
    "Hardtanh": ("hard tanh", "clip", "clamp"),
    "Softmin": ("softmax of negatives",),
    "GLU": ("gated linear unit", "gating"),
    "Softplus": ("smooth relu",),
    "Dropout1d": ("spatial dropout", "channel dropout"),
    "Dropout2d": ("spatial dropout", "channel dropout"),
    "Dropout3d": ("spatial dropout", "channel dropout"),
}

PARAMS: dict[str, tuple[ParamSpec, ...]] = {
    # `w` may be a list or a Tensor in MindSpore; a node takes one initial slope.
    "PReLU": (ParamSpec("channel", "int", 1, minimum=1),
              ParamSpec("w", "float", 0.25)),
}

DEFAULTS: dict[str, dict[str, object]] = {}

_CHANNEL_P = {"description": "Probability of zeroing a whole channel in train mode."}

TWEAKS: dict[str, dict[str, Tweak]] = {
    "ELU": {"alpha": {"description": "Scale of the negative part: alpha·(eˣ − 1) below 0."}},
    "CELU": {"alpha": {"description": "alpha in alpha·(e^(x/alpha) − 1) below 0; not 0."}},
    "PReLU": {
        "channel": {"description": "Learned slopes: 1 shared by all, or one per channel "
                    "(the size of axis 1)."},
        "w": {"description": "Initial slope for negative inputs (learned from there)."},
    },
    "Hardtanh": {
        "min_val": {"description": "Lower end of the linear range; smaller inputs give it."},
        "max_val": {"description": "Upper end of the linear range; larger inputs give it."},
    },
    "Softmin": {"axis": {"description": "Axis whose entries sum to 1 (-1 is the last)."}},
    "GLU": {"axis": {"description": "Axis split into halves a and b (its size must be even; "
                     "the output has half of it)."}},
    "Dropout1d": {"p": _CHANNEL_P},
    "Dropout2d": {"p": _CHANNEL_P},
    "Dropout3d": {"p": _CHANNEL_P},
}

PRESETS: list[Preset] = []
