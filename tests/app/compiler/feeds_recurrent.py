"""Feeds (sample shapes) for the recurrent family's node types in the generic compiler tests."""

# (T, features): a sequence of 6 steps of 3 features, batch first as the nodes take it.
FEEDS: dict[str, tuple] = {"LSTM": (6, 3), "GRU": (6, 3), "RNN": (6, 3)}
