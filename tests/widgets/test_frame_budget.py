"""Live views space their redraws so their drawing stays a small share of one core."""

import pytest

from app.session import Metrics
from widgets.plots import FrameBudget, TrainingCurves
from widgets.plots import budget as budget_module


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(budget_module.time, "monotonic", fake)
    return fake


def test_a_redraw_waits_until_its_cost_is_the_share_of_the_time_gone_by(clock):
    budget = FrameBudget(0.05)
    assert budget.ready()  # the first one at once
    budget.charge(0.010)  # it cost 10 ms: the next may come 200 ms later
    clock.now += 0.150
    assert not budget.ready()
    clock.now += 0.060
    assert budget.ready()
    clock.now += 0.001  # a redraw that cost nothing leaves the next one free
    assert budget.ready()


def test_timed_charges_the_cpu_time_of_the_work(clock):
    budget = FrameBudget(0.01)
    assert budget.ready()
    total = budget.timed(lambda n: sum(i * i for i in range(n)), 200_000)
    assert total > 0
    clock.now += 0.0001
    assert not budget.ready()  # real CPU time was charged


def test_a_share_outside_0_to_1_is_refused():
    for share in (0, -0.1, 1.5):
        with pytest.raises(ValueError, match="share of one core"):
            FrameBudget(share)


def test_the_curves_timer_redraws_only_within_the_budget(qtbot, clock):
    curves = TrainingCurves()
    qtbot.addWidget(curves)
    curves.show()
    metrics = Metrics()
    curves.set_metrics(metrics)
    curves.budget = FrameBudget(0.05)
    drawn = curves.redraws
    metrics.add_step(1, 1, 0.5, 0.5, 0.01)
    curves._on_timer_timeout()
    assert curves.redraws == drawn + 1
    curves.budget.charge(0.02)  # as if that redraw cost 20 ms: 400 ms to wait
    metrics.add_step(2, 1, 0.4, 0.5, 0.01)
    clock.now += 0.1
    curves._on_timer_timeout()
    assert curves.redraws == drawn + 1  # held back, the data stays in the buffer
    clock.now += 10.0  # (the first redraw's own CPU time was charged too)
    curves._on_timer_timeout()
    assert curves.redraws == drawn + 2
    x, _ = curves.curves["loss"].getData()
    assert list(x) == [1.0, 2.0]
