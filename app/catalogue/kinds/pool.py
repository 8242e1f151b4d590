"""Pooling, adaptive (global) pooling, Upsample, PixelShuffle and padding.

What this family adds to the catalogue (see app.catalogue.kinds for each table's form).
Upsample's hyper-parameters are given here: `size` and `scale_factor` exclude each other,
so each is shown only while the other is none, and align_corners only for linear modes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import Layer, Preset, Tweak, stride
from app.catalogue.spec import NodeType, ParamSpec

POOL = "Pooling & resampling"
LINEAR_MODES = ("linear", "bilinear", "trilinear")


def _sizes(value: Any) -> str:
    """'3' for 3, '2×3' for (2, 3), '2×?' for (2, None)."""
    if not isinstance(value, (tuple, list)):
        return str(value)
    return "×".join("?" if v is None else str(v) for v in value)


def _window(name: str):
    return lambda p: f"{name} {_sizes(p['kernel_size'])} stride {stride(p['stride'])}"


def _adaptive(name: str, kind: str):
    def summary(p: Mapping[str, Any]) -> str:
        size = p["output_size"]
        if size == 1 or (isinstance(size, (tuple, list)) and all(v == 1 for v in size)):
            return f"Global {kind} pool"
        return f"{name} → {_sizes(size)}"

    return summary


def _upsample(p: Mapping[str, Any]) -> str:
    given = f"→ {_sizes(p['size'])}" if p.get("size") is not None else \
        f"×{p['scale_factor']:g}" if p.get("scale_factor") is not None else "(no size)"
    return f"Upsample {given} {p['mode']}"


def _pad(name: str):
    def summary(p: Mapping[str, Any]) -> str:
        pad = p["padding"]
        text = f"{name} {pad if isinstance(pad, int) else tuple(pad)}"
        return text + (f" = {p['value']:g}" if "value" in p else "")

    return summary


LAYERS: dict[str, Layer] = {
    "MaxPool1d": (POOL, "Maximum over sliding windows along a sequence: (N, C, L).",
                  _window("MaxPool1d")),
    "AvgPool1d": (POOL, "Mean over sliding windows along a sequence: (N, C, L).",
                  _window("AvgPool1d")),
    "MaxPool3d": (POOL, "Maximum over sliding 3-D windows of a volume: (N, C, D, H, W).",
                  _window("MaxPool3d")),
    "AvgPool3d": (POOL, "Mean over sliding 3-D windows of a volume: (N, C, D, H, W).",
                  _window("AvgPool3d")),
    "AdaptiveAvgPool1d": (POOL, "Mean over bins sized to give output_size along L: "
                          "(N, C, L) → (N, C, output_size).",
                          _adaptive("AdaptiveAvgPool1d", "avg")),
    "AdaptiveMaxPool1d": (POOL, "Maximum over bins sized to give output_size along L: "
                          "(N, C, L) → (N, C, output_size).",
                          _adaptive("AdaptiveMaxPool1d", "max")),
    "AdaptiveAvgPool2d": (POOL, "Mean over bins sized to give an output_size image, whatever "
                          "the input's size (1: global average pooling).",
                          _adaptive("AdaptiveAvgPool2d", "avg")),
    "AdaptiveMaxPool2d": (POOL, "Maximum over bins sized to give an output_size image, "
                          "whatever the input's size (1: global max pooling).",
                          _adaptive("AdaptiveMaxPool2d", "max")),
    "Upsample": (POOL, "Resizes images, sequences or volumes to a size or by a scale factor "
                 "(nearest or linear interpolation).", _upsample),
    "PixelShuffle": (POOL, "Moves channels into space: (N, C·r², H, W) → (N, C, H·r, W·r), "
                     "as in sub-pixel convolution.",
                     lambda p: f"PixelShuffle ×{p['upscale_factor']}"),
    "ZeroPad2d": ("Reshaping", "Pads the height and width with zeros (negative padding crops).",
                  _pad("ZeroPad2d")),
    "ConstantPad2d": ("Reshaping", "Pads the height and width with a constant value (negative "
                      "padding crops).", _pad("ConstantPad2d")),
    "ReflectionPad2d": ("Reshaping", "Pads the height and width with their mirror image, the "
                        "edge not repeated.", _pad("ReflectionPad2d")),
    "ReplicationPad2d": ("Reshaping", "Pads the height and width by repeating the edge values.",
                         _pad("ReplicationPad2d")),
}

TYPES: list[NodeType] = []

SYNONYMS: dict[str, tuple[str, ...]] = {
    "MaxPool1d": ("max pooling 1d", "temporal max pooling", "sequence pooling"),
    "AvgPool1d": ("average pooling 1d", "mean pooling", "temporal average pooling"),
    "MaxPool3d": ("max pooling 3d", "volumetric pooling", "video pooling"),
    "AvgPool3d": ("average pooling 3d", "mean pooling", "volumetric pooling"),
    "AdaptiveAvgPool1d": ("global average pooling", "global pool", "temporal pooling"),
    "AdaptiveMaxPool1d": ("global max pooling", "global pool", "temporal pooling"),
    "AdaptiveAvgPool2d": ("global average pooling", "global pool", "GAP", "mean pooling"),
    "AdaptiveMaxPool2d": ("global max pooling", "global pool", "GMP"),
    "Upsample": ("interpolate", "resize", "upscale", "upsampling", "nearest neighbour",
                 "bilinear", "zoom"),
    "PixelShuffle": ("depth to space", "sub-pixel convolution", "super resolution",
                     "upsampling"),
    "ZeroPad2d": ("zero padding", "crop"),
    "ConstantPad2d": ("constant padding", "fill", "crop"),
    "ReflectionPad2d": ("reflect padding", "mirror padding"),
    "ReplicationPad2d": ("replicate padding", "edge padding", "clamp"),
}

PARAMS: dict[str, tuple[ParamSpec, ...]] = {
    "Upsample": (
        ParamSpec("size", "int_or_pair", None, minimum=1, optional=True, lengths=(2, 3),
                  when={"scale_factor": (None,)},
                  description="Output size: one number for every spatial axis, or one per "
                  "axis (H, W or D, H, W); none to resize by scale_factor."),
        ParamSpec("scale_factor", "float", 2.0, minimum=0.0, optional=True,
                  when={"size": (None,)},
                  description="Multiplies each spatial size (the output is floor(size × "
                  "scale_factor)); none to give size instead."),
        ParamSpec("mode", "choice", "nearest", choices=("nearest", *LINEAR_MODES),
                  description="nearest copies the nearest input value; linear (N, C, L), "
                  "bilinear (N, C, H, W) and trilinear (N, C, D, H, W) interpolate."),
        ParamSpec("align_corners", "bool", False, when={"mode": LINEAR_MODES},
                  description="Map the corner pixels onto each other (position × (in − 1) / "
                  "(out − 1)); off: half-pixel centres ((position + 0.5) × in / out − 0.5)."),
    ),
}

# A new adaptive 2-D pool gives 2×2 (the presets give the global 1×1); a 1-D one pools the
# whole sequence, its most common use.
DEFAULTS: dict[str, dict[str, object]] = {
    "AdaptiveAvgPool1d": {"output_size": 1},
    "AdaptiveMaxPool1d": {"output_size": 1},
    "AdaptiveAvgPool2d": {"output_size": 2},
    "AdaptiveMaxPool2d": {"output_size": 2},
    "PixelShuffle": {"upscale_factor": 2},
    "ZeroPad2d": {"padding": 1},
    "ConstantPad2d": {"padding": 1, "value": 0.0},
    "ReflectionPad2d": {"padding": 1},
    "ReplicationPad2d": {"padding": 1},
}


def _pool_tweaks(axes: str, kind: str, new_defaults: bool = True) -> dict[str, Tweak]:
    """The window pools' params: a 2-wide, 2-step window by default (a window of 1, the
    engine's default, changes nothing), and padding & co. only with pad_mode 'pad'.
    The 2-D pools keep the defaults their nodes always had (`new_defaults=False`)."""
    fill = "−inf" if kind == "max" else "zeros"
    window: Tweak = {"default": 2} if new_defaults else {}
    tweaks: dict[str, Tweak] = {
        "kernel_size": {**window, "description": f"Window size ({axes})."},
        "stride": {**window, "description": f"Step between windows ({axes})."},
        "pad_mode": {"description": "valid: no padding; same: output ceil(size / stride), an "
                     "odd pad after; pad: padding on both sides."},
        "padding": {"when": {"pad_mode": ("pad",)},
                    "description": f"Padding with {fill} on both sides of each axis ({axes}); "
                    "at most half the kernel size."},
        "ceil_mode": {"when": {"pad_mode": ("pad",) if kind == "max" else ("valid", "pad")},
                      "description": "Round the output size up: keep a last, partial window "
                      "(it must start inside the input or its left padding)."},
    }
    if kind == "max":
        tweaks["dilation"] = {"when": {"pad_mode": ("pad",)},
                              "description": f"Spacing between window taps ({axes})."}
    else:
        tweaks["count_include_pad"] = {"when": {"pad_mode": ("pad",)},
                                       "description": "Count the zero padding in each "
                                       "window's mean ('same' padding never counts)."}
    return tweaks


_ADAPTIVE_1D = {"output_size": {"minimum": 1, "description": "Bins along L: the output's "
                                "length (1: global pooling)."}}
_ADAPTIVE_2D = {"output_size": {"minimum": 1, "description": "Output height × width (one "
                                "number for a square); 1: global pooling."}}
_PAD = "Padding: one number for all sides, or left, right, top, bottom."

TWEAKS: dict[str, dict[str, Tweak]] = {
    "MaxPool2d": _pool_tweaks("H × W", "max", new_defaults=False),
    "AvgPool2d": _pool_tweaks("H × W", "avg", new_defaults=False),
    "MaxPool1d": _pool_tweaks("L", "max"),
    "AvgPool1d": _pool_tweaks("L", "avg"),
    "MaxPool3d": _pool_tweaks("D × H × W", "max"),
    "AvgPool3d": _pool_tweaks("D × H × W", "avg"),
    "AdaptiveAvgPool1d": _ADAPTIVE_1D,
    "AdaptiveMaxPool1d": _ADAPTIVE_1D,
    "AdaptiveAvgPool2d": _ADAPTIVE_2D,
    "AdaptiveMaxPool2d": _ADAPTIVE_2D,
    "PixelShuffle": {"upscale_factor": {"minimum": 1, "description": "r: each r² channels "
                                        "become an r × r block of pixels; the channels must "
                                        "be divisible by r²."}},
    "ZeroPad2d": {"padding": {"minimum": None, "description": _PAD + " A negative number "
                              "crops."}},
    "ConstantPad2d": {"padding": {"minimum": None, "description": _PAD + " A negative number "
                                  "crops."},
                      "value": {"description": "The value the padding holds."}},
    "ReflectionPad2d": {"padding": {"description": _PAD + " Each less than the size it "
                                    "mirrors."}},
    "ReplicationPad2d": {"padding": {"description": _PAD}},
}

PRESETS: list[Preset] = [
    Preset("Global average pooling", "AdaptiveAvgPool2d", {"output_size": 1},
           "Mean of each channel over the whole image: (N, C, H, W) → (N, C, 1, 1).",
           keywords=("GAP", "global pool", "global average pool")),
    Preset("Global max pooling", "AdaptiveMaxPool2d", {"output_size": 1},
           "Maximum of each channel over the whole image: (N, C, H, W) → (N, C, 1, 1).",
           keywords=("GMP", "global pool", "global max pool")),
]
