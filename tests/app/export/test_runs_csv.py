"""File → Export → Runs (CSV): every run's curve points in long format."""

import csv
import math
import os

import numpy as np
import pytest

from app.document.runs import EPOCH_COLUMNS, STEP_COLUMNS
from app.export.report import ExportError
from app.export.runs_csv import HEADER, write_runs_csv
from app.session import TrainingSession
from tests.app.session.session_samples import mlp_project


@pytest.fixture(scope="module")
def project():
    """Two classification runs and a regression one (no accuracy: NaN points)."""
    project = mlp_project(epochs=2)
    TrainingSession(project).run()
    TrainingSession(project).run(epochs=1)
    project.runs.rename(project.runs.records[1].id, 'wide, "v2"')
    regression = mlp_project(loss="MSELoss", inputs=1, outputs=1, epochs=1,
                             dataset={"builtin": "sine", "options": {"n_samples": 64}})
    TrainingSession(regression).run()
    project.runs.add(regression.runs.records[0])
    project.runs.rename(project.runs.last.id, "sine")
    return project


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_every_finite_point_of_every_run_is_a_row(project, tmp_path):
    path = tmp_path / "runs.csv"
    points = write_runs_csv(project, path)
    rows = read(path)
    assert tuple(rows[0]) == HEADER == ("run", "step", "metric", "value")
    body = rows[1:]
    assert len(body) == points
    first, second, regression = project.runs.records
    assert {r[0] for r in body} == {"run 1", 'wide, "v2"', "sine"}  # quoted, read back whole
    expected = 0
    for record in project.runs.records:
        expected += int(np.isfinite(record.steps_curve[:, 2:]).sum())
        expected += int(np.isfinite(record.epochs_curve[:, 2:]).sum())
    assert points == expected
    # A step point and an epoch point read back as they were (float32 exactly).
    loss = {int(r[1]): float(r[3]) for r in body if r[0] == "run 1" and r[2] == "loss"}
    column = first.steps_curve[:, STEP_COLUMNS.index("loss")]
    assert list(loss) == sorted(loss) and len(loss) == len(column)
    assert np.array_equal(np.float32(list(loss.values())), column)
    val = [(int(r[1]), float(r[3])) for r in body if r[0] == 'wide, "v2"' and r[2] == "val_loss"]
    epochs = second.epochs_curve
    assert val == [(int(s), pytest.approx(float(v))) for s, v in zip(
        epochs[:, EPOCH_COLUMNS.index("step")], epochs[:, EPOCH_COLUMNS.index("val_loss")],
        strict=True)]  # fmt: skip
    metrics = {r[2] for r in body}
    assert metrics == {"loss", "accuracy", "learning_rate", "epoch_loss", "epoch_accuracy",
                       "val_loss", "val_accuracy"}  # fmt: skip
    # The regression has no accuracy: its NaN points are left out, not written as "nan".
    assert not [r for r in body if r[0] == "sine" and "accuracy" in r[2]]
    assert not [r for r in body if not math.isfinite(float(r[3]))]


def test_a_failed_export_leaves_the_old_file_and_no_temporary_one(project, tmp_path,
                                                                   monkeypatch):  # fmt: skip
    path = tmp_path / "runs.csv"
    path.write_text("old\n")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(ExportError, match="Could not write .*runs.csv: Permission denied"):
        write_runs_csv(project, path)
    assert path.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["runs.csv"]
    with pytest.raises(ExportError, match="Could not write"):
        write_runs_csv(project, tmp_path / "no" / "folder.csv")
