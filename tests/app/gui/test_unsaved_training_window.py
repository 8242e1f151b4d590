"""Training is work: progress since the last save marks the title, and New, Open, Close and
Quit ask before dropping it, mid-run; Cancel leaves the run going. Driven from the keyboard."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.session import PAUSED, RUNNING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import DIGITS, TIMEOUT, open_example, shown_window

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def press(window, qtbot, key, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press on the canvas, as a user at the keyboard makes it."""
    view = window.workbench.editor.view
    window.activateWindow()
    view.setFocus()
    qtbot.keyClick(view, key, modifiers)


def steps(run) -> int:
    latest = run.bridge.latest if run.bridge is not None else None
    return latest.step if latest is not None else 0


def test_training_resumed_after_a_save_is_unsaved_and_every_way_out_asks(
    window, qtbot, tmp_path, monkeypatch
):
    run = open_example(window, qtbot, DIGITS, epochs=100_000)
    saved = tmp_path / "digits.cwproj"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *args, **kwargs: (str(saved), "")))
    asked_to_open = []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(
        lambda *args, **kwargs: asked_to_open.append(args) or ("", "")))

    press(window, qtbot, Qt.Key.Key_F5)  # start
    qtbot.waitUntil(lambda: run.status == RUNNING and steps(run) >= 1, timeout=TIMEOUT)
    assert window.isWindowModified()
    press(window, qtbot, Qt.Key.Key_F6)  # pause
    qtbot.waitUntil(lambda: run.status == PAUSED and run.bridge.paused.is_set(),
                    timeout=TIMEOUT)  # fmt: skip
    press(window, qtbot, Qt.Key.Key_S, CTRL)  # save (as: an example's copy has no file yet)
    assert saved.is_file() and window.project_path == saved.absolute()
    assert not window.isWindowModified()
    at_save = steps(run)

    press(window, qtbot, Qt.Key.Key_F7)  # resume: the file falls behind again
    qtbot.waitUntil(lambda: steps(run) > at_save, timeout=TIMEOUT)
    qtbot.waitUntil(window.isWindowModified, timeout=TIMEOUT)
    assert window.unsaved

    dialogs = record_dialogs(monkeypatch, QMessageBox.StandardButton.Cancel)
    project = window.project
    for key in (Qt.Key.Key_O, Qt.Key.Key_N, Qt.Key.Key_W, Qt.Key.Key_Q):  # Open New Close Quit
        asked = len(dialogs.shown)
        press(window, qtbot, key, CTRL)
        assert len(dialogs.shown) == asked + 1, f"Ctrl+{key.name} did not ask"
        kind, title, _text = dialogs.shown[-1]
        assert (kind, title) == ("warning", "Unsaved changes")
        assert window.project is project and window.isVisible()
        assert run.status == RUNNING  # Cancel: the run goes on
    assert not asked_to_open  # Open stopped at the question
    going = steps(run)
    qtbot.waitUntil(lambda: steps(run) > going, timeout=TIMEOUT)


def test_discard_mid_run_closes_the_project_and_ends_the_run(
    window, qtbot, tmp_path, monkeypatch
):
    run = open_example(window, qtbot, DIGITS, epochs=100_000)
    first = run.session
    press(window, qtbot, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: run.status == RUNNING and steps(run) >= 1, timeout=TIMEOUT)
    dialogs = record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)
    press(window, qtbot, Qt.Key.Key_W, CTRL)  # Close: asked, then an empty project
    assert [d[1] for d in dialogs.shown] == ["Unsaved changes"]
    assert first.status != RUNNING and window.project_path is None
    assert not window.project.graph.nodes and not window.isWindowModified()
