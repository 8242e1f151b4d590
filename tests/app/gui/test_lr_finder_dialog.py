"""Run → Find Learning Rate… in the window: the dialog searches on a worker thread, draws the
loss against the rate on a log axis with the suggestions marked, "Use this rate" is one undo
step (refused while training runs), Stop and closing end the search, errors show in it, and
the project's weights stay bit-identical."""

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from app.runs.lr_finder import STOPPED_BY_USER
from app.session import READY, RUNNING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import TIMEOUT, open_example, shown_window

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)  # closing at the end


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def open_dialog(window, qtbot):
    open_example(window, qtbot)
    action = window.shell.action("find_lr_action")
    assert action is not None and action in window.shell.menu("run_menu").actions()
    action.trigger()  # Run → Find Learning Rate…
    view = window.lr_finder.view
    qtbot.waitUntil(view.isVisible, timeout=TIMEOUT)
    assert not view.isModal()
    return view


def set_field(qtbot, field, text: str) -> None:
    """Click into a field, replace its text by typing, press Enter."""
    field.setFocus()
    editor = field.lineEdit()
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def click(widget) -> None:
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton)


def finished(window) -> bool:
    job = window.lr_finder.job
    return job is not None and job.done.is_set() and not window.lr_finder.timer.isActive()


def weights(project) -> dict:
    return {(node, name): array.copy() for node, arrays in project.param_values.items()
            for name, array in arrays.items()}  # fmt: skip


def test_find_draws_the_curve_on_a_log_axis_and_use_is_one_undo_step(window, qtbot):
    view = open_dialog(window, qtbot)
    project = window.project
    before, old_rate = weights(project), project.training["learning_rate"]
    set_field(qtbot, view.steps_field, "60")
    click(view.find_button)
    qtbot.waitUntil(lambda: finished(window), timeout=TIMEOUT)

    finding = window.lr_finder.job.finding
    assert finding is not None and finding.suggestion is not None
    assert 2 <= len(finding.rates) <= 60 and view.progress.value() == len(finding.rates)
    plot = view.plot_view.getPlotItem()
    assert plot.getAxis("bottom").logMode  # the rate axis is logarithmic
    x, y = view.smooth_curve.getData()  # as drawn: log10 of the rates
    np.testing.assert_allclose(x, np.log10(finding.rates))
    np.testing.assert_allclose(y, finding.smoothed)
    np.testing.assert_allclose(view.raw_curve.getData()[1], finding.losses)
    steepest = view.markers["steepest"]
    assert steepest.isVisible() and steepest.value() == pytest.approx(
        math.log10(finding.steepest))  # fmt: skip
    assert view.markers["min_tenth"].value() == pytest.approx(math.log10(finding.min_tenth))
    assert f"{finding.suggestion:.3g}" in view.suggestion_label.text()
    assert view.use_button.isEnabled() and view.find_button.isEnabled()
    assert not view.stop_button.isEnabled()
    for key, array in before.items():  # the weights are untouched
        assert np.array_equal(project.param_values[key[0]][key[1]], array)

    click(view.use_button)
    assert project.training["learning_rate"] == finding.suggestion
    assert window.undo_stack.count() == 1 and window.isWindowModified()
    assert f"{finding.suggestion:.3g}" in view.status_label.text()
    # Ctrl+Z, pressed in the dialog, puts the old rate back
    view.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is view, timeout=TIMEOUT)
    qtbot.keyClick(view.use_button, Qt.Key.Key_Z, CTRL)
    assert project.training["learning_rate"] == old_rate
    window.undo_stack.redo()
    assert project.training["learning_rate"] == finding.suggestion
    window.undo_stack.undo()
    assert project.training["learning_rate"] == old_rate


