"""`MultiheadAttention` (MindSpore 2.x): in-projection, attention per head, out-projection.

MindSpore's names, defaults and Parameter layout: `in_proj_weight` (3E, E) holding the
query, key and value projections stacked in that order, `in_proj_bias` (3E,), and
`out_proj` a Dense (E → E); when kdim or vdim differ from embed_dim, `q_proj_weight`
(E, E), `k_proj_weight` (E, kdim) and `v_proj_weight` (E, vdim) instead of
`in_proj_weight`. Masks as MindSpore (and PyTorch) take them: a boolean mask is True
where attention is NOT allowed; a float mask is added to the scores. When both masks
are given each is turned into its additive form and they are summed (PyTorch's rule;
MindSpore does the same when both have one kind).

The attention itself is one tape node (engine.ops._attention.heads_attention); for
self-attention (query, key and value the same Tensor) the in-projection is one matmul.
`probe` (not MindSpore API): when set to a callable, each forward calls
`probe("weights", array)` with the live per-head weights (N, num_heads, L, S) after the
softmax and before dropout; the probe copies what it keeps. None costs nothing.
"""

import math

import numpy as np

from engine import ops
from engine._dtype import DType, float32
from engine.common.initializer import HeUniform, Uniform, XavierUniform
from engine.nn._checks import float_dtype, positive_int, real
from engine.nn.cell import Cell
from engine.nn.layers_linear import Dense, make_param
from engine.ops._attention import heads_attention
from engine.tensor import Tensor

__all__ = ["MultiheadAttention"]


