"""The "Data edits" dock: the project's relabelled and excluded samples (DataEditsTable),
tabbed with the Evaluation dock.

It follows the window's project and undo stack (File → Open, New), names classes as the
session's data set does, and shows what the session could not apply (`edits_note`, e.g.
edits naming files that are gone). Remove and Clear all are undo steps of that stack; a
refusal shows in the status bar.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject

from app.document import Project
from widgets.data_edits_table import DataEditsTable

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell

log = logging.getLogger(__name__)


class DataEditsController(QObject):
    """The Data edits dock of one main window."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder) -> None:
        super().__init__(shell)
        self.shell, self.projects, self.sessions = shell, projects, sessions
        project = projects.project
        self.table = DataEditsTable(project if isinstance(project, Project) else Project(),
                                    projects.undo_stack)  # fmt: skip
        self.table.setObjectName("data_edits_table")
        self.dock = shell.add_dock_when_shown("Data edits", "data_edits_dock", self.table,
                                              tab_with="evaluation_dock")  # fmt: skip
        self.table.refused.connect(lambda text: shell.show_message(text, 8000))
        projects.project_changed.connect(self._on_projects_project_changed)
        sessions.changed.connect(self._on_sessions_changed)
        self._on_sessions_changed()

    def _on_projects_project_changed(self, project: object) -> None:
        try:
            if isinstance(project, Project):
                self.table.set_project(project, self.projects.undo_stack)
                self.table.setEnabled(True)
            else:  # a document that is not a project has no data to edit
                self.table.set_project(Project(), self.projects.undo_stack)
                self.table.setEnabled(False)
            self._on_sessions_changed()
        except Exception:
            log.exception("following the project in the Data edits table failed")

    def _on_sessions_changed(self) -> None:
        session = self.sessions.session
        try:
            if session is None or session.project is not self.projects.project:
                self.table.set_note("")  # (the class names of the last data set stay)
                return
            self.table.set_class_names(tuple(session.dataset.class_names or ()))
            self.table.set_note(session.edits_note)
        except Exception:
            log.exception("updating the Data edits table failed")
