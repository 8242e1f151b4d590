"""Fixing the data where the errors show, in the window: an image folder (coloured shapes in
class folders, plus a broken file) imported through the dialog, a small CNN trained a few
steps, a click on an off-diagonal confusion-matrix cell, and a sample relabelled from its
thumbnail, or excluded from the "Most confidently wrong" list: one undo step each, kept as
the project's "data_edits" overlay (saved, reopened), listed in the Data edits dock and
used by the next session's sets and the evaluation."""

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton

from app.document import Project
from app.io.project_file import load_project, save_project
from app.session import READY
from app.session.evaluation import TRAINING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.test_evaluation_window import click_cell, most_confused, shows
from tests.app.gui.test_image_folder_window import shapes_cnn, type_into
from tests.app.gui.window_support import TIMEOUT, shown_window
from tests.widgets.image_folders import write_shapes
from widgets.evaluation_view import WORST_TAB


@pytest.fixture
def window(qtbot, monkeypatch):
    record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)
    yield from shown_window(qtbot)


@pytest.fixture
def project_file(tmp_path):
    write_shapes(tmp_path / "photos", per_class=8)
    project = Project(name="shapes", graph=shapes_cnn())
    project.training.update({"dataset": "moons", "optimizer": "Adam", "learning_rate": 0.01,
                             "batch_size": 8, "epochs": 1, "validation_fraction": 0.25})
    path = tmp_path / "shapes.cwproj"
    save_project(project, path)
    return path


def import_and_train(window, qtbot, monkeypatch, project_file):
    """Open the project, import the shapes through the dialog, train an epoch; the
    Evaluation dock in view on the training set. Returns (run, evaluation controller)."""
    assert window.open_project(project_file, interactive=False)
    run = window.run
    qtbot.mouseClick(run.panel.data.image_button, Qt.MouseButton.LeftButton)
    dialog = run.panel.data.image_dialog
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        lambda *a, **k: str(project_file.parent / "photos"))  # fmt: skip
    qtbot.mouseClick(dialog.findChild(QPushButton, "choose_image_folder"),
                     Qt.MouseButton.LeftButton)  # fmt: skip
    qtbot.waitUntil(dialog.ok.isEnabled, timeout=TIMEOUT)
    type_into(dialog.height_box, "16")
    type_into(dialog.width_box, "16")
    qtbot.waitUntil(lambda: "24 images of 3×16×16" in dialog.summary.text(), timeout=TIMEOUT)
    assert dialog.skipped.text().startswith("1 file skipped")  # the broken file
    qtbot.mouseClick(dialog.ok, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: run.session is not None and run.actions["start"].isEnabled()
                    and run.session.dataset.sample_shape == (3, 16, 16), timeout=TIMEOUT)
    run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.status == READY and run.session.state.step == 3,
                    timeout=TIMEOUT)  # fmt: skip
    controller = window.evaluation
    controller.dock.show()  # View → Evaluation
    controller.dock.raise_()
    qtbot.waitUntil(lambda: controller.in_view, timeout=TIMEOUT)
    view = controller.view
    view.split_box.setCurrentIndex(view.split_box.findData(TRAINING))
    qtbot.waitUntil(lambda: shows(controller, run.session, TRAINING), timeout=TIMEOUT)
    return run, controller


def click_sample(samples, index: int) -> None:
    """Click the thumbnail of row `index` of the evaluated set."""
    grid = samples.grid
    item = grid.item(samples.shown_indices().index(index))
    grid.scrollToItem(item)
    QTest.mouseClick(grid.viewport(), Qt.MouseButton.LeftButton,
                     pos=grid.visualItemRect(item).center())  # fmt: skip
    assert samples.chosen().index == index


def relabel_through_button(qtbot, samples, label: int) -> None:
    """Relabel as… → the class `label` in the button's class chooser, as a user picks it."""
    menu, picked = samples.relabel_menu, []

    def pick():
        (action,) = [a for a in menu.actions() if a.objectName() == f"relabel_as_{label}"]
        picked.append(menu.isVisible() and action.isEnabled())
        action.trigger()
        menu.hide()

    QTimer.singleShot(100, pick)
    QTest.mouseClick(samples.relabel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bool(picked), timeout=TIMEOUT)
    assert picked == [True]  # the chooser was open, the class offered


def new_session(qtbot, run, old):
    """The session the Run controller made after an edit (the old one keeps its sets)."""
    qtbot.waitUntil(lambda: run.session is not None and run.session is not old
                    and run._fingerprint == run.fingerprint(), timeout=TIMEOUT)  # fmt: skip
    return run.session


def label_of(data, row: int) -> int:
    (at,) = np.flatnonzero(data.rows == row)
    return int(data.y[at])


def table_rows(window) -> list[tuple[str, str]]:
    table = window.data_edits.table.table
    return [(table.item(r, 0).text(), table.item(r, 1).text()) for r in range(table.rowCount())]


