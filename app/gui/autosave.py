"""Autosave and crash recovery: a recovery copy of unsaved work, beside the settings.

While the window's project has changes the user has not saved, a copy is written every
`interval` seconds (Preferences; default 60, 0 = off) and on the way into training, to
`<settings folder>/recovery/<pid>-<token>.cwproj` with a small `.json` saying which file
it belongs to and when it was written. The user's own file is never touched. Copies
are written as saves are (a temporary file renamed into place), so a crash mid-write
leaves the previous copy. A clean save, or closing after the user agreed to lose the
changes, deletes the copy. On the next start, copies left by a process that no longer
runs (a crash, a power cut, SIGKILL) are offered: Restore opens one as unsaved changes
to its file, Discard deletes it, Keep leaves it for the next start.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, QSettings, QTimer
from PySide6.QtWidgets import QMessageBox

from app.gui import project_files
from app.session import RUNNING, STOPPING

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell

log = logging.getLogger(__name__)


class RestoresRecovery(Protocol):
    """What `offer_recovery` needs of the window: open a recovery copy as unsaved work."""

    def restore_recovery(self, path: Path, original: str | None, when: str) -> bool: ...

INTERVAL_KEY = "autosave/seconds"
DEFAULT_INTERVAL = 60
SUFFIX = ".cwproj"


def interval_setting(settings: QSettings) -> int:
    """Seconds between recovery copies (0: off), as the Preferences set it."""
    try:
        value = int(settings.value(INTERVAL_KEY, DEFAULT_INTERVAL))
    except (TypeError, ValueError):
        return DEFAULT_INTERVAL
    return max(0, value)


def recovery_folder(settings: QSettings) -> Path:
    return Path(settings.fileName()).parent / "recovery"


@dataclass(frozen=True)
class RecoveryCopy:
    """One recovery copy on disk and what its note says."""

    path: Path  # the .cwproj copy
    note: Path  # the .json beside it
    original: str | None  # the file it belongs to (None: never saved)
    name: str
    saved_at: float
    pid: int

    @property
    def when(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.saved_at))

    def delete(self) -> None:
        _remove(self.path, self.note)


def left_behind(settings: QSettings) -> list[RecoveryCopy]:
    """Recovery copies whose process is gone, newest first (damaged notes are skipped)."""
    folder = recovery_folder(settings)
    copies = []
    for note in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        try:
            data = json.loads(note.read_text(encoding="utf-8"))
            copy = RecoveryCopy(note.with_suffix(SUFFIX), note, data.get("original"),
                                str(data.get("name", "Untitled")), float(data["saved_at"]),
                                int(data["pid"]))  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not copy.path.is_file() or _alive(copy.pid):
            continue
        copies.append(copy)
    return sorted(copies, key=lambda c: c.saved_at, reverse=True)


def _remove(*paths: Path) -> None:
    for path in paths:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.warning("could not delete %s: %s", path, exc)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # this process's own copies are not left behind
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


class Autosave(QObject):
    """Writes and removes the recovery copy of one window's project."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 settings: QSettings) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions = shell, projects, sessions
        self.settings = settings
        token = f"{os.getpid()}-{secrets.token_hex(4)}"
        folder = recovery_folder(settings)
        self.path = folder / f"{token}{SUFFIX}"
        self.note = folder / f"{token}.json"
        self.written = 0  # copies written (tests)
        self._dirty = False  # changed since the last copy
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.set_interval(interval_setting(settings))
        projects.stack_changed.connect(self._on_projects_stack_changed)
        projects.project_changed.connect(self._on_window_project_changed)
        projects.unsaved_changed.connect(self._on_projects_unsaved_changed)
        projects.after_save.append(self._after_save)
        sessions.run_starting.connect(self.write_now)  # on the way into training
        shell.closing.connect(self._on_window_closing)
        self._on_projects_stack_changed(projects.undo_stack)

    def set_interval(self, seconds: int) -> None:
        """Write a copy every `seconds` (0: never on a timer)."""
        self._timer.stop()
        if seconds > 0:
            self._timer.setInterval(int(seconds * 1000))
            self._timer.start()

    def changed(self) -> None:
        """The project changed (an edit, or training moved the weights)."""
        self._dirty = True

    def write_now(self) -> bool:
        """Write the copy if there are unsaved changes not in it yet; True if written."""
        projects = self.projects
        if not (self._dirty and projects.unsaved) or projects.project is None:
            return False
        if self.sessions.status in (RUNNING, STOPPING):
            return False  # the training thread writes the project when the run ends
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            project_files.save(projects.project, self.path)
            original = projects.path
            note = {"original": str(original) if original else None,
                    "name": projects.name, "saved_at": time.time(),
                    "pid": os.getpid()}  # fmt: skip
            partial = self.note.with_suffix(".json.part")
            partial.write_text(json.dumps(note), encoding="utf-8")
            os.replace(partial, self.note)
        except Exception as exc:  # never in the user's way: say so and go on
            log.warning("autosave failed: %s", exc)
            self.shell.show_message(f"Autosave failed: {exc}", 8000)
            return False
        self._dirty = False
        self.written += 1
        return True

    def discard(self) -> None:
        """Delete this window's copy (the work is saved, or the user let it go)."""
        _remove(self.path, self.note)
        self._dirty = False

    # ---- slots -------------------------------------------------------------------------------

    def _on_timer_timeout(self) -> None:
        self.write_now()

    def _after_save(self) -> None:
        if not self.projects.unsaved:
            self.discard()

    def _on_window_closing(self) -> None:
        self._timer.stop()
        self.discard()  # the user saved, or agreed to lose the changes

    def _on_window_project_changed(self, project: object) -> None:
        self.discard()  # a new or opened project: the old one was saved or let go

    def _on_projects_stack_changed(self, stack) -> None:
        stack.indexChanged.connect(self._on_stack_index_changed)

    def _on_projects_unsaved_changed(self, unsaved: bool) -> None:
        if unsaved:  # also training, which is no undo step
            self.changed()

    def _on_stack_index_changed(self, index: int) -> None:
        self.changed()


