"""Converters for sequence ops: LSTM, GRU, RNN, Embedding (Gather on a table), attention.

Recurrent layers arrive as `cellwright::Recurrent` (patterns_sequence): one or more ONNX
LSTM/GRU/RNN nodes, one per layer, whose weights are re-laid into the engine's layout.
ONNX stacks an LSTM's gates i, o, f, c and a GRU's z, r, h; the engine (as torch and
MindSpore) i, f, g, o and r, z, n. ONNX's B is [Wb, Rb] per direction: bias_ih, bias_hh.
"""

from __future__ import annotations

import numpy as np

from app.onnx_import import convert_basic
from app.onnx_import.build import Builder
from app.onnx_import.convert_basic import Converter, refuse
from app.onnx_import.ir import OnnxNode
from app.onnx_import.patterns_sequence import STATES, is_zero

GATES = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}  # ONNX gate blocks, engine order
ACTIVATIONS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"], "RNN": ["tanh"]}
DIRECTIONS = {"forward": 1, "bidirectional": 2}


def _used(b: Builder, name: str) -> bool:
    if not name:
        return False
    outputs = set(getattr(b.folded, "outputs", ()))
    return name in outputs or any(name in node.inputs for node in b.folded.nodes)


def _checked(b: Builder, layer: OnnxNode, kind: str) -> str:
    """Refuses what the engine's layers don't compute; the RNN's nonlinearity."""
    direction = layer.attr("direction", "forward")
    if direction not in DIRECTIONS:
        raise refuse(layer, f"direction '{direction}' is not supported (forward, "
                     "bidirectional).")
    if layer.attr("layout", 0):
        raise refuse(layer, "layout 1 (batch-first ONNX recurrent nodes) is not supported; "
                     "torch.onnx writes layout 0.")
    if layer.attr("clip") is not None:
        raise refuse(layer, "cell clipping (clip) is not supported.")
    if layer.attr("input_forget", 0):
        raise refuse(layer, "coupled input and forget gates (input_forget) are not supported.")
    if kind == "GRU" and not layer.attr("linear_before_reset", 0):
        raise refuse(layer, "linear_before_reset 0 is not supported: Cellwright's GRU (as "
                     "torch's) applies the reset gate after the hidden linear map "
                     "(linear_before_reset 1).")
    peepholes = layer.inputs[7] if kind == "LSTM" and len(layer.inputs) > 7 else ""
    if peepholes and not is_zero(b.folded, peepholes):
        raise refuse(layer, "peephole weights (P) are not supported.")
    lengths = layer.inputs[4] if len(layer.inputs) > 4 else ""
    if lengths:
        steps = (b.shape(layer.inputs[0]) or (None,))[0]
        value = b.const(lengths)
        pair = b.varying(lengths)
        values = [value] if value is not None else list(pair or [])
        if not values or any(np.any(v != steps) for v in values):
            raise refuse(layer, "sequence_lens (sequences of different lengths) is not "
                         "supported; give every sequence all its steps.")
    dirs = DIRECTIONS[direction]
    names = [str(a).lower() for a in (layer.attr("activations") or [])]
    default = ACTIVATIONS[kind]
    if kind == "RNN" and names in ([], ["tanh"] * dirs):
        return "tanh"
    if kind == "RNN" and names == ["relu"] * dirs:
        return "relu"
    if names and names != default * dirs:
        want = ", ".join(a.capitalize() for a in default)
        raise refuse(layer, f"activations {', '.join(layer.attr('activations'))} are not "
                     f"supported; {kind} computes {want}"
                     + (" (or Relu)" if kind == "RNN" else "") + ".")
    return "tanh"


def _blocks(array: np.ndarray, order: list[int]) -> np.ndarray:
    parts = np.split(np.asarray(array, np.float32), len(order), axis=0)
    return np.concatenate([parts[i] for i in order], axis=0)


def _weights(b: Builder, layer: OnnxNode, kind: str, k: int, dirs: int, bias: bool) -> dict:
    arrays = [b.const(layer.inputs[i]) for i in (1, 2)]
    if any(a is None for a in arrays):
        raise refuse(layer, "its weights W and R must be constants.")
    w, r = arrays
    gates = len(GATES[kind]) * int(layer.attr("hidden_size", r.shape[-1]))
    given = b.const(layer.inputs[3]) if len(layer.inputs) > 3 and layer.inputs[3] else None
    found = {}
    for d in range(dirs):
        suffix = f"l{k}{'_reverse' if d else ''}"
        found[f"weight_ih_{suffix}"] = _blocks(w[d], GATES[kind])
        found[f"weight_hh_{suffix}"] = _blocks(r[d], GATES[kind])
        if bias:
            row = np.zeros(2 * gates, np.float32) if given is None else given[d]
            found[f"bias_ih_{suffix}"] = _blocks(row[:gates], GATES[kind])
            found[f"bias_hh_{suffix}"] = _blocks(row[gates:], GATES[kind])
    return found


