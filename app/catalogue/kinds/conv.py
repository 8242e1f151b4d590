"""Convolutions: Conv1d, Conv3d, Conv2dTranspose, Conv1dTranspose.

What this family adds to the catalogue (see app.catalogue.kinds for each table's form).
The transposed convolutions start as a ×2 upsampler (kernel 4, stride 2, 'same'), the
common "deconvolution" of decoders and GANs; padding and output_padding show only with
pad_mode 'pad', where they apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import Layer, Preset, Tweak, stride
from app.catalogue.spec import NodeType, ParamSpec

LAYERS_CATEGORY = "Layers"


def _kernel(value: Any, dims: int) -> str:
    """'k5' for a 1-D kernel of 5; '3×3×3' for 3 in 3-D; '4×4' for (4, 4)."""
    if dims == 1:
        return f"k{value}"
    values = (value,) * dims if isinstance(value, int) else tuple(value)
    return "×".join(str(v) for v in values)


def _summary(name: str, dims: int, transposed: bool = False):
    def summary(p: Mapping[str, Any]) -> str:
        text = f"{name} {p['in_channels']}→{p['out_channels']} {_kernel(p['kernel_size'], dims)}"
        step = stride(p["stride"])
        if step != "1":
            text += f" ↑{step}" if transposed else f" /{step}"
        if p.get("group", 1) not in (1, None):
            text += " depthwise" if p["group"] == p["in_channels"] else f" g{p['group']}"
        return text

    return summary


LAYERS: dict[str, Layer] = {
    "Conv1d": (LAYERS_CATEGORY, "1-D convolution along a sequence: (N, C, L) → "
               "(N, out_channels, L').", _summary("Conv1d", 1)),
    "Conv3d": (LAYERS_CATEGORY, "3-D convolution over volumes or video: (N, C, D, H, W).",
               _summary("Conv3d", 3)),
    "Conv2dTranspose": (LAYERS_CATEGORY, "Transposed 2-D convolution (deconvolution): a "
                        "learned upsampling of images by the stride.",
                        _summary("Conv2dTranspose", 2, transposed=True)),
    "Conv1dTranspose": (LAYERS_CATEGORY, "Transposed 1-D convolution: a learned upsampling "
                        "of sequences by the stride.",
                        _summary("Conv1dTranspose", 1, transposed=True)),
}

TYPES: list[NodeType] = []

SYNONYMS: dict[str, tuple[str, ...]] = {
    "Conv1d": ("1d convolution", "temporal convolution", "sequence convolution",
               "time series", "audio"),
    "Conv3d": ("3d convolution", "volumetric convolution", "video convolution",
               "spatiotemporal"),
    "Conv2dTranspose": ("deconvolution", "deconv", "transposed convolution",
                        "upconvolution", "fractionally strided convolution", "upsampling",
                        "ConvTranspose2d"),
    "Conv1dTranspose": ("deconvolution", "deconv", "transposed convolution 1d",
                        "upconvolution", "upsampling", "ConvTranspose1d"),
}

PARAMS: dict[str, tuple[ParamSpec, ...]] = {}

DEFAULTS: dict[str, dict[str, object]] = {
    "Conv2dTranspose": {"kernel_size": 4},
    "Conv1dTranspose": {"kernel_size": 4},
}

_GROUP = ("Split the channels into this many independent groups; in_channels and "
          "out_channels must both divide by it (= in_channels: depthwise).")
_REACH = "reach = dilation × (kernel_size − 1) + 1"


def _forward(axes: str, padding: str) -> dict[str, Tweak]:
    return {
        "kernel_size": {"description": f"Window size ({axes})."},
        "stride": {"description": f"Step between windows ({axes})."},
        "pad_mode": {"description": "same: output ceil(size / stride), an odd padding at the "
                     "end; valid: no padding; pad: the padding given."},
        "padding": {"when": {"pad_mode": ("pad",)}, "description": padding},
        "dilation": {"description": f"Spacing between kernel taps ({axes})."},
        "group": {"description": _GROUP},
    }


def _transposed(axes: str, padding: str) -> dict[str, Tweak]:
    return {
        "kernel_size": {"description": f"Kernel size ({axes})."},
        "stride": {"default": 2, "description": f"Upsampling factor ({axes}): 'same' gives "
                   "exactly size × stride."},
        "pad_mode": {"description": "same: output size × stride; valid: size × stride + "
                     "max(reach − stride, 0); pad: (size − 1) × stride + reach − padding; "
                     f"{_REACH}."},
        "padding": {"when": {"pad_mode": ("pad",)}, "description": padding},
        "dilation": {"description": f"Spacing between kernel taps ({axes})."},
        "group": {"description": _GROUP},
    }


TWEAKS: dict[str, dict[str, Tweak]] = {
    # The built-in Conv2d's padding, too: shown only in 'pad' mode.
    "Conv2d": {"padding": {"when": {"pad_mode": ("pad",)},
                           "description": "Zero padding: one number for all sides, or top, "
                                          "bottom, left, right."}},
    "Conv1d": _forward("L", "Zeros on both ends of the sequence."),
    "Conv3d": _forward("D × H × W", "Zero padding: one number for all sides, or head, tail, "
                       "top, bottom, left, right."),
    "Conv2dTranspose": {
        **_transposed("H × W", "Cropped from the full output: one number for all sides, or "
                      "top, bottom, left, right."),
        "output_padding": {"when": {"pad_mode": ("pad",)}, "minimum": 0,
                           "description": "Zero rows (and columns) added at the bottom (right) "
                           "after the bias, as MindSpore; each less than max(stride, "
                           "dilation)."},
    },
    "Conv1dTranspose": _transposed("L", "Cropped from both ends of the full output."),
}

PRESETS: list[Preset] = [
    Preset("Depthwise Conv2d", "Conv2d",
           {"in_channels": 8, "out_channels": 8, "kernel_size": 3, "group": 8},
           "One 3×3 filter per channel (group = in_channels = out_channels); follow it with "
           "a 1×1 Conv2d for a depthwise separable convolution.",
           keywords=("depthwise", "depthwise separable", "separable convolution",
                     "MobileNet")),
    Preset("Pointwise Conv2d", "Conv2d", {"in_channels": 8, "out_channels": 8,
                                          "kernel_size": 1},
           "A 1×1 convolution: mixes channels at each pixel (the second half of a depthwise "
           "separable convolution).", keywords=("pointwise", "1x1 convolution", "separable")),
    Preset("Depthwise Conv1d", "Conv1d",
           {"in_channels": 8, "out_channels": 8, "kernel_size": 3, "group": 8},
           "One filter per channel along a sequence (group = in_channels = out_channels).",
           keywords=("depthwise", "separable convolution")),
]
