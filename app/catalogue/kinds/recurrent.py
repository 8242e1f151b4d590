"""Recurrent nodes: RNN, LSTM and GRU (category "Sequences").

What this family adds to the catalogue (see app.catalogue.kinds for each table's form).
Each is an op node (its Cell, in app.compiler.kinds.recurrent, is the engine layer with
its outputs flattened, one port each): outputs `output`, `h_n` (and `c_n` for an LSTM);
optional inputs `hx` (and `cx`), the initial states, zeros when left open. The node's
batch_first defaults to on, as the data sets give (N, T, features); the engine layer keeps
MindSpore's default (off).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import Layer, Preset, Tweak
from app.catalogue.spec import NodeType, ParamSpec, PortSpec
from engine import nn

LAYERS: dict[str, Layer] = {}
PARAMS: dict[str, tuple[ParamSpec, ...]] = {}
DEFAULTS: dict[str, dict[str, object]] = {}
TWEAKS: dict[str, dict[str, Tweak]] = {}

_STATE = "(num_directions·num_layers, N, hidden_size)"


def _params(kind: str) -> tuple[ParamSpec, ...]:
    specs = [
        ParamSpec("input_size", "int", 1, minimum=1,
                  description="Features per time step of the input (its last axis); follows "
                  "what arrives."),
        ParamSpec("hidden_size", "int", 32, minimum=1,
                  description="Units of the hidden state (and of the output per direction)."),
        ParamSpec("num_layers", "int", 1, minimum=1, maximum=16,
                  description=f"How many {kind} layers are stacked; each reads the previous "
                  "one's output."),
    ]
    if kind == "RNN":
        specs.append(ParamSpec("nonlinearity", "choice", "tanh", choices=("tanh", "relu"),
                               description="The activation of the hidden state: tanh, or "
                               "relu (unbounded: may explode on long sequences)."))
    specs += [
        ParamSpec("has_bias", "bool", True,
                  description="Add the biases bias_ih and bias_hh to the gates."),
        ParamSpec("batch_first", "bool", True,
                  description="On: the input is (N, T, features), as the data sets give it "
                  "(this node's default); off: (T, N, features), MindSpore's default, with "
                  "the batch axis second (use a Transpose to get there)."),
        ParamSpec("dropout", "float", 0.0, minimum=0.0, maximum=0.99,
                  description="Dropout probability on each layer's output but the last's, "
                  "while training only; needs num_layers ≥ 2 to do anything."),
        ParamSpec("bidirectional", "bool", False,
                  description="Also run the sequence backwards; the output then has "
                  "2·hidden_size features (forward, then backward)."),
    ]
    return tuple(specs)


def _summary(kind: str):
    def summary(p: Mapping[str, Any]) -> str:
        text = f"{kind} {p['input_size']}→{p['hidden_size']}"
        if p["num_layers"] > 1:
            text += f" ×{p['num_layers']}"
        if p["bidirectional"]:
            text = "Bi" + text
        if kind == "RNN" and p["nonlinearity"] == "relu":
            text += " relu"
        return text

    return summary


_IN = PortSpec("in", "The sequence: (N, T, features), or (T, N, features) with batch_first "
               "off.")
_HX = PortSpec("hx", f"Initial hidden state {_STATE}; zeros when not connected.", True)
_CX = PortSpec("cx", f"Initial cell state {_STATE}, given with hx; zeros when neither is "
               "connected.", True)
_OUTPUT = PortSpec("output", "The last layer's hidden state at every step: (N, T, "
                   "D·hidden_size), D = 2 when bidirectional.")
_H_N = PortSpec("h_n", "Each layer's (and direction's) hidden state after the last step: "
                f"{_STATE}.")
_C_N = PortSpec("c_n", "Each layer's (and direction's) cell state after the last step: "
                f"{_STATE}.")

TYPES: list[NodeType] = [
    NodeType("LSTM", "Sequences",
             "Long short-term memory: a recurrent layer whose gates (input, forget, cell, "
             "output) decide what its cell state keeps over time.",
             (_IN, _HX, _CX), (_OUTPUT, _H_N, _C_N), _params("LSTM"), _summary("LSTM"),
             cell=nn.LSTM),
    NodeType("GRU", "Sequences",
             "Gated recurrent unit: a recurrent layer with reset and update gates, lighter "
             "than an LSTM.",
             (_IN, _HX), (_OUTPUT, _H_N), _params("GRU"), _summary("GRU"), cell=nn.GRU),
    NodeType("RNN", "Sequences",
             "Elman recurrent layer: h_t = tanh(W_ih x_t + W_hh h_(t-1) + b), the simplest "
             "recurrence.",
             (_IN, _HX), (_OUTPUT, _H_N), _params("RNN"), _summary("RNN"), cell=nn.RNN),
]

SYNONYMS: dict[str, tuple[str, ...]] = {
    "LSTM": ("recurrent", "long short-term memory", "BiLSTM", "sequence", "time series"),
    "GRU": ("recurrent", "gated recurrent unit", "sequence"),
    "RNN": ("recurrent", "Elman", "vanilla RNN", "sequence"),
}
PRESETS: list[Preset] = [
    Preset("BiLSTM", "LSTM", {"bidirectional": True},
           "A bidirectional LSTM: reads the sequence both ways.",
           keywords=("bidirectional", "sequence")),
]
