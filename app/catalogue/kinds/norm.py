"""LayerNorm, GroupNorm, InstanceNorm2d, LRN and channel dropout.

What this family adds to the catalogue (see app.catalogue.kinds for each table's form).
LayerNorm's hyper-parameters are given here: `normalized_shape` is a tuple, which the
signature's annotation can't make a node field of.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import Layer, Preset, Tweak
from app.catalogue.spec import NodeType, ParamSpec


def _layer_norm(p: Mapping[str, Any]) -> str:
    return f"LayerNorm {tuple(p['normalized_shape'])}"


def _group_norm(p: Mapping[str, Any]) -> str:
    groups, channels = p["num_groups"], p["num_channels"]
    if channels % groups:
        return f"GroupNorm {groups} groups, {channels} channels"
    return f"GroupNorm {groups}×{channels // groups}"


LAYERS: dict[str, Layer] = {
    "LayerNorm": ("Normalization", "Normalises each sample over its last axes, then scales by "
                  "gamma and shifts by beta.", _layer_norm),
    "GroupNorm": ("Normalization", "Normalises each sample over groups of channels: (N, C, …).",
                  _group_norm),
    "InstanceNorm2d": ("Normalization", "Normalises each channel of each image on its own: "
                       "(N, C, H, W).", lambda p: f"InstanceNorm2d {p['num_features']}"),
    "LRN": ("Normalization", "Local response normalisation: divides each value by its "
            "neighbouring channels' energy.", lambda p: f"LRN r={p['depth_radius']}"),
}

TYPES: list[NodeType] = []

SYNONYMS: dict[str, tuple[str, ...]] = {
    "LayerNorm": ("layer normalization", "layer normalisation", "layernorm"),
    "GroupNorm": ("group normalization", "group normalisation", "groupnorm"),
    "InstanceNorm2d": ("instance normalization", "instance normalisation", "style transfer"),
    "LRN": ("local response normalization", "local response normalisation",
            "localresponsenorm", "alexnet"),
}

PARAMS: dict[str, tuple[ParamSpec, ...]] = {
    "LayerNorm": (
        ParamSpec("normalized_shape", "shape", (8,),
                  description="Shape of gamma and beta: the input's sizes from "
                  "begin_params_axis on, e.g. (64,) for (N, 10, 64)."),
        ParamSpec("begin_norm_axis", "int", -1, minimum=-1,
                  description="First axis each sample is normalised over, with all after it "
                  "(-1: the last axis only; 1: the whole sample; 0 would mix the batch)."),
        ParamSpec("begin_params_axis", "int", -1, minimum=-1,
                  description="First axis gamma and beta span; they repeat over the axes "
                  "before it (-1: the last axis only)."),
        ParamSpec("epsilon", "float", 1e-7, minimum=0.0,
                  description="Added to the variance for stability (MindSpore's default "
                  "is 1e-7)."),
    ),
}

DEFAULTS: dict[str, dict[str, object]] = {
    "GroupNorm": {"num_groups": 2, "num_channels": 8},
}

TWEAKS: dict[str, dict[str, Tweak]] = {
    "GroupNorm": {
        "num_groups": {"minimum": 1, "description": "Groups the channels are split into; "
                       "num_channels must be divisible by it (1: all channels together)."},
        "num_channels": {"minimum": 1, "description": "Channels (C, axis 1) coming in; "
                         "gamma and beta have one value per channel."},
        "affine": {"description": "Learn gamma and beta (off: they stay as they are, "
                   "still applied)."},
    },
    "InstanceNorm2d": {
        "momentum": {"description": "Kept for MindSpore: its moving statistics are never "
                     "updated or used, so this changes nothing."},
        "affine": {"description": "Learn gamma and beta (off: they stay as they are, "
                   "still applied)."},
    },
    "LRN": {
        "depth_radius": {"minimum": 0, "description": "Channels on each side that count as "
                         "neighbours: the window is 2·depth_radius + 1 channels."},
        "bias": {"description": "Added to the weighted sum of squares (k); keeps the divisor "
                 "away from 0."},
        "alpha": {"description": "Weight of the neighbours' sum of squares (not divided by "
                  "the window size, unlike PyTorch)."},
        "beta": {"description": "Power the divisor is raised to."},
        "norm_region": {"description": "Where the neighbours are: across channels (the only "
                        "region MindSpore has)."},
    },
}

PRESETS: list[Preset] = []
