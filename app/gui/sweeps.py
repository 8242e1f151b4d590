"""Run → Sweep…: set up a sweep, run its queue in the background, and see its results.

The dialog (widgets.sweep_dialog) makes a SweepSpec; Start makes the project's Sweep
(app.runs.sweep, its queue state in `project.runs.sweep`) and a SweepWorker trains its runs
one after another on a worker thread, from a copy of the project taken here, on the GUI
thread, when the queue starts (the thread never reads the window's document, and edits
made meanwhile don't change the runs still to come). A QTimer on the GUI thread takes each
finished run from the worker and records it (`sweep.record`: the project's run history),
shows the queue's progress and redraws the results: the Sweep dock (widgets.sweep_results,
placed beside the Plots when first shown), with Stop, the parallel coordinates and
"Apply the best run's settings" (one undo step, app.undo.runs.ApplySettingsCommand).

A project opened with a sweep left unfinished says so in the status line and offers
Resume in the dock; it resumes only when asked. Closing the window or the project stops
the queue after its current step and waits for it.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QAction

from app.document import Project, RunsChanged
from app.document.runs import METRICS
from app.runs.copying import copy_project
from app.runs.sweep import Sweep, SweepError, SweepWorker
from app.runs.sweep_spec import SweepSpec, SweepSpecError
from app.runs.sweep_values import SETTINGS, apply_trial, node_axes, node_paths
from app.undo.commands import perform
from app.undo.runs import ApplySettingsCommand
from widgets.plots.parallel_coords import PCAxis
from widgets.sweep_dialog import SweepChoices, SweepDialog
from widgets.sweep_results import SweepResults, SweepRow

if TYPE_CHECKING:
    from pathlib import Path

    from app.gui.project_holder import ProjectHolder
    from app.gui.run import RunController
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell

log = logging.getLogger(__name__)

POLL_MS = 100  # how often the GUI takes finished runs and shows the queue's progress
WAIT_SECONDS = 30.0  # for the worker to end its current step after Stop
TRAINING_KEYS = ("optimizer", "optimizer_options", "learning_rate", "batch_size", "epochs")
LOG_SPAN = 100.0  # a list of positive values spanning this factor is drawn on a log axis


class SweepController(QObject):
    """The Run menu's Sweep… action, the sweep's queue and its results view."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 run: RunController) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions, self.run = shell, projects, sessions, run
        self.view = SweepResults()
        self.dock = shell.add_dock_when_shown("Sweep", "sweep_dock", self.view,
                                              beside="plots_dock")  # fmt: skip
        self.action = QAction("S&weep…", shell.window)
        self.action.setObjectName("sweep_action")
        self.action.setStatusTip("Train the network with several settings, one run after "
                                 "another, and compare the runs")  # fmt: skip
        self.action.triggered.connect(self._on_action_triggered)
        menu = shell.menu("run_menu")
        if menu is not None:
            menu.addSeparator()  # (collapsed with one just before it)
            menu.addAction(self.action)
        self.dialog: SweepDialog | None = None
        self.sweep: Sweep | None = None  # the project's sweep (running, or shown)
        self.worker: SweepWorker | None = None
        self._stopping = False
        self._subscription = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.view.stop_requested.connect(lambda: self._guarded(self.stop))
        self.view.resume_requested.connect(lambda: self._guarded(self.resume))
        self.view.apply_requested.connect(lambda run_id: self._guarded(self.apply_best, run_id))
        projects.project_changed.connect(self._on_project_changed)
        shell.closing.connect(self._on_window_closing)
        self._on_project_changed(projects.project)

    # ---- state -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.worker is not None

    def _folder(self) -> Path | None:
        path = self.projects.path
        return path.parent if path is not None else None

    # ---- the dialog --------------------------------------------------------------------------

    def open_dialog(self) -> SweepDialog | None:
        """Run → Sweep…: the dialog (None while a sweep runs: the dock shows it instead)."""
        project = self.projects.project
        if not isinstance(project, Project):
            self.shell.show_message("There is no network to sweep.", 8000)
            return None
        if self.running:
            self._show_dock()
            self.shell.show_message("A sweep is running: stop it before setting up another.",
                                    8000)  # fmt: skip
            return None
        if self.dialog is not None and shiboken6.isValid(self.dialog):
            self.dialog.close()
        dialog = SweepDialog(self._choices(project), self.shell.window)
        dialog.accepted.connect(lambda d=dialog: self._on_dialog_accepted(d))
        dialog.finished.connect(dialog.deleteLater)
        self.dialog = dialog
        dialog.open()
        return dialog

    def _choices(self, project: Project) -> SweepChoices:
        training = project.training
        options = training.get("optimizer_options") or {}
        current = {key: training.get(key, SETTINGS[key][3]) for key in SETTINGS
                   if key != "weight_decay"}  # fmt: skip
        current["weight_decay"] = options.get("weight_decay", SETTINGS["weight_decay"][3])
        nodes: dict[str, dict[str, Any]] = {}
        paths = node_paths(project.graph)
        for name in node_axes(project):
            path, _, param = name.rpartition(".")
            nodes.setdefault(path, {})[param] = paths[path][1].params.get(param)
        note = ""
        pending = self._unfinished(project)
        if pending:
            note = (f"This project has an unfinished sweep ({pending}); starting a new one "
                    "replaces it (its runs stay in the history).")  # fmt: skip
        return SweepChoices(current=current, nodes=nodes, epochs=current["epochs"],
                            count=lambda spec: len(spec.trials(project)), note=note)  # fmt: skip

    def _on_dialog_accepted(self, dialog: SweepDialog) -> None:
        if dialog.spec is not None:
            self._guarded(self.start, dialog.spec)

    def _guarded(self, slot, *args: Any) -> None:
        try:
            slot(*args)
        except Exception as exc:  # a bug in a button must not take the window down
            log.exception("sweep action failed")
            self.shell.report_error("Sweep", exc)

    # ---- the queue ---------------------------------------------------------------------------

    def start(self, spec: SweepSpec) -> bool:
        """A new sweep on the project, trained in the background; False (said why) if not."""
        project = self.projects.project
        if self.running:
            self.shell.show_message("A sweep is running already.", 8000)
            return False
        try:
            sweep = Sweep.start(project, spec, folder=self._folder())
        except (SweepSpecError, SweepError) as exc:
            self._say(f"The sweep can't start: {exc}", error=True)
            return False
        self.projects.mark_unsaved()  # the queue's state is in the project
        self._launch(sweep)
        return True

    def resume(self) -> bool:
        """Go on with the project's unfinished sweep."""
        project = self.projects.project
        if self.running or not isinstance(project, Project):
            return False
        try:
            sweep = Sweep.resume(project, folder=self._folder())
        except SweepError as exc:
            self._say(f"The sweep can't resume: {exc}", error=True)
            return False
        if not sweep.pending():
            self._say("Every run of this sweep is done.")
            return False
        self._launch(sweep)
        return True

    def stop(self) -> None:
        """End the queue after the current step; the runs done are kept."""
        if self.worker is None:
            return
        self.worker.stop()
        self._stopping = True
        self.view.show_queue("Stopping after the current step…", running=True)
        self.view.stop_button.setEnabled(False)

    def _launch(self, sweep: Sweep) -> None:
        project = self.projects.project
        folder = self._folder()
        dataset = self.run.panel.already_read(project.training.get("dataset"), folder)
        sweep.mark("running")
        self.sweep = sweep
        self.worker = SweepWorker(sweep, dataset=dataset)  # it copies the project, here
        self._stopping = False
        done = sweep.total - len(sweep.pending())
        self.view.show_message("")
        self.view.show_queue(f"Run {done + 1} of {sweep.total}", running=True)
        self._show_results()
        self._show_dock()
        self.worker.start()
        self._timer.start()
        self.shell.show_message(f"Sweep: {len(sweep.pending())} runs to train.", 5000)

    def _take(self) -> None:
        """On the GUI thread: record the runs the worker finished and show where it is."""
        worker, sweep = self.worker, self.sweep
        if worker is None or sweep is None:
            return
        ended = worker.done.is_set()  # before taking: a run finished after is taken next time
        records = worker.take()
        for record in records:
            sweep.record(record)
        if records:
            self.projects.mark_unsaved()
            self._show_results()
        if ended:
            self._finish()
        elif worker.progress is not None and not self._stopping:
            self.view.show_progress(*worker.progress)

    def _finish(self) -> None:
        worker, sweep = self.worker, self.sweep
        self.worker = None
        self._timer.stop()
        if worker is None or sweep is None:
            return
        worker.join(WAIT_SECONDS)
        if sweep.pending():
            sweep.mark("stopped")
        if sweep.project is not self.projects.project:
            return  # a project the window has left (closed or replaced)
        self.projects.mark_unsaved()
        self._show_queue_state()
        self._show_results()
        done, total = sweep.total - len(sweep.pending()), sweep.total
        if worker.error:
            self._say(worker.error, error=True)
        elif sweep.pending():
            self.shell.show_message(f"Sweep stopped with {done} of {total} runs done.", 8000)
        else:
            self.shell.show_message(f"Sweep finished: {total} runs.", 8000)

    def _stop_and_wait(self) -> None:
        worker = self.worker
        if worker is None:
            return
        worker.stop()
        worker.join(WAIT_SECONDS)
        if worker.is_alive():
            log.warning("the sweep's worker did not stop in time")
        self._finish()

    # ---- results -----------------------------------------------------------------------------

    def _show_queue_state(self) -> None:
        sweep = self.sweep
        if sweep is None:
            self.view.show_queue("No sweep yet: Run → Sweep… sets one up.", running=False)
            return
        done, total = sweep.total - len(sweep.pending()), sweep.total
        if not sweep.pending():
            self.view.show_queue(f"Finished: {total} runs.", running=False)
        else:
            self.view.show_queue(f"Stopped with {done} of {total} runs done.", running=False,
                                 resume=f"Resume ({done} of {total} done)")  # fmt: skip

    def _show_results(self) -> None:
        sweep = self.sweep
        if sweep is None:
            self.view.show_results([], [], None)
            return
        records = sweep.records()
        metric = sweep.metric
        title, higher = METRICS.get(metric, (metric, False))
        axes = [_axis(a, [(r.sweep or {}).get("values", {}).get(a.name) for r in records])
                for a in sweep.spec.axes]  # fmt: skip
        axes.append(PCAxis(metric, title, higher_better=higher))
        rows = [SweepRow(r.id, r.name, dict((r.sweep or {}).get("values", {})),
                         r.metric(metric), r.status) for r in records]  # fmt: skip
        best = sweep.best()
        self.view.show_results(axes, rows, best.id if best is not None else None)

    def _show_dock(self) -> None:
        self.dock.show()
        self.dock.raise_()

    def _say(self, text: str, *, error: bool = False) -> None:
        self.view.show_message(text, error=error)
        self.shell.show_message(text, 15000 if error else 8000)

    # ---- applying the best run ---------------------------------------------------------------

    def apply_best(self, run_id: str | None = None) -> str | None:
        """Set the swept values of a run (the best by default) in the project, as one undo
        step; the refusal (shown) or None."""
        project = self.projects.project
        sweep = self.sweep
        record = project.runs.get(run_id) if run_id else (sweep.best() if sweep else None)
        if record is None or not record.sweep:
            problem = "That run is no longer in the history."
            self._say(problem, error=True)
            return problem
        try:
            settings, params = settings_of(project, record.sweep.get("values", {}))
        except ValueError as exc:
            problem = f"The settings of {record.name} can't be applied: {exc}"
            self._say(problem, error=True)
            return problem
        if not settings and not params:
            self._say(f"The project already has the settings of {record.name}.")
            return None
        command = ApplySettingsCommand(project, settings, params,
                                       text=f"Apply the settings of {record.name}")  # fmt: skip
        problem = perform(self.projects.undo_stack, command)
        if problem:
            self._say(problem, error=True)
            return problem
        self._say(f"Applied the settings of {record.name} (Undo puts them back).")
        return None

    # ---- slots -------------------------------------------------------------------------------

    def _on_action_triggered(self) -> None:
        self._guarded(self.open_dialog)

    def _on_timer_timeout(self) -> None:
        try:
            self._take()
        except Exception as exc:  # a timer must never raise into Qt's event loop
            log.exception("taking the sweep's runs failed")
            if self.worker is not None:
                self.worker.stop()
            self._say(f"The sweep failed: {type(exc).__name__}: {exc}", error=True)

    def _on_project_event(self, event: object) -> None:
        if (isinstance(event, RunsChanged) and event.what in ("removed", "changed", "added")
                and self.sweep is not None and self.worker is None
                and shiboken6.isValid(self.view)):  # fmt: skip
            self._show_results()  # a run deleted, renamed or given back by an undo

    def _on_project_changed(self, project: object) -> None:
        self._stop_and_wait()
        if self.dialog is not None and shiboken6.isValid(self.dialog):
            self.dialog.reject()  # it was set up for the project that was open
        self.dialog = None
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        self.sweep = None
        self.view.show_message("")
        if not isinstance(project, Project):
            self._show_queue_state()
            self._show_results()
            return
        self._subscription = project.events.subscribe(self._on_project_event)
        if project.runs.sweep:
            try:
                self.sweep = Sweep.resume(project, folder=self._folder())
            except SweepError as exc:
                self.view.show_message(f"The project's sweep can't be shown: {exc}", error=True)
        self._show_queue_state()
        self._show_results()
        pending = self._unfinished(project)
        if pending and self.sweep is not None:
            text = (f"This project has an unfinished sweep ({pending}): Resume it in the "
                    "Sweep dock.")  # fmt: skip
            # After the window's own "Opened …", which follows this signal.
            QTimer.singleShot(0, self, lambda: self.shell.show_message(text, 30000))
            self._show_dock()

    def _unfinished(self, project: Project) -> str:
        """"2 of 4 runs done" for a saved sweep with runs still to train, else ""."""
        data = project.runs.sweep
        if not data or data.get("status") == "finished":
            return ""
        try:
            total, done = len(data["trials"]), len(set(data.get("done_trials", [])))
        except (KeyError, TypeError):
            return ""
        return f"{done} of {total} runs done" if done < total else ""

    def _on_window_closing(self) -> None:
        self._timer.stop()
        self._stop_and_wait()


