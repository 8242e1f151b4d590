"""Data edit commands: each relabel, exclusion, restore and clear is one undo step on the
project's "data_edits" setting; refused edits push nothing and say why."""

import copy

import numpy as np
import pytest
from PIL import Image

from app.datasets import Dataset, load_images
from app.datasets.edits import SETTING
from app.document import Project
from app.document.events import TrainingChanged
from app.undo.commands import DocumentStack
from app.undo.data_edits import clear, exclude, relabel, restore


@pytest.fixture
def stack(qapp):
    stack = DocumentStack()
    yield stack
    stack.deleteLater()


@pytest.fixture
def project():
    return Project(name="p", training={"dataset": "moons"})


@pytest.fixture
def data():
    x = np.arange(20, dtype=np.float32)[:, None]
    whole = Dataset(x=x, y=np.arange(20) % 2, class_names=("cat", "dog"), name="Pets")
    return whole.split(0.25, seed=0)[1]  # a validation split, as a sample view shows


def setting(project):
    return copy.deepcopy(project.training.get(SETTING))


def test_each_edit_is_one_undo_step_that_undoes_and_redoes(stack, project, data):
    row = int(data.rows[1])
    states = [setting(project)]
    assert relabel(stack, project, data, 1, 1 - int(data.y[1])) is None
    states.append(setting(project))
    assert exclude(stack, project, data, 3) is None
    states.append(setting(project))
    assert stack.count() == 2
    assert states[1]["samples"] == {str(row): {"label": 1 - int(data.y[1]),
                                               "was": int(data.y[1])}}  # fmt: skip
    assert str(int(data.rows[3])) in states[2]["samples"]
    assert stack.text(0).startswith(f"Relabel sample {row} as ")
    assert stack.text(1) == f"Exclude sample {int(data.rows[3])}"
    stack.undo()
    assert setting(project) == states[1]
    stack.undo()
    assert setting(project) == states[0] is None and SETTING not in project.training
    stack.redo()
    stack.redo()
    assert setting(project) == states[2]


def test_restore_takes_back_one_samples_edits(stack, project, data):
    relabel(stack, project, data, 0, 1 - int(data.y[0]))
    exclude(stack, project, data, 0)
    exclude(stack, project, data, 2)
    before = setting(project)
    assert restore(stack, project, int(data.rows[0])) is None
    assert list(setting(project)["samples"]) == [str(int(data.rows[2]))]
    assert stack.undoText() == f"Restore sample {int(data.rows[0])}"
    stack.undo()
    assert setting(project) == before


def test_clearing_is_one_undo_step(stack, project, data):
    for i in range(4):
        exclude(stack, project, data, i)
    before, count = setting(project), stack.count()
    assert clear(stack, project) is None
    assert SETTING not in project.training and stack.count() == count + 1
    assert stack.undoText() == "Clear 4 data edits"
    stack.undo()
    assert setting(project) == before
    stack.redo()
    assert SETTING not in project.training


def test_a_damaged_setting_can_still_be_cleared(stack, project, data):
    project.training[SETTING] = {"samples": "???"}
    assert "clear the data edits" in exclude(stack, project, data, 0)
    assert clear(stack, project) is None and SETTING not in project.training
    stack.undo()
    assert project.training[SETTING] == {"samples": "???"}


@pytest.mark.parametrize("edit, message", [
    (lambda s, p, d: relabel(s, p, d, 0, 5), "Class 5 doesn't exist"),
    (lambda s, p, d: relabel(s, p, d, 99, 0), "not 99"),
    (lambda s, p, d: restore(s, p, 12345), "no edit to take back"),
    (lambda s, p, d: clear(s, p), "no data edits to clear"),
])
def test_refused_edits_push_nothing_and_say_why(stack, project, data, edit, message):
    assert message in edit(stack, project, data)
    assert stack.count() == 0 and SETTING not in project.training


def test_edits_are_refused_while_training_runs(stack, project, data):
    stack.lock_reason = "Training is running; stop it to edit."
    assert exclude(stack, project, data, 0) == "Training is running; stop it to edit."
    assert stack.count() == 0 and SETTING not in project.training


def test_listeners_hear_every_change_and_undo(stack, project, data):
    heard = []
    project.events.subscribe(lambda e: heard.append(e.key) if isinstance(e, TrainingChanged)
                             else None)  # fmt: skip
    exclude(stack, project, data, 0)
    stack.undo()
    stack.redo()
    assert heard == [SETTING] * 3


def test_image_samples_are_named_by_their_file(stack, project, tmp_path, monkeypatch):
    monkeypatch.setenv("CELLWRIGHT_CACHE", str(tmp_path / "cache"))
    for name in ("a", "b"):
        (tmp_path / "img" / name).mkdir(parents=True)
        for i in range(3):
            Image.new("L", (4, 4), 60 * i).save(tmp_path / "img" / name / f"{i}.png")
    images = load_images(tmp_path / "img", size=4, color="gray")
    assert exclude(stack, project, images, 4) is None
    assert stack.undoText() == f"Exclude {images.sources[4]}"
    assert setting(project)["samples"]["4"] == {"exclude": True, "source": images.sources[4]}
