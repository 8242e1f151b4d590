"""MultiheadAttention and the Transformer layers: shape rules, Parameter shapes, following
sizes and op Cells (see app.compiler.kinds).

Sequences are (N, L, E) with batch_first (the nodes' default) and (L, N, E) without it:
the batch "N" at axis 1. A rule refuses an input without a time axis (e.g. after a
Flatten), one whose batch axis is not where batch_first says, a feature size that is not
embed_dim / d_model, and a head count that doesn't divide it, naming the shapes and
numbers. embed_dim and d_model follow the features arriving (the last axis).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import BATCH, ShapeError
from app.compiler.kinds.attention_cells import OP_CELLS as _CELLS
from app.compiler.rules import Rule, Shape, _weights, text

Values = Mapping[str, Any]
Ins = Mapping[str, Shape]


def _layout(batch_first: bool) -> str:
    return "(N, L, E)" if batch_first else "(L, N, E)"


def sequence(layer: str, port: str, shape: Shape, batch_first: bool) -> tuple[Any, Any]:
    """(length, features) of a sequence arriving on `port`; ShapeError if it isn't one."""
    if len(shape) != 3:
        hint = " (a Flatten before it removes the time axis)" if len(shape) == 2 else ""
        raise ShapeError(f"{layer} needs a sequence {_layout(batch_first)} on '{port}' with "
                         f"a time axis, gets {text(shape)}{hint}.")
    axis = 0 if batch_first else 1
    if shape[axis] != BATCH:
        where = "batch_first is on" if batch_first else "batch_first is off"
        raise ShapeError(f"{layer}: {where}, so '{port}' must be {_layout(batch_first)} with "
                         f"the batch at axis {axis}, but {text(shape)} arrives; switch "
                         "batch_first.")
    return shape[1 - axis], shape[2]


def _heads(layer: str, width_name: str, width: int, heads_name: str, heads: int) -> None:
    if width % heads:
        raise ShapeError(f"{layer}: {width_name} ({width}) must be divisible by {heads_name} "
                         f"({heads}); each head takes an equal share of the features.")


def _features(layer: str, port: str, shape: Shape, got: Any, want: int, name: str) -> None:
    if got != want:
        raise ShapeError(f"{layer} expects {want} features ({name}) on '{port}', but "
                         f"{text(shape)} arrives with {got}.")


def _mask(layer: str, port: str, shape: Shape, want: tuple) -> None:
    if tuple(shape) != want:
        raise ShapeError(f"{layer}: '{port}' must be {text(want)}, gets {text(shape)}.")


def multihead_attention(values: Values, ins: Ins) -> dict[str, Shape]:
    layer = "MultiheadAttention"
    e, h, first = values["embed_dim"], values["num_heads"], values["batch_first"]
    kdim = values["kdim"] or e
    vdim = values["vdim"] or e
    _heads(layer, "embed_dim", e, "num_heads", h)
    _weights(layer, 3 * e * e + e * e)
    query = ins["query"]
    tgt, got = sequence(layer, "query", query, first)
    _features(layer, "query", query, got, e, "embed_dim")
    key = ins.get("key", query)
    src, got = sequence(layer, "key", key, first)
    _features(layer, "key", key, got, kdim, "kdim" if values["kdim"] else "embed_dim")
    value = ins.get("value", key)
    length, got = sequence(layer, "value", value, first)
    _features(layer, "value", value, got, vdim, "vdim" if values["vdim"] else "embed_dim")
    if length != src:
        raise ShapeError(f"{layer}: key and value need the same length, get {text(key)} and "
                         f"{text(value)}.")
    if "key_padding_mask" in ins:
        _mask(layer, "key_padding_mask", ins["key_padding_mask"], (BATCH, src))
    if "attn_mask" in ins:
        _mask(layer, "attn_mask", ins["attn_mask"], (BATCH, tgt, src))
    weights = (BATCH, tgt, src) if values["average_attn_weights"] else (BATCH, h, tgt, src)
    return {"output": query, "weights": weights}


def _layer_checks(layer: str, values: Values, ports: tuple[str, ...], ins: Ins,
                  weights: int) -> None:
    d, first = values["d_model"], values["batch_first"]
    _heads(layer, "d_model", d, "nhead", values["nhead"])
    _weights(layer, weights)
    for port in ports:
        _, got = sequence(layer, port, ins[port], first)
        _features(layer, port, ins[port], got, d, "d_model")


