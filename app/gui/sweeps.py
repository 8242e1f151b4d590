"""Run → Sweep…: set up a sweep, run its queue in the background, and see its results."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.run import RunController
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell


class SweepController(QObject):
    """The Run menu's Sweep… action, the sweep's queue and its results view."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 run: RunController) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions, self.run = shell, projects, sessions, run
