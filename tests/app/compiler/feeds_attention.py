"""Feeds (sample shapes) for the attention family's node types in the generic compiler tests:
sequences (L, E) of 5 time steps of 8 features (8 divides by the default 2 heads)."""

FEEDS: dict[str, tuple] = {
    "MultiheadAttention": (5, 8),
    "TransformerEncoderLayer": (5, 8),
    "TransformerEncoder": (5, 8),
    "TransformerDecoderLayer": (5, 8),
}
