"""Feeds (sample shapes) for the sequence family's node types in the generic compiler tests.

INT_INPUTS names the types fed integer token ids: {type name: the Input's dtype}; their
samples are ids below TOKEN_IDS (the default Embedding has vocab_size 16)."""

FEEDS: dict[str, tuple] = {"Embedding": (5,), "PositionalEncoding": (5, 4),
                           "LearnedPositionalEncoding": (5, 4), "Select": (5, 4)}
INT_INPUTS: dict[str, str] = {"Embedding": "int64"}
TOKEN_IDS = 16
