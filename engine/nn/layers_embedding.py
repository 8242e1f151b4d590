"""Embedding (MindSpore 2.x): a lookup table of vectors, one row per token id."""

from __future__ import annotations

import numpy as np

from engine._dtype import DType, float32, to_numpy_dtype
from engine.nn.cell import Cell
from engine.nn.layers_linear import InitSpec, make_param
from engine.ops._embedding import embedding

__all__ = ["Embedding"]


def _size(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"Embedding: {name} must be an int, got {value!r}")
    if value < 1:
        raise ValueError(f"Embedding: {name} must be a positive int, got {value!r}")
    return int(value)


class Embedding(Cell):
    """Maps integer ids (any shape S) to rows of `embedding_table` (vocab_size,
    embedding_size): the output has shape S + (embedding_size,).

    MindSpore's signature and Parameter: `embedding_table` starts from the 'normal'
    initializer (sigma 0.01); with `padding_idx` its row starts at zero and, as in
    torch, gets no gradient. `use_one_hot` (MindSpore's one-hot matmul) gives the same
    values and gradients as the lookup, which is what runs. `dtype` is MindSpore's
    (a number type for the one-hot values); the table is float32. Ids must be int32 or
    int64 in [0, vocab_size): a float input raises TypeError, an id outside ValueError.
    """

    def __init__(
        self,
        vocab_size: int,
        embedding_size: int,
        use_one_hot: bool = False,
        embedding_table: InitSpec = "normal",
        dtype: DType = float32,
        padding_idx: int | None = None,
    ):
        super().__init__()
        self.vocab_size = _size("vocab_size", vocab_size)
        self.embedding_size = _size("embedding_size", embedding_size)
        if not isinstance(use_one_hot, (bool, np.bool_)):
            raise TypeError(f"Embedding: use_one_hot must be True or False, got {use_one_hot!r}")
        self.use_one_hot = bool(use_one_hot)
        try:
            kind = np.dtype(to_numpy_dtype(dtype)).kind
        except (TypeError, ValueError, KeyError):
            kind = ""
        if kind not in "fiu" or not kind:
            raise TypeError(f"Embedding: dtype must be a number type, got {dtype!r}")
        self.dtype = dtype
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, (int, np.integer)):
                raise TypeError(f"Embedding: padding_idx must be an int or None, got "
                                f"{padding_idx!r}")
            if not 0 <= padding_idx < self.vocab_size:
                raise ValueError(f"Embedding: padding_idx must be in [0, {self.vocab_size}) "
                                 f"(vocab_size {self.vocab_size}), got {padding_idx}")
            padding_idx = int(padding_idx)
        self.padding_idx = padding_idx
        shape = (self.vocab_size, self.embedding_size)
        self.embedding_table = make_param(embedding_table, shape, "normal")
        if padding_idx is not None:
            self.embedding_table._data[padding_idx] = 0

    def construct(self, ids):
        return embedding(ids, self.embedding_table, self.padding_idx)

    def extend_repr(self) -> str:
        return (f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}, "
                f"use_one_hot={self.use_one_hot}, embedding_table={self.embedding_table}, "
                f"dtype={self.dtype}, padding_idx={self.padding_idx}")
