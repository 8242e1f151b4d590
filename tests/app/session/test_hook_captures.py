"""Hook captures: the training thread only copies; the reader summarises at its own pace."""

import numpy as np
import pytest

from app.document import Hook
from app.session import STAT_COLUMNS, HookCapture, TrainingSession, capture_summary, hook_captures
from app.session.events import Progress
from app.session.hook_captures import CapturePace
from tests.app.session.session_samples import mlp_project


def five_hook_session(**training) -> TrainingSession:
    project = mlp_project(**training)
    graph = project.graph
    dense1, tanh1, dense2 = (graph.node_named(n).id for n in ("dense1", "tanh1", "dense2"))
    edge = graph.edge_into(dense2, "in")
    project.hooks = [Hook("forward", dense1), Hook("forward", tanh1), Hook("forward_pre", dense2),
                     Hook("backward", dense1), Hook("hook_backward", edge.id)]
    session = TrainingSession(project)
    session.captures.pace.budget = None  # every step
    return session


def test_training_with_five_hooks_and_no_reader_does_no_summary_work(monkeypatch):
    calls = []
    real = capture_summary.summarise_block

    def counted(block, *args, **kwargs):
        calls.append(len(block))
        return real(block, *args, **kwargs)

    monkeypatch.setattr(hook_captures, "summarise_block", counted)
    monkeypatch.setattr(np, "histogram", lambda *a, **k: calls.append("histogram"))
    session = five_hook_session()
    during: list[int] = []
    session.events.subscribe(  # at every step
        lambda event: during.append(len(calls)) if isinstance(event, Progress) else None)
    session.run(steps=20)
    captures = list(session.captures.captures.values())
    assert len(captures) == 5 and len(during) >= 20 and set(during) == {0}  # only copies
    # Once, at the run's end, what nobody read is summarised so the saved history has it:
    # one block per capture.
    assert calls == [20] * 5 and session.captures.summarise() == 0
    assert [c.stats.snapshot()[:, 0].tolist() for c in captures] == [list(range(1, 21))] * 5


def test_summaries_match_numpy_float64_statistics_of_the_captured_tensors():
    capture = HookCapture(Hook("forward", "node1"))
    capture.pace.budget = None
    rng = np.random.default_rng(0)
    tensors = [rng.normal(i, 1 + i, size=(16, 8)).astype(np.float32) for i in range(10)]
    for step, tensor in enumerate(tensors, 1):
        capture.record(step, tensor)
    assert capture.summarise() == 10
    stats, histograms = capture.stats.snapshot(), capture.histograms.snapshot()
    assert stats.shape == (10, len(STAT_COLUMNS))
    for row, hist, tensor in zip(stats, histograms, tensors, strict=True):
        values = tensor.astype(np.float64)
        expected = [values.mean(), values.std(), values.min(), values.max(),
                    np.sqrt((values**2).sum())]
        np.testing.assert_allclose(row[1:], expected, rtol=1e-5, atol=1e-5)
        counts, _ = np.histogram(values, bins=hist.size - 2, range=(values.min(), values.max()))
        assert hist[0] == values.min() and hist[1] == values.max()
        assert np.abs(hist[2:] - counts).sum() <= 2  # float32 bin edges may move a number
        assert hist[2:].sum() == values.size
    np.testing.assert_array_equal(capture.latest.snapshot(), tensors[-1])


def test_non_finite_numbers_are_left_out_and_the_row_still_appears():
    capture = HookCapture(Hook("forward", "node1"))
    tensor = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 5.0]], dtype=np.float32)
    capture.record(1, tensor)
    capture.record(2, np.full((2, 3), np.nan, dtype=np.float32))
    assert capture.summarise() == 2
    stats, histograms = capture.stats.snapshot(), capture.histograms.snapshot()
    finite = np.array([1.0, 3.0, 5.0])
    np.testing.assert_allclose(stats[0, 1:], [finite.mean(), finite.std(), 1, 5,
                                              np.sqrt((finite**2).sum())], rtol=1e-6)
    assert histograms[0, 2:].sum() == 3
    assert stats[1, 0] == 2 and np.isnan(stats[1, 1:]).all() and histograms[1, 2:].sum() == 0


