"""The Evaluation dock in the window: beside the Plots, evaluated off the GUI thread after
each epoch and on Refresh, its matrix equal to app.session.evaluation's, and a click on a
cell listing exactly that cell's samples (thumbnails, rows, points on the boundary)."""

import threading

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from app.gui import evaluation as evaluation_module
from app.resources_path import resource_path
from app.session import READY
from app.session.evaluation import TRAINING, VALIDATION, evaluate
from app.session.metrics import EPOCH_COLUMNS
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import DIGITS, SPIRAL, TIMEOUT, open_example, shown_window

LSTM = resource_path("examples", "lstm_forecast.cwproj")


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def open_dock(window, qtbot, path, **training):
    run = open_example(window, qtbot, path, **training)
    controller = window.evaluation
    controller.dock.show()  # View → Evaluation
    controller.dock.raise_()
    qtbot.waitUntil(lambda: controller.in_view, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: shows(controller, run.session), timeout=TIMEOUT)
    return controller, run


def shows(controller, session, split=VALIDATION) -> bool:
    """The dock shows an evaluation of `session`'s weights as they are now."""
    found = controller.evaluation
    return (found is not None and controller.evaluator is not None
            and controller.evaluator.session is session and not controller.busy
            and found.split == split and found.step == session.state.step)  # fmt: skip


def train(qtbot, controller, run) -> None:
    run.start()
    qtbot.waitUntil(lambda: run.status == READY and run.session.state.step > 0, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: shows(controller, run.session), timeout=TIMEOUT)


def click_cell(controller, i, j) -> None:
    matrix = controller.view.matrix
    QTest.mouseClick(matrix, Qt.MouseButton.LeftButton, pos=matrix.cell_rect(i, j).center())


def most_confused(confusion: np.ndarray) -> tuple[int, int]:
    off = confusion * (1 - np.eye(len(confusion), dtype=np.int64))
    i, j = np.unravel_index(np.argmax(off), off.shape)
    assert off[i, j] > 0
    return int(i), int(j)


def test_the_dock_sits_beside_the_plots_and_in_the_view_menu(window, qtbot):
    dock = window.evaluation.dock
    assert dock.objectName() == "evaluation_dock" and dock.windowTitle() == "Evaluation"
    assert not dock.isVisible() and not window.evaluation.in_view  # nothing evaluated unseen
    view_menu = window.shell.menu("view_menu")
    assert dock.toggleViewAction() in view_menu.actions()
    dock.toggleViewAction().trigger()  # View → Evaluation
    qtbot.waitUntil(lambda: dock.isVisible() and not dock.isFloating(), timeout=TIMEOUT)
    assert window.dockWidgetArea(dock) == window.dockWidgetArea(window.plots_dock)
    assert dock not in window.tabifiedDockWidgets(window.plots_dock)  # beside, not behind
    qtbot.waitUntil(lambda: dock.geometry().left() >= window.plots_dock.geometry().right(),
                    timeout=TIMEOUT)  # fmt: skip


def test_spiral_after_training_matches_the_evaluation_and_a_cell_rings_its_points(window, qtbot):
    controller, run = open_dock(window, qtbot, SPIRAL, epochs=3)
    train(qtbot, controller, run)
    wanted = evaluate(run.session, VALIDATION).classification
    shown = controller.view.matrix
    size = len(wanted.confusion)
    assert [[int(shown.cell_text(i, j)) for j in range(size)] for i in range(size)] == (
        wanted.confusion.tolist())
    i, j = most_confused(wanted.confusion)
    click_cell(controller, i, j)
    cell = wanted.cell(i, j)
    samples = controller.view.cell_samples
    assert samples.shown_indices() == cell.tolist() and not samples.images_shown
    first = [samples.table.item(0, c).text() for c in range(3)]
    names = run.session.dataset.class_names
    assert first == [str(cell[0]), names[i], names[j]]
    ringed = window.boundary.highlighted
    np.testing.assert_allclose(ringed, run.session.val_set.x[cell])
    controller.view.split_box.setCurrentIndex(controller.view.split_box.findData(TRAINING))
    qtbot.waitUntil(lambda: shows(controller, run.session, TRAINING), timeout=TIMEOUT)
    assert len(controller.evaluation) == len(run.session.train_set)
    assert window.boundary.highlighted.shape == (0, 2)  # the listed cell was of the other set


