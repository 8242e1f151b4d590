"""Health of recurrent layers: gate saturation and the gradient through time, with ranges."""

import numpy as np
import pytest

from app.document import Node, Project
from app.session.health import HealthMonitor
from app.session.health_sequences import (
    GATE_BAD,
    GATE_WARN,
    gate_saturation,
    recurrent_health,
    time_ratio,
)
from app.session.hook_captures import HookCaptures
from tests.app.session.test_probes_capture import LSTM, batch


def lstm_gates(shares: dict[int, float], n=4, t=5, h=10) -> np.ndarray:
    """(N, T, 4, H) gates at 0.5, with `shares[g]` of gate g's units at 0.99 (saturated)."""
    gates = np.full((n, t, 4, h), 0.5)
    for gate, share in shares.items():
        gates[:, :, gate, : round(share * h)] = 0.99
    return gates


def test_saturation_counts_the_sigmoid_gates_near_0_or_1_not_the_tanh_candidate():
    gates = lstm_gates({0: 0.2, 1: 0.6, 2: 1.0, 3: 0.1})
    gates[:, :, 3, -1] = 0.01  # near 0 counts too
    share, per_gate = gate_saturation(gates)
    assert per_gate == pytest.approx({"input": 0.2, "forget": 0.6, "output": 0.2})
    assert share == pytest.approx((0.2 + 0.6 + 0.2) / 3)
    gru = np.full((2, 3, 3, 4), 0.5)
    gru[:, :, 1] = 1.0  # the update gate shut
    assert gate_saturation(gru)[1] == {"reset": 0.0, "update": 1.0}
    assert gate_saturation(np.zeros((2, 3, 2, 4))) is None  # neither an LSTM's nor a GRU's


@pytest.mark.parametrize(("share", "status"), [(0.1, "ok"), (0.4, "warn"), (0.7, "bad")])
def test_the_saturation_indicator_says_its_share_and_normal_range(share, status):
    (indicator,) = recurrent_health({"l0.gates": lstm_gates({0: share, 1: share, 3: share})})
    name, value, text, found, tooltip = indicator
    assert (name, found) == ("gates", status) and value == pytest.approx(share)
    assert f"under {GATE_WARN:.0%}" in tooltip and f"bad from {GATE_BAD:.0%}" in tooltip
    assert text == f"gates {share:.0%}"


def test_the_ratio_through_time_reads_each_direction_in_the_order_it_runs():
    norms = np.array([1e-4, 1e-2, 1.0])
    assert time_ratio(norms) == pytest.approx(1e-4)
    assert time_ratio(norms, reverse=True) == pytest.approx(1e4)
    assert time_ratio(np.array([2.0, 0.0])) is None  # nothing reaches the last step
    assert time_ratio(np.array([1.0])) is None


@pytest.mark.parametrize(("first", "status", "what"), [
    (1.0, "ok", "flowing"), (1e-4, "warn", "vanishing"), (1e-8, "bad", "vanishing"),
    (1e4, "warn", "exploding"), (1e7, "bad", "exploding")])  # fmt: skip
def test_the_gradient_through_time_is_judged_against_its_range(first, status, what):
    (indicator,) = recurrent_health({"l0.grad_norms": np.array([first, 0.5, 1.0])})
    name, value, _, found, tooltip = indicator
    assert (name, found) == ("time", status) and value == pytest.approx(first)
    assert what in tooltip and "normal: 0.001 to 1000" in tooltip


def test_the_layer_furthest_from_1_is_shown_when_there_are_several():
    found = recurrent_health({"l0.grad_norms": np.array([0.5, 1.0]),
                              "l1.grad_norms": np.array([1e-5, 1.0]),
                              "l1_reverse.grad_norms": np.array([1.0, 0.1])})  # fmt: skip
    (_, value, _, status, tooltip), = found
    assert value == pytest.approx(1e-5) and status == "warn" and "layer 1" in tooltip


def test_the_overlay_on_an_lstm_node_shows_gates_and_time_from_its_probe():
    project = Project()
    node = project.graph.add_node(Node("LSTM", name="lstm1"))
    lstm = LSTM()
    captures = HookCaptures([], {node.id: lstm}.get, budget=None)
    monitor = HealthMonitor(captures, project)
    monitor.attach()
    assert lstm.probe is not None
    captures.step = 1
    lstm(batch(n=3, t=6))
    names = [h.name for h in monitor.indicators()[node.id]]
    assert "gates" in names and "time" in names  # beside the output's
    (time,) = [h for h in monitor.indicators()[node.id] if h.name == "time"]
    assert time.value == pytest.approx(1 / 6)  # the stand-in's norms are 1…6
    monitor.detach()
    assert lstm.probe is None and not captures.captures
