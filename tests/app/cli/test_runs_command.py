"""`cellwright runs PROJECT [--json]`: the recorded runs, their metrics, diffs and settings."""

import json
import zipfile

import pytest

from app import cli
from app.io.project_file import save_project
from app.session import TrainingSession
from tests.app.session.session_samples import mlp_project


@pytest.fixture
def two_runs(tmp_path):
    """Two runs with a width change and a learning-rate change between them."""
    project = mlp_project(hidden=32, epochs=1)
    TrainingSession(project).run()
    first, second = [n for n in project.graph.nodes.values() if n.type == "Dense"]
    project.graph.set_params(first.id, {"out_channels": 64})
    project.graph.set_params(second.id, {"in_channels": 64})
    project.training["learning_rate"] = 0.005
    TrainingSession(project).run()
    project.runs.rename(project.runs.records[0].id, "narrow")
    path = tmp_path / "two.cwproj"
    save_project(project, path)
    return project, path


def test_runs_lists_each_run_with_its_numbers_changes_and_settings(two_runs, capsys):
    project, path = two_runs
    assert cli.main(["runs", str(path)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("two.cwproj: 2 runs")
    first, second = project.runs.records
    assert f"narrow · {first.started[:10]}" in out and "· window · finished · " in out
    assert f"{first.steps} steps (from step 0)" in out
    assert f"{second.steps} steps (from step {first.steps})" in out
    assert out.count("steps/s") == 2 and out.count("    final: loss ") == 2
    assert "changes: (the first run)" in out
    assert "changes since narrow:" in out
    assert "dense1.out_channels 32 \u2192 64" in out and "learning_rate 0.02 \u2192 0.005" in out
    assert "settings: optimizer Adam, learning_rate 0.005" in out
    best = project.runs.best()
    assert f"* {best.name} · " in out
    assert out.count("weights: kept") == (1 if best is second else 2)


def test_runs_json_holds_the_same(two_runs, capsys):
    project, path = two_runs
    assert cli.main(["runs", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["file"] == "two.cwproj" and data["cap_mb"] == 4.0
    assert data["best"] == project.runs.best().id
    first, second = data["runs"]
    assert first["name"] == "narrow" and first["changes"] == []
    assert "dense1.out_channels 32 \u2192 64" in second["changes"]
    assert second["settings"]["learning_rate"] == 0.005
    assert second["steps_per_second"] == pytest.approx(second["steps"] / second["duration"])
    assert second["metrics"]["final_loss"] == pytest.approx(
        project.runs.records[1].metrics["final_loss"])
    assert second["kept_weights"] is True and second["origin"] == "window"
    assert set(second["metrics"]) >= {"best_val_loss", "final_accuracy"}


def test_a_project_without_runs_says_so(tmp_path, capsys):
    path = tmp_path / "fresh.cwproj"
    save_project(mlp_project(), path)
    assert cli.main(["runs", str(path)]) == 0
    assert "no runs recorded yet" in capsys.readouterr().out
    assert cli.main(["runs", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []


def test_a_missing_file_is_one_error_line(tmp_path, capsys):
    assert cli.main(["runs", str(tmp_path / "nothere.cwproj")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cellwright: error: ") and "no file" in err[0]


def test_a_damaged_run_history_is_warned_about_and_the_rest_listed(two_runs, tmp_path, capsys):
    _, path = two_runs
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    data = json.loads(members["project.json"])
    data["runs"]["records"][1]["steps"] = "many"
    members["project.json"] = json.dumps(data).encode()
    broken = tmp_path / "broken.cwproj"
    with zipfile.ZipFile(broken, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    assert cli.main(["runs", str(broken)]) == 0
    out, err = capsys.readouterr()
    assert "Run 2 of its run history is damaged" in err
    assert out.startswith("broken.cwproj: 1 run (")