def encoder_layer(values: Values, ins: Ins) -> dict[str, Shape]:
    _layer_checks("TransformerEncoderLayer", values, ("in",), ins, _count(_layer(values)))
    return {"out": ins["in"]}


def encoder(values: Values, ins: Ins) -> dict[str, Shape]:
    # Counted per layer first: a typo of a billion layers is refused, not enumerated.
    _weights("TransformerEncoder", _count(_layer(values)) * values["num_layers"])
    _layer_checks("TransformerEncoder", values, ("in",), ins, _count(encoder_shapes(values)))
    return {"out": ins["in"]}


def decoder_layer(values: Values, ins: Ins) -> dict[str, Shape]:
    _layer_checks("TransformerDecoderLayer", values, ("tgt", "memory"), ins,
                  _count(_layer(values, decoder=True)))
    return {"out": ins["tgt"]}


RULES: dict[str, Rule] = {
    "MultiheadAttention": multihead_attention,
    "TransformerEncoderLayer": encoder_layer,
    "TransformerEncoder": encoder,
    "TransformerDecoderLayer": decoder_layer,
}

# ----------------------------------------------------------------------------- Parameters


def _count(shapes: Mapping[str, tuple[int, ...]]) -> int:
    return sum(math.prod(s) for s in shapes.values())


def attention_shapes(values: Values, prefix: str = "") -> dict[str, tuple[int, ...]]:
    e = values["embed_dim"]
    kdim, vdim = values.get("kdim") or e, values.get("vdim") or e
    bias = values.get("has_bias", True)
    if kdim == e and vdim == e:
        shapes = {"in_proj_weight": (3 * e, e)}
    else:
        shapes = {"q_proj_weight": (e, e), "k_proj_weight": (e, kdim),
                  "v_proj_weight": (e, vdim)}
    if bias:
        shapes["in_proj_bias"] = (3 * e,)
    shapes["out_proj.weight"] = (e, e)
    if bias:
        shapes["out_proj.bias"] = (e,)
    return {prefix + name: shape for name, shape in shapes.items()}


def _layer(values: Values, prefix: str = "", decoder: bool = False) -> dict[str, tuple]:
    d, ff = values["d_model"], values["dim_feedforward"]
    attn = {"embed_dim": d}
    shapes = attention_shapes(attn, prefix + "self_attn.")
    if decoder:
        shapes.update(attention_shapes(attn, prefix + "multihead_attn."))
    shapes.update({prefix + "dense1.weight": (ff, d), prefix + "dense1.bias": (ff,),
                   prefix + "dense2.weight": (d, ff), prefix + "dense2.bias": (d,)})
    for i in range(1, 4 if decoder else 3):
        shapes.update({f"{prefix}norm{i}.gamma": (d,), f"{prefix}norm{i}.beta": (d,)})
    return shapes


def encoder_shapes(values: Values) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for i in range(values["num_layers"]):
        shapes.update(_layer(values, f"layers.{i}."))
    if values["final_norm"]:
        shapes.update({"norm.gamma": (values["d_model"],), "norm.beta": (values["d_model"],)})
    return shapes


PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {
    "MultiheadAttention": attention_shapes,
    "TransformerEncoderLayer": _layer,
    "TransformerEncoder": encoder_shapes,
    "TransformerDecoderLayer": lambda values: _layer(values, decoder=True),
}

FOLLOWING: dict[str, tuple[str, ...]] = {
    "MultiheadAttention": ("embed_dim",),
    "TransformerEncoderLayer": ("d_model",),
    "TransformerEncoder": ("d_model",),
    "TransformerDecoderLayer": ("d_model",),
}


def _last_axis(key: str) -> Callable[[Shape], dict[str, Any]]:
    def fit(shape: Shape) -> dict[str, Any]:
        if len(shape) == 3 and isinstance(shape[-1], int):
            return {key: shape[-1]}
        return {}

    return fit


FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {
    "MultiheadAttention": _last_axis("embed_dim"),
    "TransformerEncoderLayer": _last_axis("d_model"),
    "TransformerEncoder": _last_axis("d_model"),
    "TransformerDecoderLayer": _last_axis("d_model"),
}

OP_CELLS: dict[str, type] = dict(_CELLS)
