"""Attention kernels: the multi-head attention core (one tape node) and the causal mask.

`heads_attention` runs scaled dot-product attention for every head of every sample at
once: batched matmuls over (N, heads), the softmax done in place, dropout on the weights
in train mode only. It records ONE tape node whose rule is the whole analytic backward
pass (softmax included), so a layer costs one node for its attention instead of a dozen
small ops. Queries, keys and values arrive batch first as (N, L, E) with the heads side
by side along E (as an in-projection makes them); the heads are views, never copies.
For self-attention the three can arrive packed as one (N, L, 3E) array (the output of
one in-projection matmul), and the gradient goes back packed the same way.

`causal_mask` is ours: MindSpore 2.x has no causal-mask helper (its nn.Transformer has
no `generate_square_subsequent_mask`), so this gives the boolean mask MindSpore's
attention layers take, True where a query may NOT look (a key after it).
"""

from __future__ import annotations

import math

import numpy as np

from engine._dtype import to_numpy_dtype
from engine._random import rng
from engine.autograd import Node, state
from engine.ops._functional import _link
from engine.tensor import Tensor, wrap

__all__ = ["causal_mask"]


def causal_mask(size, dtype=None):
    """A (size, size) mask for attention that only looks back: entry (i, j) masks key j
    for query i when j > i. Boolean by default (True = not allowed, MindSpore's meaning
    for `attn_mask` and `src_mask`); with a floating `dtype`, 0 where allowed and -inf
    where not (an additive mask). Not MindSpore API: MindSpore 2.x has no such helper."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"causal_mask: size must be a positive int, got {size!r}")
    above = np.triu(np.ones((int(size), int(size)), dtype=bool), k=1)
    if dtype is None:
        return wrap(above)
    np_dtype = np.dtype(to_numpy_dtype(dtype))
    if np_dtype == np.bool_:
        return wrap(above)
    if np_dtype.kind != "f":
        raise TypeError(f"causal_mask: dtype must be bool or a floating dtype, got {dtype!r}")
    return wrap(np.where(above, -np.inf, 0.0).astype(np_dtype))


def _split(a: np.ndarray, heads: int) -> np.ndarray:
    """(N, T, H·D) → a (N, H, T, D) view."""
    n, t, e = a.shape
    return a.reshape(n, t, heads, e // heads).transpose(0, 2, 1, 3)


def heads_attention(q: Tensor, k: Tensor | None, v: Tensor | None, num_heads: int,
                    mask: np.ndarray | None = None, dropout_p: float = 0.0,
                    training: bool = False, probe=None):
    """Multi-head scaled dot-product attention; returns (output (N, L, H·Dv), weights
    (N, H, L, S)), the weights after dropout (what MindSpore and PyTorch return).

    q (N, L, E), k (N, S, E), v (N, S, Ev); or q packed (N, L, 3E) with k and v None
    (self-attention after one in-projection). `mask` is an additive float array that
    broadcasts to (N, H, L, S) (-inf where not allowed) and takes no gradient.
    `probe(name, array)`, when given, sees the live per-head weights after the softmax
    and before dropout as "weights" (N, H, L, S); it must copy what it keeps.
    """
    packed = k is None
    qd = q._data
    if qd.dtype.kind != "f":
        raise TypeError(f"attention: queries must be floating point, got {qd.dtype}")
    if packed:
        e = qd.shape[-1] // 3
        qa, ka, va = qd[..., :e], qd[..., e:2 * e], qd[..., 2 * e:]
    else:
        qa, ka, va = qd, k._data, v._data
    dtype = qa.dtype
    h = num_heads
    q4, k4, v4 = _split(qa, h), _split(ka, h), _split(va, h)
    scale = dtype.type(1.0 / math.sqrt(q4.shape[-1]))
    scores = np.matmul(q4, k4.transpose(0, 1, 3, 2))
    scores *= scale
    if mask is not None:
        scores += mask.astype(dtype, copy=False)
    # Softmax over the keys, in place: scores becomes P.
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    p = scores
    if probe is not None:
        probe("weights", p)
    keep = None
    if training and dropout_p > 0.0:
        if dropout_p >= 1.0:
            keep = np.zeros(p.shape, dtype)
        else:
            keep = (rng().random(p.shape, dtype=np.float32) >= np.float32(dropout_p))
            keep = keep.astype(dtype)
            keep *= dtype.type(1.0 / (1.0 - dropout_p))
        w = p * keep
    else:
        w = p
    o4 = np.matmul(w, v4)
    n, _, l, dv = o4.shape
    out = np.empty((n, l, h, dv), dtype)
    out.transpose(0, 2, 1, 3)[...] = o4
    out = out.reshape(n, l, h * dv)
    inputs = (q,) if packed else (q, k, v)
    if state.recording:
        links = tuple(_link(t) for t in inputs)
        if any(link is not None for link in links):
            saved = (qa, ka, va, p, keep, scale, h, packed, qd.shape)
            node = Node(_heads_attention_vjp, saved, links, "attention", n_out=2,
                        shapes=((out.shape, dtype), (w.shape, dtype)))
            return wrap(out, node, 0), wrap(w, node, 1)
    return wrap(out), wrap(w)


def _heads_attention_vjp(grads, saved, needs):
    qa, ka, va, p, keep, scale, h, packed, packed_shape = saved
    g_out, g_w = grads
    dtype = p.dtype
    q4, k4, v4 = _split(qa, h), _split(ka, h), _split(va, h)
    w = p if keep is None else p * keep
    if g_out is not None:
        go4 = _split(g_out.astype(dtype, copy=False), h)
        gw = np.matmul(go4, v4.transpose(0, 1, 3, 2))
        if g_w is not None:
            gw += g_w
    else:
        go4 = None
        gw = g_w.astype(dtype, copy=True)
    if keep is not None:
        gw *= keep
    # Softmax backward, in place on gw: gs = p * (gw - sum(gw * p)).
    dot = np.einsum("nhls,nhls->nhl", gw, p)[..., None]
    gw -= dot
    gw *= p
    gw *= scale
    gs = gw
    if packed:
        full = np.empty(packed_shape, dtype)
        e = packed_shape[-1] // 3
        gq = full[..., :e]
        gk = full[..., e:2 * e]
        gv = full[..., 2 * e:]
    else:
        gq = np.empty(qa.shape, dtype) if needs[0] else None
        gk = np.empty(ka.shape, dtype) if needs[1] else None
        gv = np.empty(va.shape, dtype) if needs[2] else None
    if gq is not None:
        np.matmul(gs, k4, out=_split(gq, h))
    if gk is not None:
        np.matmul(gs.transpose(0, 1, 3, 2), q4, out=_split(gk, h))
    if gv is not None:
        if go4 is None:
            gv[...] = 0
        else:
            np.matmul(w.transpose(0, 1, 3, 2), go4, out=_split(gv, h))
    if packed:
        return (full,)
    return gq, gk, gv
