"""`cellwright sweep`: the issue's command prints a table of its runs and saves them in the
project; JSON; bad values refused with one line and exit 1; Ctrl+C saves the runs done and
--resume goes on with the rest."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from app import cli
from app.cli import sweep as sweep_command
from app.io.project_file import load_project

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"


@pytest.fixture
def spiral(tmp_path) -> Path:
    path = tmp_path / "spiral.cwproj"
    shutil.copy(EXAMPLES / "spiral_mlp.cwproj", path)
    return path


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("cellwright: error: ")
    return lines[0]


def table_rows(out: str) -> list[list[str]]:
    """The table's data rows split on runs of spaces (the best row starts with '*')."""
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["#"])
    rows = []
    for line in lines[header + 1:]:
        if not line.strip() or line.startswith("Best:"):
            break
        rows.append(line.split())
    return rows


def test_the_issues_grid_prints_six_runs_and_saves_them(spiral, capsys):
    before = load_project(spiral)
    assert cli.main(["sweep", str(spiral), "--grid", "lr=0.001,0.01,0.1",
                     "--grid", "batch_size=32,64", "--epochs", "1"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    out, err = captured.out, captured.err
    header = next(line for line in out.splitlines() if line.split()[:1] == ["#"])
    for column in ("lr", "batch_size", "best val loss", "loss", "acc", "steps", "seconds"):
        assert column in header
    rows = table_rows(out)
    assert len(rows) == 6
    starred = [row for row in rows if row[0] == "*"]
    assert len(starred) == 1
    cells = [row[1:] if row[0] == "*" else row for row in rows]  # number, lr, batch_size, …
    assert [c[0] for c in cells] == ["1", "2", "3", "4", "5", "6"]
    values = [(float(c[1]), int(c[2])) for c in cells]
    assert values == [(lr, bs) for lr in (0.001, 0.01, 0.1) for bs in (32, 64)]
    assert "Best: sweep " in out and "6 of 6 runs recorded in" in out
    # a progress line per run on stderr
    assert sum(line.startswith("[") for line in err.splitlines()) == 6
    saved = load_project(spiral)
    runs = list(saved.runs)
    assert len(runs) == 6 and all(r.origin == "sweep" for r in runs)
    assert [(r.settings["learning_rate"], r.settings["batch_size"]) for r in runs] == values
    assert all(r.settings["epochs"] == 1 for r in runs)
    assert saved.runs.sweep["status"] == "finished" and len(saved.runs.sweep["done"]) == 6
    # the best row is the run the metric ranks best
    losses = [r.metric("best_val_loss") for r in runs]
    best_row = rows.index(starred[0])
    assert best_row == int(np.argmin(losses))
    # the project's own network and weights are as they were
    for node_id, arrays in before.param_values.items():
        for name, array in arrays.items():
            assert np.array_equal(saved.param_values[node_id][name], array)


def test_json_and_out_leave_the_project_file_alone(spiral, tmp_path, capsys):
    original = spiral.read_bytes()
    out_path = tmp_path / "swept.cwproj"
    assert cli.main(["sweep", str(spiral), "--range", "lr=0.001..0.1:log", "--trials", "3",
                     "--seed", "4", "--epochs", "1", "--out", str(out_path), "--json",
                     "--quiet"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert captured.err == ""  # --quiet
    found = json.loads(captured.out)
    assert found["trials"] == found["done"] == 3 and found["status"] == "finished"
    assert found["metric"] == "best_val_loss"
    assert [r["trial"] for r in found["runs"]] == [1, 2, 3]
    assert sum(r["best"] for r in found["runs"]) == 1
    assert all(0.001 <= r["values"]["learning_rate"] <= 0.1 for r in found["runs"])
    assert spiral.read_bytes() == original
    assert len(load_project(out_path).runs) == 3


@pytest.mark.parametrize(("args", "message"), [
    (["--grid", "batch_size=32,3.5"], "batch_size: '3.5' is not a whole number of 1 or more"),
    (["--grid", "lr=0,0.1"], "lr: '0' is not a number above 0"),
    (["--grid", "dense9.out_channels=8,16"], "the network has no node 'dense9'"),
    (["--grid", "lr"], "'lr' must be written NAME=VALUES"),
    ([], "Say what to sweep: --grid NAME=V1,V2,"),
    (["--resume"], "no sweep to resume"),
    (["--resume", "--grid", "lr=0.1"], "leave out --grid"),
])  # fmt: skip
def test_bad_requests_are_refused_with_one_line_and_nothing_saved(spiral, capsys, args, message):
    original = spiral.read_bytes()
    assert cli.main(["sweep", str(spiral), *args]) == 1
    assert message in one_error_line(capsys.readouterr().err)
    assert spiral.read_bytes() == original


def test_a_bad_metric_is_refused(spiral, capsys):
    assert cli.main(["sweep", str(spiral), "--grid", "lr=0.1", "--metric", "speed"]) == 1
    assert "'speed' is not a metric" in one_error_line(capsys.readouterr().err)


def test_ctrl_c_saves_the_runs_done_and_resume_finishes_the_rest(spiral, capsys, monkeypatch):
    real = sweep_command.Line.progress

    def interrupt_in_third_run(self, step, steps):
        if self.label.startswith("[3/4]") and step == 3:
            raise KeyboardInterrupt  # as Ctrl+C arrives during a training step
        real(self, step, steps)

    monkeypatch.setattr(sweep_command.Line, "progress", interrupt_in_third_run)
    grid = ["--grid", "lr=0.003,0.03", "--grid", "batch_size=32,64", "--epochs", "1"]
    assert cli.main(["sweep", str(spiral), *grid]) == 130
    captured = capsys.readouterr()
    assert "interrupted after 2 of 4 runs" in captured.err and "--resume" in captured.err
    assert len(table_rows(captured.out)) == 2
    saved = load_project(spiral)
    assert len(saved.runs) == 2 and saved.runs.sweep["status"] == "stopped"
    monkeypatch.setattr(sweep_command.Line, "progress", real)
    assert cli.main(["sweep", str(spiral), "--resume"]) == 0
    captured = capsys.readouterr()
    assert "2 of 4 runs" in captured.err  # what the resumed sweep trains
    assert len(table_rows(captured.out)) == 4
    saved = load_project(spiral)
    assert saved.runs.sweep["status"] == "finished"
    assert sorted((r.settings["learning_rate"], r.settings["batch_size"]) for r in saved.runs) \
        == [(0.003, 32), (0.003, 64), (0.03, 32), (0.03, 64)]
    # resuming a finished sweep trains nothing and shows its table
    assert cli.main(["sweep", str(spiral), "--resume"]) == 0
    captured = capsys.readouterr()
    assert "no runs left to train" in captured.err and len(table_rows(captured.out)) == 4
