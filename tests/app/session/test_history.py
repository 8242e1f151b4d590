"""History that never loses the start: head and tail exact, a uniform middle, saved too."""

from __future__ import annotations

import io
import random
import zipfile

import numpy as np
import pytest

from app.document import Hook
from app.io.project_file import ProjectFileError, load_project, save_project
from app.session import (
    STAT_COLUMNS,
    CapturePace,
    HookCapture,
    Metrics,
    Progress,
    TrainingError,
    TrainingSession,
    TrainingSettings,
)
from app.session.health import PREFIX as HEALTH_PREFIX
from app.session.history import History, thin_state
from app.session.hook_captures import MIN_CAPTURE_RATE
from app.session.settings import DEFAULTS
from tests.app.session.session_samples import mlp_project


def filled(count: int, head: int = 5, middle: int = 3, seed: int = 0) -> History:
    history = History(head, 2, middle=middle, seed=seed)
    for i in range(count):
        history.append_values(i, -i)
    return history


# ---- the history itself -----------------------------------------------------------------


def test_the_first_and_last_rows_are_kept_exactly_and_in_order():
    history = filled(100)
    rows = history.snapshot()
    assert (len(history), history.total, history.capacity) == (13, 100, 13)
    assert rows[:5, 0].tolist() == [0, 1, 2, 3, 4]
    assert rows[-5:, 0].tolist() == [95, 96, 97, 98, 99]
    assert (np.diff(rows[:, 0]) > 0).all()  # the sample of the middle in order of arrival
    assert ((rows[5:8, 0] >= 5) & (rows[5:8, 0] < 95)).all()
    np.testing.assert_array_equal(rows[:, 1], -rows[:, 0])  # whole rows move together
    assert history.last().tolist() == [99, -99]
    snapshot, version = history.snapshot_with_version()
    np.testing.assert_array_equal(snapshot, rows)
    assert version == history.version == 100


def test_a_short_history_holds_everything_and_clear_forgets_it():
    history = filled(9)
    assert history.snapshot()[:, 0].tolist() == list(range(9))
    history.extend(np.array([[9, -9], [10, -10]]))
    assert history.snapshot()[:, 0].tolist() == list(range(11))
    version = history.version
    history.clear()
    assert (len(history), history.total, history.last()) == (0, 0, None)
    assert history.snapshot().shape == (0, 2) and history.version > version
    with pytest.raises(ValueError, match="holds 2 numbers"):
        history.append_values(1, 2, 3)


def test_each_row_of_the_middle_is_kept_with_the_same_chance():
    # head 1, middle 1, tail 1, seven rows: rows 1..5 pass through the middle, and one of
    # them stays; Algorithm R keeps each with probability 1/5.
    kept = [filled(7, head=1, middle=1, seed=seed).snapshot()[1, 0] for seed in range(5000)]
    counts = np.bincount(np.array(kept, dtype=int), minlength=6)[1:6]
    assert counts.sum() == 5000
    assert (np.abs(counts - 1000) < 150).all(), counts  # ~5 standard deviations


def test_the_reservoir_of_a_long_stream_spreads_evenly_over_it():
    history = History(10, 1, middle=1000, seed=3)
    history.extend(np.arange(100_000, dtype=float)[:, None])
    middle = history.snapshot()[10:1010, 0]
    assert len(middle) == 1000 and len(np.unique(middle)) == 1000
    counts, _ = np.histogram(middle, bins=10, range=(10, 100_000 - 10))
    chi2 = ((counts - 100) ** 2 / 100).sum()
    assert chi2 < 40, counts  # 9 degrees of freedom: p < 1e-5 beyond


def test_sampling_is_fixed_by_the_seed_and_leaves_the_global_generators_alone():
    random.seed(11)
    np.random.seed(11)
    python_state, numpy_state = random.getstate(), np.random.get_state()
    one, same, other = filled(500, seed=4), filled(500, seed=4), filled(500, seed=5)
    np.testing.assert_array_equal(one.snapshot(), same.snapshot())
    assert not np.array_equal(one.snapshot(), other.snapshot())
    one.restore(one.state())
    assert random.getstate() == python_state
    after = np.random.get_state()
    assert after[0] == numpy_state[0] and (after[1] == numpy_state[1]).all()
    assert after[2:] == numpy_state[2:]


def test_state_and_restore_go_on_exactly_as_without_a_break():
    unbroken = filled(300)
    state = filled(150).state()
    assert set(state) == {"history", "arrival", "total", "random", "reservoir"}
    reopened = History(5, 2, middle=3)
    reopened.restore(state)
    np.testing.assert_array_equal(reopened.snapshot(), filled(150).snapshot())
    assert reopened.total == 150
    for i in range(150, 300):
        reopened.append_values(i, -i)
    np.testing.assert_array_equal(reopened.snapshot(), unbroken.snapshot())


