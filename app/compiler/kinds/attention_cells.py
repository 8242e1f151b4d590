"""The Cells the attention family's nodes compile to: the engine's layers, called the way a
node's ports and hyper-parameters say (subclasses, so Parameter names stay MindSpore's).

- MultiheadAttention: unconnected `key` means self-attention (key = value = query); an
  unconnected `value` takes the key. `attn_mask` arriving on an edge is per sample,
  (N, L, S), and applies to every head. Returns (output, weights), one per port.
- `causal` (every node): queries may not look at later positions (ops.causal_mask),
  combined with any mask given; this is how a character-level Transformer language model
  is built in the editor.
- TransformerEncoder builds its TransformerEncoderLayer from the node's values, and a
  final LayerNorm when `final_norm` is on.
"""

from __future__ import annotations

import numpy as np

from engine import Tensor, nn, ops


def _causal(tgt: int, src: int) -> Tensor:
    return Tensor(np.triu(np.ones((tgt, src), dtype=bool), k=1))


def _with_causal(mask, tgt: int, src: int):
    """`mask` ((N·heads, L, S), bool or float) with the causal mask joined in."""
    above = np.triu(np.ones((tgt, src), dtype=bool), k=1)
    data = mask.asnumpy()
    if data.dtype == np.bool_:
        return ops.logical_or(mask, Tensor(above))
    return mask + Tensor(np.where(above, -np.inf, 0.0).astype(data.dtype))


class MultiheadAttentionCell(nn.MultiheadAttention):
    """The MultiheadAttention node: ports query, key, value, key_padding_mask, attn_mask."""

    def __init__(self, embed_dim: int = 8, num_heads: int = 2, dropout: float = 0.0,
                 has_bias: bool = True, kdim: int | None = None, vdim: int | None = None,
                 batch_first: bool = True, average_attn_weights: bool = True,
                 causal: bool = False):
        super().__init__(embed_dim, num_heads, dropout=dropout, has_bias=has_bias, kdim=kdim,
                         vdim=vdim, batch_first=batch_first)
        self.average_attn_weights = bool(average_attn_weights)
        self.causal = bool(causal)

    def construct(self, query, key=None, value=None, key_padding_mask=None, attn_mask=None):
        if key is None:
            key = query
        if value is None:
            value = key
        time = 1 if self.batch_first else 0
        tgt, src = query.shape[time], key.shape[time]
        if attn_mask is not None:  # per sample (N, L, S) → (N·heads, L, S)
            n = attn_mask.shape[0]
            attn_mask = ops.reshape(ops.tile(ops.expand_dims(attn_mask, 1),
                                             (1, self.num_heads, 1, 1)),
                                    (n * self.num_heads, tgt, src))
        if self.causal:
            attn_mask = _causal(tgt, src) if attn_mask is None else \
                _with_causal(attn_mask, tgt, src)
        return super().construct(query, key, value, key_padding_mask=key_padding_mask,
                                 attn_mask=attn_mask,
                                 average_attn_weights=self.average_attn_weights)

    def extend_repr(self) -> str:
        return super().extend_repr() + (", causal=True" if self.causal else "")


def _mask(causal: bool, x, batch_first: bool):
    if not causal:
        return None
    length = x.shape[1 if batch_first else 0]
    return _causal(length, length)


class TransformerEncoderLayerCell(nn.TransformerEncoderLayer):
    """The TransformerEncoderLayer node: one input, `causal` for a language model."""

    def __init__(self, d_model: int = 8, nhead: int = 2, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = True, norm_first: bool = False, causal: bool = False):
        super().__init__(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                         batch_first, norm_first)
        self.causal = bool(causal)

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        mask = _mask(self.causal, src, self.batch_first) if src_mask is None else src_mask
        return super().construct(src, mask, src_key_padding_mask)


class TransformerEncoderCell(nn.TransformerEncoder):
    """The TransformerEncoder node: `num_layers` layers built from the node's values."""

    def __init__(self, d_model: int = 8, nhead: int = 2, num_layers: int = 2,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: str = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = True,
                 norm_first: bool = False, final_norm: bool = False, causal: bool = False):
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                           layer_norm_eps, batch_first, norm_first)
        norm = nn.LayerNorm((d_model,), epsilon=layer_norm_eps) if final_norm else None
        super().__init__(layer, num_layers, norm)
        self.batch_first = bool(batch_first)
        self.causal = bool(causal)

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        mask = _mask(self.causal, src, self.batch_first) if src_mask is None else src_mask
        return super().construct(src, mask, src_key_padding_mask)


class TransformerDecoderLayerCell(nn.TransformerDecoderLayer):
    """The TransformerDecoderLayer node: ports tgt and memory; `causal` masks tgt's
    self-attention (each target position sees itself and the ones before)."""

    def __init__(self, d_model: int = 8, nhead: int = 2, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = True, norm_first: bool = False, causal: bool = True):
        super().__init__(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                         batch_first, norm_first)
        self.causal = bool(causal)

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        mask = _mask(self.causal, tgt, self.batch_first) if tgt_mask is None else tgt_mask
        return super().construct(tgt, memory, mask, memory_mask, tgt_key_padding_mask,
                                 memory_key_padding_mask)


OP_CELLS: dict[str, type] = {
    "MultiheadAttention": MultiheadAttentionCell,
    "TransformerEncoderLayer": TransformerEncoderLayerCell,
    "TransformerEncoder": TransformerEncoderCell,
    "TransformerDecoderLayer": TransformerDecoderLayerCell,
}