def test_a_reader_that_falls_behind_loses_only_the_oldest_steps():
    # A capture not held for a history's head (the health overlay's; see test_history for
    # the head, which waits for the reader).
    capture = HookCapture(Hook("forward", "node1", id="health-f-node1"), slots=8)
    capture.pace.budget = None
    for step in range(1, 31):
        capture.record(step, np.full((2, 2), step, dtype=np.float32))
    assert capture.pending == 30
    assert capture.summarise() == 8  # the newest 8 (slots rewritten meanwhile drop out)
    assert capture.stats.snapshot()[:, 0].tolist() == list(range(23, 31))
    assert capture.stats.snapshot()[:, 1].tolist() == list(range(23, 31))  # each its own copy
    capture.record(31, np.ones((2, 2), dtype=np.float32))
    assert capture.summarise() == 1 and capture.summarise() == 0


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_stride_doubles_while_copies_cost_over_the_budget_and_comes_back(monkeypatch):
    clock = FakeClock()
    session = five_hook_session(epochs=500)
    pace = session.captures.pace
    pace.budget, pace.clock = 0.01, clock
    copy_cost = [1e-4]  # 5 hooks × 0.1 ms a copy = 50 % of a 1 ms step
    real_copy = hook_captures._leading_samples

    def slow_copy(array, limit):
        clock.now += copy_cost[0]  # an expensive copy, on the injected clock
        return real_copy(array, limit)

    def step_takes_a_millisecond(event):
        clock.now += 1e-3
        session.captures.summarise()  # a reader (off the clock), so the head never waits

    monkeypatch.setattr(hook_captures, "_leading_samples", slow_copy)
    session.events.subscribe(step_takes_a_millisecond)
    session.run(steps=300)
    assert session.captures.stride >= 8
    capture = next(iter(session.captures.captures.values()))
    assert capture.stride == session.captures.stride and capture.captured < 300 / 4
    copied = capture.captured
    copy_cost[0] = 0.0  # cheap again: the stride comes back down
    session.run(steps=3000)
    assert session.captures.stride == 1
    assert capture.captured > copied + 100


def test_detached_hooks_do_no_capture_work():
    session = five_hook_session()
    captures = list(session.captures.captures.values())
    session.run(steps=3)
    session.captures.remove()
    session.run(steps=5)
    assert [c.captured for c in captures] == [3] * 5
    assert session.captures.summarise() == 0 and sum(c.summarise() for c in captures) == 0
    assert [len(c.stats) for c in captures] == [3] * 5  # the first run's end summarised them


@pytest.mark.parametrize("shape", [(70_000,), (40, 3, 32, 32)])
def test_big_tensors_are_copied_as_their_leading_samples(shape):
    capture = HookCapture(Hook("forward", "node1"), limit=1 << 14)
    tensor = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    capture.record(1, tensor)
    capture.summarise()
    kept = capture.latest.snapshot()
    assert kept.size <= 1 << 14
    np.testing.assert_array_equal(kept.reshape(-1), tensor.reshape(-1)[: kept.size])


def test_with_a_reader_ten_times_a_second_captures_are_spaced_to_fit_each_read():
    clock = FakeClock()
    pace = CapturePace(budget=0.01, clock=clock)  # copies cost nothing here
    for _ in range(400):  # 3,000 steps a second
        pace.step_started()
        clock.now += 1 / 3000
    assert pace.stride == 1  # no reader said how often it reads: every step
    pace.read_interval = 0.1
    for _ in range(800):
        pace.step_started()
        clock.now += 1 / 3000
    # 300 steps between two reads, at most CAPTURES_PER_READ (8) captures: every 64th step
    # (a power of two).
    assert pace.stride == 64
    pace.read_interval = 4.0  # a slow reader: the stride stops where 2 a second remain
    for _ in range(8000):
        pace.step_started()
        clock.now += 1 / 3000
    assert pace.stride == 1024


