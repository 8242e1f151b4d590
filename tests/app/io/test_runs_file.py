"""The run history saved in the project file and read back — and a damaged one left out."""

import io
import json
import zipfile

import numpy as np
import pytest

from app.document.run_diff import change_text, summarise
from app.document.runs import EPOCH_COLUMNS, STEP_COLUMNS, RunRecord, curve_metrics, thin_rows
from app.io.project_file import ProjectFileError, load_project, save_project
from app.io.runs_file import MAX_CURVE_ROWS, RUNS_MEMBER
from app.session import TrainingSession
from tests.app.session.session_samples import mlp_project

SWEEP = {"id": "s1", "spec": {"axes": []}, "trials": [{"learning_rate": 0.1}], "done": [],
         "status": "stopped", "metric": "best_loss"}  # fmt: skip


def members_of(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def write_zip(path, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def npz(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A project with three runs (a width change between the first two), saved."""
    project = mlp_project(epochs=1)
    TrainingSession(project).run()
    first, second = [n for n in project.graph.nodes.values() if n.type == "Dense"]
    project.graph.set_params(first.id, {"out_channels": 24})
    project.graph.set_params(second.id, {"in_channels": 24})
    project.param_values.clear()
    TrainingSession(project).run()
    project.training["learning_rate"] = 0.01
    TrainingSession(project).run(epochs=1)
    runs = project.runs
    a, b, c = runs.records
    runs.rename(a.id, "baseline")
    runs.set_colour(b.id, "#123456")
    runs.set_keep(c.id, True)
    runs.set_sweep(SWEEP)
    runs.set_cap(2.5)
    path = tmp_path_factory.mktemp("runs") / "runs.cwproj"
    save_project(project, path)
    return project, path


def test_a_saved_run_history_reads_back_as_it_was(trained):
    project, path = trained
    notes = []
    loaded = load_project(path, notes)
    assert notes == []
    assert loaded.runs.cap_mb == 2.5 and loaded.runs.sweep == SWEEP
    assert len(loaded.runs) == 3
    for was, now in zip(project.runs.records, loaded.runs.records, strict=True):
        for field in ("id", "name", "colour", "named", "keep", "origin", "status", "message",
                      "started", "first_step", "steps", "settings", "network", "diff",
                      "metrics", "sweep"):  # fmt: skip
            assert getattr(now, field) == getattr(was, field), field
        assert now.duration == pytest.approx(was.duration)
        assert np.array_equal(now.steps_curve, was.steps_curve, equal_nan=True)
        assert np.array_equal(now.epochs_curve, was.epochs_curve, equal_nan=True)
        assert now.kept == was.kept
        for node_id, values in (was.weights or {}).items():
            for name, value in values.items():
                assert np.array_equal(now.weights[node_id][name], value)
    names = [r.name for r in loaded.runs]
    assert names[0] == "baseline" and loaded.runs.records[0].named
    assert loaded.runs.records[1].colour == "#123456"
    assert loaded.runs.records[2].keep is True and loaded.runs.records[2].kept
    assert "out_channels 16 \u2192 24" in " ".join(
        change_text(c) for c in loaded.runs.records[1].diff)
    # A listener of the loaded project hears of its runs.
    heard = []
    loaded.events.subscribe(heard.append)
    loaded.runs.rename(loaded.runs.records[1].id, "wider")
    assert any(type(e).__name__ == "RunsChanged" for e in heard)


def test_a_project_that_never_ran_has_no_runs_part_and_an_old_file_loads(tmp_path):
    path = tmp_path / "fresh.cwproj"
    save_project(mlp_project(), path)
    members = members_of(path)
    assert RUNS_MEMBER not in members
    assert "runs" not in json.loads(members["project.json"])
    assert len(load_project(path).runs) == 0


def hundred_runs_project():
    """100 runs of 2,000 steps each, made as a session would make them."""
    project = mlp_project()
    session = TrainingSession(project)  # for the network's weights
    values = {}
    for name, param in session.compiled.parameters().items():
        node_id, local = session.compiled.parameter_owner[name]
        values.setdefault(node_id, {})[local] = param.asnumpy().copy()
    network = summarise(project.graph)
    rng = np.random.default_rng(0)
    for i in range(100):
        steps = np.arange(1, 2001, dtype=np.float32)
        loss = (1.0 + rng.random()) / np.sqrt(steps)
        steps_curve = np.column_stack([steps, steps // 20 + 1, loss, 1 - loss / 2,
                                       np.full(2000, 0.02)])  # fmt: skip
        epochs = np.arange(1, 101, dtype=np.float32)
        epochs_curve = np.column_stack([epochs, epochs * 20, 1 / np.sqrt(epochs * 20),
                                        np.full(100, 0.9), 1.1 / np.sqrt(epochs * 20),
                                        np.full(100, 0.85)])  # fmt: skip
        steps_curve, epochs_curve = thin_rows(steps_curve), thin_rows(epochs_curve)
        project.runs.add(RunRecord(
            settings={**project.training, "learning_rate": 0.001 * (i + 1)}, network=network,
            started="2026-01-01T00:00:00+00:00", duration=10.0, first_step=0, steps=2000,
            metrics=curve_metrics(steps_curve, epochs_curve), steps_curve=steps_curve,
            epochs_curve=epochs_curve,
            weights={k: {n: a.copy() for n, a in v.items()} for k, v in values.items()},
        ))  # fmt: skip
    return project


def test_a_project_with_100_small_runs_saves_under_the_size_cap(tmp_path):
    project = hundred_runs_project()
    assert len(project.runs) == 100  # nothing needed trimming
    path = tmp_path / "hundred.cwproj"
    save_project(project, path)
    with zipfile.ZipFile(path) as zf:
        runs_json = json.loads(zf.read("project.json"))["runs"]
        npz_bytes = zf.getinfo(RUNS_MEMBER).compress_size
    runs_bytes = len(json.dumps(runs_json, indent=1).encode()) + npz_bytes
    assert runs_bytes < project.runs.cap_mb * (1 << 20)
    loaded = load_project(path)
    best, last = loaded.runs.best(), loaded.runs.last
    assert best is not last
    assert [r.id for r in loaded.runs if r.kept] == [best.id, last.id]
    assert len(loaded.runs.records[0].steps_curve) <= 1000  # thinned, ends kept exactly
    assert loaded.runs.records[0].steps_curve[-1, 0] == 2000


def edit(path, change_json=None, members=None) -> list[str]:
    """Rewrite the saved file, load it; the notes of the load."""
    content = members_of(path)
    if change_json is not None:
        data = json.loads(content["project.json"])
        change_json(data)
        content["project.json"] = json.dumps(data).encode()
    content.update(members or {})
    broken = path.with_name("broken.cwproj")
    write_zip(broken, content)
    notes = []
    project = load_project(broken, notes)
    edit.project = project
    return notes


def runs_of(data):
    return data["runs"]["records"]


@pytest.mark.parametrize(("change", "match"), [
    (lambda d: d["runs"].update(records="all"), "runs.records must be a list"),
    (lambda d: d["runs"].update(cap_mb=1e308), "cap_mb must be 0.1 to 1024"),
    (lambda d: d["runs"].update(extra=1), "unexpected entry 'extra'"),
    (lambda d: d.update(runs=[1, 2]), "runs must be an object"),
    (lambda d: d["runs"].update(sweep=5), "runs.sweep must be an object"),
])  # fmt: skip
def test_a_damaged_history_is_left_out_not_the_project(trained, change, match):
    _, path = trained
    notes = edit(path, change)
    assert len(notes) == 1 and match in notes[0] and "run history is damaged" in notes[0]
    assert len(edit.project.runs) == 0
    assert edit.project.param_values  # the network and its weights are as saved


@pytest.mark.parametrize(("change", "match"), [
    (lambda r: r.update(colour="red"), "colour written #rrggbb"),
    (lambda r: r.update(status="crashed"), "status must be one of"),
    (lambda r: r.update(steps=-1), "steps must be a whole number"),
    (lambda r: r.update(duration=-2.0), "must not be below 0"),
    (lambda r: r.update(name="x" * 121), "name must be 1 to 120"),
    (lambda r: r.update(name="\ud800"), "not valid Unicode"),
    (lambda r: r.update(metrics={"made_up": 1.0}), "names no metric"),
    (lambda r: r["network"].update(nodes=[]), "network.nodes must be an object"),
    (lambda r: r.update(diff=[{"kind": "boom", "what": "", "old": 1, "new": 2}]),
     "kind must be one of"),
    (lambda r: r.pop("settings"), "missing 'settings'"),
])  # fmt: skip
def test_a_damaged_run_is_left_out_and_the_others_kept(trained, change, match):
    _, path = trained
    notes = edit(path, lambda d: change(runs_of(d)[1]))
    assert len(notes) == 1 and "Run 2 of its run history is damaged" in notes[0]
    assert match in notes[0]
    assert [r.name for r in edit.project.runs][0] == "baseline" and len(edit.project.runs) == 2


def test_a_run_whose_curves_or_kept_weights_are_missing_is_left_out(trained):
    project, path = trained
    last = project.runs.records[2]
    arrays = {k: v for k, v in np.load(io.BytesIO(members_of(path)[RUNS_MEMBER])).items()}
    without_weights = {k: v for k, v in arrays.items() if k.count("/") == 1}
    notes = edit(path, members={RUNS_MEMBER: npz(without_weights)})
    assert any("kept weights are missing" in n for n in notes)
    assert last.id not in {r.id for r in edit.project.runs}
    without_curve = {k: v for k, v in arrays.items() if k != f"{last.id}/epochs"}
    notes = edit(path, members={RUNS_MEMBER: npz(without_curve)})
    assert any("epochs curve is missing" in n for n in notes)


@pytest.mark.parametrize("what", ["stranger", "wide", "long", "object", "garbage"])
def test_hostile_run_arrays_are_refused_before_they_are_read(trained, what):
    project, path = trained
    run_id = project.runs.records[0].id
    arrays = {k: v for k, v in np.load(io.BytesIO(members_of(path)[RUNS_MEMBER])).items()}
    if what == "stranger":
        arrays["f" * 32 + "/steps"] = np.zeros((1, len(STEP_COLUMNS)), np.float32)
        raw, match = npz(arrays), "not in the history"
    elif what == "wide":
        arrays[f"{run_id}/epochs"] = np.zeros((2, len(EPOCH_COLUMNS) + 1), np.float32)
        raw, match = npz(arrays), "has shape"
    elif what == "long":  # a header declaring a huge curve: refused from the header alone
        header = np.zeros((MAX_CURVE_ROWS + 1, len(STEP_COLUMNS)), np.float32)
        arrays[f"{run_id}/steps"] = header
        raw, match = npz(arrays), "has shape"
    elif what == "object":
        buffer = io.BytesIO()
        np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        raw = io.BytesIO()
        with zipfile.ZipFile(raw, "w") as zf:
            zf.writestr(f"{run_id}/steps.npy", buffer.getvalue())
        raw, match = raw.getvalue(), "not plain numbers"
    else:
        raw, match = b"not a zip at all", "damaged or not a zip"
    notes = edit(path, members={RUNS_MEMBER: raw})
    assert len(notes) == 1 and "run history is damaged" in notes[0] and match in notes[0]
    assert len(edit.project.runs) == 0 and edit.project.param_values


def test_a_run_history_that_cannot_be_stored_is_refused_before_the_save(tmp_path, trained):
    project, _ = trained
    record = project.runs.records[0]
    record.settings["bad"] = object()
    try:
        with pytest.raises(ProjectFileError, match="can't be stored"):
            save_project(project, tmp_path / "no.cwproj")
    finally:
        del record.settings["bad"]
    assert not (tmp_path / "no.cwproj").exists()
