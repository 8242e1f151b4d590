"""Running sweeps: each trial trains a fresh copy and is recorded as a run with the values it
used; the project's own weights are untouched; a stopped sweep survives a save and reopen
and resumes with the trials not done; the worker thread hands records over and stops."""

from pathlib import Path

import numpy as np
import pytest

from app.io.project_file import load_project, save_project
from app.runs.sweep import Sweep, SweepError, SweepWorker
from app.runs.sweep_spec import SweepSpec

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"


def spiral():
    return load_project(EXAMPLES / "spiral_mlp.cwproj")


def weights(project) -> dict:
    return {(node, name): array.copy() for node, arrays in project.param_values.items()
            for name, array in arrays.items()}  # fmt: skip


def node_param(record, node: str, param: str):
    """A hyper-parameter as the run's network summary recorded it."""
    nodes = record.network["nodes"]
    found = [n for n in (nodes.values() if isinstance(nodes, dict) else nodes)
             if n.get("name") == node or n.get("path") == node]  # fmt: skip
    assert found, f"{node} not in the run's network"
    return found[0]["params"][param]


def test_a_2x2_grid_records_4_runs_with_their_settings():
    project = spiral()
    before, training = weights(project), dict(project.training)
    spec = SweepSpec.parse(["lr=0.003,0.03", "dense2.out_channels=16,48"], epochs=1)
    sweep = Sweep.start(project, spec)
    records = list(sweep.run())
    assert len(records) == 4 and len(project.runs) == 4
    assert sweep.records() == records and sweep.status == "finished" and not sweep.pending()
    wanted = [(lr, width) for lr in (0.003, 0.03) for width in (16, 48)]
    for index, (record, (lr, width)) in enumerate(zip(records, wanted, strict=True)):
        assert record.origin == "sweep" and record.status == "finished"
        assert record.sweep == {"id": sweep.id, "index": index,
                                "values": {"learning_rate": lr, "dense2.out_channels": width}}
        assert record.name == f"sweep {index + 1} · lr={lr:g} dense2.out_channels={width}"
        assert record.settings["learning_rate"] == lr and record.settings["epochs"] == 1
        assert node_param(record, "dense2", "out_channels") == width
        assert node_param(record, "dense3", "in_channels") == width  # the size followed
        assert record.steps == 10  # one epoch of 320 samples in batches of 32
        assert record.metric("best_val_loss") is not None
    # the diff against the run before names what the sweep changed
    assert {c["what"] for c in records[1].diff} >= {"dense2.out_channels"}
    # the project itself trained nothing and changed nothing
    after = weights(project)
    assert after.keys() == before.keys()
    assert all(np.array_equal(after[k], v) and after[k].dtype == v.dtype for k, v in before.items())
    assert project.training == training
    assert {n.name: n.params.get("out_channels") for n in project.graph}["dense2"] == 32
    state = project.runs.sweep
    assert state["status"] == "finished" and state["done"] == [r.id for r in records]
    assert state["trials"] == [r.sweep["values"] for r in records]


def test_best_follows_the_metric_and_its_direction():
    project = spiral()
    sweep = Sweep.start(project, SweepSpec.parse(["lr=0.001,0.05,0.3"], epochs=2,
                                                 metric="best_val_accuracy"))  # fmt: skip
    records = list(sweep.run())
    accuracies = [r.metric("best_val_accuracy") for r in records]
    assert sweep.best() is records[int(np.argmax(accuracies))]
    by_loss = Sweep.start(project, SweepSpec.parse(["lr=0.001,0.05,0.3"], epochs=2))
    losses = [r.metric("best_val_loss") for r in by_loss.run()]
    assert by_loss.metric == "best_val_loss"
    assert by_loss.best() is by_loss.records()[int(np.argmin(losses))]
    assert sweep.best() in sweep.records() and by_loss.best() not in sweep.records()


def test_without_validation_the_default_metric_is_best_loss():
    project = spiral()
    project.training["validation_fraction"] = 0.0
    sweep = Sweep.start(project, SweepSpec.parse(["batch_size=32,64"], epochs=1))
    records = list(sweep.run())
    assert sweep.metric == "best_loss"
    assert sweep.best() is min(records, key=lambda r: r.metric("best_loss"))


