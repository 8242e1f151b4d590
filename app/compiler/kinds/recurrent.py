"""RNN, LSTM and GRU nodes: shape rules, Parameter shapes, following sizes and op Cells.

The input is (N, T, features) with batch_first on (the nodes' default), or (T, N,
features) with it off: the batch axis "N" must be where the layout puts it. `input_size`
follows the features arriving (the last axis). Outputs: `output` in the input's layout
with D·hidden_size features (D = 2 when bidirectional), `h_n` (and `c_n`) (D·num_layers,
N, hidden_size), whose batch axis is second as in MindSpore. The op Cells are the engine
layers with their outputs flattened to one per port, so Parameter names stay MindSpore's
(`lstm1.weight_ih_l0`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from app.catalogue import BATCH, ShapeError
from app.compiler.rules import Rule, Shape, _weights, text
from engine import nn

Values = Mapping[str, Any]
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _directions(values: Values) -> int:
    return 2 if values["bidirectional"] else 1


def _param_shapes(kind: str) -> Callable[[Values], dict[str, tuple[int, ...]]]:
    def shapes(values: Values) -> dict[str, tuple[int, ...]]:
        hidden, dirs = values["hidden_size"], _directions(values)
        gates = _GATES[kind] * hidden
        found: dict[str, tuple[int, ...]] = {}
        kinds = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        for name in kinds if values["has_bias"] else kinds[:2]:  # MindSpore's order
            for k in range(values["num_layers"]):
                width = values["input_size"] if k == 0 else dirs * hidden
                for d in range(dirs):
                    shape = {"weight_ih": (gates, width), "weight_hh": (gates, hidden)}.get(
                        name, (gates,))
                    found[f"{name}_l{k}{'_reverse' if d else ''}"] = shape
        return found

    return shapes


def _rule(kind: str) -> Rule:
    count = _param_shapes(kind)

    def rule(values: Values, ins: Mapping[str, Shape]) -> dict[str, Shape]:
        shape = ins["in"]
        size, hidden = values["input_size"], values["hidden_size"]
        first = values["batch_first"]
        _weights(kind, sum(_size(s) for s in count(values).values()))
        layout = f"(N, T, {size})" if first else f"(T, N, {size})"
        if len(shape) == 2:
            raise ShapeError(f"{kind} needs a time axis: it takes {layout}, but {text(shape)} "
                             "arrives, which has none. A Flatten before it removes the time "
                             "axis; feed it the sequence (N, T, features) instead.")
        if len(shape) != 3:
            raise ShapeError(f"{kind} expects {layout} sequences, gets {text(shape)}.")
        batch_at = 0 if first else 1
        if shape[batch_at] != BATCH:
            if first:
                raise ShapeError(f"{kind}: batch_first is on, so the batch axis N comes first "
                                 f"{layout}, but {text(shape)} arrives; turn batch_first off "
                                 "for (T, N, features), or move the batch axis first.")
            raise ShapeError(f"{kind}: batch_first is off, so it takes (T, N, features) with "
                             f"the batch axis second, but {text(shape)} arrives; turn "
                             "batch_first on, or put the batch second with a Transpose.")
        if shape[2] != size:
            raise ShapeError(f"{kind} expects {size} features per step (input_size), but "
                             f"{text(shape)} arrives with {shape[2]}.")
        dirs = _directions(values)
        state = (dirs * values["num_layers"], BATCH, hidden)
        for port in ("hx", "cx"):
            got = ins.get(port)
            if got is not None and tuple(got) != state:
                raise ShapeError(f"{kind}: the initial state {port} must be {text(state)} "
                                 f"(num_directions·num_layers, N, hidden_size), gets "
                                 f"{text(got)}.")
        if kind == "LSTM" and ("hx" in ins) != ("cx" in ins):
            raise ShapeError("LSTM: connect both hx and cx, or neither: its initial state is "
                             "the pair (h_0, c_0).")
        out = list(shape)
        out[2] = dirs * hidden
        found = {"output": tuple(out), "h_n": state}
        if kind == "LSTM":
            found["c_n"] = state
        return found

    return rule


def _size(shape: tuple[int, ...]) -> int:
    total = 1
    for d in shape:
        total *= d
    return total


def _features(shape: Shape) -> dict[str, Any]:
    if len(shape) == 3 and isinstance(shape[2], int):
        return {"input_size": shape[2]}
    return {}


class LSTM(nn.LSTM):
    """The engine's LSTM with inputs (x, hx, cx) and outputs (output, h_n, c_n)."""

    def construct(self, x, hx=None, cx=None):
        output, (h_n, c_n) = super().construct(x, None if hx is None else (hx, cx))
        return output, h_n, c_n


class GRU(nn.GRU):
    """The engine's GRU; outputs (output, h_n)."""

    def construct(self, x, hx=None):
        return super().construct(x, hx)


class RNN(nn.RNN):
    """The engine's RNN; outputs (output, h_n)."""

    def construct(self, x, hx=None):
        return super().construct(x, hx)


RULES: dict[str, Rule] = {kind: _rule(kind) for kind in _GATES}
PARAM_SHAPES: dict[str, Callable[[Mapping[str, Any]], dict[str, tuple[int, ...]]]] = {
    kind: _param_shapes(kind) for kind in _GATES}
FOLLOWING: dict[str, tuple[str, ...]] = {kind: ("input_size",) for kind in _GATES}
FITTING: dict[str, Callable[[Shape], dict[str, Any]]] = {kind: _features for kind in _GATES}
OP_CELLS: dict[str, type] = {"LSTM": LSTM, "GRU": GRU, "RNN": RNN}