def test_a_state_saved_with_other_sizes_is_fitted():
    state = filled(1000, head=50, middle=50).state()
    smaller = History(5, 2, middle=3)
    smaller.restore(state)
    rows = smaller.snapshot()[:, 0]
    assert len(rows) == 13 and rows[:5].tolist() == [0, 1, 2, 3, 4]
    assert rows[-5:].tolist() == [995, 996, 997, 998, 999] and (np.diff(rows) > 0).all()
    larger = History(80, 2, middle=10)
    larger.restore(state)
    rows = larger.snapshot()[:, 0]
    assert rows[:50].tolist() == list(range(50)) and rows[-50:].tolist() == list(range(950, 1000))
    larger.append_values(1000, -1000)
    assert larger.last().tolist() == [1000, -1000] and larger.total == 1001


def _spoiled(state, key, value):
    return {**state, key: value}


@pytest.mark.parametrize(
    ("spoil", "match"),
    [
        (lambda s: {k: v for k, v in s.items() if k != "total"}, "no total"),
        (lambda s: _spoiled(s, "history", s["history"][:, :1]), "rows"),
        (lambda s: _spoiled(s, "history", s["history"].astype(str)), "rows"),
        (lambda s: _spoiled(s, "arrival", s["arrival"][:-1]), "arrival numbers"),
        (lambda s: _spoiled(s, "arrival", s["arrival"][::-1].copy()), "not rising"),
        (lambda s: _spoiled(s, "arrival", s["arrival"] + 1000), "not rising"),
        (lambda s: _spoiled(s, "total", np.array(-1)), "total"),
        (lambda s: _spoiled(s, "total", np.array([40])), "total"),
        (lambda s: _spoiled(s, "random", s["random"][:10]), "random"),
        (lambda s: _spoiled(s, "reservoir", s["reservoir"] + 1), "reservoir order"),
        (lambda s: _spoiled(s, "reservoir", s["reservoir"][:, None]), "reservoir order"),
        (lambda s: "not a mapping", "mapping"),
    ],
)
def test_a_damaged_state_is_refused_and_changes_nothing(spoil, match):
    history = filled(40)
    before = history.snapshot()
    with pytest.raises(ValueError, match=match):
        history.restore(spoil(filled(40).state()))
    np.testing.assert_array_equal(history.snapshot(), before)


def test_a_huge_state_is_thinned_keeping_its_first_and_last_rows():
    state = filled(100_000, head=1000, middle=1000).state()
    thin = thin_state(state, 300)
    assert len(thin["history"]) == 300 and len(thin["arrival"]) == 300
    np.testing.assert_array_equal(thin["history"][:100], state["history"][:100])
    np.testing.assert_array_equal(thin["history"][-100:], state["history"][-100:])
    again = History(1000, 2)
    again.restore(thin)
    assert again.snapshot()[0, 0] == 0 and again.last()[0] == 99_999


# ---- metrics -----------------------------------------------------------------------------


