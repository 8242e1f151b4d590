"""Hyper-parameter schemas read from an engine Cell's `__init__` signature and annotations."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

from app.catalogue.spec import CatalogueError, ParamSpec
from engine.common.initializer import Initializer
from engine.nn.layers_linear import ACTIVATIONS

# Values a new node gets for hyper-parameters the engine requires (no default in the signature).
REQUIRED_DEFAULTS = {"in_channels": 1, "out_channels": 8, "kernel_size": 3, "num_features": 8}

# Limits that hold wherever a name appears; the engine's own checks are the final word.
LIMITS: dict[str, tuple[float | None, float | None]] = {
    "in_channels": (1, None), "out_channels": (1, None), "num_features": (1, None),
    "group": (1, None), "kernel_size": (1, None), "stride": (1, None), "dilation": (1, None),
    "padding": (0, None), "eps": (0, None), "momentum": (0, 1), "keep_prob": (0, 1),
    "p": (0, 1), "label_smoothing": (0, 1), "alpha": (None, None),
    "delta": (0, None),
}

DESCRIPTIONS = {
    "in_channels": "Features (or channels) each sample brings in.",
    "out_channels": "Features (or channels) each sample comes out with.",
    "kernel_size": "Window height × width.",
    "stride": "Step between windows.",
    "pad_mode": "'same' keeps ceil(size/stride), 'valid' pads nothing, 'pad' uses padding.",
    "padding": "Zero padding for pad_mode 'pad': one number, or top, bottom, left, right.",
    "dilation": "Spacing between kernel taps.",
    "group": "Split channels into this many independent groups.",
    "has_bias": "Add a learned bias.",
    "activation": "Activation applied after the layer, or none.",
    "num_features": "Channels (C) being normalised.",
    "eps": "Added to the variance for stability.",
    "momentum": "Weight of the old moving statistics (MindSpore convention).",
    "affine": "Learn a scale (gamma) and shift (beta).",
    "use_batch_statistics": "none: batch statistics in train mode, moving ones in predict.",
    "alpha": "Slope for negative inputs.",
    "approximate": "Use the tanh approximation (else the exact erf form).",
    "axis": "Axis to work along (-1 is the last).",
    "keep_prob": "Probability of keeping an element (give this or p).",
    "p": "Probability of zeroing an element in train mode (give this or keep_prob).",
    "start_dim": "First axis to flatten.",
    "end_dim": "Last axis to flatten.",
    "reduction": "How per-sample losses combine: mean, sum or none.",
    "sparse": "Labels are class indices rather than one-hot rows.",
    "ignore_index": "Label value that counts for nothing.",
    "label_smoothing": "Mix the target with the uniform distribution by this much.",
    "beta": "Error size where SmoothL1Loss turns from squared (divided by beta) to linear; "
            "must be above 0.",
    "delta": "Error size where HuberLoss turns from squared to linear (delta per unit of "
             "error); must be above 0.",
}

# Params whose annotation is not enough to say what the user may pick.
CHOICES: dict[str, tuple] = {
    "activation": (None, *ACTIVATIONS),
    "reduction": ("mean", "sum", "none"),
}


def _is_init(annotation: Any) -> bool:
    args = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    return any(isinstance(a, type) and issubclass(a, Initializer) for a in args)


def _is_union(annotation: Any) -> bool:
    return isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union


def _spec(name: str, annotation: Any, default: Any) -> ParamSpec | None:
    """A ParamSpec from one annotated parameter; None when it is not a plain user setting."""
    optional = False
    args: tuple = (annotation,)
    if _is_union(annotation):
        args = typing.get_args(annotation)
        optional = type(None) in args
        args = tuple(a for a in args if a is not type(None))
    low, high = LIMITS.get(name, (None, None))
    common = dict(description=DESCRIPTIONS.get(name, ""), minimum=low, maximum=high)
    if name in CHOICES:
        return ParamSpec(name, "choice", default, choices=CHOICES[name], **common)
    lengths = [len(typing.get_args(a)) for a in args if typing.get_origin(a) is tuple]
    if int in args and lengths:
        return ParamSpec(name, "int_or_pair", default, lengths=tuple(lengths), **common)
    if len(args) == 1:
        (kind,) = args
        if typing.get_origin(kind) is Literal:
            return ParamSpec(name, "choice", default, choices=typing.get_args(kind), **common)
        simple = {bool: "bool", int: "int", float: "float", str: "str"}.get(kind)
        if simple is not None:
            return ParamSpec(name, simple, default, optional=optional, **common)
    return None


def read_params(cls: type, required: Mapping[str, Any] | None = None) -> tuple[ParamSpec, ...]:
    """ParamSpecs of `cls.__init__`, in signature order.

    Initializer arguments (`weight_init`, ...) are left out: a new node starts from the
    layer's default initializer, and re-initializing is the Parameter editor's job.
    Arguments without a usable annotation (a loss's `weight` tensor) are left out too.
    `required` gives a new node's value for arguments without a default, beyond
    REQUIRED_DEFAULTS.
    """
    required = {**REQUIRED_DEFAULTS, **(required or {})}
    try:
        signature = inspect.signature(cls, eval_str=True)
    except (TypeError, ValueError, NameError) as exc:
        raise CatalogueError(f"Can't read the hyper-parameters of {cls.__name__}: {exc}") from exc
    specs = []
    for name, param in signature.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or _is_init(param.annotation):
            continue
        if param.default is param.empty:
            if name not in required:
                raise CatalogueError(f"{cls.__name__} needs {name}, which has no default.")
            default = required[name]
        else:
            default = param.default
        spec = _spec(name, param.annotation, default)
        if spec is not None:
            specs.append(spec)
    return tuple(specs)
