"""Transformer layers (MindSpore 2.x): TransformerEncoderLayer, TransformerEncoder,
TransformerDecoderLayer and TransformerDecoder.

MindSpore's sub-Cell and Parameter names: `self_attn` (and the decoder's
`multihead_attn`) MultiheadAttention, the feed-forward `dense1` (d_model → dim_feedforward)
and `dense2`, LayerNorms `norm1`, `norm2` (`norm3`) with `gamma` and `beta`, Dropouts
`dropout`, `dropout1`, `dropout2` (`dropout3`). `activation` is 'relu' or 'gelu' (ops.relu,
ops.gelu: exact erf), an nn.ReLU or nn.GELU Cell (nn.GELU's default is the tanh form), or
the functions ops.relu / ops.gelu. `norm_first` puts each LayerNorm before its block (pre-LN)
instead of after the residual sum (post-LN, the default).

TransformerEncoder and TransformerDecoder hold `num_layers` deep copies of the layer
given (named `layers.0`, `layers.1`, …; independent Parameters that start equal), as
MindSpore 2.0–2.2 and PyTorch do, then the optional `norm`.
"""

import copy
import math

from engine import ops
from engine._dtype import DType, float32
from engine.common.initializer import HeUniform, Uniform
from engine.nn._checks import positive_int, real
from engine.nn.cell import Cell
from engine.nn.layers_attention import MultiheadAttention, _flag
from engine.nn.layers_basic import GELU, Dropout, ReLU
from engine.nn.layers_container import CellList
from engine.nn.layers_linear import Dense
from engine.nn.layers_norm_group import LayerNorm

# TransformerDecoder is left out of __all__ (so of engine.nn) until it has a palette node:
# every engine.nn layer is one (tests/app/catalogue). Import it from this module meanwhile.
__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer"]


def _activation(layer: str, activation):
    """(the function or Cell the feed-forward block applies, its name for exporters:
    'relu', 'gelu' (erf) or 'gelu_tanh')."""
    if isinstance(activation, str):
        key = activation.lower()
        if key == "relu":
            return ops.relu, "relu"
        if key == "gelu":
            return ops.gelu, "gelu"
        raise ValueError(f"{layer}: activation must be 'relu' or 'gelu', got {activation!r}")
    if isinstance(activation, ReLU):
        return activation, "relu"
    if isinstance(activation, GELU):
        return activation, "gelu_tanh" if activation.approximate else "gelu"
    if activation is ops.relu:
        return activation, "relu"
    if activation is ops.gelu:
        return activation, "gelu"
    raise ValueError(f"{layer}: activation must be 'relu', 'gelu', an nn.ReLU or nn.GELU "
                     f"Cell, or ops.relu or ops.gelu; got {activation!r}")


def _padding_mask_kind(mask) -> None:
    """MindSpore's check (an AssertionError there too)."""
    kind = getattr(getattr(mask, "_data", None), "dtype", None)
    if mask is not None and (kind is None or kind.kind not in "bf"):
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


class _Layer(Cell):
    """What the encoder and decoder layers share: checks, the feed-forward block."""

    _who = "Transformer"

    def _setup(self, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
               batch_first, norm_first, dtype, norms: int, attentions: tuple[str, ...]) -> None:
        who = self._who
        self.d_model = positive_int(who, "d_model", d_model)
        self.nhead = positive_int(who, "nhead", nhead)
        if self.d_model % self.nhead:
            raise ValueError(f"{who}: d_model ({self.d_model}) must be divisible by nhead "
                             f"({self.nhead})")
        self.dim_feedforward = positive_int(who, "dim_feedforward", dim_feedforward)
        self.dropout_num = real(who, "dropout", dropout, 0.0, 1.0)
        self.layernorm_eps = real(who, "layer_norm_eps", layer_norm_eps, 0.0)
        self.batch_first = _flag(who, "batch_first", batch_first)
        self.norm_first = _flag(who, "norm_first", norm_first)
        self.dtype = dtype
        for name in attentions:  # first, as in MindSpore: the Parameters' order follows
            setattr(self, name, MultiheadAttention(self.d_model, self.nhead,
                                                   dropout=self.dropout_num,
                                                   batch_first=self.batch_first, dtype=dtype))
        d, ff = self.d_model, self.dim_feedforward
        self.dense1 = Dense(d, ff, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(d)), dtype=dtype)
        self.dropout = Dropout(p=self.dropout_num)
        self.dense2 = Dense(ff, d, weight_init=HeUniform(math.sqrt(5)),
                            bias_init=Uniform(1 / math.sqrt(ff)), dtype=dtype)
        for i in range(1, norms + 1):
            setattr(self, f"norm{i}", LayerNorm((d,), epsilon=self.layernorm_eps, dtype=dtype))
        for i in range(1, norms + 1):
            setattr(self, f"dropout{i}", Dropout(p=self.dropout_num))
        self.activation1 = activation if isinstance(activation, str) else None
        self.activation, self.activation_name = _activation(who, activation)
        self._activation_spec = activation

    def _attention(self, attn: MultiheadAttention, x, mem, attn_mask, key_padding_mask):
        return attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                    need_weights=False)[0]

    def _ff_block(self, x, last: Dropout):
        return last(self.dense2(self.dropout(self.activation(self.dense1(x)))))

    def extend_repr(self) -> str:
        return (f"d_model={self.d_model}, nhead={self.nhead}, dim_feedforward="
                f"{self.dim_feedforward}, dropout={self.dropout_num}, activation="
                f"{self.activation_name}, batch_first={self.batch_first}, "
                f"norm_first={self.norm_first}")