def long_metrics(steps: int = 100_000) -> Metrics:
    metrics = Metrics()
    for step in range(1, steps + 1):
        metrics.add_step(step, 1 + step // 1000, 1.0 / step, None, 0.01)
    return metrics


def test_metrics_keep_step_1_after_100000_steps_and_through_json():
    metrics = long_metrics()
    steps = metrics.steps.snapshot()
    head = DEFAULTS["history_steps"]
    assert steps[0, 0] == 1
    assert steps[:head, 0].tolist() == list(range(1, head + 1))
    assert steps[-head:, 0].tolist() == list(range(100_001 - head, 100_001))
    assert len(steps) == 3 * head and (np.diff(steps[:, 0]) > 0).all()
    data = metrics.to_json()
    assert data["steps"][0][:3] == [1, 1, 1] and data["step_history"]["total"] == 100_000
    again = Metrics()
    again.load_json(data)
    np.testing.assert_array_equal(again.steps.snapshot(), steps)
    assert again.steps.total == 100_000
    for one in (metrics, again):  # reopened, it samples on as if it had never stopped
        for step in range(100_001, 120_001):
            one.add_step(step, 101, 1e-5, None, 0.01)
    np.testing.assert_array_equal(again.steps.snapshot(), metrics.steps.snapshot())


def test_metrics_of_older_files_with_tables_only_still_load():
    again = Metrics()
    again.load_json({"steps": [[1, 1, 0.5, None, 0.01], [2, 1, 0.4, 0.5, 0.01]],
                     "epochs": [[1, 2, 0.45, None, None, None]]})  # fmt: skip
    assert again.steps.snapshot()[:, 0].tolist() == [1, 2] and again.steps.total == 2
    assert again.last_epoch().epoch == 1
    with pytest.raises(ValueError, match="steps history is damaged"):
        again.load_json({"steps": [[1, 1, 0.5, None, 0.01]],
                         "step_history": {"total": 1, "arrival": [3]}})  # fmt: skip


# ---- hook captures -----------------------------------------------------------------------


def test_a_slow_reader_still_gets_the_first_captured_step_after_100000_captures():
    capture = HookCapture(Hook("forward", "node1"), history=2000)
    capture.pace.budget = None
    tensor = np.ones((4, 3), dtype=np.float32)
    for step in range(1, 100_001):
        capture.record(step, tensor * step)
        if step % 1000 == 0:
            capture.summarise()
    capture.summarise()
    stats = capture.stats.snapshot()
    assert stats[0, 0] == 1  # the first captured step
    assert stats[:64, 0].tolist() == list(range(1, 65))  # a full ring, none overwritten
    np.testing.assert_allclose(stats[:64, STAT_COLUMNS.index("mean")], np.arange(1, 65))
    assert capture.dropped > 0 and len(capture.histograms.snapshot()) == len(stats)
    assert capture.histograms.snapshot()[0, :2].tolist() == [1, 1]  # aligned: step 1's
    assert stats[-1, 0] == 100_000


def test_beyond_the_head_a_slow_reader_loses_the_oldest_captures():
    capture = HookCapture(Hook("forward", "node1"), history=100, slots=8)
    capture.pace.budget = None
    for step in range(1, 101):  # the head, read in time
        capture.record(step, np.full((2, 2), step, dtype=np.float32))
        capture.summarise()
    for step in range(101, 131):
        capture.record(step, np.full((2, 2), step, dtype=np.float32))
    assert capture.pending == 30 and capture.summarise() == 8
    assert capture.stats.snapshot()[-8:, 0].tolist() == list(range(123, 131))


def test_health_captures_are_not_held_for_the_reader():
    health = HookCapture(Hook("forward", "node1", id=f"{HEALTH_PREFIX}out-node1"), slots=8)
    shown = HookCapture(Hook("forward", "node1"), slots=8)
    for capture in (health, shown):
        capture.pace.budget = None
        for step in range(1, 101):
            capture.record(step, np.full((2, 2), step, dtype=np.float32))
    assert health.newest()[0, 0] == 100 and health.dropped == 0  # keeps moving
    assert shown.newest()[0, 0] == 8 and shown.dropped == 92  # waits for its reader


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("step_seconds", "most"), [(0.01, 32), (0.001, 256), (0.04, 8),
                                                     (0.5, 1)])  # fmt: skip
def test_the_stride_never_drops_the_captures_below_2_a_second(step_seconds, most):
    clock = FakeClock()
    pace = CapturePace(0.01, clock)
    for _ in range(5000):
        pace.step_started()
        clock.now += step_seconds
        pace.spend(step_seconds / 2)  # copies far over the budget: the stride would grow
    assert pace.stride == most
    # a pane, redrawn every second or two, gets fresh data at each redraw
    assert pace.stride == 1 or pace.rate / pace.stride >= MIN_CAPTURE_RATE == 2


# ---- the setting -------------------------------------------------------------------------


@pytest.mark.parametrize("value", [99, 1_000_001, 0, -5, 2.5, "2000", True, None])
def test_the_history_setting_is_checked(value):
    with pytest.raises(TrainingError, match=r"history .* from 100 to 1,000,000"):
        TrainingSettings.from_project({"dataset": "spirals", "history_steps": value})


def test_the_history_setting_sizes_the_sessions_histories():
    assert TrainingSettings.from_project({"dataset": "spirals"}).history_steps == 2000
    for value in (100, 1_000_000):
        settings = TrainingSettings.from_project({"dataset": "spirals", "history_steps": value})
        assert settings.history_steps == value
    project = mlp_project(history_steps=150)
    project.hooks = [Hook("forward", project.graph.node_named("tanh1").id)]
    session = TrainingSession(project)
    assert session.metrics.steps.head == 150 and session.captures.history_steps == 150
    assert next(iter(session.captures.captures.values())).history.head == 150


# ---- saved with the project --------------------------------------------------------------


