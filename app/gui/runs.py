"""The Runs dock: the project's run history in a sortable table, overlaid in the Plots area.

The table (widgets.runs_table) follows the project's RunsChanged events, redrawing only
the rows they name; nothing is done per training step. Selecting runs draws their curves
over the training curves (widgets.plots.run_overlay). What the table asks for is done
here: restoring a run's weights, deleting and renaming runs go through the undo stack
(app.undo.runs); a run's colour, keeping its weights and the history's size cap change
the project outside it, so the project is marked unsaved for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QColorDialog, QMessageBox

from app.document import DocumentError, Project, RunHistory, RunsChanged
from app.session import RUNNING, STOPPING
from app.undo.commands import perform
from app.undo.runs import DeleteRunsCommand, RenameRunCommand, RestoreWeightsCommand, restorable
from widgets.plots.run_overlay import RunOverlay
from widgets.runs_table import RunsTable

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.run import RunController
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell

MESSAGE_MS = 10_000
TRAINING = "Training is running: pause or stop it to restore a run's weights."


class RunsController(QObject):
    """The Runs dock of one main window (View → Runs), and the overlay of selected runs."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 run: RunController) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions, self.run = shell, projects, sessions, run
        self.view = RunsTable()
        # Beside the Plots once shown (View → Runs): out of the default layout until then.
        self.dock = shell.add_dock_when_shown("Runs", "runs_dock", self.view,
                                              beside="plots_dock")  # fmt: skip
        self.overlay = RunOverlay(run.curves)
        self._subscription = None
        self.view.selection_changed.connect(self._on_view_selection_changed)
        self.view.restore_requested.connect(self.restore)
        self.view.delete_requested.connect(self.delete)
        self.view.rename_requested.connect(self.rename)
        self.view.colour_requested.connect(self._on_view_colour_requested)
        self.view.keep_requested.connect(self.set_keep)
        self.view.cap_changed.connect(self.set_cap)
        projects.project_changed.connect(self._on_projects_project_changed)
        shell.closing.connect(self._on_window_closing)
        self._on_projects_project_changed(projects.project)

    @property
    def history(self) -> RunHistory | None:
        project = self.projects.project
        return project.runs if isinstance(project, Project) else None

    def _say(self, text: str) -> None:
        self.shell.show_message(text, MESSAGE_MS)

    # ---- what the table asks for -----------------------------------------------------------

    def restore(self, run_id: str) -> bool:
        """Put the run's kept weights into the network, one undo step; True if done."""
        project, record = self.projects.project, self._record(run_id)
        if record is None:
            return False
        if self.run.status in (RUNNING, STOPPING):
            self._say(TRAINING)
            return False
        try:
            fits, misfits = restorable(project, record)
        except DocumentError as exc:
            self._say(str(exc))
            return False
        problem = perform(self.projects.undo_stack, RestoreWeightsCommand(project, record))
        if problem:
            self._say(problem if not misfits else f"{problem} ({'; '.join(misfits)})")
            return False
        count = sum(len(arrays) for arrays in fits.values())
        text = f"Restored the weights of {record.name} ({count} Parameter{_s(count)})."
        if misfits:
            text += (f" {len(misfits)} did not fit the network as it is now and were left as "
                     f"they are: {'; '.join(misfits)}.")  # fmt: skip
        self._say(text)
        return True

    def delete(self, run_ids: list[str]) -> bool:
        """Delete these runs, one undo step."""
        project = self.projects.project
        if not run_ids or not isinstance(project, Project):
            return False
        problem = perform(self.projects.undo_stack, DeleteRunsCommand(project, run_ids))
        if problem:
            self._say(problem)
            return False
        count = len(run_ids)
        self._say(f"Deleted {count} run{_s(count)}: Undo brings {'it' if count == 1 else 'them'}"
                  " back.")  # fmt: skip
        return True

    def rename(self, run_id: str, name: str) -> bool:
        project = self.projects.project
        if self._record(run_id) is None:
            return False
        problem = perform(self.projects.undo_stack, RenameRunCommand(project, run_id, name))
        if problem:
            self._say(problem)
            return False
        return True

    def set_colour(self, run_id: str, colour: str) -> bool:
        history = self.history
        if history is None or self._record(run_id) is None:
            return False
        try:
            old = history.set_colour(run_id, colour)
        except DocumentError as exc:
            self._say(str(exc))
            return False
        if old != history.get(run_id).colour:
            self.projects.mark_unsaved()
        return True

    def set_keep(self, run_id: str, keep: bool) -> bool:
        """Keep a run's weights whatever comes (keep), or let them go, once the user agrees
        (for good: they can't be had back)."""
        history, record = self.history, self._record(run_id)
        if history is None or record is None:
            return False
        if not keep and record.kept:
            answer = QMessageBox.question(
                self.shell.window, "Let the weights go",
                f"Let the weights of {record.name} go? They can't be restored afterwards, "
                "nor kept again.")  # fmt: skip
            if answer != QMessageBox.StandardButton.Yes:
                self.view.follow(RunsChanged("changed", (run_id,)))  # the box as it was
                return False
        try:
            history.set_keep(run_id, keep)
        except DocumentError as exc:
            self._say(str(exc))
            return False
        self.projects.mark_unsaved()
        self._say(f"The weights of {record.name} are kept." if keep
                  else f"Let the weights of {record.name} go.")  # fmt: skip
        return True

    def set_cap(self, cap_mb: float) -> list:
        """Cap the history's size; the runs that drops (after the user agrees to drop any)."""
        history = self.history
        if history is None or cap_mb == history.cap_mb:
            return []
        try:  # what the cap would drop, found on a copy of the list (the runs stay as they are)
            would_drop = RunHistory(history.records, cap_mb=cap_mb).trim()
        except DocumentError as exc:
            self._say(str(exc))
            return []
        if would_drop:
            names = ", ".join(r.name for r in would_drop)
            answer = QMessageBox.question(
                self.shell.window, "Drop runs",
                f"Keeping up to {cap_mb:g} MB of runs drops the {len(would_drop)} oldest "
                f"run{_s(len(would_drop))} that are neither named nor the best: {names}. "
                "Drop them? This can't be undone.")  # fmt: skip
            if answer != QMessageBox.StandardButton.Yes:
                self.view.set_cap(history.cap_mb)
                return []
        try:
            dropped = history.set_cap(cap_mb)
        except DocumentError as exc:
            self._say(str(exc))
            self.view.set_cap(history.cap_mb)
            return []
        self.projects.mark_unsaved()
        size = history.size_bytes() / (1 << 20)
        text = f"The run history keeps up to {cap_mb:g} MB ({size:.2f} MB now)"
        if dropped:
            text += f"; dropped {len(dropped)} run{_s(len(dropped))}: " + ", ".join(
                r.name for r in dropped)  # fmt: skip
        self._say(text + ".")
        return dropped

    def _record(self, run_id: str):
        history = self.history
        record = history.get(run_id) if history is not None else None
        if record is None:
            self._say("That run is no longer in the history.")
        return record

    # ---- the overlay -----------------------------------------------------------------------

    def _show_selected(self) -> None:
        history = self.history
        ids = self.view.selected_ids()
        records = [history.get(i) for i in ids] if history is not None else []
        self.overlay.show_runs([r for r in records if r is not None])

    # ---- slots -----------------------------------------------------------------------------

    def _on_view_selection_changed(self, _ids: list) -> None:
        self._show_selected()

    def _on_view_colour_requested(self, run_id: str) -> None:
        record = self._record(run_id)
        if record is None:
            return
        colour = QColorDialog.getColor(QColor(record.colour), self.shell.window,
                                       f"Colour of {record.name}")  # fmt: skip
        if colour.isValid():
            self.set_colour(run_id, colour.name())

    def _on_project_event(self, event: object) -> None:
        if not isinstance(event, RunsChanged):
            return
        self.view.follow(event)  # a selected run removed: the selection signal redraws
        if event.what == "changed" and set(event.ids) & set(self.view.selected_ids()):
            self._show_selected()  # renamed or recoloured

    def _on_projects_project_changed(self, project: object) -> None:
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        self.overlay.clear()
        if isinstance(project, Project):
            self._subscription = project.events.subscribe(self._on_project_event)
            self.view.set_history(project.runs)
        else:
            self.view.set_history(None)

    def _on_window_closing(self) -> None:
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None


def _s(count: int) -> str:
    return "" if count == 1 else "s"
