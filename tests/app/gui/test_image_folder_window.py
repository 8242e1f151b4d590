"""Photos in folders, from the window: Data set → Import Image Folder…, the preview with its
skipped file, OK as one undo step, a few training steps of a small CNN on the images, and
the setting (folder, options, file-list digest) saved with the project. A project whose
image folder is gone still opens, and the Run dock says why."""

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton

from app.document import Graph, Project
from app.io.project_file import load_project, save_project
from tests.app.compiler.compiler_samples import add, chain
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import DIGITS, TIMEOUT, open_example, shown_window
from tests.widgets.image_folders import write_shapes


@pytest.fixture
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot, dialogs):
    yield from shown_window(qtbot)


def shapes_cnn(side: int = 16, classes: int = 3) -> Graph:
    """digits_cnn's network for RGB side×side images: two conv-pool stages, a Dense head."""
    graph = Graph()
    flat = 16 * (side // 4) * (side // 4)
    chain(
        graph,
        add(graph, "Input", shape=(3, side, side)),
        add(graph, "Conv2d", in_channels=3, out_channels=8, kernel_size=3, has_bias=True),
        add(graph, "ReLU"),
        add(graph, "MaxPool2d", kernel_size=2, stride=2),
        add(graph, "Conv2d", in_channels=8, out_channels=16, kernel_size=3, has_bias=True),
        add(graph, "ReLU"),
        add(graph, "MaxPool2d", kernel_size=2, stride=2),
        add(graph, "Flatten"),
        add(graph, "Dense", in_channels=flat, out_channels=classes),
        add(graph, "Output", loss="CrossEntropyLoss"),
    )
    return graph


@pytest.fixture
def project_file(tmp_path):
    write_shapes(tmp_path / "photos", per_class=8)
    project = Project(name="shapes", graph=shapes_cnn())
    project.training.update({"dataset": "moons", "optimizer": "Adam", "learning_rate": 0.01,
                             "batch_size": 8, "epochs": 2, "validation_fraction": 0.25})
    path = tmp_path / "shapes.cwproj"
    save_project(project, path)
    return path


def type_into(box, text):
    box.setFocus()
    box.lineEdit().selectAll()
    QTest.keyClicks(box.lineEdit(), text)
    QTest.keyClick(box.lineEdit(), Qt.Key.Key_Return)


def test_import_an_image_folder_train_on_it_and_save_it(window, qtbot, monkeypatch,
                                                        project_file, tmp_path):
    assert window.open_project(project_file, interactive=False)
    run = window.run
    form = run.panel.data
    qtbot.mouseClick(form.image_button, Qt.MouseButton.LeftButton)
    dialog = form.image_dialog
    assert dialog.isVisible()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        lambda *a, **k: str(tmp_path / "photos"))  # fmt: skip
    qtbot.mouseClick(dialog.findChild(QPushButton, "choose_image_folder"),
                     Qt.MouseButton.LeftButton)  # fmt: skip
    qtbot.waitUntil(dialog.ok.isEnabled, timeout=TIMEOUT)
    type_into(dialog.height_box, "16")
    type_into(dialog.width_box, "16")
    qtbot.waitUntil(lambda: "24 images of 3×16×16" in dialog.summary.text(), timeout=TIMEOUT)
    assert [h.text() for h in dialog.grid.headings] == ["circle (8)", "square (8)",
                                                        "triangle (8)"]  # fmt: skip
    assert len(dialog.grid.pictures) == 24
    assert dialog.skipped.text().startswith("1 file skipped")
    steps = window.undo_stack.count()
    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    setting = window.project.training["dataset"]
    assert setting["images"] == "photos" and setting["size"] == [16, 16]
    assert window.undo_stack.count() == steps + 1  # one undo step
    window.undo_stack.undo()
    assert window.project.training["dataset"] == "moons"
    window.undo_stack.redo()
    assert window.project.training["dataset"] == setting
    qtbot.waitUntil(lambda: run.session is not None
                    and run.session.dataset.sample_shape == (3, 16, 16), timeout=TIMEOUT)
    assert run.session.dataset is form.dataset  # read once, by the dialog
    for _ in range(3):
        qtbot.waitUntil(run.actions["step"].isEnabled, timeout=TIMEOUT)
        run.actions["step"].trigger()
        qtbot.waitUntil(lambda: run.session.status == "ready", timeout=TIMEOUT)
    qtbot.waitUntil(lambda: run.session.state.step == 3, timeout=TIMEOUT)
    assert window.save_project(project_file)
    saved = load_project(project_file).training["dataset"]
    assert saved == setting and saved["digest"] and saved["color"] == "rgb"


def test_a_project_whose_image_folder_is_gone_still_opens_and_says_why(window, qtbot,
                                                                        project_file, tmp_path):
    project = load_project(project_file)
    project.training["dataset"] = {"images": "photos", "size": [16, 16], "fit": "resize",
                                   "color": "rgb"}  # fmt: skip
    save_project(project, project_file)
    shutil.rmtree(tmp_path / "photos")
    assert window.open_project(project_file, interactive=False)
    status = window.run.panel.data.status
    assert status.isVisible() and "photos" in status.text()
    assert window.run.session is None and "photos" in (window.run.problem or "")
    assert len(window.project.graph.nodes) == 10  # the project opened whole


def test_a_changed_folder_is_said_on_opening_and_the_save_records_it(window, qtbot,
                                                                     project_file, tmp_path):
    photos = tmp_path / "photos"
    spec = {"images": "photos", "size": [16, 16], "fit": "resize", "color": "rgb"}
    project = load_project(project_file)
    project.training["dataset"] = spec
    save_project(project, project_file)
    assert window.open_project(project_file, interactive=False)
    qtbot.waitUntil(lambda: window.run.session is not None, timeout=TIMEOUT)
    assert window.save_project(project_file)
    first = load_project(project_file).training["dataset"]["digest"]  # recorded on saving
    (photos / "square" / "extra.png").write_bytes((photos / "square" / "0.png").read_bytes())
    assert window.open_project(project_file, interactive=False)
    status = window.run.panel.data.status
    assert status.isVisible() and "has changed" in status.text()
    qtbot.waitUntil(lambda: window.run.session is not None, timeout=TIMEOUT)
    assert len(window.run.session.dataset) == 25  # read as it is now
    assert window.save_project(project_file)
    second = load_project(project_file).training["dataset"]["digest"]
    assert second and second != first
    assert window.open_project(project_file, interactive=False)
    assert not window.run.panel.data.status.isVisible()


def test_augmentation_edits_are_undoable_and_locked_while_a_run_is_active(window, qtbot):
    run = open_example(window, qtbot, DIGITS)
    flip = run.panel.fields["augmentation.flip"]
    type_into(flip, "0.5")
    assert window.project.training["augmentation"] == {"flip": 0.5}
    window.undo_stack.undo()
    assert "augmentation" not in window.project.training and flip.value() == 0
    window.undo_stack.redo()
    assert window.project.training["augmentation"] == {"flip": 0.5} and flip.value() == 0.5
    qtbot.waitUntil(lambda: run.session is not None and run.actions["start"].isEnabled()
                    and run.fingerprint() == run._fingerprint, timeout=TIMEOUT)  # fmt: skip
    run.actions["start"].trigger()
    qtbot.waitUntil(lambda: not flip.isEnabled(), timeout=TIMEOUT)
    assert run.session.settings.augmentation == {"flip": 0.5}  # the run uses it
    run._stop_and_wait()
    qtbot.waitUntil(flip.isEnabled, timeout=TIMEOUT)
