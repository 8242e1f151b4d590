"""Run → Find Learning Rate…: the finder on a worker thread, its plot, and "Use this rate"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.run import RunController
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell


class LRFinderController(QObject):
    """The Run menu's Find Learning Rate… action and its dialog."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 run: RunController) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions, self.run = shell, projects, sessions, run