def settings_of(project: Project, values: dict[str, Any]) -> tuple[dict[str, Any],
                                                                   dict[str, dict[str, Any]]]:
    """What setting a sweep run's `values` in `project` changes: training settings by key,
    and node id -> hyper-parameters (with the sizes that follow a changed width), as
    ApplySettingsCommand takes them. ValueError if a node is gone."""
    trial = copy_project(project, fresh=True)
    apply_trial(trial, values, None)
    settings = {key: trial.training[key] for key in TRAINING_KEYS
                if key in trial.training and trial.training[key] != project.training.get(key)}
    params: dict[str, dict[str, Any]] = {}
    for _, node in project.graph.walk():
        found = trial.graph.find(node.id)
        if found is None:
            continue
        now = found[1].params
        changed = {k: v for k, v in now.items() if node.params.get(k) != v}
        if changed:
            params[node.id] = changed
    return settings, params


def _axis(axis: Any, values: list[Any]) -> PCAxis:
    """The results' axis of a swept setting."""
    title = axis.name.replace("_", " ") if axis.name in SETTINGS else axis.name
    if axis.kind == "choice":
        return PCAxis(axis.name, title, choices=tuple(axis.values))
    numbers = [float(v) for v in values if isinstance(v, int | float) and v is not None]
    spread = (all(v > 0 for v in numbers) and len(numbers) > 1
              and max(numbers) / min(numbers) >= LOG_SPAN)  # fmt: skip
    return PCAxis(axis.name, title, log=bool(axis.log or spread))