def trained_with_a_hook(tmp_path, steps: int = 400):
    """A project trained `steps` steps with a forward hook read every 10 steps, saved."""
    project = mlp_project(history_steps=100, epochs=100)
    hook = Hook("forward", project.graph.node_named("tanh1").id)
    project.hooks = [hook]
    session = TrainingSession(project)
    session.captures.pace.budget = None

    def read(event):
        if isinstance(event, Progress) and event.step % 10 == 0:
            session.captures.summarise()

    session.events.subscribe(read)
    session.run(steps=steps)
    session.store()  # what was read after the run's own store
    path = tmp_path / "hooked.cwproj"
    save_project(project, path)
    return session, hook, path


def test_save_and_reopen_keep_the_capture_and_metric_histories(tmp_path):
    session, hook, path = trained_with_a_hook(tmp_path)
    capture = session.captures.captures[hook.id]
    stats = capture.stats.snapshot()
    assert stats[0, 0] == 1 and capture.history.total == 400 and len(stats) == 300
    with zipfile.ZipFile(path) as zf:
        assert "captures.npz" in zf.namelist()
        with zipfile.ZipFile(io.BytesIO(zf.read("captures.npz"))) as npz:
            assert {f"{hook.id}/history.npy", f"{hook.id}/total.npy"} <= set(npz.namelist())
    reopened = load_project(path)
    np.testing.assert_array_equal(reopened.hook_history[hook.id]["history"],
                                  capture.history.snapshot())  # fmt: skip
    again = TrainingSession(reopened)
    restored = again.captures.captures[hook.id]
    np.testing.assert_array_equal(restored.stats.snapshot(), stats)
    np.testing.assert_array_equal(restored.histograms.snapshot(), capture.histograms.snapshot())
    assert restored.history.total == 400
    np.testing.assert_array_equal(again.metrics.steps.snapshot(), session.metrics.steps.snapshot())
    assert again.metrics.steps.snapshot()[0, 0] == 1 and again.metrics.steps.total == 400
    again.run(steps=5)  # goes on after the saved rows
    again.captures.summarise()
    assert restored.history.total == 405 and restored.stats.last()[0] == 405


def test_a_damaged_saved_history_starts_the_capture_afresh(tmp_path):
    session, hook, path = trained_with_a_hook(tmp_path, steps=30)
    project = load_project(path)
    project.hook_history[hook.id]["arrival"] = project.hook_history[hook.id]["arrival"][::-1]
    capture = TrainingSession(project).captures.captures[hook.id]
    assert len(capture.stats) == 0 and capture.history.total == 0


def test_a_restart_forgets_the_capture_histories(tmp_path):
    _, hook, path = trained_with_a_hook(tmp_path, steps=30)
    project = load_project(path)
    session = TrainingSession(project, restart=True)
    assert project.hook_history == {} and len(session.captures.captures[hook.id].stats) == 0


def _rewrite(path, name, data):
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members[name] = data
    with zipfile.ZipFile(path, "w") as zf:
        for member, content in members.items():
            zf.writestr(member, content)


def _npz(arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (lambda hook_id: b"not a zip at all", "damaged hook captures"),
        (lambda hook_id: _npz({"stranger/history": np.zeros((1, 40))}), "a hook .* has not"),
        (lambda hook_id: _npz({f"{hook_id}/history": np.array(["text"])}), "not plain numbers"),
        (lambda hook_id: _npz({f"{hook_id}/His tory": np.zeros(3)}), "unexpected entry"),
        (lambda hook_id: _npz({f"{hook_id}/history": np.zeros(3)})[:-40], "damaged"),
    ],
)
def test_a_damaged_captures_npz_is_a_project_file_error(tmp_path, content, match):
    _, hook, path = trained_with_a_hook(tmp_path, steps=20)
    _rewrite(path, "captures.npz", content(hook.id))
    with pytest.raises(ProjectFileError, match=match) as caught:
        load_project(path)
    assert "captures.npz" in str(caught.value)


def test_captures_nobody_summarised_yet_are_saved_when_a_run_ends():
    project = mlp_project(history_steps=100, epochs=100)
    hook = Hook("forward", project.graph.node_named("tanh1").id)
    project.hooks = [hook]
    session = TrainingSession(project)
    session.captures.pace.budget = None
    session.run(steps=20)  # no reader at all: 20 copies wait in their slots
    saved = project.hook_history[hook.id]  # the run's own store summarised them
    np.testing.assert_array_equal(saved["history"][:, 0], np.arange(1, 21))


@pytest.mark.parametrize("rows", [3, 8, 12, 40])
def test_the_newest_rows_are_the_snapshots_last_ones(rows):
    history = History(5, 2, seed=1)
    for i in range(rows):
        history.append_values(i, -i)
    for n in (1, 3, 5, 7, 50):
        np.testing.assert_array_equal(history.newest(n), history.snapshot()[-n:])
