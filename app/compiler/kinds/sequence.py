"""Embedding, positional encodings and Select: shape rules, Parameter shapes, sizes that
follow what arrives, and op Cells (see app.compiler.kinds). Sequences come batch first,
(N, T, E); the number types (token ids into Embedding) are checked in app.compiler.dtypes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import BATCH, ShapeError
from app.compiler.rules import Rule, Shape, _weights, text
from app.compiler.sequence_cells import OP_CELLS as _CELLS

Values = Mapping[str, Any]
Ins = Mapping[str, Shape]


def embedding(values: Values, ins: Ins) -> dict[str, Shape]:
    vocab, size = values["vocab_size"], values["embedding_size"]
    _weights("Embedding", vocab * size)
    pad = values["padding_idx"]
    if pad is not None and pad >= vocab:
        raise ShapeError(f"Embedding: padding_idx {pad} is not a token id: ids run from 0 to "
                         f"{vocab - 1} (vocab_size {vocab}).")
    return {"out": (*ins["in"], size)}


def _sequence(layer: str, shape: Shape) -> None:
    if len(shape) != 3 or shape[0] != BATCH:
        raise ShapeError(f"{layer} expects a sequence (N, T, E), batch first, gets "
                         f"{text(shape)}.")


def positional(values: Values, ins: Ins) -> dict[str, Shape]:
    _sequence("PositionalEncoding", ins["in"])
    return {"out": ins["in"]}


def learned_positional(values: Values, ins: Ins) -> dict[str, Shape]:
    shape, longest, size = ins["in"], values["max_len"], values["embedding_size"]
    _weights("LearnedPositionalEncoding", longest * size)
    _sequence("LearnedPositionalEncoding", shape)
    steps = shape[1]
    if isinstance(steps, int) and steps > longest:
        raise ShapeError(f"LearnedPositionalEncoding holds positions for sequences of up to "
                         f"max_len {longest} steps, but {steps} steps arrive ({text(shape)}); "
                         f"raise max_len to {steps} or more.")
    if shape[2] != size:
        raise ShapeError(f"LearnedPositionalEncoding expects {size} features per step "
                         f"(embedding_size), gets {shape[2]} in {text(shape)}.")
    return {"out": shape}


def select(values: Values, ins: Ins) -> dict[str, Shape]:
    shape, axis, index = ins["in"], values["axis"], values["index"]
    rank = len(shape)
    if not -rank <= axis < rank:
        raise ShapeError(f"Select: axis {axis} is out of range for {text(shape)}.")
    at = axis % rank
    if shape[at] == BATCH:
        raise ShapeError(f"Select can't pick from the batch axis ({axis}) of {text(shape)}; "
                         "use a sample axis, e.g. 1 for time in (N, T, F).")
    size = shape[at]
    if isinstance(size, int) and not -size <= index < size:
        raise ShapeError(f"Select: index {index} is outside the {size} entries along axis "
                         f"{axis} of {text(shape)} (from {-size} to {size - 1}).")
    return {"out": tuple(d for i, d in enumerate(shape) if i != at)}


def _last_axis(shape: Shape) -> dict[str, Any]:
    size = shape[-1] if len(shape) >= 2 else None
    return {"embedding_size": size} if isinstance(size, int) else {}


RULES: dict[str, Rule] = {
    "Embedding": embedding,
    "PositionalEncoding": positional,
    "LearnedPositionalEncoding": learned_positional,
    "Select": select,
}
PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {
    "Embedding": lambda v: {"embedding_table": (v["vocab_size"], v["embedding_size"])},
    "LearnedPositionalEncoding": lambda v: {"embedding_table": (v["max_len"],
                                                                v["embedding_size"])},
}
FOLLOWING: dict[str, tuple[str, ...]] = {"LearnedPositionalEncoding": ("embedding_size",)}
FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {
    "LearnedPositionalEncoding": _last_axis,
}
OP_CELLS: dict[str, type] = dict(_CELLS)
