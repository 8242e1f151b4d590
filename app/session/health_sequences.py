"""How healthy a recurrent layer looks inside, from what its probe copied (LSTM/GRU/RNN nodes).

The health overlay puts a hidden probe capture (`app.session.probes`, kind 'recurrent') on
every RNN/LSTM/GRU node; its newest copies give two indicators:

- gate saturation (LSTM, GRU): the share of the sigmoid gates' values (LSTM input, forget,
  output; GRU reset, update) within 0.02 of 0 or 1, where σ' < 0.02 and almost no
  gradient passes. Normal under 30 %, bad from 60 %. The bounds are higher than a plain
  sigmoid layer's (20 % / 50 %) on purpose: an LSTM that remembers keeps forget gates
  near 1 and shuts units with input/output gates near 0, so a working layer has a fair
  share of saturated gates; past 60 % most gates pass no gradient and the layer stops
  learning what to remember.
- gradient through time: the ratio of the gradient's norm at the first step a direction
  processes to its norm at the last (|dL/dh_first| / |dL/dh_last|, from the
  'l{k}.grad_norms' probe, `l{k}_reverse` read the other way round), the most extreme
  layer shown. Normal from 1e-3 to 1e3; below, it vanishes (the early steps don't learn),
  above, it explodes; bad a further factor 1000 out.

Judging returns plain tuples (name, value, text, status, tooltip) that `app.session.health`
turns into its `Health` indicators.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

GATED_TYPES = frozenset({"LSTM", "GRU"})
PROBED_TYPES = GATED_TYPES | {"RNN"}
GATE_MARGIN = 0.02
GATE_WARN, GATE_BAD = 0.3, 0.6
TIME_RATIO_RANGE = (1e-3, 1e3)
TIME_RATIO_BAD = 1e3  # how much further out than the range is bad
# The sigmoid gates by the gate count G of (N, T, G, H): LSTM (i, f, g, o), GRU (r, z, n).
SIGMOID_GATES = {4: (("input", 0), ("forget", 1), ("output", 3)), 3: (("reset", 0), ("update", 1))}
_GRAD = re.compile(r"l(\d+)(_reverse)?\.grad_norms")
_GATES = re.compile(r"l(\d+)(_reverse)?\.gates")

Indicator = tuple[str, float, str, str, str]  # name, value, text, status, tooltip


def gate_saturation(gates: np.ndarray) -> tuple[float, dict[str, float]] | None:
    """The share of sigmoid gate values within `GATE_MARGIN` of 0 or 1, overall and per gate,
    of gates (N, T, G, H); None if G is neither an LSTM's 4 nor a GRU's 3."""
    gates = np.asarray(gates)
    named = SIGMOID_GATES.get(gates.shape[2]) if gates.ndim == 4 else None
    if named is None or gates.size == 0:
        return None
    per_gate = {}
    for name, index in named:
        values = gates[:, :, index]
        per_gate[name] = float(((values <= GATE_MARGIN) | (values >= 1 - GATE_MARGIN)).mean())
    return float(np.mean(list(per_gate.values()))), per_gate


def time_ratio(norms: np.ndarray, *, reverse: bool = False) -> float | None:
    """|dL/dh| at the first processed step over the last (None if none reaches the last)."""
    norms = np.asarray(norms, dtype=np.float64).reshape(-1)
    if len(norms) < 2:
        return None
    first, last = (norms[-1], norms[0]) if reverse else (norms[0], norms[-1])
    if not np.isfinite(first) or not np.isfinite(last):
        return float("nan")
    if last <= 0:
        return None  # nothing arrives at the last step: no gradient flows back through time
    return float(first / last)


def recurrent_health(arrays: Mapping[str, np.ndarray]) -> list[Indicator]:
    """Indicators from a recurrent probe's newest arrays by name ('l0.gates', …)."""
    found: list[Indicator] = []
    shares = []
    for name, array in arrays.items():
        match = _GATES.fullmatch(name)
        if match is not None:
            judged = gate_saturation(array)
            if judged is not None:
                shares.append((judged, _layer(match)))
    if shares:
        (share, per_gate), layer = max(shares, key=lambda item: item[0][0])
        status = "bad" if share >= GATE_BAD else "warn" if share >= GATE_WARN else "ok"
        gates = ", ".join(f"{gate} {value:.0%}" for gate, value in per_gate.items())
        where = f" (layer {layer}, the most saturated)" if len(shares) > 1 else ""
        found.append(("gates", share, f"gates {share:.0%}", status,
                      f"Saturated gates{where}: {share:.1%} of the sigmoid gate values are "
                      f"within {GATE_MARGIN} of 0 or 1 ({gates}) — normal: under "
                      f"{GATE_WARN:.0%}, bad from {GATE_BAD:.0%}"))  # fmt: skip
    ratios = []
    for name, array in arrays.items():
        match = _GRAD.fullmatch(name)
        if match is not None:
            ratio = time_ratio(array, reverse=bool(match.group(2)))
            if ratio is not None:
                ratios.append((ratio, _layer(match)))
    if ratios:
        ratio, layer = max(ratios, key=lambda item: _distance(item[0]))
        found.append(_ratio_indicator(ratio, layer if len(ratios) > 1 else None))
    return found


def _ratio_indicator(ratio: float, layer: str | None) -> Indicator:
    low, high = TIME_RATIO_RANGE
    where = f" (layer {layer}, the furthest from 1)" if layer else ""
    rule = f"normal: {low:g} to {high:g}; below, it vanishes; above, it explodes"
    if not np.isfinite(ratio):
        return ("time", ratio, "∇t NaN", "bad",
                f"Gradient through time{where}: not finite — {rule}")  # fmt: skip
    if ratio < low:
        status, what = ("bad" if ratio < low / TIME_RATIO_BAD else "warn"), "vanishing"
    elif ratio > high:
        status, what = ("bad" if ratio > high * TIME_RATIO_BAD else "warn"), "exploding"
    else:
        status, what = "ok", "flowing"
    return ("time", ratio, f"∇t {ratio:.0e}", status,
            f"Gradient through time{where}: {what} — its norm at the first step is {ratio:.3g} "
            f"× its norm at the last step — {rule}")  # fmt: skip


def _distance(ratio: float) -> float:
    return float("inf") if not np.isfinite(ratio) or ratio <= 0 else abs(np.log10(ratio))


def _layer(match: re.Match) -> str:
    return match.group(1) + (" reverse" if match.group(2) else "")
