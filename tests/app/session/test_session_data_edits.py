"""The session applies the project's data edits after the split: training batches, the
Predict panel's rows, evaluation and `cellwright train` all see exactly the edited samples."""

import numpy as np
import pytest

from app import cli
from app.datasets import Dataset
from app.datasets.edits import SETTING, DataEdits
from app.io.project_file import load_project, save_project
from app.session import TrainingError, TrainingSession
from app.session.evaluation import evaluate
from app.session.predict import Predictor
from tests.app.session.test_evaluation import identity_project

N = 24


@pytest.fixture
def data_file(tmp_path):
    """Sample i has first feature i / N, so every batch row tells which sample it is."""
    x = np.zeros((N, 3), dtype=np.float32)
    x[:, 0] = np.arange(N) / N
    np.savez(tmp_path / "numbered.npz", x=x, y=np.arange(N) % 3)
    return tmp_path


def project_with_edits(**training):
    settings = {"dataset": {"npz": "numbered.npz"}, "validation_fraction": 0.25,
                "batch_size": 5, "learning_rate": 0.01, "epochs": 1}  # fmt: skip
    settings.update(training)
    return identity_project(**settings)


def pick_edits(session):
    """Relabel and exclude one sample on each side; (edits, what each sample should be)."""
    train, val = session.train_set, session.val_set
    edits = (DataEdits().relabelled(train, 1, (int(train.y[1]) + 1) % 3).excluded(train, 4)
             .relabelled(val, 2, (int(val.y[2]) + 2) % 3).excluded(val, 0))  # fmt: skip
    relabelled = {int(train.rows[1]): (int(train.y[1]) + 1) % 3,
                  int(val.rows[2]): (int(val.y[2]) + 2) % 3}  # fmt: skip
    excluded = {int(train.rows[4]), int(val.rows[0])}
    return edits, relabelled, excluded


def sample_of(x_row) -> int:
    return round(float(x_row[0]) * N)


@pytest.fixture
def batches(monkeypatch):
    """Every (sample, label) training reads: Dataset.batches shuffled (evaluation isn't)."""
    seen = []
    real = Dataset.batches

    def spying(self, batch_size, shuffle=True, *args, **kwargs):
        for x, y in real(self, batch_size, shuffle, *args, **kwargs):
            if shuffle:
                seen.extend((sample_of(row), int(label)) for row, label in zip(x, y, strict=True))
            yield x, y

    monkeypatch.setattr(Dataset, "batches", spying)
    return seen


def edited_project(data_file):
    plain = TrainingSession(project_with_edits(), folder=data_file)
    edits, relabelled, excluded = pick_edits(plain)
    project = project_with_edits(**{SETTING: edits.to_setting()})
    return project, plain, relabelled, excluded


def test_training_batches_see_exactly_the_edited_samples(data_file, batches):
    project, plain, relabelled, excluded = edited_project(data_file)
    session = TrainingSession(project, folder=data_file)
    batches.clear()
    session.run(epochs=1)
    trained = dict(batches)
    expected = {int(r): int(y) for r, y in zip(plain.train_set.rows, plain.train_set.y,
                                               strict=True) if r not in excluded}  # fmt: skip
    expected.update({r: y for r, y in relabelled.items() if r in expected})
    assert trained == expected  # every other training sample as the data has it
    assert set(session.val_set.rows) == set(plain.val_set.rows) - excluded  # sides kept


def test_predict_rows_and_evaluation_see_the_edits(data_file):
    project, plain, relabelled, excluded = edited_project(data_file)
    session = TrainingSession(project, folder=data_file)
    predictor = Predictor(session)
    for split, data in (("train", session.train_set), ("validation", session.val_set)):
        for i, row in enumerate(data.rows):
            x, label = predictor.row(split, i)
            assert sample_of(x) == row and row not in excluded
            assert label == relabelled.get(int(row), int(row) % 3)
    result = evaluate(session, "validation")
    assert len(result) == len(plain.val_set) - 1 and result.data is session.val_set
    assert result.classification.true.tolist() == [relabelled.get(int(r), int(r) % 3)
                                                   for r in session.val_set.rows]  # fmt: skip


def test_edits_are_saved_with_the_project_and_used_on_reopening(data_file):
    project, _, relabelled, excluded = edited_project(data_file)
    path = data_file / "edited.cwproj"
    save_project(project, path)
    reopened = load_project(path)
    assert reopened.training[SETTING] == project.training[SETTING]
    session = TrainingSession(reopened, folder=data_file)
    rows = np.concatenate([session.train_set.rows, session.val_set.rows]).tolist()
    labels = np.concatenate([session.train_set.y, session.val_set.y]).tolist()
    assert not excluded & set(rows) and len(rows) == N - 2
    assert all(labels[rows.index(r)] == y for r, y in relabelled.items())
    assert session.edits_note == ""
    # The data file was never written.
    with np.load(data_file / "numbered.npz") as file:
        assert file["y"].tolist() == (np.arange(N) % 3).tolist()


def test_edits_of_samples_that_are_gone_are_reported(data_file):
    setting = {"dataset": "Numbered", "samples": {"99": {"exclude": True}, "3": {"exclude": True}}}
    session = TrainingSession(project_with_edits(**{SETTING: setting}), folder=data_file)
    name = session.dataset.name
    setting["dataset"] = name
    session = TrainingSession(project_with_edits(**{SETTING: setting}), folder=data_file)
    note = session.edits_note
    assert "1 data edit was not applied," in note and "sample 99" in note
    assert len(session.train_set) + len(session.val_set) == N - 1


def test_a_damaged_edits_setting_refuses_training_with_the_reason(data_file):
    with pytest.raises(TrainingError, match="clear the data edits"):
        TrainingSession(project_with_edits(**{SETTING: [3]}), folder=data_file)


def test_cellwright_train_honours_the_edits(data_file, batches, capsys):
    project, plain, relabelled, excluded = edited_project(data_file)
    setting = project.training[SETTING]
    setting["samples"]["999"] = {"exclude": True}  # data changed since: reported
    path = data_file / "edited.cwproj"
    save_project(project, path)
    batches.clear()
    assert cli.main(["train", str(path), "--epochs", "1", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "1 data edit was not applied," in err and "sample 999" in err
    trained = dict(batches)
    assert not excluded & set(trained)
    assert all(trained[r] == y for r, y in relabelled.items() if r in trained)
    assert len(trained) == len(plain.train_set) - 1
    assert load_project(path).training[SETTING] == setting  # kept in the saved project