def _flag(layer: str, name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{layer}: {name} must be True or False, got {value!r}")
    return bool(value)


def additive_mask(mask, name: str, dtype: np.dtype) -> np.ndarray:
    """A mask Tensor as the float array added to the scores: a boolean mask gives -inf
    where True (and uint8 counts as boolean, as in MindSpore), a float mask as it is."""
    arr = mask._data if isinstance(mask, Tensor) else np.asarray(mask)
    if arr.dtype == np.bool_ or arr.dtype == np.uint8:
        return np.where(arr.astype(bool), dtype.type(-np.inf), dtype.type(0)).astype(dtype)
    if arr.dtype.kind != "f":
        raise ValueError(f"MultiheadAttention: {name} must be a bool or floating-point mask, "
                         f"got dtype {arr.dtype}")
    return arr.astype(dtype, copy=False)


class MultiheadAttention(Cell):
    """Multi-head attention: Concat(head_1, …, head_h) W_o, head_i = Attention(Q W_i^Q,
    K W_i^K, V W_i^V). Inputs (L, N, E) (or (N, L, E) with batch_first, or unbatched
    (L, E)); returns `(attn_output, attn_weights)`, the weights averaged over the heads
    (N, L, S) or per head (N, num_heads, L, S) with `average_attn_weights=False`, or
    `(attn_output,)` with `need_weights=False`. `dropout` applies to the weights in train
    mode only. `add_bias_kv` and `add_zero_attn` are not supported (NotImplementedError).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 has_bias: bool = True, add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 dtype: DType = float32):
        super().__init__()
        who = "MultiheadAttention"
        self.embed_dim = positive_int(who, "embed_dim", embed_dim)
        self.num_heads = positive_int(who, "num_heads", num_heads)
        if self.embed_dim % self.num_heads:
            raise ValueError(f"{who}: embed_dim ({self.embed_dim}) must be divisible by "
                             f"num_heads ({self.num_heads})")
        self.kdim = self.embed_dim if kdim is None else positive_int(who, "kdim", kdim)
        self.vdim = self.embed_dim if vdim is None else positive_int(who, "vdim", vdim)
        self.dropout = real(who, "dropout", dropout, 0.0, 1.0)
        self.has_bias = _flag(who, "has_bias", has_bias)
        self.batch_first = _flag(who, "batch_first", batch_first)
        for name, value in (("add_bias_kv", add_bias_kv), ("add_zero_attn", add_zero_attn)):
            if _flag(who, name, value):
                raise NotImplementedError(f"{who}: {name}=True is not supported by this engine "
                                          "(only False)")
        self.add_zero_attn = False
        self.bias_k = self.bias_v = None
        self.head_dim = self.embed_dim // self.num_heads
        self._qkv_same_embed_dim = self.kdim == self.embed_dim and self.vdim == self.embed_dim
        np_dtype = float_dtype(who, dtype)
        self.dtype = dtype
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = make_param(XavierUniform(), (3 * e, e), None, np_dtype)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = make_param(XavierUniform(), (e, e), None, np_dtype)
            self.k_proj_weight = make_param(XavierUniform(), (e, self.kdim), None, np_dtype)
            self.v_proj_weight = make_param(XavierUniform(), (e, self.vdim), None, np_dtype)
            self.in_proj_weight = None
        self.in_proj_bias = (make_param("zeros", (3 * e,), None, np_dtype)
                             if self.has_bias else None)
        self.out_proj = Dense(e, e, weight_init=HeUniform(math.sqrt(5)),
                              bias_init=Uniform(1 / math.sqrt(e)), has_bias=self.has_bias,
                              dtype=dtype)
        self.probe = None

    # -- forward -------------------------------------------------------------------------
    def construct(self, query, key, value, key_padding_mask=None, need_weights: bool = True,
                  attn_mask=None, average_attn_weights: bool = True):
        self_attention = query is key and key is value
        batched = self._check_inputs(query, key, value)
        if not batched:
            query, key, value = (ops.expand_dims(t, 1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = ops.expand_dims(key_padding_mask, 0)
        # Batch first inside: (N, L, E).
        if not self.batch_first:
            query = ops.swapaxes(query, 0, 1)
            if self_attention:
                key = value = query
            else:
                key, value = ops.swapaxes(key, 0, 1), ops.swapaxes(value, 0, 1)
        n, tgt, _ = query.shape
        src = key.shape[1]
        mask = self._mask(key_padding_mask, attn_mask, n, tgt, src, query._data.dtype)
        e, b = self.embed_dim, self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim and self_attention:
            qkv = ops.dense(query, self.in_proj_weight, b)
            out, weights = heads_attention(qkv, None, None, self.num_heads, mask, self.dropout,
                                           self.training, self.probe)
        else:
            if self._qkv_same_embed_dim:
                w = self.in_proj_weight
                wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
            else:
                wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
            q = ops.dense(query, wq, bq)
            k = ops.dense(key, wk, bk)
            v = ops.dense(value, wv, bv)
            out, weights = heads_attention(q, k, v, self.num_heads, mask, self.dropout,
                                           self.training, self.probe)
        out = ops.dense(out, self.out_proj.weight, self.out_proj.bias)
        if not self.batch_first:
            out = ops.swapaxes(out, 0, 1)
        if not batched:
            out = ops.squeeze(out, 1)
        if not need_weights:
            return (out,)
        if average_attn_weights:
            weights = ops.mean(weights, 1)
        if not batched:
            weights = ops.squeeze(weights, 0)
        return out, weights

    def _check_inputs(self, query, key, value) -> bool:
        """Whether the inputs are batched (3-D); ValueError naming shapes that don't fit."""
        who = "MultiheadAttention"
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor):
                raise TypeError(f"{who}: {name} must be a Tensor, got {type(t).__name__}")
        qs, ks, vs = tuple(query.shape), tuple(key.shape), tuple(value.shape)
        if len(qs) not in (2, 3) or not len(qs) == len(ks) == len(vs):
            raise ValueError(f"{who}: query, key and value must all be 3-D (batched) or 2-D "
                             f"(unbatched), got shapes {qs}, {ks} and {vs}")
        for name, shape, want in (("query", qs, self.embed_dim), ("key", ks, self.kdim),
                                  ("value", vs, self.vdim)):
            if shape[-1] != want:
                what = {"query": "embed_dim", "key": "kdim", "value": "vdim"}[name]
                raise ValueError(f"{who}: {name} must have {want} features ({what}) on its "
                                 f"last axis, got shape {shape}")
        if ks[:-1] != vs[:-1]:
            raise ValueError(f"{who}: key and value must have the same sequence length and "
                             f"batch size, got shapes {ks} and {vs}")
        if len(qs) == 3:
            batch_axis = 0 if self.batch_first else 1
            if qs[batch_axis] != ks[batch_axis]:
                raise ValueError(f"{who}: query and key must have the same batch size (axis "
                                 f"{batch_axis}), got shapes {qs} and {ks}")
        return len(qs) == 3

    def _mask(self, key_padding_mask, attn_mask, n: int, tgt: int, src: int,
              dtype: np.dtype) -> np.ndarray | None:
        """The additive mask (-inf where not allowed) broadcasting to (N, heads, L, S)."""
        if dtype.kind != "f":
            dtype = np.dtype(np.float32)
        mask = None
        if attn_mask is not None:
            am = additive_mask(attn_mask, "attn_mask", dtype)
            if am.ndim == 2:
                if am.shape != (tgt, src):
                    raise ValueError(f"MultiheadAttention: a 2-D attn_mask must have shape "
                                     f"{(tgt, src)} (L, S), got {am.shape}")
                mask = am[None, None]
            elif am.ndim == 3:
                want = (n * self.num_heads, tgt, src)
                if am.shape != want:
                    raise ValueError(f"MultiheadAttention: a 3-D attn_mask must have shape "
                                     f"{want} (N·num_heads, L, S), got {am.shape}")
                mask = am.reshape(n, self.num_heads, tgt, src)
            else:
                raise ValueError(f"MultiheadAttention: attn_mask must be 2-D or 3-D, got "
                                 f"shape {am.shape}")
        if key_padding_mask is not None:
            kpm = additive_mask(key_padding_mask, "key_padding_mask", dtype)
            if kpm.shape != (n, src):
                raise ValueError(f"MultiheadAttention: key_padding_mask must have shape "
                                 f"{(n, src)} (N, S), got {kpm.shape}")
            kpm = kpm[:, None, None, :]
            mask = kpm if mask is None else mask + kpm
        return mask

    def extend_repr(self) -> str:
        s = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"
        if not self._qkv_same_embed_dim:
            s += f", kdim={self.kdim}, vdim={self.vdim}"
        return s + f", has_bias={self.has_bias}, batch_first={self.batch_first}"
