"""Sets with a time axis saved with a project and trained headless by `cellwright train`:
a text file's vocabulary goes into the project file and keeps token ids meaning the same
characters after the file changed."""

import numpy as np
import pytest

from app import cli
from app.datasets.loading import read_dataset
from app.datasets.text import pinned
from app.document import Project
from app.io.project_file import load_project, save_project
from app.session import TrainingError, load_dataset
from tests.app.session.session_samples import chain


def flat_project(sample: tuple[int, ...], outputs: int, loss: str, dataset) -> Project:
    """Input → Flatten → Dense → Output: enough to train on any sample shape headless."""
    size = int(np.prod(sample))
    graph = chain(
        ("Input", {"shape": sample}),
        ("Flatten", {}),
        ("Dense", {"in_channels": size, "out_channels": outputs}),
        ("Output", {"loss": loss}),
    )
    training = {"dataset": dataset, "learning_rate": 0.01, "batch_size": 16, "epochs": 2}
    return Project(graph=graph, name="seq", training=training)


def test_a_text_vocabulary_round_trips_through_the_project_file(tmp_path):
    text = tmp_path / "book.txt"
    text.write_text("in the beginning was the word\n")
    spec = {"text": "book.txt", "context": 5, "stride": 2}
    data = read_dataset(spec, tmp_path)
    project = flat_project((5,), len(data.vocabulary), "CrossEntropyLoss", pinned(spec, data))
    save_project(project, tmp_path / "p.cwproj")
    reopened = load_project(tmp_path / "p.cwproj")
    saved = reopened.training["dataset"]
    assert tuple(saved["vocabulary"]) == data.vocabulary
    text.write_text("zebra beginning\n")  # 'z' is new: refused, saying which
    with pytest.raises(TrainingError, match=r"1 character the saved vocabulary lacks \('z'\)"):
        load_dataset(saved, tmp_path)
    text.write_text("the wind began\n")  # only characters the vocabulary has
    again = load_dataset(saved, tmp_path)
    assert again.vocabulary == data.vocabulary and again.note
    first = "".join(again.vocabulary[i] for i in again.x[0])
    assert first == "the w"


def test_cellwright_train_pins_the_vocabulary_of_a_text_file(tmp_path, capsys):
    (tmp_path / "book.txt").write_text("abracadabra, said the wizard. " * 20)
    spec = {"text": "book.txt", "context": 6, "stride": 3}
    vocabulary = read_dataset(spec, tmp_path).vocabulary
    path = tmp_path / "text.cwproj"
    save_project(flat_project((6,), len(vocabulary), "CrossEntropyLoss", spec), path)
    assert cli.main(["train", str(path), "--quiet"]) == 0
    saved = load_project(path).training
    assert saved["dataset"]["vocabulary"] == list(vocabulary)
    assert saved["state"]["epoch"] == 2
    capsys.readouterr()


def test_cellwright_train_on_a_generated_sequence_set(tmp_path, capsys):
    spec = {"builtin": "multisine", "options": {"n_samples": 200, "window": 12, "horizon": 2}}
    path = tmp_path / "sine.cwproj"
    save_project(flat_project((12, 1), 2, "MSELoss", spec), path)
    assert cli.main(["train", str(path), "--quiet"]) == 0
    out, _ = capsys.readouterr()
    assert "validation loss" in out
    assert load_project(path).training["dataset"] == spec  # nothing added to a built-in set
