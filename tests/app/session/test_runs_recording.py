"""Every run a session trains — Start to its end — lands in the project's run history."""

import threading
import time

import numpy as np
import pytest

from app.document.run_diff import change_text
from app.document.runs import EPOCH_COLUMNS, STEP_COLUMNS
from app.session import Progress, TrainingPaused, TrainingSession
from tests.app.session.session_samples import mlp_project

TIMEOUT = 30


def dense_nodes(project):
    return [n for n in project.graph.nodes.values() if n.type == "Dense"]


def test_a_run_from_start_to_end_is_one_record_with_its_settings_curves_and_weights():
    project = mlp_project(hidden=32, epochs=2)
    session = TrainingSession(project)
    session.start()
    event = session.wait(TIMEOUT)
    assert event is not None
    assert len(project.runs) == 1
    record = project.runs.last
    assert record is session.last_record
    assert (record.status, record.origin, record.first_step) == ("finished", "window", 0)
    assert record.steps == session.state.step == event.step
    assert record.message == event.message
    assert record.settings["learning_rate"] == 0.02 and record.settings["optimizer"] == "Adam"
    assert "state" not in record.settings
    assert record.duration > 0 and record.steps_per_second == record.steps / record.duration
    # Its curves are the session's rows of this run, the whole of them (a short run).
    steps_rows = session.metrics.steps.snapshot()
    assert np.array_equal(record.steps_curve, steps_rows.astype(np.float32))
    assert record.epochs_curve.shape == (2, len(EPOCH_COLUMNS))
    last_epoch = session.metrics.last_epoch()
    assert record.metrics["final_val_loss"] == pytest.approx(last_epoch.val_loss)
    assert record.metrics["best_loss"] <= record.metrics["final_loss"]
    # The weights: the network's Parameters as the run left them, not the optimizer's.
    for name, param in session.compiled.parameters().items():
        node_id, local = session.compiled.parameter_owner[name]
        assert np.array_equal(record.weights[node_id][local], param.asnumpy())
    assert not any(k.startswith("_optimizer.") for w in record.weights.values() for k in w)
    assert record.name == "run 1" and record.colour.startswith("#")


def test_a_second_run_has_only_its_own_rows_and_starts_where_the_first_ended():
    project = mlp_project(epochs=1)
    session = TrainingSession(project)
    session.run()
    first_end = session.state.step
    session.run(epochs=1)
    second = project.runs.last
    assert len(project.runs) == 2
    assert second.first_step == first_end and second.steps == session.state.step - first_end
    assert second.steps_curve[:, STEP_COLUMNS.index("step")].min() == first_end + 1
    assert second.epochs_curve[:, EPOCH_COLUMNS.index("epoch")].tolist() == [2.0]


def test_a_stopped_run_is_recorded_as_stopped():
    project = mlp_project(epochs=50)
    session = TrainingSession(project)
    session.events.subscribe(lambda e: isinstance(e, Progress) and e.step == 5
                             and session.stop())  # fmt: skip
    session.run()
    record = project.runs.last
    assert (record.status, record.steps) == ("stopped", 5)
    assert "stopped" in record.message


def test_a_run_that_turns_nan_is_recorded_as_failed_with_its_good_steps():
    project = mlp_project(epochs=50, optimizer="SGD")
    session = TrainingSession(project)
    session.events.subscribe(lambda e: isinstance(e, Progress) and e.step == 3
                             and session.set_learning_rate(1e38))  # fmt: skip
    event = session.run()
    record = project.runs.last
    assert record.status == "failed" and record.message == event.message
    assert "infinite or NaN" in record.message or "nan" in record.message.lower()
    assert record.steps == session.state.step >= 3
    assert len(record.steps_curve) == record.steps  # the failed step is no row


def test_a_paused_and_resumed_run_is_one_run_and_its_pause_is_no_training_time():
    project = mlp_project(epochs=2)
    session = TrainingSession(project)
    paused = threading.Event()
    session.events.subscribe(lambda e: isinstance(e, Progress) and e.step == 4
                             and session.pause())  # fmt: skip
    session.events.subscribe(lambda e: isinstance(e, TrainingPaused) and paused.set())
    began = time.monotonic()
    session.start()
    assert paused.wait(TIMEOUT)
    time.sleep(0.6)  # in the pause
    assert session.status == "paused"
    session.resume()
    assert session.wait(TIMEOUT) is not None
    assert time.monotonic() - began > 0.6
    assert len(project.runs) == 1
    record = project.runs.last
    assert record.first_step == 0 and record.steps == session.state.step
    assert record.duration < 0.6


def test_step_with_no_run_going_on_is_no_run():
    project = mlp_project()
    session = TrainingSession(project)
    session.step()
    assert session.wait(TIMEOUT) is not None
    assert session.state.step == 1
    assert len(project.runs) == 0 and session.last_record is None


def test_a_run_that_trains_no_step_is_not_recorded():
    project = mlp_project(epochs=1)
    session = TrainingSession(project)
    session.run()
    session.events.subscribe(lambda e: session.stop())  # stops before its first step
    session.run(epochs=1)
    assert len(project.runs) == 1


def test_a_width_change_between_two_runs_shows_in_the_diff():
    project = mlp_project(hidden=32, epochs=1)
    TrainingSession(project).run()
    first, second = dense_nodes(project)
    project.graph.set_params(first.id, {"out_channels": 64})
    project.graph.set_params(second.id, {"in_channels": 64})
    TrainingSession(project).run()
    lines = [change_text(c) for c in project.runs.last.diff]
    assert f"{first.name}.out_channels 32 \u2192 64" in lines
    assert f"{second.name}.in_channels 32 \u2192 64" in lines
    assert len(lines) == 2
    assert project.runs.records[0].diff == []  # the first run has nothing to differ from
    a, b = project.runs.records
    assert a.colour != b.colour and len(a.steps_curve) and len(b.steps_curve)


def test_an_optimizer_change_between_two_runs_shows_in_the_diff():
    project = mlp_project(epochs=1)  # no optimizer set: the default, Adam, is recorded
    TrainingSession(project).run()
    project.training["optimizer"] = "Momentum"
    TrainingSession(project).run()
    assert [change_text(c) for c in project.runs.last.diff] == ["optimizer Adam \u2192 Momentum"]


def test_a_sweep_run_is_made_but_left_for_the_sweep_to_add():
    project = mlp_project(epochs=1)
    session = TrainingSession(project, origin="sweep")
    session.run()
    assert len(project.runs) == 0
    record = session.last_record
    assert record.origin == "sweep" and record.steps == session.state.step
    assert record.name == "" and record.weights


def test_an_unknown_origin_is_refused():
    with pytest.raises(Exception, match="origin is one of window, cli, sweep"):
        TrainingSession(mlp_project(), origin="gui")


def test_cellwright_train_records_its_run_with_origin_cli_and_saves_it(tmp_path, capsys):
    from app import cli
    from app.io.project_file import load_project, save_project

    path = tmp_path / "net.cwproj"
    save_project(mlp_project(epochs=1), path)
    assert cli.main(["train", str(path), "--quiet"]) == 0
    assert cli.main(["train", str(path), "--quiet", "--lr", "0.005"]) == 0
    capsys.readouterr()
    runs = load_project(path).runs
    assert [(r.origin, r.status) for r in runs] == [("cli", "finished")] * 2
    first, second = runs.records
    assert second.first_step == first.steps and second.steps > 0
    assert [change_text(c) for c in second.diff] == ["learning_rate 0.02 \u2192 0.005"]