def recurrent(b: Builder, n: OnnxNode) -> None:
    kind, layers = n.attr("kind"), n.attr("layers")
    first = layers[0]
    nonlinearity = {_checked(b, layer, kind) for layer in layers}
    dirs = DIRECTIONS[first.attr("direction", "forward")]
    weight = b.const(first.inputs[1])
    if weight is None:
        raise refuse(first, "its weights W and R must be constants.")
    hidden = int(first.attr("hidden_size", weight.shape[1] // len(GATES[kind])))
    bias = any(len(layer.inputs) > 3 and layer.inputs[3] for layer in layers)
    weights = {}
    for k, layer in enumerate(layers):
        weights.update(_weights(b, layer, kind, k, dirs, bias))
    params = {"input_size": int(weight.shape[2]), "hidden_size": hidden,
              "num_layers": len(layers), "has_bias": bool(bias),
              "batch_first": bool(n.attr("batch_first")), "dropout": 0.0,
              "bidirectional": dirs == 2}  # fmt: skip
    if kind == "RNN":
        params["nonlinearity"] = nonlinearity.pop()
    states = [name if not is_zero(b.folded, name) else None for name in n.inputs[1:]]
    if kind == "LSTM" and len(states) == 2 and (states[0] is None) != (states[1] is None):
        raise refuse(first, "one initial state is zeros and the other is not; Cellwright's "
                     "LSTM takes both (h_0, c_0) or neither.")
    raw = bool(n.attr("raw"))
    y = n.outputs[0]
    single = len(layers) == 1
    outputs = [None if raw else y, *(first.outputs[1:3] if single else n.outputs[1:3])]
    node = b.add(kind, n, params=params, inputs=[n.inputs[0], *states], outputs=outputs,
                 weights=weights)  # fmt: skip
    if raw and _used(b, y):
        if dirs == 2:
            raise refuse(first, "its output Y is read in ONNX's (T, directions, N, H) "
                         "layout, which a bidirectional layer can't give in Cellwright.")
        b.add("Unsqueeze", first, params={"axis": 1}, inputs=[(node, "output")],
              outputs=[y], name=f"{b.graph.nodes[node].name}_y")  # fmt: skip
    if single:
        return
    joined = n.outputs[1:3]
    for k, layer in enumerate(layers):
        for port, index in (("h_n", 1), ("c_n", 2)):
            name = layer.outputs[index] if len(layer.outputs) > index else ""
            if _used(b, name) and not (len(joined) >= index and joined[index - 1]):
                b.add("Slice", layer, params={"axis": 0, "start": k * dirs,
                                              "end": (k + 1) * dirs, "step": 1},
                      inputs=[(node, port)], outputs=[name])  # fmt: skip


def gather(b: Builder, n: OnnxNode) -> None:
    """Gather rows of a constant 2-D table by computed ids → Embedding; else convert_basic's."""
    table = b.const(n.inputs[0])
    if (table is not None and table.ndim == 2 and int(n.attr("axis", 0)) == 0
            and not b.is_const(n.inputs[1])):  # fmt: skip
        b.add("Embedding", n, params={"vocab_size": int(table.shape[0]),
                                      "embedding_size": int(table.shape[1])},
              inputs=[n.inputs[1]], outputs=n.outputs[:1],
              weights={"embedding_table": table})  # fmt: skip
        return
    convert_basic.gather(b, n)


def attention(b: Builder, n: OnnxNode) -> None:
    """cellwright::MultiheadAttention (patterns_attention): self-attention on one input."""
    first = bool(n.attr("batch_first"))
    params = {"embed_dim": n.attr("embed_dim"), "num_heads": n.attr("num_heads"),
              "has_bias": True, "dropout": 0.0, "batch_first": first}
    weights = {"in_proj_weight": n.attr("in_proj_weight"), "in_proj_bias": n.attr("in_proj_bias"),
               "out_proj.weight": n.attr("out_weight"), "out_proj.bias": n.attr("out_bias")}
    same = first == bool(n.attr("output_first"))
    node = b.add("MultiheadAttention", n, params=params, inputs=n.inputs[:1],
                 outputs=n.outputs[:1] if same else (), weights=weights)
    if not same:
        b.add("Transpose", None, params={"perm": (1, 0, 2)}, inputs=[(node, "output")],
              outputs=n.outputs[:1], name=f"{b.graph.nodes[node].name}_out")


def _encoder_params(n: OnnxNode) -> dict:
    return {"d_model": n.attr("embed_dim"), "nhead": n.attr("num_heads"),
            "dim_feedforward": n.attr("feedforward"), "dropout": 0.0,
            "activation": n.attr("activation"), "layer_norm_eps": n.attr("epsilon"),
            "batch_first": True, "norm_first": False}


def encoder_layer(b: Builder, n: OnnxNode) -> None:
    """cellwright::TransformerEncoderLayer (patterns_encoder)."""
    b.add("TransformerEncoderLayer", n, params=_encoder_params(n), inputs=n.inputs[:1],
          outputs=n.outputs[:1], weights=n.attr("weights"))


def encoder(b: Builder, n: OnnxNode) -> None:
    """cellwright::TransformerEncoder (patterns_encoder): `layers` of equal shape."""
    weights = {f"layers.{i}.{key}": value for i, layer in enumerate(n.attr("layers"))
               for key, value in layer.items()}
    b.add("TransformerEncoder", n, params={**_encoder_params(n),
                                           "num_layers": len(n.attr("layers")),
                                           "final_norm": False},
          inputs=n.inputs[:1], outputs=n.outputs[:1], weights=weights)


def unfused(b: Builder, n: OnnxNode) -> None:
    """An ONNX LSTM/GRU/RNN the patterns left alone (patterns_sequence fuses them all)."""
    states = [n.inputs[i] if i < len(n.inputs) else "" for i in STATES[n.op]]
    recurrent(b, OnnxNode("Recurrent", n.name, [n.inputs[0], *states], n.outputs[:1],
                          {"kind": n.op, "layers": [n], "batch_first": False, "raw": True},
                          "cellwright"))  # fmt: skip


CONVERTERS: dict[str, Converter] = {
    "Recurrent": recurrent,  # from patterns_sequence (domain cellwright)
    "LSTM": unfused,
    "GRU": unfused,
    "RNN": unfused,
    "Gather": gather,
    "MultiheadAttention": attention,  # from patterns_attention
    "TransformerEncoderLayer": encoder_layer,  # from patterns_encoder
    "TransformerEncoder": encoder,
}
