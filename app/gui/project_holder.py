"""The open project of one window: the document, where it is saved, its undo stack and
whether there is unsaved work; New, Open, Save and Close. No dialogs: the window asks.

Views follow it through two signals: `stack_changed` (a new undo stack, emitted first)
and `project_changed` (a new document). `unsaved_changed` says when the unsaved state may
have changed: an edit, an undo back to the saved state, training, a save.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoGroup

from app.gui import project_files
from app.undo.commands import DocumentStack


class ProjectHolder(QObject):
    """The current project and its undo stack; every edit of the document goes through it."""

    stack_changed = Signal(object)  # the new DocumentStack (before project_changed)
    project_changed = Signal(object)  # the new project, after New/Open/Close
    unsaved_changed = Signal(bool)  # `unsaved`, whenever it may have changed

    def __init__(self, project: Any = None, path: Path | None = None,
                 parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.undo_group = QUndoGroup(self)  # the Edit menu's Undo and Redo follow it
        self._project: Any = None
        self._path: Path | None = None
        self._stack: DocumentStack | None = None
        self._unsaved_training = False  # trained since the last save (not an undo step)
        # Called around every save: views with state outside the document put it in first.
        self.before_save: list[Callable[[], None]] = []
        self.after_save: list[Callable[[], None]] = []
        self.replace(project, path)

    # ---- what is open --------------------------------------------------------------------

    @property
    def project(self) -> Any:
        return self._project

    @property
    def path(self) -> Path | None:
        """Where the project is saved; None for a project never saved (or an example)."""
        return self._path

    @property
    def undo_stack(self) -> DocumentStack:
        assert self._stack is not None
        return self._stack

    @property
    def name(self) -> str:
        if self._path is not None:
            return self._path.stem
        return str(getattr(self._project, "name", "") or "Untitled")

    @property
    def unsaved(self) -> bool:
        """Edits or training since the last save (or since New/Open)."""
        return self._unsaved_training or not self.undo_stack.isClean()

    def mark_unsaved(self) -> None:
        """The project changed outside the undo stack (training): Save has something to keep."""
        self._unsaved_training = True
        self.unsaved_changed.emit(True)

    def set_edit_lock(self, reason: str | None) -> None:
        """Refuse edits that change the network (and undo/redo) with `reason`; None lifts it."""
        stack = self.undo_stack
        stack.lock_reason = reason or None
        self.undo_group.setActiveStack(None if reason else stack)

    # ---- New, Open, Save, Close ----------------------------------------------------------

    def replace(self, project: Any, path: Path | None) -> None:
        """Make `project` current (saved at `path`) with a fresh, clean undo stack."""
        old = self._stack
        stack = DocumentStack(self)
        stack.setObjectName("undo_stack")
        self.undo_group.addStack(stack)
        self.undo_group.setActiveStack(stack)
        stack.cleanChanged.connect(self._on_stack_clean_changed)
        self._stack = stack
        if old is not None:
            self.undo_group.removeStack(old)
            old.deleteLater()
        self._project = project
        self._path = path
        self._unsaved_training = False
        self.stack_changed.emit(stack)
        self.project_changed.emit(project)
        self.unsaved_changed.emit(False)

    def new(self) -> None:
        """An empty, untitled project."""
        self.replace(project_files.new_project(), None)

    def close(self) -> None:
        """Close the project: an empty one takes its place (the window never stays empty)."""
        self.new()

    def open(self, path: str | os.PathLike[str], *, as_copy: bool = False) -> Path:
        """Open `path` (as an untitled copy if `as_copy`); its absolute path.
        Raises ProjectAccessError and changes nothing if it can't be read."""
        project = project_files.load(path)
        absolute = Path(path).expanduser().absolute()
        self.replace(project, None if as_copy else absolute)
        return absolute

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save to `path` (which becomes the project's); the path written. Raises
        ProjectAccessError and keeps everything as it was on failure."""
        try:
            for hook in self.before_save:
                hook()
            saved = project_files.save(self._project, path).absolute()
            self._path = saved
            self._unsaved_training = False
            self.undo_stack.setClean()
            self.unsaved_changed.emit(self.unsaved)
            return saved
        finally:  # after the clean mark: a run that goes on may mark the project again
            for hook in self.after_save:
                hook()

    # ---- slots ---------------------------------------------------------------------------

    def _on_stack_clean_changed(self, clean: bool) -> None:
        self.unsaved_changed.emit(self.unsaved)