def test_relabel_from_a_cell_is_one_step_saved_reopened_trained_on_and_undone(
        window, qtbot, monkeypatch, project_file, tmp_path):  # fmt: skip
    run, controller = import_and_train(window, qtbot, monkeypatch, project_file)
    view, old = controller.view, run.session
    i, j = most_confused(controller.evaluation.classification.confusion)
    click_cell(controller, i, j)
    samples = view.cell_samples
    assert samples.images_shown and view.sample_tabs.currentIndex() == 0
    index = samples.shown_indices()[0]
    data = controller.evaluation.data
    row, source = int(data.rows[index]), data.sources[index]
    names = old.dataset.class_names
    click_sample(samples, index)
    steps = window.undo_stack.count()
    relabel_through_button(qtbot, samples, j)
    assert window.undo_stack.count() == steps + 1  # one undo step
    setting = window.project.training["data_edits"]
    assert setting["samples"] == {str(row): {"label": j, "was": i, "source": source}}
    assert label_of(old.train_set, row) == i  # a session made before keeps its sets
    session = new_session(qtbot, run, old)
    assert label_of(session.train_set, row) == j  # the overlay is what it trains on
    assert table_rows(window) == [(source, f"relabelled {names[i]} → {names[j]}")]
    # The dock evaluated the new session, the cell still listed, without that sample.
    qtbot.waitUntil(lambda: shows(controller, session, TRAINING), timeout=TIMEOUT)
    assert view.cell == (i, j) and index not in samples.shown_indices()
    assert int(controller.evaluation.classification.true[index]) == j
    click_sample(samples, samples.shown_indices()[0])  # chosen: Relabel as…, Exclude
    assert controller.dock.grab().save(str(tmp_path / "cell.png"))
    window.data_edits.dock.show()
    window.data_edits.dock.raise_()
    qtbot.waitUntil(lambda: window.data_edits.table.isVisible(), timeout=TIMEOUT)
    assert window.data_edits.dock.grab().save(str(tmp_path / "data_edits.png"))

    assert window.save_project(project_file)
    assert load_project(project_file).training["data_edits"] == setting
    window.undo_stack.undo()
    assert "data_edits" not in window.project.training and table_rows(window) == []
    assert label_of(new_session(qtbot, run, session).train_set, row) == i

    assert window.open_project(project_file, interactive=False)  # reopened: still there
    assert window.project.training["data_edits"] == setting
    assert table_rows(window) == [(source, f"relabelled {names[i]} → {names[j]}")]
    qtbot.waitUntil(lambda: run.session is not None and run.session.project is window.project,
                    timeout=TIMEOUT)  # fmt: skip
    assert label_of(run.session.train_set, row) == j and run.session.edits_note == ""


def test_exclude_from_the_worst_list_and_a_refusal_while_training(window, qtbot, monkeypatch,
                                                                  project_file):
    run, controller = import_and_train(window, qtbot, monkeypatch, project_file)
    view, old = controller.view, run.session
    view.sample_tabs.setCurrentIndex(WORST_TAB)
    samples = view.worst_samples
    assert samples.images_shown and not samples.exclude_button.isEnabled()  # none chosen
    count = len(old.train_set)
    run.panel.setting_changed.emit("epochs", 1000)  # a run long enough to try an edit in
    qtbot.waitUntil(lambda: run.session is not old and run.actions["start"].isEnabled(),
                    timeout=TIMEOUT)  # fmt: skip
    run.actions["start"].trigger()
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith("Training on"),
                    timeout=TIMEOUT)  # fmt: skip
    qtbot.waitUntil(lambda: controller.view.evaluation is not None, timeout=TIMEOUT)
    steps = window.undo_stack.count()
    click_sample(samples, samples.shown_indices()[0])
    qtbot.mouseClick(samples.exclude_button, Qt.MouseButton.LeftButton)
    assert window.undo_stack.count() == steps and "data_edits" not in window.project.training
    assert "Training is running" in window.statusBar().currentMessage()  # said why not
    run._stop_and_wait()
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)
    trained = run.session
    qtbot.waitUntil(lambda: shows(controller, trained, TRAINING), timeout=TIMEOUT)
    index = samples.shown_indices()[0]
    row = int(controller.evaluation.data.rows[index])
    click_sample(samples, index)
    qtbot.mouseClick(samples.exclude_button, Qt.MouseButton.LeftButton)
    assert window.undo_stack.count() == steps + 1
    assert window.project.training["data_edits"]["samples"][str(row)]["exclude"] is True
    session = new_session(qtbot, run, trained)
    assert len(session.train_set) == count - 1 and row not in session.train_set.rows
    qtbot.waitUntil(lambda: shows(controller, session, TRAINING), timeout=TIMEOUT)
    assert len(controller.evaluation) == count - 1
    assert row not in controller.evaluation.data.rows[samples.shown_indices()]
    assert view.sample_tabs.currentIndex() == WORST_TAB  # the list looked at stays
    assert [change for _, change in table_rows(window)] == ["excluded"]
    window.undo_stack.undo()
    assert len(new_session(qtbot, run, session).train_set) == count


def test_the_data_edits_dock_sits_beside_the_evaluation_and_in_the_view_menu(window, qtbot):
    dock = window.data_edits.dock
    assert dock.objectName() == "data_edits_dock" and dock.windowTitle() == "Data edits"
    assert not dock.isVisible()  # View → Data edits shows it
    window.evaluation.dock.toggleViewAction().trigger()
    dock.toggleViewAction().trigger()
    qtbot.waitUntil(lambda: dock in window.tabifiedDockWidgets(window.evaluation.dock))
    assert not dock.isFloating() and not window.evaluation.dock.isFloating()
    assert dock.toggleViewAction() in window.shell.menu("view_menu").actions()
    assert dock.widget() is window.data_edits.table
