"""Sweeps from the window as a user runs them: Run → Sweep…, typing the values, Start, the queue
in the Sweep dock with Stop and Resume, the parallel coordinates, and applying the best run's
settings as one undo step."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.runs.sweep import Sweep
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import SPIRAL, TIMEOUT, open_example, shown_window

pytestmark = pytest.mark.gui
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


@pytest.fixture
def spiral(window, qtbot):
    open_example(window, qtbot, SPIRAL)
    return window


def open_sweep_dialog(window, qtbot):
    action = window.shell.action("sweep_action")
    assert action in window.shell.menu("run_menu").actions()
    action.trigger()  # Run → Sweep…
    qtbot.waitUntil(lambda: window.sweeps.dialog is not None and window.sweeps.dialog.isVisible())
    return window.sweeps.dialog


def type_into(qtbot, edit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)


def start_sweep(window, qtbot, epochs: int = 1, **values: str):
    """Type each setting's values and the epochs per run into the dialog, click Start."""
    dialog = open_sweep_dialog(window, qtbot)
    for key, text in values.items():
        type_into(qtbot, dialog.fields[key], text)
    type_into(qtbot, dialog.epochs.lineEdit(), str(epochs))
    assert dialog.start.isEnabled(), dialog.problem
    qtbot.mouseClick(dialog.start, LEFT)
    qtbot.waitUntil(lambda: window.sweeps.running, timeout=TIMEOUT)
    return window.sweeps.sweep


def sweep_runs(window) -> list:
    return [r for r in window.project.runs if r.origin == "sweep"]


def test_a_bad_value_shows_why_and_start_stays_disabled(spiral, qtbot):
    dialog = open_sweep_dialog(spiral, qtbot)
    type_into(qtbot, dialog.fields["learning_rate"], "0.01,-1")
    assert dialog.errors["learning_rate"].isVisible()
    assert "'-1' is not a number above 0" in dialog.errors["learning_rate"].text()
    assert not dialog.start.isEnabled()
    # A node's hyper-parameter is checked against this network: dense1 exists, 0 can't be.
    qtbot.mouseClick(dialog.add_node, LEFT)
    row = dialog.node_rows[0]
    assert row.node.findData("dense1") >= 0
    row.node.setCurrentIndex(row.node.findData("dense1"))
    row.param.setCurrentIndex(row.param.findData("out_channels"))
    type_into(qtbot, row.values, "0,8")
    assert "out_channels" in row.error.text() and not dialog.start.isEnabled()
    dialog.reject()
    assert not spiral.sweeps.running and spiral.project.runs.sweep is None


def test_a_2x2_grid_records_4_runs_drawn_as_4_lines_and_the_best_applies(spiral, qtbot):
    project = spiral.project
    before = (project.training["learning_rate"], project.training["batch_size"])
    sweep = start_sweep(spiral, qtbot, learning_rate="0.003,0.1", batch_size="16,64")
    qtbot.waitUntil(lambda: not spiral.sweeps.running, timeout=60_000)
    runs = sweep_runs(spiral)
    assert len(runs) == 4 and all(r.status == "finished" for r in runs)
    assert all(r.settings["epochs"] == 1 and r.steps > 0 for r in runs)  # one epoch each
    assert sorted((r.sweep["values"]["learning_rate"], r.sweep["values"]["batch_size"])
                  for r in runs) == [(0.003, 16), (0.003, 64), (0.1, 16), (0.1, 64)]  # fmt: skip
    assert project.runs.sweep["status"] == "finished"
    assert spiral.unsaved
    view = spiral.sweeps.view
    assert spiral.sweeps.dock.isVisible()
    assert view.parallel.line_count() == 4
    assert [a.name for a in view.parallel.axes] == ["learning_rate", "batch_size",
                                                    "best_val_loss"]  # fmt: skip
    assert view.table.rowCount() == 4 and len(view.table_rows_shown()) == 4
    assert view.queue_label.text() == "Finished: 4 runs."
    best = sweep.best()
    assert best is not None and view.best_id == best.id
    assert best.metric("best_val_loss") == min(r.metric("best_val_loss") for r in runs)
    # The project's own weights and settings were not touched by the sweep.
    assert (project.training["learning_rate"], project.training["batch_size"]) == before
    # Apply the best run's settings: one undo step sets both; one undo puts both back.
    stack = spiral.undo_stack
    count = stack.count()
    qtbot.mouseClick(view.apply_button, LEFT)
    assert stack.count() == count + 1
    wanted = best.sweep["values"]
    assert project.training["learning_rate"] == wanted["learning_rate"]
    assert project.training["batch_size"] == wanted["batch_size"]
    stack.undo()
    assert (project.training["learning_rate"], project.training["batch_size"]) == before


