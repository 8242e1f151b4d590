"""Autosave and crash recovery: copies of unsaved work beside the settings, never over the
user's file, offered again after the app was killed."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from app.gui.autosave import INTERVAL_KEY, left_behind, offer_recovery, recovery_folder
from app.gui.main_window import MainWindow
from app.gui.settings import app_settings
from app.io.project_file import load_project
from app.resources_path import resource_path
from app.undo.commands import RenameCommand, perform
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import shown_window

REPO = Path(__file__).resolve().parents[3]
SPIRAL = resource_path("examples", "spiral_mlp.cwproj")
TIMEOUT = 20_000


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


@pytest.fixture
def saved(tmp_path) -> Path:
    """A project file of the user's (a copy of the spiral example)."""
    path = tmp_path / "mine.cwproj"
    path.write_bytes(SPIRAL.read_bytes())
    return path


def rename(window, old: str, new: str) -> None:
    node = window.project.graph.node_named(old)
    assert perform(window.undo_stack, RenameCommand(window.project.graph, (), node.id, new)) \
        is None


def test_unsaved_work_is_copied_beside_the_settings_and_never_over_the_users_file(
        window, saved):  # fmt: skip
    assert window.open_project(saved, interactive=False)
    before = saved.read_bytes()
    assert not window.autosave.write_now()  # nothing unsaved: nothing to copy
    rename(window, "dense1", "kept")
    assert window.autosave.write_now()
    copy, note = window.autosave.path, window.autosave.note
    assert copy.parent == recovery_folder(window.settings) and copy.is_file()
    assert json.loads(note.read_text())["original"] == str(saved)
    assert load_project(copy).graph.node_named("kept") is not None
    assert saved.read_bytes() == before
    assert not window.autosave.write_now()  # no change since the last copy
    assert window.save_project(saved)  # a clean save: the copy goes
    assert not copy.exists() and not note.exists()


def test_the_timer_writes_at_the_preferences_interval(window, saved, qtbot, monkeypatch):
    from widgets.preferences_dialog import PreferencesDialog

    assert window.open_project(saved, interactive=False)
    monkeypatch.setattr(PreferencesDialog, "exec", lambda self: (
        self.autosave.setValue(1), PreferencesDialog.DialogCode.Accepted)[1])
    window.preferences_action.trigger()
    assert int(window.settings.value(INTERVAL_KEY)) == 1
    rename(window, "dense1", "timed")
    qtbot.waitUntil(lambda: window.autosave.written >= 1, timeout=TIMEOUT)
    assert load_project(window.autosave.path).graph.node_named("timed") is not None


def test_a_copy_is_written_on_the_way_into_training(window, saved, qtbot):
    assert window.open_project(saved, interactive=False)
    window.autosave.set_interval(0)
    qtbot.waitUntil(lambda: window.run.session is not None, timeout=TIMEOUT)
    rename(window, "dense2", "before_training")
    qtbot.waitUntil(lambda: window.run.fingerprint() == window.run._fingerprint,
                    timeout=TIMEOUT)
    window.run.start()
    assert window.autosave.written == 1
    assert load_project(window.autosave.path).graph.node_named("before_training") is not None
    window.run._stop_and_wait()


def test_closing_after_discarding_the_changes_deletes_the_copy(window, saved, dialogs):
    assert window.open_project(saved, interactive=False)
    rename(window, "dense1", "gone")
    assert window.autosave.write_now()
    copy = window.autosave.path
    window.close()  # the unsaved-changes question is answered Discard
    assert not copy.exists()


KILLED_APP = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from PySide6.QtCore import QSettings
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, sys.argv[1])
    from app.main import _application
    from app.undo.commands import RenameCommand, perform
    from app.gui.main_window import MainWindow
    app = _application()
    window = MainWindow(remember_layout=False)
    window.show()
    assert window.open_project(sys.argv[2], interactive=False)
    node = window.project.graph.node_named("dense1")
    perform(window.undo_stack, RenameCommand(window.project.graph, (), node.id, "survivor"))
    window.autosave.set_interval(1)
    while not window.autosave.note.exists():
        app.processEvents()
        time.sleep(0.02)
    print("READY", flush=True)
    while True:  # edits unsaved, a copy on disk: now the power goes
        app.processEvents()
        time.sleep(0.02)
""")


def test_after_a_kill_the_next_start_offers_the_copy_and_restores_it(qtbot, saved, tmp_path):
    settings_dir = Path(app_settings().fileName()).parent.parent
    before = saved.read_bytes()
    env = dict(os.environ, PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen")
    process = subprocess.Popen([sys.executable, "-c", KILLED_APP, str(settings_dir), str(saved)],
                               stdout=subprocess.PIPE, env=env, cwd=REPO, text=True)
    try:
        deadline = time.monotonic() + 60
        line = ""
        while "READY" not in line and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line and process.poll() is not None:
                break
        assert "READY" in line, "the app did not write a recovery copy"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
        process.stdout.close()
    assert saved.read_bytes() == before  # the user's file is as it was
    settings = app_settings()
    (copy,) = left_behind(settings)
    assert copy.original == str(saved) and copy.name == "mine"

    window = MainWindow(remember_layout=False)
    qtbot.addWidget(window)
    asked = []
    restored = offer_recovery(window, settings,
                              ask=lambda c, can: asked.append((c.when, can)) or "restore")
    assert restored is not None and asked and asked[0][1]
    assert window.project.graph.node_named("survivor") is not None
    assert window.unsaved and window.project_path == saved
    assert saved.read_bytes() == before  # restored as unsaved changes, not written
    assert not copy.path.exists()  # the old copy went; this session keeps its own
    assert window.autosave.path.exists()
    assert left_behind(settings) == []  # the new copy's process is alive: not offered
    window.autosave.discard()


def test_discard_deletes_a_copy_left_behind_and_keep_leaves_it(qtbot, tmp_path):
    settings = app_settings()
    folder = recovery_folder(settings)
    folder.mkdir(parents=True, exist_ok=True)
    dead = _dead_pid()
    for token in ("a", "b"):
        (folder / f"{token}.cwproj").write_bytes(SPIRAL.read_bytes())
        (folder / f"{token}.json").write_text(json.dumps(
            {"original": None, "name": token, "saved_at": time.time(), "pid": dead}))
    window = MainWindow(remember_layout=False)
    qtbot.addWidget(window)
    answers = {"a": "discard", "b": "keep"}
    assert offer_recovery(window, settings, ask=lambda c, can: answers[c.name]) is None
    assert not (folder / "a.cwproj").exists()
    assert [c.name for c in left_behind(settings)] == ["b"]


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid
