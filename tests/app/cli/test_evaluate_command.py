"""`cellwright evaluate`: the confusion matrix, per-class table and worst samples of the saved
weights, as text or JSON; refusals as one line and an exit code."""

import json
from pathlib import Path

import numpy as np
import pytest

from app import cli
from app.io.project_file import load_project, save_project
from app.session import TrainingSession
from tests.app.session.test_evaluation import CONFUSION, X3, Y3, identity_project

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("cellwright: error: ")
    return lines[0]


@pytest.fixture
def three(tmp_path) -> Path:
    """The three-class identity network on an .npz data set, nothing held out: the training
    set is the file's rows in order. Predicted 0, 1, 1, 1, 0, 2, 2 for labels
    0, 0, 1, 1, 2, 2, 2."""
    np.savez(tmp_path / "three.npz", x=X3, y=Y3)
    project = identity_project(dataset={"npz": "three.npz"})
    path = tmp_path / "three.cwproj"
    save_project(project, path)
    return path


def evaluate_json(capsys, *argv) -> dict:
    assert cli.main(["evaluate", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_text_shows_matrix_table_and_worst_samples(three, capsys):
    assert cli.main(["evaluate", str(three), "--set", "training", "--worst", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("three.cwproj: training set, 7 samples, weights after step 0")
    assert "accuracy 71.4%" in out[1]
    start = out.index("Confusion matrix (rows: true class; columns: predicted class):")
    rows = [line.split() for line in out[start + 2 : start + 5]]
    assert [[int(v) for v in row[-3:]] for row in rows] == CONFUSION
    table = out.index("Per class:")
    assert out[table + 1].split() == ["class", "precision", "recall", "f1", "support"]
    assert out[table + 2].split() == ["0", "0.500", "0.500", "0.500", "2"]
    assert out[table + 4].split() == ["2", "1.000", "0.667", "0.800", "3"]
    macro = out[table + 5].split()
    assert macro[:2] == ["macro", "average"] and macro[4] == "0.700"
    worst = out.index(next(line for line in out if line.startswith("The 2 worst samples")))
    assert out[worst + 1].split() == ["index", "label", "prediction", "loss"]
    first, second = out[worst + 2].split(), out[worst + 3].split()
    assert first[:3] == ["1", "0", "1"] and second[:3] == ["4", "2", "0"]
    assert float(first[-1]) == pytest.approx(np.log(np.exp(3) + 2), rel=1e-3)


def test_json_gives_the_same_figures(three, capsys):
    data = evaluate_json(capsys, three, "--set", "training", "--worst", "3")
    assert data["set"] == "training" and data["samples"] == 7 and data["task"] == "classification"
    c = data["classification"]
    assert c["confusion"] == CONFUSION and c["accuracy"] == pytest.approx(5 / 7)
    assert [row["f1"] for row in c["per_class"]] == pytest.approx([0.5, 0.8, 0.8])
    assert [row["support"] for row in c["per_class"]] == [2, 2, 3]
    assert c["macro"]["f1"] == pytest.approx(0.7) and c["roc_auc"] is None
    assert [row["index"] for row in data["worst"]][:2] == [1, 4] and len(data["worst"]) == 3
    first = data["worst"][0]
    assert (first["label"], first["prediction"]) == (0, 1)
    assert sum(first["probabilities"]) == pytest.approx(1.0)


def test_a_trained_example_matches_the_sessions_validation_accuracy(tmp_path, capsys):
    project = load_project(EXAMPLES / "spiral_mlp.cwproj")
    TrainingSession(project, folder=EXAMPLES).run(steps=60)
    path = tmp_path / "spiral.cwproj"
    save_project(project, path)
    data = evaluate_json(capsys, path)
    loss, accuracy = TrainingSession(load_project(path)).evaluate()
    c = data["classification"]
    assert np.sum(c["confusion"]) == data["samples"] == 80 and data["step"] == 60
    assert c["accuracy"] == pytest.approx(accuracy) and data["loss"] == pytest.approx(loss, 1e-5)
    assert 0.5 < c["roc_auc"] <= 1 and 0 < c["pr_auc"] <= 1  # two classes: both curves
    assert len(data["worst"]) == 10


def test_a_regression_example_shows_its_errors(capsys):
    data = evaluate_json(capsys, EXAMPLES / "lstm_forecast.cwproj", "--worst", "4")
    assert "classification" not in data and data["task"] == "regression"
    r = data["regression"]
    assert r["targets"] == ["y (t+1)"] and r["rmse"] == pytest.approx(np.sqrt(data["loss"]))
    losses = [row["loss"] for row in data["worst"]]
    assert losses == sorted(losses, reverse=True) and len(losses) == 4
    row = data["worst"][0]
    assert row["loss"] == pytest.approx((row["label"][0] - row["prediction"][0]) ** 2, rel=1e-4)
    assert cli.main(["evaluate", str(EXAMPLES / "lstm_forecast.cwproj")]) == 0
    text = capsys.readouterr().out
    assert "R² " in text and "Confusion matrix" not in text


@pytest.mark.parametrize("argv", [["--set", "test"], ["--worst", "0"], ["--worst", "x"]])
def test_a_bad_command_line_is_refused(three, capsys, argv):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["evaluate", str(three), *argv])
    assert exit_.value.code == cli.EXIT_USAGE
    assert "cellwright evaluate: error:" in capsys.readouterr().err


def test_problems_are_one_line_and_exit_1(three, tmp_path, capsys):
    assert cli.main(["evaluate", str(tmp_path / "gone.cwproj")]) == cli.EXIT_PROBLEM
    assert "gone.cwproj" in one_error_line(capsys.readouterr().err)
    # Nothing held out: the validation set is empty, and the message says what to do.
    assert cli.main(["evaluate", str(three)]) == cli.EXIT_PROBLEM
    error = one_error_line(capsys.readouterr().err)
    assert "validation set is empty" in error and "the training set" in error
    save_project(identity_project(loss="none", dataset={"npz": "three.npz"}),
                 tmp_path / "no_loss.cwproj")  # fmt: skip
    assert cli.main(["evaluate", str(tmp_path / "no_loss.cwproj")]) == cli.EXIT_PROBLEM
    assert "no loss" in one_error_line(capsys.readouterr().err)
    assert "evaluate" in cli.command_names()
