"""Node types added family by family, each family in its own module.

A family module declares:
- LAYERS: {type name: (category, description, summary)}, for engine.nn classes of that
  name; their hyper-parameters are read from the class's signature (schema.read_params);
- PARAMS: {type name: ParamSpecs} replacing what the signature gives, where it can't say;
- DEFAULTS: {type name: {param: value}} for arguments the engine requires (no default);
- TWEAKS: {type name: {param: {ParamSpec field: value}}}, e.g. when a param applies;
- TYPES: other NodeTypes (op nodes, with their own Cells in app.compiler.kinds);
- SYNONYMS: {type name: words the palette search also finds it by};
- PRESETS: palette entries adding a type with values preset.
"""

from __future__ import annotations

from typing import Any

from app.catalogue.kinds import activation, attention, conv, norm, ops, pool, recurrent, sequence

FAMILIES = (conv, pool, norm, activation, ops, sequence, recurrent, attention)


def merge_tables(families, table: str) -> dict[str, Any]:
    """The table called `table` merged over the family modules `families` (the catalogue's,
    the compiler's or the exporters'); a name declared twice is a bug."""
    out: dict[str, Any] = {}
    for family in families:
        for key, value in getattr(family, table).items():
            if key in out:
                raise ValueError(f"{key!r} is declared twice in {family.__name__}'s {table}")
            out[key] = value
    return out


def merged(table: str) -> dict[str, Any]:
    """One catalogue table merged over all families."""
    return merge_tables(FAMILIES, table)


def listed(table: str) -> list[Any]:
    return [item for family in FAMILIES for item in getattr(family, table)]
