"""MultiheadAttention and the Transformer layers (category "Sequences").

What this family adds to the catalogue (see app.catalogue.kinds for each table's form).
The nodes are TYPES with their own ports; `cell` names the engine layer (for the docs), but
they compile to the Cells of app.compiler.kinds.attention_cells (OP_CELLS come first),
which subclass those layers, so Parameter names stay MindSpore's.

- `batch_first` is on by default on these nodes (MindSpore's default is off): the rest of
  the editor's data is batch first, (N, L, E), as the Input node and Embedding give it;
  with it off a node expects (L, N, E), the batch at axis 1.
- `causal`: each position attends only to itself and the positions before it (the mask
  of engine.ops.causal_mask). A character-level Transformer language model is built as
  Embedding → positional encoding → TransformerEncoder (causal on) → Slice(last step) →
  Dense over the vocabulary.
- MultiheadAttention's key and value are optional ports: left unconnected it attends to
  its query (self-attention); its weights port gives the attention weights, averaged
  over the heads (N, L, S), or per head (N, heads, L, S) with average_attn_weights off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import Layer, Preset, Tweak
from app.catalogue.spec import NodeType, ParamSpec, PortSpec
from engine import nn

CATEGORY = "Sequences"

LAYERS: dict[str, Layer] = {}
PARAMS: dict[str, tuple[ParamSpec, ...]] = {}
DEFAULTS: dict[str, dict[str, object]] = {}
TWEAKS: dict[str, dict[str, Tweak]] = {}

_BATCH_FIRST = ("Inputs are (N, L, E), batch first, as the editor's data is (MindSpore's "
                "default is off: then (L, N, E), the batch at axis 1).")
_DROPOUT = "Probability of zeroing each attention weight and activation, in train mode only."


def _causal(default: bool) -> ParamSpec:
    return ParamSpec("causal", "bool", default,
                     description="Each position attends only to itself and earlier ones "
                     "(the causal mask), as a language model predicting the next token must.")


def _layer_params(causal_default: bool) -> tuple[ParamSpec, ...]:
    return (
        ParamSpec("d_model", "int", 8, minimum=1,
                  description="Features per time step (E, the last axis); follows the "
                  "input. Must be divisible by nhead."),
        ParamSpec("nhead", "int", 2, minimum=1,
                  description="Attention heads; each looks at d_model / nhead features."),
        ParamSpec("dim_feedforward", "int", 2048, minimum=1,
                  description="Width of the feed-forward block between its two Dense "
                  "layers (MindSpore's default 2048; 4 × d_model is usual)."),
        ParamSpec("dropout", "float", 0.1, minimum=0.0, maximum=0.99, description=_DROPOUT),
        ParamSpec("activation", "choice", "relu", choices=("relu", "gelu"),
                  description="Nonlinearity of the feed-forward block (gelu: exact erf form)."),
        ParamSpec("layer_norm_eps", "float", 1e-5, minimum=0.0,
                  description="Added to the variance in the LayerNorms, for stability."),
        ParamSpec("batch_first", "bool", True, description=_BATCH_FIRST),
        ParamSpec("norm_first", "bool", False,
                  description="LayerNorm before each block (pre-LN, steadier to train deep) "
                  "instead of after the residual sum (post-LN, the original)."),
        _causal(causal_default),
    )


MOST_LAYERS = 128  # a stack deeper than any the editor trains; more is a typo
_ENCODER = _layer_params(False)
_DECODER = _layer_params(True)
_STACK = (*_ENCODER[:2],
          ParamSpec("num_layers", "int", 2, minimum=1, maximum=MOST_LAYERS,
                    description="Encoder layers in a row; each has weights of its own."),
          *_ENCODER[2:-1],
          ParamSpec("final_norm", "bool", False,
                    description="A LayerNorm after the last layer (usual with norm_first)."),
          _ENCODER[-1])

_MHA = (
    ParamSpec("embed_dim", "int", 8, minimum=1,
              description="Features of the query (E, its last axis) and of the output; "
                          "follows the input. Must be divisible by num_heads."),
    ParamSpec("num_heads", "int", 2, minimum=1,
              description="Attention heads; each looks at embed_dim / num_heads features."),
    ParamSpec("dropout", "float", 0.0, minimum=0.0, maximum=0.99,
              description="Probability of zeroing each attention weight, in train mode only."),
    ParamSpec("has_bias", "bool", True,
              description="Biases in the input and output projections."),
    ParamSpec("kdim", "int", None, optional=True, minimum=1,
              description="Features of the key input; none: embed_dim."),
    ParamSpec("vdim", "int", None, optional=True, minimum=1,
              description="Features of the value input; none: embed_dim."),
    ParamSpec("batch_first", "bool", True, description=_BATCH_FIRST),
    ParamSpec("average_attn_weights", "bool", True,
              description="The weights port gives the mean over heads (N, L, S); off: one "
                          "map per head (N, heads, L, S)."),
    _causal(False),
)


def _mha_summary(p: Mapping[str, Any]) -> str:
    causal = " causal" if p["causal"] else ""
    return f"Attention {p['embed_dim']}, {p['num_heads']} heads{causal}"


def _layer_summary(name: str) -> Any:
    def summary(p: Mapping[str, Any]) -> str:
        layers = f"{p['num_layers']}× " if "num_layers" in p else ""
        causal = " causal" if p["causal"] else ""
        return f"{name} {layers}{p['d_model']}, {p['nhead']} heads{causal}"

    return summary


_SEQ = "A sequence (N, L, E): samples, time steps, features."

TYPES: list[NodeType] = [
    NodeType("MultiheadAttention", CATEGORY,
             "Multi-head attention: each query position mixes the values, weighted by how "
             "well its query matches each key.",
             (PortSpec("query", "The sequence asking (N, L, E)."),
              PortSpec("key", "The sequence looked at (N, S, kdim); unconnected: the query "
                       "(self-attention).", optional=True),
              PortSpec("value", "What is mixed (N, S, vdim); unconnected: the key.",
                       optional=True),
              PortSpec("key_padding_mask", "(N, S): True (or -inf) where a key is padding "
                       "and must be ignored.", optional=True),
              PortSpec("attn_mask", "(N, L, S): True (or -inf) where a query may not look "
                       "at a key; float masks are added to the scores.", optional=True)),
             (PortSpec("output", "The attended sequence (N, L, E)."),
              PortSpec("weights", "The attention weights (N, L, S), or per head "
                       "(N, heads, L, S).")),
             _MHA, _mha_summary, cell=nn.MultiheadAttention,
             keywords=("self-attention", "transformer", "heads")),
    NodeType("TransformerEncoderLayer", CATEGORY,
             "Self-attention and a feed-forward block, each with a residual connection and "
             "a LayerNorm.",
             (PortSpec("in", _SEQ),), (PortSpec("out", "The sequence, same shape."),),
             _ENCODER, _layer_summary("Encoder layer"), cell=nn.TransformerEncoderLayer,
             keywords=("transformer", "attention")),
    NodeType("TransformerEncoder", CATEGORY,
             "A stack of Transformer encoder layers (self-attention + feed-forward).",
             (PortSpec("in", _SEQ),), (PortSpec("out", "The sequence, same shape."),),
             _STACK, _layer_summary("Encoder"), cell=nn.TransformerEncoder,
             keywords=("transformer", "attention", "gpt", "bert", "language model")),
    NodeType("TransformerDecoderLayer", CATEGORY,
             "Self-attention over the target (causal by default), attention over the "
             "encoder's output (memory) and a feed-forward block.",
             (PortSpec("tgt", "The target sequence (N, T, E)."),
              PortSpec("memory", "The encoder's output (N, S, E).")),
             (PortSpec("out", "The target sequence, same shape."),),
             _DECODER, _layer_summary("Decoder layer"), cell=nn.TransformerDecoderLayer,
             keywords=("transformer", "attention", "cross-attention")),
]

SYNONYMS: dict[str, tuple[str, ...]] = {}
PRESETS: list[Preset] = []