def test_applying_is_refused_while_training_runs(spiral, qtbot):
    start_sweep(spiral, qtbot, learning_rate="0.01,0.1")
    qtbot.waitUntil(lambda: not spiral.sweeps.running, timeout=60_000)
    spiral.run.panel.setting_changed.emit("epochs", 1000)
    qtbot.waitUntil(lambda: spiral.run.fingerprint() == spiral.run._fingerprint, timeout=TIMEOUT)
    spiral.run.actions["start"].trigger()  # Run → Start
    qtbot.waitUntil(lambda: spiral.undo_stack.lock_reason is not None, timeout=TIMEOUT)
    rate = spiral.project.training["learning_rate"]
    view = spiral.sweeps.view
    qtbot.mouseClick(view.apply_button, LEFT)
    assert view.message.isVisible() and "Training is running" in view.message.text()
    assert spiral.project.training["learning_rate"] == rate
    spiral.run._stop_and_wait()


def test_stop_keeps_the_runs_done_and_resume_finishes_after_reopening(spiral, qtbot, tmp_path):
    start_sweep(spiral, qtbot, epochs=40, learning_rate="0.003,0.01,0.03",
                batch_size="16,32")  # fmt: skip
    view = spiral.sweeps.view
    qtbot.waitUntil(lambda: len(sweep_runs(spiral)) >= 1, timeout=60_000)
    assert view.stop_button.isVisible()
    qtbot.mouseClick(view.stop_button, LEFT)
    qtbot.waitUntil(lambda: not spiral.sweeps.running, timeout=TIMEOUT)
    done = len(sweep_runs(spiral))
    assert 1 <= done < 6
    assert spiral.project.runs.sweep["status"] == "stopped"
    assert len(spiral.project.runs.sweep["done"]) == done
    assert view.resume_button.isVisible()
    assert view.resume_button.text() == f"Resume ({done} of 6 done)"
    assert view.parallel.line_count() == done

    path = tmp_path / "swept.cwproj"
    assert spiral.save_project(path)
    assert spiral.close_project()
    assert spiral.sweeps.sweep is None and not view.resume_button.isVisible()
    assert spiral.open_project(path, interactive=False)
    qtbot.waitUntil(lambda: f"unfinished sweep ({done} of 6 runs done)"
                    in spiral.statusBar().currentMessage())  # fmt: skip
    assert not spiral.sweeps.running  # resumed only on request
    assert spiral.sweeps.dock.isVisible()
    assert view.resume_button.isVisible()
    assert view.resume_button.text() == f"Resume ({done} of 6 done)"
    assert spiral.sweeps.sweep.spec.epochs == 40  # the sweep as it was saved
    qtbot.mouseClick(view.resume_button, LEFT)
    assert spiral.sweeps.running
    qtbot.waitUntil(lambda: not spiral.sweeps.running, timeout=120_000)
    runs = sweep_runs(spiral)
    assert len(runs) == 6 and spiral.project.runs.sweep["status"] == "finished"
    assert sorted(r.sweep["index"] for r in runs) == list(range(6))
    assert view.parallel.line_count() == 6
    assert not view.resume_button.isVisible()


def test_closing_the_project_stops_the_sweep_and_waits(spiral, qtbot):
    sweep = start_sweep(spiral, qtbot, epochs=500, learning_rate="0.01,0.1")
    worker = spiral.sweeps.worker
    qtbot.waitUntil(lambda: worker.progress is not None and worker.progress[2] > 0,
                    timeout=TIMEOUT)  # fmt: skip
    assert spiral.close_project()
    assert not worker.is_alive() and not spiral.sweeps.running
    assert isinstance(sweep, Sweep) and sweep.pending()


def test_closing_the_window_stops_the_sweep_and_waits(spiral, qtbot):
    start_sweep(spiral, qtbot, epochs=500, learning_rate="0.01,0.1")
    worker = spiral.sweeps.worker
    qtbot.waitUntil(lambda: worker.progress is not None and worker.progress[2] > 0,
                    timeout=TIMEOUT)  # fmt: skip
    spiral.close()  # the unsaved runs: the recorded answer is Discard
    assert not worker.is_alive()


def test_another_project_opened_mid_sweep_is_not_marked_unsaved(spiral, qtbot, tmp_path):
    path = tmp_path / "plain.cwproj"
    assert spiral.save_project(path)
    start_sweep(spiral, qtbot, epochs=500, learning_rate="0.01,0.1")
    worker = spiral.sweeps.worker
    assert spiral.open_project(path, interactive=False)  # (File → Open asked before)
    assert not worker.is_alive() and not spiral.sweeps.running
    assert not spiral.unsaved
    assert spiral.project.runs.sweep is None  # saved before the sweep began
