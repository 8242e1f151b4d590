"""Converters for sequence ops: LSTM, GRU, RNN, Embedding (Gather on a table), attention."""

from __future__ import annotations

CONVERTERS: dict = {}
