"""The embedding kernel: rows of a table picked by integer ids, with a scatter-add gradient.

One tape node per lookup. The gradient sums the output gradient of every position into
its id's row with one sort and one `np.add.reduceat` (no Python loop, no `np.add.at`
per element); the padding row, when there is one, gets none (as torch's Embedding).
"""

from __future__ import annotations

import numpy as np

from engine.autograd import Node, state
from engine.ops._functional import _link, _tensor
from engine.tensor import wrap

__all__ = ["embedding"]


def check_ids(ids: np.ndarray, vocab_size: int, layer: str = "Embedding") -> None:
    """Refuse ids that are not integers or lie outside [0, vocab_size), naming the id."""
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{layer} needs integer token ids (int32 or int64), got "
                        f"{ids.dtype.name} input; cast the ids to an integer type")
    if ids.size == 0:
        return
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= vocab_size:
        bad = low if low < 0 else high
        raise ValueError(f"{layer}: token id {bad} is outside the vocabulary: ids must be in "
                         f"[0, {vocab_size}) for vocab_size {vocab_size}")


def embedding(input, weight, padding_idx=None):  # noqa: A002 - MindSpore 2.x names
    """`weight[input]`: for ids of shape S, rows of the (vocab, E) table, shape S + (E,).

    Ids must be integers in [0, vocab) (TypeError / ValueError otherwise). The table's
    gradient is the scatter-sum of the output gradient over the ids; `padding_idx`'s row
    gets no gradient.
    """
    ids = _tensor(input)
    table = _tensor(weight, "weight")
    w = table._data
    if w.ndim != 2:
        raise ValueError(f"embedding: weight must be a (vocab_size, embedding_size) table, got "
                         f"shape {tuple(w.shape)}")
    idx = ids._data
    check_ids(idx, w.shape[0])
    out = w[idx]  # fancy indexing copies: the output never aliases the table
    if state.recording:
        link = _link(table)
        if link is not None:
            saved = (idx, w.shape, padding_idx)
            return wrap(out, Node(_embedding_vjp, saved, (None, link), "embedding"))
    return wrap(out)


def _embedding_vjp(g, saved, needs):
    idx, shape, padding_idx = saved
    if not needs[1]:
        return None, None
    return None, scatter_rows(g.reshape(-1, shape[1]), idx.reshape(-1), shape, padding_idx)


def scatter_rows(rows: np.ndarray, ids: np.ndarray, shape: tuple, padding_idx=None) -> np.ndarray:
    """A zero (vocab, E) array with each row of `rows` added into row `ids[i]`."""
    grad = np.zeros(shape, dtype=rows.dtype)
    if ids.size == 0:
        return grad
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_ids[1:] != sorted_ids[:-1])))
    grad[sorted_ids[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    if padding_idx is not None:
        grad[padding_idx] = 0
    return grad
