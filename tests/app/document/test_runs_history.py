"""The project's run history: adding runs, whose weights stay, the size cap, undoable edits."""

import numpy as np
import pytest

from app.document import DocumentError, Project
from app.document.runs import (
    COLOURS,
    CURVE_ROWS,
    STEP_COLUMNS,
    RunHistory,
    RunRecord,
    RunsChanged,
    curve_metrics,
    thin_rows,
)

NETWORK = {"nodes": {"d1": {"path": "dense1", "type": "Dense",
                            "params": {"in_channels": 2, "out_channels": 32}}}, "edges": []}


def run(loss: float, *, rows: int = 10, width: int = 32, lr: float = 0.01) -> RunRecord:
    """A finished run whose loss falls to `loss`, with weights."""
    steps = np.arange(1, rows + 1, dtype=np.float32)
    losses = loss + 1.0 / steps
    curve = np.column_stack([steps, np.ones(rows), losses, np.full(rows, np.nan),
                             np.full(rows, lr)])  # fmt: skip
    network = {"nodes": {"d1": {**NETWORK["nodes"]["d1"],
                                "params": {"in_channels": 2, "out_channels": width}}},
               "edges": []}  # fmt: skip
    empty = np.empty((0, 6), np.float32)
    return RunRecord(settings={"optimizer": "Adam", "learning_rate": lr}, network=network,
                     started="2026-01-01T00:00:00+00:00", duration=2.0, first_step=0,
                     steps=rows, metrics=curve_metrics(curve, empty), steps_curve=curve,
                     weights={"d1": {"weight": np.ones((width, 2), np.float32)}})  # fmt: skip


def test_adding_runs_names_colours_and_diffs_each_against_the_one_before():
    project = Project()
    heard = []
    project.events.subscribe(heard.append)
    runs = project.runs
    runs.add(run(0.5))
    runs.add(run(0.4, width=64, lr=0.1))
    first, second = runs.records
    assert (first.name, second.name) == ("run 1", "run 2")
    assert (first.colour, second.colour) == COLOURS[:2]
    assert first.diff == []
    assert {(c["what"], c["old"], c["new"]) for c in second.diff} == {
        ("dense1.out_channels", 32, 64), ("learning_rate", 0.01, 0.1)}
    assert heard == [RunsChanged("added", (first.id,)), RunsChanged("added", (second.id,))]
    with pytest.raises(DocumentError, match="already in the history"):
        runs.add(second)


def test_a_freed_colour_is_taken_again_and_numbers_go_on_past_user_names():
    runs = RunHistory()
    for loss in (0.5, 0.4, 0.3):
        runs.add(run(loss))
    runs.remove([runs.records[1].id])
    runs.rename(runs.records[0].id, "run \u00b2")  # no number: not counted, no crash
    runs.add(run(0.2))
    assert runs.last.colour == COLOURS[1] and runs.last.name == "run 4"


def test_by_default_only_the_best_and_the_last_run_keep_their_weights():
    runs = RunHistory()
    runs.add(run(0.5))
    runs.add(run(0.1))  # the best
    runs.add(run(0.3))
    runs.add(run(0.4))  # the last
    assert [r.kept for r in runs] == [False, True, False, True]
    assert runs.best() is runs.records[1]
    # The user's choice outlives a later best: a kept run stays kept.
    runs.set_keep(runs.records[3].id, True)
    runs.add(run(0.05))
    assert [r.kept for r in runs] == [False, False, False, True, True]
    runs.set_keep(runs.records[3].id, False)
    assert not runs.records[3].kept
    with pytest.raises(DocumentError, match="were not kept"):
        runs.set_keep(runs.records[0].id, True)


def test_the_size_cap_drops_the_oldest_runs_but_never_a_named_kept_best_or_last_one():
    runs = RunHistory(cap_mb=0.2)  # about nine runs of 1,000 rows
    runs.add(run(0.9, rows=CURVE_ROWS))
    runs.rename(runs.last.id, "baseline")
    runs.add(run(0.01, rows=CURVE_ROWS))  # the best
    runs.add(run(0.8, rows=CURVE_ROWS))
    runs.set_keep(runs.last.id, True)
    dropped = []
    for i in range(10):
        dropped += runs.add(run(0.5 + i / 100, rows=CURVE_ROWS))
    assert runs.size_bytes() <= 0.2 * (1 << 20)
    names = [r.name for r in runs]
    assert names[:3] == ["baseline", "run 2", "run 3"] and names[-1] == "run 13"
    assert dropped and all(r.name not in names for r in dropped)
    assert len(runs) == len({*names})
    # A smaller cap trims at once, and says what went.
    heard = []
    runs.emit = heard.append
    gone = runs.set_cap(0.1)
    assert runs.size_bytes() <= 0.1 * (1 << 20)
    assert [r.name for r in runs][:3] == ["baseline", "run 2", "run 3"]
    assert gone and heard == [RunsChanged("removed", tuple(r.id for r in gone))]
    with pytest.raises(DocumentError, match="0.1 to 1024 MB"):
        runs.set_cap(0)


def test_remove_then_insert_puts_runs_back_where_they_were():
    runs = RunHistory()
    for loss in (0.5, 0.4, 0.3, 0.2):
        runs.add(run(loss))
    order = [r.id for r in runs]
    taken = runs.remove([order[0], order[2]])
    assert [r.id for r in runs] == [order[1], order[3]]
    runs.insert(taken)
    assert [r.id for r in runs] == order
    with pytest.raises(DocumentError):
        runs.remove(["nothere"])


def test_rename_and_colour_are_checked_and_return_the_old_value():
    runs = RunHistory()
    runs.add(run(0.5))
    record = runs.last
    assert runs.rename(record.id, "  wide  ") == "run 1"
    assert record.name == "wide" and record.named
    for bad in ("", "   ", "x" * 121):
        with pytest.raises(DocumentError):
            runs.rename(record.id, bad)
    assert runs.set_colour(record.id, "#ABCDEF") == COLOURS[0] and record.colour == "#abcdef"
    with pytest.raises(DocumentError, match="#rrggbb"):
        runs.set_colour(record.id, "blue")


def test_thin_rows_keeps_both_ends_exactly():
    rows = np.arange(5000, dtype=np.float32).reshape(-1, 1)
    thin = thin_rows(rows, 100)
    assert len(thin) <= 100
    assert thin[:25, 0].tolist() == list(range(25))
    assert thin[-25:, 0].tolist() == list(range(4975, 5000))
    assert np.all(np.diff(thin[:, 0]) > 0)


def test_metrics_come_from_epochs_when_there_are_any_and_ignore_nan():
    steps = np.array([[1, 1, 2.0, np.nan, 0.1], [2, 1, np.nan, np.nan, 0.1]], np.float32)
    assert curve_metrics(steps, np.empty((0, 6), np.float32))["final_loss"] is None
    assert curve_metrics(steps, np.empty((0, 6), np.float32))["best_loss"] == 2.0
    epochs = np.array([[1, 2, 0.5, 0.8, 0.6, 0.7], [2, 4, 0.4, 0.9, 0.65, 0.75]], np.float32)
    metrics = curve_metrics(steps, epochs)
    assert metrics["final_loss"] == pytest.approx(0.4)
    assert metrics["best_val_loss"] == pytest.approx(0.6)
    assert metrics["best_val_accuracy"] == pytest.approx(0.75)
    assert len(STEP_COLUMNS) == steps.shape[1]