def test_a_stopped_sweep_is_saved_reopened_and_resumed(tmp_path):
    project = spiral()
    spec = SweepSpec.parse(["lr=0.003,0.03", "batch_size=32,64"], epochs=1)
    sweep = Sweep.start(project, spec)
    done = []
    for record in sweep.run(should_stop=lambda: len(done) >= 1):
        done.append(record)
    assert len(done) == 1 and sweep.status == "stopped" and len(sweep.pending()) == 3
    path = tmp_path / "stopped.cwproj"
    save_project(project, path)
    reopened = load_project(path)
    assert reopened.runs.sweep["status"] == "stopped"
    resumed = Sweep.resume(reopened)
    assert resumed.id == sweep.id and [i for i, _ in resumed.pending()] == [1, 2, 3]
    rest = list(resumed.run())
    assert [r.sweep["index"] for r in rest] == [1, 2, 3]
    assert resumed.status == "finished" and not resumed.pending()
    records = resumed.records()
    assert len(records) == 4 and records[0].id == done[0].id
    assert [(r.settings["learning_rate"], r.settings["batch_size"]) for r in records] == [
        (0.003, 32), (0.003, 64), (0.03, 32), (0.03, 64)]
    save_project(reopened, path)
    assert load_project(path).runs.sweep["status"] == "finished"


def test_resume_refuses_without_a_sweep_or_when_the_network_changed():
    project = spiral()
    with pytest.raises(SweepError, match="no sweep to resume"):
        Sweep.resume(project)
    sweep = Sweep.start(project, SweepSpec.parse(["dense2.out_channels=8,16"], epochs=1))
    sweep.mark("stopped")
    dense2 = next(n for n in project.graph if n.name == "dense2")
    project.graph.rename_node(dense2.id, "hidden")
    with pytest.raises(SweepError, match="no node 'dense2'"):
        Sweep.resume(project)


def test_a_trial_the_network_refuses_stops_the_sweep_naming_it():
    project = spiral()
    sweep = Sweep.start(project, SweepSpec.parse(["dense1.in_channels=2,3"], epochs=1))
    records = []
    with pytest.raises(SweepError, match=r"Sweep run 2 \(dense1.in_channels=3\) can't train"):
        for record in sweep.run():
            records.append(record)
    assert len(records) == 1 and sweep.status == "stopped"


def test_the_worker_trains_on_its_thread_and_hands_records_over():
    project = spiral()
    sweep = Sweep.start(project, SweepSpec.parse(["lr=0.003,0.03"], epochs=1))
    worker = SweepWorker(sweep)
    project.training["batch_size"] = 64  # the user edits on: the worker trains what was
    worker.start()
    assert worker.done.wait(30)
    assert worker.error is None and not worker.stopped
    assert len(project.runs) == 0  # the worker never writes the project
    records = worker.take()
    assert [r.sweep["index"] for r in records] == [0, 1] and worker.take() == []
    assert [r.settings["batch_size"] for r in records] == [32, 32]
    assert worker.progress is not None and worker.progress[:2] == (1, 2)
    assert worker.progress[2] == worker.progress[3] == 10
    for record in records:
        sweep.record(record)
    assert len(project.runs) == 2 and sweep.status == "finished"


def test_stopping_the_worker_ends_the_current_trial_unrecorded():
    project = spiral()
    sweep = Sweep.start(project, SweepSpec.parse(["lr=0.003,0.01,0.03"], epochs=500))
    worker = SweepWorker(sweep)
    worker.start()
    for _ in range(3000):  # until the first trial has taken a few steps
        if worker.progress is not None and worker.progress[2] >= 3:
            break
        worker.done.wait(0.005)
    worker.stop()
    assert worker.done.wait(30)
    assert worker.stopped and worker.error is None and worker.take() == []
    assert worker.progress[0] == 0 and worker.progress[2] < worker.progress[3]
    sweep.mark("stopped")
    assert len(sweep.pending()) == 3 and project.runs.sweep["status"] == "stopped"


def test_the_worker_reports_a_trial_that_cannot_train():
    project = spiral()
    sweep = Sweep.start(project, SweepSpec.parse(["dense1.in_channels=3"], epochs=1))
    worker = SweepWorker(sweep)
    worker.start()
    assert worker.done.wait(30)
    assert "Sweep run 1 (dense1.in_channels=3) can't train" in worker.error
    assert worker.take() == []