def test_stop_and_closing_end_the_search_with_what_it_found(window, qtbot):
    view = open_dialog(window, qtbot)
    set_field(qtbot, view.start_field, "1e-9")
    set_field(qtbot, view.end_field, "1e-6")  # too small to blow up: it would run them all
    set_field(qtbot, view.steps_field, "10000")
    assert window.lr_finder.job is None  # Enter confirms a field: it does not start a search
    click(view.find_button)
    assert view.stop_button.isEnabled() and not view.find_button.isEnabled()
    qtbot.waitUntil(lambda: len(window.lr_finder.job.rates) >= 3, timeout=TIMEOUT)
    click(view.stop_button)
    qtbot.waitUntil(lambda: finished(window), timeout=TIMEOUT)
    finding = window.lr_finder.job.finding
    assert finding.stopped_early == STOPPED_BY_USER and 3 <= len(finding.rates) < 10_000
    assert STOPPED_BY_USER in view.status_label.text()

    assert window.lr_finder.job.finding is finding  # Enter in a field did not start one
    click(view.find_button)
    job = window.lr_finder.job
    assert job is not None and job.finding is None
    qtbot.keyClick(view, Qt.Key.Key_Escape)  # closing the dialog stops the search too
    assert not view.isVisible() and job.stop.is_set()
    assert job.done.wait(TIMEOUT / 1000)
    assert job.finding.stopped_early == STOPPED_BY_USER


def test_use_is_refused_while_training_runs_and_nothing_changes(window, qtbot):
    view = open_dialog(window, qtbot)
    set_field(qtbot, view.steps_field, "30")
    click(view.find_button)
    qtbot.waitUntil(lambda: finished(window), timeout=TIMEOUT)
    run, project = window.run, window.project
    old_rate = project.training["learning_rate"]
    run.panel.setting_changed.emit("epochs", 100_000)
    run.start()
    qtbot.waitUntil(lambda: run.status == RUNNING and bool(window.undo_stack.lock_reason),
                    timeout=TIMEOUT)  # fmt: skip
    try:
        click(view.use_button)
        assert project.training["learning_rate"] == old_rate
        assert "not changed" in view.status_label.text()
        assert view.status_label.styleSheet()  # shown as an error
    finally:
        run.stop()
        qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)


def test_bad_bounds_are_refused_in_the_dialog(window, qtbot):
    view = open_dialog(window, qtbot)
    set_field(qtbot, view.start_field, "1")
    set_field(qtbot, view.end_field, "0.01")
    click(view.find_button)
    assert window.lr_finder.job is None
    assert "must be below the end rate" in view.status_label.text()
    assert view.end_field.styleSheet() or view.start_field.styleSheet()
    set_field(qtbot, view.start_field, "5e9")  # out of range: the field keeps its value
    assert "'5e9' is not a rate: a number from 1e-12 to 1e+06" in view.status_label.text()
    assert view.start_field.styleSheet() and view.start_field.value() == 1.0


def test_a_problem_shows_in_the_dialog(window, qtbot):
    view = open_dialog(window, qtbot)
    window.project.training["dataset"] = {"npz": "no_such_file.npz"}
    set_field(qtbot, view.steps_field, "10")
    click(view.find_button)
    qtbot.waitUntil(lambda: finished(window), timeout=TIMEOUT)
    assert "no_such_file.npz" in view.status_label.text()
    assert view.status_label.styleSheet()
    assert view.find_button.isEnabled() and not view.use_button.isEnabled()


def test_the_data_set_the_run_panel_read_is_not_read_again(window, qtbot, monkeypatch):
    from app.datasets import loading

    view = open_dialog(window, qtbot)
    folder = window.lr_finder._folder()
    assert window.run.panel.already_read(window.project.training["dataset"], folder)
    monkeypatch.setattr(loading, "read_dataset", lambda *a, **k: pytest.fail("read again"))
    set_field(qtbot, view.steps_field, "10")
    click(view.find_button)
    qtbot.waitUntil(lambda: finished(window), timeout=TIMEOUT)
    assert window.lr_finder.job.finding is not None, view.status_label.text()
