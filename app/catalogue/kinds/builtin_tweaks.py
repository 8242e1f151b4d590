"""TWEAKS for the built-in layers (builtin.LAYERS), in the form of a family's TWEAKS: which
hyper-parameters apply in which mode, so the Inspector shows only those, and texts the
schema's generic descriptions get wrong. A family's own TWEAKS for the same type win."""

from __future__ import annotations

from app.catalogue.kinds.common import Tweak

TWEAKS: dict[str, dict[str, Tweak]] = {
    "Conv2d": {
        "padding": {
            "when": {"pad_mode": ("pad",)},
            "description": "Zero padding: one number for all sides, or top, bottom, left, "
                           "right.",
        },
    },
}
