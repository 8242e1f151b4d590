"""Run → Find Learning Rate…: the finder on a worker thread, its plot, and "Use this rate".

The search trains a copy of the project (made here, on the GUI thread, so the worker never
reads the document) in its own `threading.Thread`; the thread only appends each step's
rate and loss to lists and sets `done`. A QTimer on the GUI thread polls the job and draws
(no Qt call from the thread). Stop, closing the dialog or another project ask the job to
stop after its current step. The data set the Run panel has already read is used as it is.
"Use this rate" sets `learning_rate` as one undo step (TrainingSettingCommand); a refusal
(an edit lock while training runs) is shown in the dialog and nothing changes.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import shiboken6
from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction

from app.datasets import Dataset
from app.document import Project
from app.runs.copying import copy_project
from app.runs.lr_finder import LRFinderError, LRFinding, find_learning_rate, smooth
from app.undo.commands import TrainingSettingCommand, perform
from widgets.lr_finder_view import LRFinderView

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.run import RunController
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell

log = logging.getLogger(__name__)
POLL_MS = 50


@dataclass
class LRFinderJob:
    """One search on its worker thread; the thread writes `rates`/`losses` as it goes, then
    `finding` or `error`, then sets `done`."""

    project: Project  # a copy: the thread never reads the window's document
    folder: Path | None
    dataset: Dataset | None
    start: float
    end: float
    steps: int
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    rates: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    finding: LRFinding | None = None
    error: str = ""
    thread: threading.Thread | None = None

    def start_thread(self) -> None:
        self.thread = threading.Thread(target=self._work, name="cellwright-lr-finder",
                                       daemon=True)  # fmt: skip
        self.thread.start()

    def _work(self) -> None:
        try:
            self.finding = find_learning_rate(
                self.project, folder=self.folder, dataset=self.dataset, start=self.start,
                end=self.end, steps=self.steps, should_stop=self.stop.is_set,
                progress=self._on_step)  # fmt: skip
        except LRFinderError as exc:
            self.error = str(exc)
        except Exception as exc:  # a bug, or a network that fails on this data: say so
            log.exception("the learning-rate finder failed")
            self.error = f"The search failed: {type(exc).__name__}: {exc}"
        finally:
            self.done.set()

    def _on_step(self, step: int, rate: float, loss: float) -> None:
        self.losses.append(loss)  # the loss first: `rates` is read as the count
        self.rates.append(rate)

    def curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rates, losses, smoothed) of the steps taken so far (any thread)."""
        count = len(self.rates)
        losses = np.asarray(self.losses[:count], dtype=np.float64)
        return np.asarray(self.rates[:count], dtype=np.float64), losses, smooth(losses)


class LRFinderController(QObject):
    """The Run menu's Find Learning Rate… action and its dialog."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 run: RunController) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions, self.run = shell, projects, sessions, run
        self.view: LRFinderView | None = None
        self.job: LRFinderJob | None = None
        self._drawn = -1  # steps of the job drawn so far
        self.action = QAction("Find &Learning Rate…", shell.window)
        self.action.setObjectName("find_lr_action")
        self.action.setStatusTip("Train a copy of the network with a growing learning rate "
                                 "and suggest a rate; the weights are not touched.")
        self.action.triggered.connect(self._on_action_triggered)
        menu = shell.menu("run_menu")
        if menu is not None:
            menu.addSeparator()
            menu.addAction(self.action)
        self.timer = QTimer(self)
        self.timer.setInterval(POLL_MS)
        self.timer.timeout.connect(self._on_timer_timeout)
        projects.project_changed.connect(self._on_projects_project_changed)

    # ---- the dialog ----------------------------------------------------------------------------

    def open_dialog(self) -> LRFinderView:
        if self.view is None or not shiboken6.isValid(self.view):
            view = LRFinderView(self.shell.window)
            view.find_clicked.connect(self.find)
            view.stop_clicked.connect(self.stop)
            view.use_clicked.connect(self.use_rate)
            view.closed.connect(self.stop)
            # Ctrl+Z / Ctrl+Shift+Z work in the dialog too: "Use this rate" is undone there
            view.addActions([action for action in (self.shell.action("undo_action"),
                                                   self.shell.action("redo_action")) if action])
            self.view = view
        self.view.show()
        self.view.raise_()
        self.view.activateWindow()
        return self.view

    def find(self, start: float, end: float, steps: int) -> None:
        """Start a search on a copy of the project as it is now."""
        view = self.view
        if view is None or (self.job is not None and not self.job.done.is_set()):
            return
        project, folder = self.projects.project, self._folder()
        dataset = self.run.panel.already_read(project.training.get("dataset"), folder)
        try:
            copy = copy_project(project)
        except Exception as exc:  # a bug: say so, keep the window
            log.exception("copying the project for the learning-rate finder failed")
            view.show_error(f"The project can't be copied: {type(exc).__name__}: {exc}")
            return
        self.job = LRFinderJob(copy, folder, dataset, start, end, steps)
        self._drawn = -1
        view.start_search(steps)
        self.job.start_thread()
        self.timer.start()

    def stop(self) -> None:
        """Ask the search to end after its current step (what it found so far is kept)."""
        if self.job is not None and not self.job.done.is_set():
            self.job.stop.set()
            if self.view is not None and shiboken6.isValid(self.view):
                self.view.show_message("Stopping after this step…")

    def use_rate(self, rate: float) -> None:
        """Set `rate` as the project's learning rate: one undo step, or the refusal shown."""
        view, project = self.view, self.projects.project
        if view is None:
            return
        if project.training.get("learning_rate") == rate:
            view.show_message(f"The learning rate is {rate:.3g} already.")
            return
        problem = perform(self.projects.undo_stack,
                          TrainingSettingCommand(project, "learning_rate", rate))  # fmt: skip
        if problem:
            view.show_error(f"The learning rate was not changed: {problem}")
            return
        text = f"Learning rate set to {rate:.3g} (Edit → Undo puts the old one back)."
        view.show_message(text)
        self.shell.show_message(text, 5000)

    def _folder(self) -> Path | None:
        path = self.projects.path
        return path.parent if path is not None else None

    # ---- slots ---------------------------------------------------------------------------------

    def _on_action_triggered(self) -> None:
        self.open_dialog()

    def _on_timer_timeout(self) -> None:
        job, view = self.job, self.view
        if job is None or view is None or not shiboken6.isValid(view):
            self.timer.stop()
            return
        done = job.done.is_set()  # before reading: a finished job's lists are whole
        if len(job.rates) != self._drawn and not done:
            rates, losses, smoothed = job.curve()
            self._drawn = len(rates)
            view.show_progress(rates, losses, smoothed)
        if not done:
            return
        self.timer.stop()
        if job.finding is not None:
            current = self.projects.project.training.get("learning_rate")
            number = isinstance(current, int | float) and not isinstance(current, bool)
            view.show_finding(job.finding, float(current) if number else None)
        else:
            view.set_running(False)
            view.show_error(job.error or "The search ended without a result.")

    def _on_projects_project_changed(self, project: object) -> None:
        self.stop()
        self.job = None
        self.timer.stop()
        if self.view is not None and shiboken6.isValid(self.view):
            self.view.close()