def test_engine_hooks_are_on_only_for_the_steps_a_capture_is_due():
    project = mlp_project(epochs=100)
    graph = project.graph
    dense1, tanh1 = graph.node_named("dense1").id, graph.node_named("tanh1").id
    edge = graph.edge_into(graph.node_named("dense2").id, "in").id
    project.hooks = [Hook("forward", tanh1, settings={"every": 4}),
                     Hook("backward", dense1, settings={"every": 4}),
                     Hook("hook_backward", edge, settings={"every": 4})]  # fmt: skip
    session = TrainingSession(project)
    session.captures.pace.budget = None
    tanh, dense = session.compiled.cells[tanh1], session.compiled.cells[dense1]
    on: dict[int, tuple[int, int, bool]] = {}

    def look(event):  # at the end of each step: what the step ran with
        if isinstance(event, Progress):
            on[event.step] = (len(tanh._fwd_hooks), len(dense._fwd_hooks),
                              edge in session.compiled.edge_hooks)  # fmt: skip

    session.events.subscribe(look)
    session.run(steps=12)
    assert [s for s, hooks in on.items() if hooks == (1, 1, True)] == [4, 8, 12]
    assert all(hooks == (0, 0, False) for s, hooks in on.items() if s % 4)
    captures = [session.captures.captures[h.id] for h in project.hooks]
    assert [c.captured for c in captures] == [3, 3, 3]
    assert captures[1].stats.snapshot()[:, 0].tolist() == [4, 8, 12]  # gradients, too
    session.captures.remove()  # gone for good, whatever step comes next
    session.run(steps=8)
    assert len(tanh._fwd_hooks) == len(dense._fwd_hooks) == 0
    assert edge not in session.compiled.edge_hooks and [c.captured for c in captures] == [3] * 3


def test_off_the_stride_a_step_asks_no_capture_and_every_step_still_starts(monkeypatch):
    # At a stride of 8, seven steps in eight find every hook off and ask no capture
    # whether it is due (the per-step cost of five hooks on a fast MLP was 0.6 % of its
    # step); a capture set to every step starts at the next step on the stride.
    project = mlp_project(epochs=100)
    tanh1 = project.graph.node_named("tanh1").id
    project.hooks = [Hook("forward", tanh1), Hook("backward", tanh1)]
    session = TrainingSession(project)
    captures = session.captures
    monkeypatch.setattr(captures.pace, "step_started", lambda: None)
    captures.pace.stride = 8
    asked = []
    for capture in captures.captures.values():
        wants = capture.wants
        monkeypatch.setattr(capture, "wants", lambda step, wants=wants: asked.append(step)
                            or wants(step))  # fmt: skip
    session.run(steps=20)
    forward, backward = (captures.captures[h.id] for h in project.hooks)
    assert forward.stats.snapshot()[:, 0].tolist() == [8, 16]
    assert backward.stats.snapshot()[:, 0].tolist() == [8, 16]
    # Asked at the first step (the hooks start on), then on the stride and the step after
    # (which turns the hooks off again).
    assert sorted(set(asked)) == [1, 8, 9, 16, 17]
    forward.every_step = True  # all hooks off now (steps 17 … 20)
    session.run(steps=20)  # steps 21 … 40
    forward.summarise()
    assert forward.stats.snapshot()[:, 0].tolist() == [8, 16, *range(24, 41)]
    assert backward.stats.snapshot()[:, 0].tolist() == [8, 16, 24, 32, 40]


def test_a_big_capture_s_histogram_is_sampled_evenly_and_counts_every_number():
    # A (64, 16, 4, 4) activation whose value is its column (0…3): a sample every 4th
    # number would see one column only. The histogram is counted from a sample (see
    # HISTOGRAM_SAMPLE) yet shows the four columns alike, and counts all 16,384 numbers;
    # the statistics use every number.
    tensor = np.broadcast_to(np.arange(4, dtype=np.float32), (64, 16, 4, 4)).copy()
    tensor[3, 2, 1, 0] = np.nan  # one number that is not counted
    assert tensor.size > capture_summary.HISTOGRAM_SAMPLE
    stats, histograms = capture_summary.summarise_block(tensor.reshape(1, -1))
    counts = histograms[0, 2:]
    assert counts.sum() == pytest.approx(tensor.size - 1)
    spikes = counts[counts > 0]
    assert len(spikes) == 4
    np.testing.assert_allclose(spikes, (tensor.size - 1) / 4, rtol=0.1)
    finite = tensor[np.isfinite(tensor)].astype(np.float64)
    np.testing.assert_allclose(stats[0], [finite.mean(), finite.std(), 0, 3,
                                          np.sqrt((finite**2).sum())], rtol=1e-6)