def test_it_refreshes_after_epochs_off_the_gui_and_training_threads(window, qtbot, monkeypatch):
    threads, steps = [], []
    original = evaluation_module.Evaluator.evaluate

    def recording(self, *args, **kwargs):
        threads.append(threading.current_thread())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(evaluation_module.Evaluator, "evaluate", recording)
    controller, run = open_dock(window, qtbot, SPIRAL, epochs=100_000)
    show = controller.view.show_evaluation
    monkeypatch.setattr(controller.view, "show_evaluation",
                        lambda found, *a: (steps.append(found.step), show(found, *a)))
    epochs = run.session.metrics.epochs
    run.start()
    qtbot.waitUntil(lambda: len(steps) >= 2, timeout=TIMEOUT)  # two epochs' evaluations
    assert run.status != READY and 0 < steps[0] < steps[1] and epochs.total >= 2
    assert steps[0] >= epochs.snapshot()[0, EPOCH_COLUMNS.index("step")]  # after epoch 1
    run.stop()
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: shows(controller, run.session), timeout=TIMEOUT)
    assert steps[-1] == run.session.state.step  # and the weights the run left
    assert all(t.name == "cellwright-evaluation" for t in threads)
    assert threading.main_thread() not in threads
    qtbot.waitUntil(lambda: not controller.busy and not controller.stale, timeout=TIMEOUT)
    before = len(threads)
    qtbot.mouseClick(controller.view.refresh_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(threads) > before and shows(controller, run.session),
                    timeout=TIMEOUT)  # fmt: skip


def test_digits_cell_shows_thumbnails_and_the_worst_list(window, qtbot, tmp_path):
    controller, run = open_dock(window, qtbot, DIGITS, epochs=1)
    train(qtbot, controller, run)
    found = evaluate(run.session, VALIDATION)
    c = found.classification
    np.testing.assert_array_equal(controller.evaluation.classification.confusion, c.confusion)
    i, j = most_confused(c.confusion)
    click_cell(controller, i, j)
    samples = controller.view.cell_samples
    assert samples.images_shown and samples.shown_indices() == c.cell(i, j).tolist()
    item, names = samples.grid.item(0), run.session.dataset.class_names
    assert not item.icon().isNull()
    assert item.text().startswith(f"#{c.cell(i, j)[0]}\n{names[i]}→{names[j]}\n")
    p = c.probabilities[c.cell(i, j)[0]]
    assert f"{names[j]}: {p[j]:.3f}" in item.toolTip()
    view = controller.view
    view.sample_tabs.setCurrentIndex(1)
    assert view.worst_samples.shown_indices() == found.worst(50).tolist()
    assert view.worst_samples.images_shown
    assert controller.dock.grab().save(str(tmp_path / "evaluation.png"))


def test_a_regression_shows_predicted_against_true(window, qtbot):
    controller, run = open_dock(window, qtbot, LSTM)
    run.step()
    qtbot.waitUntil(lambda: run.session.state.step == 1 and run.status == READY, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: shows(controller, run.session), timeout=TIMEOUT)
    wanted = evaluate(run.session, VALIDATION).regression
    plots = controller.view.regression
    assert plots.isVisible() and not controller.view.matrix.isVisible()
    true, predicted = plots.points
    np.testing.assert_allclose(true, wanted.true.ravel())
    np.testing.assert_allclose(predicted, wanted.predicted.ravel(), rtol=1e-6)
    np.testing.assert_array_equal(plots.bars.opts["height"], wanted.scores.counts)