def offer_recovery(window: RestoresRecovery, settings: QSettings,
                   ask: Callable[[RecoveryCopy, bool], str] | None = None) -> RecoveryCopy | None:
    """Offer each copy a crashed session left: Restore one, Discard, or Keep for later.

    `ask(copy, can_restore)` answers 'restore', 'discard' or 'keep' (default: a dialog).
    Returns the copy restored into `window` (opened as unsaved changes to its file).
    """
    ask = ask or _ask
    restored = None
    for copy in left_behind(settings):
        answer = ask(copy, restored is None)
        if answer == "restore" and restored is None:
            if window.restore_recovery(copy.path, copy.original, copy.when):
                copy.delete()
                restored = copy
        elif answer == "discard":
            copy.delete()
    return restored


def _ask(copy: RecoveryCopy, can_restore: bool) -> str:
    where = copy.original or "a project never saved"
    box = QMessageBox(QMessageBox.Icon.Question, "Recover unsaved work",
                      f"Cellwright closed without saving changes to “{copy.name}”.")  # fmt: skip
    box.setObjectName("recovery_dialog")
    box.setInformativeText(f"File: {where}\nAutosaved: {copy.when}\n\n"
                           + ("Restore them?" if can_restore else
                              "Another copy is restored now; keep this one for later?"))
    answers = {}
    if can_restore:
        answers[box.addButton("Restore", QMessageBox.ButtonRole.AcceptRole)] = "restore"
    answers[box.addButton("Discard", QMessageBox.ButtonRole.DestructiveRole)] = "discard"
    answers[box.addButton("Keep for Later", QMessageBox.ButtonRole.RejectRole)] = "keep"
    box.exec()
    return answers.get(box.clickedButton(), "keep")
