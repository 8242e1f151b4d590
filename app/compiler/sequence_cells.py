"""The Cells of the sequence family's op nodes: positional encodings and Select.

Cellwright's own, not MindSpore classes; each is built as `cls(**values)`. They run the
engine ops the engine-script export writes for them (app.export.kinds.sequence), so an
exported script computes what the app does, bit for bit.
"""

from __future__ import annotations

import numpy as np

from engine import nn, ops
from engine.common.initializer import Normal
from engine.nn.layers_linear import make_param


def sinusoid_table(length: int, size: int, dtype=np.float32) -> np.ndarray:
    """The (length, size) table of 'Attention is all you need': sin on even features,
    cos on odd ones, wavelengths from 2π to 10000·2π (an odd size ends with a sin)."""
    position = np.arange(length, dtype=np.float64)[:, None]
    rate = np.exp(np.arange(0, size, 2, dtype=np.float64) * (-np.log(10000.0) / size))
    table = np.zeros((length, size), np.float64)
    table[:, 0::2] = np.sin(position * rate)
    table[:, 1::2] = np.cos(position * rate[: size // 2])
    return table.astype(dtype)


def _sequence(layer: str, x) -> tuple[int, int]:
    if x.ndim != 3:
        raise ValueError(f"{layer} expects a sequence (N, T, E), got shape {tuple(x.shape)}")
    return int(x.shape[1]), int(x.shape[2])


class PositionalEncoding(nn.Cell):
    """x + the sine/cosine table for its length: (N, T, E), any T. No Parameters."""

    def __init__(self):
        super().__init__()
        self._table = np.zeros((0, 0), np.float32)

    def table(self, length: int, size: int, dtype) -> np.ndarray:
        """The table for (length, size), kept for the next call of the same or a shorter one."""
        kept = self._table
        if kept.shape[0] < length or kept.shape[1] != size or kept.dtype != dtype:
            kept = self._table = sinusoid_table(max(length, kept.shape[0]), size, dtype)
        return kept[:length]

    def construct(self, x):
        length, size = _sequence("PositionalEncoding", x)
        return ops.add(x, self.table(length, size, np.dtype(x.asnumpy().dtype)))


class LearnedPositionalEncoding(nn.Cell):
    """x + the first T rows of the learned Parameter `embedding_table` (max_len, E)."""

    def __init__(self, max_len: int = 64, embedding_size: int = 8):
        super().__init__()
        self.max_len, self.embedding_size = int(max_len), int(embedding_size)
        self.embedding_table = make_param(None, (self.max_len, self.embedding_size),
                                          Normal(0.02))

    def construct(self, x):
        length, size = _sequence("LearnedPositionalEncoding", x)
        if length > self.max_len:
            raise ValueError(f"LearnedPositionalEncoding takes sequences of up to max_len "
                             f"{self.max_len} steps, but {length} arrive")
        if size != self.embedding_size:
            raise ValueError(f"LearnedPositionalEncoding expects {self.embedding_size} "
                             f"features per step, got shape {tuple(x.shape)}")
        return ops.add(x, self.embedding_table[:length])

    def extend_repr(self) -> str:
        return f"max_len={self.max_len}, embedding_size={self.embedding_size}"


def select_index(axis: int, index: int) -> str:
    """The index text picking `index` along `axis`, e.g. '[:, -1]' for axis 1, or
    '[..., 0, :]' for axis -2; both the engine and torch read it."""
    if axis >= 0:
        return "[" + ", ".join([":"] * axis + [str(index)]) + "]"
    return "[" + ", ".join(["...", str(index)] + [":"] * (-axis - 1)) + "]"


class Select(nn.Cell):
    """x[index] along `axis`; that axis is dropped."""

    def __init__(self, axis: int = 1, index: int = -1):
        super().__init__()
        self.axis, self.index = int(axis), int(index)

    def construct(self, x):
        if self.axis >= 0:
            where = (slice(None),) * self.axis + (self.index,)
        else:
            where = (Ellipsis, self.index) + (slice(None),) * (-self.axis - 1)
        return x[where]

    def extend_repr(self) -> str:
        return f"axis={self.axis}{select_index(self.axis, self.index)}"


OP_CELLS: dict[str, type] = {
    cls.__name__: cls for cls in (PositionalEncoding, LearnedPositionalEncoding, Select)
}
