"""Embedding, positional encodings and time selection: the "Sequences" family's own nodes.

What this family adds to the catalogue (see app.catalogue.kinds for each table's form).
Embedding is MindSpore's nn.Embedding; the positional encodings and Select are op nodes
of Cellwright's own (app.compiler.sequence_cells), not MindSpore classes. Sequences come
batch first, (N, T, F): time is axis 1. The presets take the last step, or the mean or
maximum over time, of such a sequence: (N, T, F) → (N, F).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import IN, OUT, Layer, Preset, Tweak
from app.catalogue.spec import NodeType, ParamSpec

SEQUENCES = "Sequences"


def _embedding(p: Mapping[str, Any]) -> str:
    pad = "" if p.get("padding_idx") is None else f" pad {p['padding_idx']}"
    return f"Embedding {p['vocab_size']}→{p['embedding_size']}{pad}"


LAYERS: dict[str, Layer] = {
    "Embedding": (SEQUENCES, "Looks up a learned vector for each integer token id: (N, T) ids "
                  "→ (N, T, embedding_size). Feed it an Input of dtype int32 or int64.",
                  _embedding),
}

TYPES: list[NodeType] = [
    NodeType("PositionalEncoding", SEQUENCES,
             "Adds the fixed sine/cosine position table of 'Attention is all you need' to a "
             "sequence (N, T, E), for any length T; no Parameters. A Cellwright op, not a "
             "MindSpore class.", IN, OUT, (), lambda p: "PositionalEncoding sin/cos"),
    NodeType("LearnedPositionalEncoding", SEQUENCES,
             "Adds a learned vector per position to a sequence (N, T, E): a Parameter "
             "(max_len, E); sequences up to max_len steps. A Cellwright op, not a MindSpore "
             "class.", IN, OUT,
             (ParamSpec("max_len", "int", 64, minimum=1,
                        description="The longest sequence it takes: one learned row per "
                        "position 0 … max_len - 1."),
              ParamSpec("embedding_size", "int", 8, minimum=1,
                        description="Features per step (E, the last axis); follows what "
                        "arrives when connected.")),
             lambda p: f"LearnedPositionalEncoding {p['max_len']}×{p['embedding_size']}"),
    NodeType("Select", SEQUENCES,
             "Picks one index along an axis and drops that axis, e.g. the last time step: "
             "(N, T, F) → (N, F). A Cellwright op (x[:, index]).", IN, OUT,
             (ParamSpec("axis", "int", 1,
                        description="The axis to pick from (1: time in (N, T, F); -1: the "
                        "last); never the batch axis."),
              ParamSpec("index", "int", -1,
                        description="The index kept along that axis; negative counts from "
                        "the end (-1: the last step).")),
             lambda p: f"Select axis {p['axis']} [{p['index']}]"),
]

SYNONYMS: dict[str, tuple[str, ...]] = {
    "Embedding": ("word embedding", "token embedding", "lookup table", "nn.Embedding",
                  "vocabulary", "text"),
    "PositionalEncoding": ("sinusoidal", "position", "transformer", "sine cosine"),
    "LearnedPositionalEncoding": ("positional embedding", "position embedding", "learned "
                                  "position", "transformer"),
    "Select": ("last time step", "pick", "index", "gather", "take"),
}

PARAMS: dict[str, tuple[ParamSpec, ...]] = {}

DEFAULTS: dict[str, dict[str, object]] = {
    "Embedding": {"vocab_size": 16, "embedding_size": 8},
}

TWEAKS: dict[str, dict[str, Tweak]] = {
    "Embedding": {
        "vocab_size": {"minimum": 1, "description": "How many token ids there are: ids run "
                       "from 0 to vocab_size - 1 (a text set's vocabulary length)."},
        "embedding_size": {"minimum": 1, "description": "Length of each token's vector (E, "
                           "the features per step of the result)."},
        "use_one_hot": {"description": "MindSpore's one-hot matmul form of the lookup: the "
                        "same values and gradients, kept for MindSpore code."},
        "padding_idx": {"minimum": 0, "description": "A token id whose vector starts at zero "
                        "and never learns (padding); none: every row learns."},
    },
}

PRESETS: list[Preset] = [
    Preset("Last time step", "Select", {"axis": 1, "index": -1},
           "Keeps the last step of a sequence and drops the time axis: (N, T, F) → (N, F); "
           "e.g. after an LSTM, before a Dense.", category=SEQUENCES,
           keywords=("sequence", "rnn", "last", "final step")),
    Preset("Mean over time", "Mean", {"axis": 1},
           "The mean over the time axis of a sequence: (N, T, F) → (N, F).", category=SEQUENCES,
           keywords=("sequence", "average pooling over time", "temporal")),
    Preset("Max over time", "Max", {"axis": 1},
           "The maximum over the time axis of a sequence: (N, T, F) → (N, F).",
           category=SEQUENCES, keywords=("sequence", "max pooling over time", "temporal")),
]
