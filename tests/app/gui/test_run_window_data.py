"""Training from the window reads the data file once: the Run panel's reading (behind a
progress dialog when big) is what the training session uses, not a second reading on the
GUI thread when Start is pressed; a file changed on disk is read again."""

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from app.datasets import loading
from app.document import Project
from app.io.project_file import save_project
from tests.app.compiler.compiler_samples import mlp
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import TIMEOUT, shown_window


@pytest.fixture
def dialogs(monkeypatch):
    # Trained weights are unsaved work: closing the window asks; "Discard" is the answer.
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot, dialogs):
    yield from shown_window(qtbot)


def write_csv(path, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, 2))
    label = (x[:, 0] * x[:, 1] > 0).astype(int)
    lines = ["a,b,label"] + [f"{p:.5f},{q:.5f},{c}" for (p, q), c in zip(x, label, strict=True)]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture
def project_file(tmp_path):
    write_csv(tmp_path / "points.csv", 240, seed=1)
    project = Project(name="csv data", graph=mlp((2, 8, 2)))
    project.training.update({"dataset": {"csv": "points.csv", "label_column": "label"},
                             "epochs": 50, "batch_size": 16})
    path = tmp_path / "points.cwproj"
    save_project(project, path)
    return path


def test_the_data_file_is_read_once_for_the_form_and_the_training(window, qtbot, project_file,
                                                                  monkeypatch):
    reads = []
    original = loading.load_csv  # the form and the session both read through it

    def counting(path, **options):
        reads.append(path.name)
        return original(path, **options)

    monkeypatch.setattr(loading, "load_csv", counting)
    assert window.open_project(project_file, interactive=False)
    run = window.run
    qtbot.waitUntil(lambda: run.session is not None, timeout=TIMEOUT)
    assert reads == ["points.csv"]  # the form read it; the session took that reading
    assert run.session.dataset is run.panel.dataset
    run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.session.state.step >= 20, timeout=TIMEOUT)
    run._stop_and_wait()
    # The settings open again once the window has taken in the run's end (as a user sees).
    qtbot.waitUntil(lambda: run.actions["start"].isEnabled(), timeout=TIMEOUT)
    assert reads == ["points.csv"]  # Start read nothing again
    # Changed on disk: the next session reads the new file.
    write_csv(project_file.parent / "points.csv", 300, seed=2)
    run.panel.setting_changed.emit("batch_size", 32)
    qtbot.waitUntil(lambda: run.session is not None and run.session.settings.batch_size == 32
                    and len(run.session.dataset.x) == 300, timeout=TIMEOUT)
    assert reads.count("points.csv") >= 2