class TransformerEncoderLayer(_Layer):
    """Self-attention and a feed-forward block, each with a residual connection and a
    LayerNorm: `src` (S, N, E), (N, S, E) with batch_first, or unbatched (S, E); `src_mask`
    (S, S) or (N·nhead, S, S); `src_key_padding_mask` (N, S). Returns src's shape."""

    _who = "TransformerEncoderLayer"

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, dtype: DType = float32):
        super().__init__()
        self._setup(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                    batch_first, norm_first, dtype, norms=2, attentions=("self_attn",))

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _padding_mask_kind(src_key_padding_mask)
        x = src
        if self.norm_first:
            y = self.norm1(x)
            x = x + self.dropout1(self._attention(self.self_attn, y, y, src_mask,
                                                  src_key_padding_mask))
            x = x + self._ff_block(self.norm2(x), self.dropout2)
        else:
            x = self.norm1(x + self.dropout1(self._attention(self.self_attn, x, x, src_mask,
                                                             src_key_padding_mask)))
            x = self.norm2(x + self._ff_block(x, self.dropout2))
        return x


class TransformerDecoderLayer(_Layer):
    """Self-attention over `tgt`, attention over `memory` (the encoder's output), and a
    feed-forward block, each with a residual connection and a LayerNorm. `tgt_mask` (T, T)
    (e.g. ops.causal_mask(T)), `memory_mask` (T, S), key padding masks (N, T) and (N, S)."""

    _who = "TransformerDecoderLayer"

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, dtype: DType = float32):
        super().__init__()
        self._setup(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                    batch_first, norm_first, dtype, norms=3,
                    attentions=("self_attn", "multihead_attn"))

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            y = self.norm1(x)
            x = x + self.dropout1(self._attention(self.self_attn, y, y, tgt_mask,
                                                  tgt_key_padding_mask))
            x = x + self.dropout2(self._attention(self.multihead_attn, self.norm2(x), memory,
                                                  memory_mask, memory_key_padding_mask))
            x = x + self._ff_block(self.norm3(x), self.dropout3)
        else:
            x = self.norm1(x + self.dropout1(self._attention(self.self_attn, x, x, tgt_mask,
                                                             tgt_key_padding_mask)))
            x = self.norm2(x + self.dropout2(self._attention(self.multihead_attn, x, memory,
                                                             memory_mask,
                                                             memory_key_padding_mask)))
            x = self.norm3(x + self._ff_block(x, self.dropout3))
        return x


def _clones(layer, kind: type, who: str, num_layers) -> CellList:
    if not isinstance(layer, kind):
        raise TypeError(f"{who}: the layer must be a {kind.__name__}, got "
                        f"{type(layer).__name__}")
    count = positive_int(who, "num_layers", num_layers)
    return CellList([copy.deepcopy(layer) for _ in range(count)])


def _norm(who: str, norm):
    if norm is not None and not isinstance(norm, Cell):
        raise TypeError(f"{who}: norm must be a Cell (e.g. a LayerNorm) or None, got "
                        f"{type(norm).__name__}")
    return norm


class TransformerEncoder(Cell):
    """`num_layers` TransformerEncoderLayers in a row (copies of `encoder_layer`), then
    `norm` if given. Inputs as TransformerEncoderLayer's."""

    def __init__(self, encoder_layer, num_layers: int, norm=None):
        super().__init__()
        self.layers = _clones(encoder_layer, TransformerEncoderLayer, "TransformerEncoder",
                              num_layers)
        self.num_layers = len(self.layers)
        self.norm = _norm("TransformerEncoder", norm)

    def construct(self, src, src_mask=None, src_key_padding_mask=None):
        _padding_mask_kind(src_key_padding_mask)
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def extend_repr(self) -> str:
        return f"num_layers={self.num_layers}"


class TransformerDecoder(Cell):
    """`num_layers` TransformerDecoderLayers in a row (copies of `decoder_layer`), each
    attending to the same `memory`, then `norm` if given."""

    def __init__(self, decoder_layer, num_layers: int, norm=None):
        super().__init__()
        self.layers = _clones(decoder_layer, TransformerDecoderLayer, "TransformerDecoder",
                              num_layers)
        self.num_layers = len(self.layers)
        self.norm = _norm("TransformerDecoder", norm)

    def construct(self, tgt, memory, tgt_mask=None, memory_mask=None,
                  tgt_key_padding_mask=None, memory_key_padding_mask=None):
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                           tgt_key_padding_mask=tgt_key_padding_mask,
                           memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def extend_repr(self) -> str:
        return f"num_layers={self.num_layers}"
