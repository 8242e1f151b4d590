"""(stub) The sequence family's catalogue tables; see app.catalogue.kinds for each table's form."""

from __future__ import annotations

from app.catalogue.kinds.common import Layer, Preset, Tweak
from app.catalogue.spec import NodeType, ParamSpec

LAYERS: dict[str, Layer] = {}
TYPES: list[NodeType] = []
SYNONYMS: dict[str, tuple[str, ...]] = {}
PARAMS: dict[str, tuple[ParamSpec, ...]] = {}
DEFAULTS: dict[str, dict[str, object]] = {}
TWEAKS: dict[str, dict[str, Tweak]] = {}
PRESETS: list[Preset] = []
