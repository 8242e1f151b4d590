"""How healthy each node of a training network looks, from tensors its hidden hooks captured.

The health overlay attaches two hidden captures to every node with a Cell — a forward
hook (its output) and a backward hook (the gradient arriving at its output) — to the
session's `HookCaptures`, so they cost what any capture costs (a copy into a slot, at
the session's adaptive stride) and go when the overlay is switched off. The reader
turns the newest copy of each into indicators, at display rate:

- gradient norm at the node's output: normal from 1e-6 to 1e2 (below, the gradient
  vanishes and the layers before it stop learning; above, it explodes);
- dead ReLU units (ReLU nodes, and layers with a `relu` activation): the share of units
  (one per feature and position) that are 0 for every sample of the batch; normal
  under 50 %, bad from 90 %;
- saturated sigmoid / tanh units: the share of outputs within 0.02 of the function's
  bounds (0 or 1; -1 or 1), where its gradient is almost 0; normal under 20 %, bad from
  50 %;
- NaN / inf anywhere in the node's output or gradient: always bad;
- on RNN/LSTM/GRU nodes, a hidden probe capture too: gate saturation and the gradient
  through time (`app.session.health_sequences`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.document import BOUNDARY_TYPES, COMPOSITE, Hook, Project
from app.session.health_sequences import PROBED_TYPES, recurrent_health

GRAD_NORM_RANGE = (1e-6, 1e2)
DEAD_WARN, DEAD_BAD = 0.5, 0.9
SATURATED_WARN, SATURATED_BAD = 0.2, 0.5
SATURATION_MARGIN = 0.02
NO_CELL = frozenset({"Input", "Output", COMPOSITE}) | BOUNDARY_TYPES
PREFIX = "health-"


@dataclass(frozen=True)
class Health:
    """One indicator: `status` is 'ok', 'warn' or 'bad'; `tooltip` gives number and range."""

    name: str
    value: float
    text: str
    status: str
    tooltip: str


def activation_of(node_type: str, params: dict) -> str | None:
    """'relu', 'sigmoid' or 'tanh' if the node's output is that function's, else None."""
    name = node_type.lower()
    if name in ("relu", "sigmoid", "tanh"):
        return name
    activation = params.get("activation")
    if isinstance(activation, str) and activation.lower() in ("relu", "sigmoid", "tanh"):
        return activation.lower()
    return None


def output_health(array: np.ndarray, activation: str | None) -> list[Health]:
    """Indicators of a node's output: NaN/inf, and dead or saturated units."""
    array = np.asarray(array)
    found: list[Health] = []
    finite = np.isfinite(array)
    if not finite.all():
        bad = int(array.size - np.count_nonzero(finite))
        found.append(Health("nonfinite", float(bad), "NaN", "bad",
                            f"NaN/inf: {bad} of {array.size} output numbers are not finite "
                            "— normal: none"))  # fmt: skip
        return found
    if array.size == 0 or activation is None:
        return found
    if activation == "relu":
        units = array.reshape(array.shape[0], -1) if array.ndim > 1 else array.reshape(1, -1)
        dead = float((units <= 0).all(axis=0).mean())
        status = "bad" if dead >= DEAD_BAD else "warn" if dead >= DEAD_WARN else "ok"
        found.append(Health("dead", dead, f"dead {dead:.0%}", status,
                            f"Dead ReLU units: {dead:.1%} are 0 for every sample of the "
                            f"batch — normal: under {DEAD_WARN:.0%}"))  # fmt: skip
    else:
        low, high = (0.0, 1.0) if activation == "sigmoid" else (-1.0, 1.0)
        margin = SATURATION_MARGIN
        share = float(((array <= low + margin) | (array >= high - margin)).mean())
        status = "bad" if share >= SATURATED_BAD else "warn" if share >= SATURATED_WARN else "ok"
        tip = (f"Saturated {activation} outputs: {share:.1%} within {margin} of {low:g} or "
               f"{high:g} — normal: under {SATURATED_WARN:.0%}")
        found.append(Health("saturated", share, f"sat {share:.0%}", status, tip))
    return found


def gradient_health(array: np.ndarray) -> list[Health]:
    """Indicators of the gradient at a node's output: NaN/inf, or its norm and range."""
    array = np.asarray(array, dtype=np.float64)
    finite = np.isfinite(array)
    if not finite.all():
        bad = int(array.size - np.count_nonzero(finite))
        return [Health("nonfinite", float(bad), "∇NaN", "bad",
                       f"NaN/inf: {bad} of {array.size} gradient numbers are not finite "
                       "— normal: none")]  # fmt: skip
    norm = float(np.sqrt(np.dot(array.ravel(), array.ravel())))
    low, high = GRAD_NORM_RANGE
    status = "ok" if low <= norm <= high else "bad" if norm > high * 100 or norm == 0 else "warn"
    return [Health("grad", norm, f"∇ {norm:.0e}", status,
                   f"Gradient norm at the output: {norm:.3g} — normal: {low:g} to {high:g}")]


class HealthMonitor:
    """Hidden forward and backward captures on every node with a Cell, and their indicators.

    `captures` is a session's HookCaptures; `attach()` adds the hidden hooks (ids start
    with 'health-'), `detach()` takes them all away; `indicators()` maps node ids to
    their `Health` list, from each capture's newest copy.
    """

    def __init__(self, captures, project: Project) -> None:
        self.captures = captures
        self.nodes = {node.id: node for _, node in project.graph.walk()
                      if node.type not in NO_CELL}  # fmt: skip
        self.attached: list[str] = []

    def attach(self) -> None:
        for node_id, node in self.nodes.items():
            kinds = [("forward", "f"), ("backward", "b")]
            if node.type in PROBED_TYPES:
                kinds.append(("recurrent", "p"))
            for kind, tag in kinds:
                hook = Hook(kind, node_id, id=f"{PREFIX}{tag}-{node_id}")
                if self.captures.attach(hook) is not None:
                    self.attached.append(hook.id)

    def detach(self) -> None:
        for hook_id in self.attached:
            self.captures.detach(hook_id)
        self.attached = []

    def indicators(self) -> dict[str, list[Health]]:
        found: dict[str, list[Health]] = {}
        for node_id, node in self.nodes.items():
            found[node_id] = self.node_indicators(node_id, node.type, dict(node.params))
        return found

    def node_indicators(self, node_id: str, node_type: str, params: dict) -> list[Health]:
        items: list[Health] = []
        for tag, judge in (
            ("b", gradient_health),
            ("f", lambda a: output_health(a, activation_of(node_type, params))),
        ):
            capture = self.captures.captures.get(f"{PREFIX}{tag}-{node_id}")
            newest = capture.newest() if capture is not None else None
            if newest is not None:
                items += judge(newest)
        probe = self.captures.captures.get(f"{PREFIX}p-{node_id}")
        if probe is not None:  # a recurrent layer's inside: the newest copy of each array
            newest = {name: probe.newest(name) for name in probe.names()}
            items += [Health(*found) for found in recurrent_health(
                {name: copy[1] for name, copy in newest.items() if copy is not None})]
        nonfinite = [h for h in items if h.name == "nonfinite"]
        return nonfinite[:1] + [h for h in items if h.name != "nonfinite"]

