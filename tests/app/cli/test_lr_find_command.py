"""`cellwright lr-find`: what the search found as text or JSON, the file left alone unless
--apply (which sets the suggestion and saves), refusals as one line and an exit code."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from app import cli
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


def test_text_names_steps_stop_reason_and_suggestions_and_writes_nothing(spiral, capsys):
    before = spiral.read_bytes()
    assert cli.main(["lr-find", str(spiral), "--steps", "60"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("spiral.cwproj: ") and " steps, rate 1e-07 → 10" in lines[0]
    assert any(line.split(":")[0].strip() == "stopped" for line in lines)
    values = {line.split(":")[0].strip(): line.split(":", 1)[1].strip() for line in lines[1:5]}
    assert float(values["suggestion"]) > 0 and float(values["steepest descent"]) > 0
    assert float(values["minimum / 10"]) > 0
    assert "not changed" in out
    assert spiral.read_bytes() == before


def test_json_holds_the_curve_and_the_same_suggestion(spiral, capsys):
    assert cli.main(["lr-find", str(spiral), "--start", "1e-5", "--end", "1",
                     "--steps", "30", "--json"]) == 0  # fmt: skip
    found = json.loads(capsys.readouterr().out)
    assert found["start"] == 1e-5 and found["end"] == 1.0
    assert found["steps"] == len(found["points"]) <= 30
    rates = np.array([point["rate"] for point in found["points"]])
    assert rates[0] == pytest.approx(1e-5) and np.all(np.diff(np.log(rates)) > 0)
    assert found["suggestion"] in (found["steepest"], found["min_tenth"])
    assert found["learning_rate"] == 0.02 and found["applied"] is False


def test_apply_sets_the_suggestion_and_saves_only_that(spiral, capsys):
    old = load_project(spiral)
    assert cli.main(["lr-find", str(spiral), "--steps", "40", "--json", "--apply"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["applied"] is True
    saved = load_project(spiral)
    assert saved.training["learning_rate"] == found["suggestion"] != 0.02
    rest = {k: v for k, v in saved.training.items() if k != "learning_rate"}
    assert rest == {k: v for k, v in old.training.items() if k != "learning_rate"}
    for node, arrays in old.param_values.items():
        for name, array in arrays.items():
            assert np.array_equal(saved.param_values[node][name], array)


def test_bad_bounds_are_one_error_line_and_nothing_is_written(spiral, capsys):
    before = spiral.read_bytes()
    assert cli.main(["lr-find", str(spiral), "--start", "1", "--end", "0.1", "--apply"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "start rate (1) must be below the end rate (0.1)" in line
    assert cli.main(["lr-find", str(spiral), "--steps", "3"]) == 1
    assert "from 5 to 10,000" in one_error_line(capsys.readouterr().err)
    assert spiral.read_bytes() == before


def test_bad_command_lines_exit_2(spiral, capsys):
    for argv in (["--start", "-1"], ["--steps", "zero"], ["--end", "nan"]):
        with pytest.raises(SystemExit) as ended:
            cli.main(["lr-find", str(spiral), *argv])
        assert ended.value.code == 2
    capsys.readouterr()


def test_a_project_without_data_set_or_file_is_refused(tmp_path, spiral, capsys):
    assert cli.main(["lr-find", str(tmp_path / "missing.cwproj")]) == 1
    assert "missing.cwproj" in one_error_line(capsys.readouterr().err)
    from app.io.project_file import save_project

    project = load_project(spiral)
    del project.training["dataset"]
    save_project(project, spiral)
    assert cli.main(["lr-find", str(spiral), "--apply"]) == 1
    assert "Choose a data set" in one_error_line(capsys.readouterr().err)


def test_no_suggestion_fails_with_advice_and_apply_changes_nothing(spiral, capsys,
                                                                   monkeypatch):
    from app.cli import lr_find
    from app.runs.lr_finder import LRFinding

    empty = np.array([])
    blown = LRFinding(empty, empty, empty, None, None, None,
                      "the loss or the weights became infinite or NaN at rate 1", 0.1)
    monkeypatch.setattr(lr_find, "find_learning_rate", lambda *a, **k: blown)
    before = spiral.read_bytes()
    assert cli.main(["lr-find", str(spiral), "--apply"]) == 1
    captured = capsys.readouterr()
    assert "suggestion:       none" in captured.out
    line = one_error_line(captured.err)
    assert "no learning rate could be suggested from 0 steps" in line
    assert "try a lower --start" in line and "not changed" in line
    assert spiral.read_bytes() == before
