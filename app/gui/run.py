"""Training from the window: the Run menu and toolbar, the Train/Predict switch, the Run panel,
progress and live curves, wired to one `TrainingSession`; the decision boundary is
`app.gui.boundary`'s, which this controller prepares for each session and asks to redraw.

The training thread never calls Qt nor writes the project: a `QtSessionBridge` keeps the
latest `Progress` in an attribute and re-emits only a run's start, pause, resume and end
as a queued signal, after applying to the project what the run handed over. Everything
per step (progress text, curves, the decision boundary) is read on GUI timers from the
session's ring buffers, its last Progress and its weight snapshot.
The session is set on the window's `SessionHolder`, which every other view follows.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QVBoxLayout, QWidget

from app.catalogue import CATALOGUE
from app.compiler import CompileError
from app.compiler.network_io import trained_output
from app.datasets.images import recorded
from app.document import ABSENT, Project, RunsChanged
from app.gui.project_files import ProjectAccessError
from app.gui.run_actions import build_run_actions
from app.gui.session_bridge import QtSessionBridge
from app.gui.session_holder import fingerprint
from app.session import (
    PAUSED,
    READY,
    RUNNING,
    STOPPING,
    Progress,
    TrainingError,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingResumed,
    TrainingSession,
    TrainingSettings,
    TrainingStarted,
)
from app.session.held import held_progress
from app.undo.commands import TrainingSettingCommand, perform
from widgets.plots import TrainingCurves
from widgets.plots.area import PlotsArea
from widgets.run_panel import RunPanel
from widgets.run_progress import RunProgress

if TYPE_CHECKING:
    from app.gui.boundary import BoundaryPlot
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell
    from widgets.node_editor import NodeEditor

log = logging.getLogger(__name__)

EDIT_LOCK = "Training is running: pause or stop it to change the network."
SETTINGS_LOCK = ("Settings are locked while a run is active (running or paused): stop it to "
                 "change them. The learning rate can be changed at any time.")  # fmt: skip
TICK_MS = 250  # progress text and the decision boundary; the curves poll at ~30 Hz themselves
RATE_WINDOW = 2.0  # seconds of steps the steps/s figure averages over
WAIT_SECONDS = 30.0  # for a run's step to end: after Stop, or for a save to take its state


def _held(name: str, doc: str) -> property:
    """An attribute kept on the controller's session holder."""
    return property(lambda self: getattr(self.sessions, name),
                    lambda self, value: setattr(self.sessions, name, value), doc=doc)


class RunController(QObject):
    """Everything about training one window's project; `session` is None until one can be made."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 editor: NodeEditor, boundary: BoundaryPlot) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions = shell, projects, sessions
        self.editor, self.boundary_plot = editor, boundary
        self.train_mode = False  # the Train/Predict switch
        self.failure_dialog: QMessageBox | None = None
        self._fingerprint: str | None = None
        self._shown: tuple = ()
        self._epoch_version = -1
        self._rates: deque[tuple[float, int]] = deque()
        self._shown_progress: Progress | None = None
        self._trained_on = False  # a save was made while a run went on
        self._build_views()
        self._build_actions()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()
        self._refresh_timer = QTimer(self)  # an edit burst makes one new session, after it
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(300)
        self._refresh_timer.timeout.connect(self._on_refresh_timer_timeout)
        self._project_subscription = None
        projects.before_save.append(self._before_save)
        projects.after_save.append(self._after_save)
        sessions.refresh_requested.connect(self.refresh_session)
        shell.closing.connect(self._on_window_closing)
        projects.project_changed.connect(self._on_window_project_changed)
        self._on_window_project_changed(projects.project)

    # The session as the session holder keeps it for every view (this controller sets it).
    session = _held("session", "The current TrainingSession; None until one can be made.")
    bridge = _held("bridge", "The session's QtSessionBridge (events on the GUI thread).")
    problem = _held("problem", "Why no session could be made.")
    session_changed = property(lambda self: self.sessions.changed,
                               doc="`session` was replaced or dropped (the holder's `changed`).")

    # ---- building ----------------------------------------------------------------------------

    def _build_views(self) -> None:
        self.progress = RunProgress()
        self.panel = RunPanel()
        host = QWidget()
        host.setObjectName("run_host")
        layout = QVBoxLayout(host)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.progress)
        layout.addWidget(self.panel, 1)
        self.shell.set_dock_widget("run_dock", host)
        self.curves = TrainingCurves()
        self.boundary = self.boundary_plot.view
        plots = PlotsArea(self.curves, self.boundary)  # a splitter: curves, then boundary
        self.shell.set_dock_widget("plots_dock", plots)
        self.panel.schedule_planned.connect(plots.schedule.set_plan)  # the planned rates
        self.panel.setting_changed.connect(self._on_panel_setting_changed)
        self.panel.message.connect(lambda text: self.shell.show_message(text, 8000))

    def _build_actions(self) -> None:
        slots = {"start": self.start, "pause": self.pause, "resume": self.resume,
                 "step": self.step, "stop": self.stop, "restart": self.restart}
        self.actions, self.mode_group, self.toolbar = build_run_actions(
            self.shell, {name: functools.partial(self._guarded, slot)
                         for name, slot in slots.items()})
        self.mode_group.triggered.connect(self._on_mode_group_triggered)

    def _guarded(self, slot) -> None:
        try:
            slot()
        except Exception as exc:  # a bug in a button must not take the window down
            log.exception("run action failed")
            self.shell.report_error("Training", exc)
        self._show_state()

    # ---- the session -------------------------------------------------------------------------

    @property
    def status(self) -> str:
        return self.session.status if self.session is not None else READY

    def _folder(self) -> Path | None:
        path = self.projects.path
        return path.parent if path is not None else None

    def fingerprint(self) -> str:
        """What a session is made from: the network (not where nodes sit) and the settings."""
        return fingerprint(self.projects.project)

    def _make_session(self, *, restart: bool = False) -> TrainingSession | None:
        """A new session on the project, or None with the reason in `problem` (and shown)."""
        self._drop_session()
        project = self.projects.project
        fingerprint = self.fingerprint()
        folder = self._folder()
        read = self.panel.already_read(project.training.get("dataset"), folder)
        try:
            session = TrainingSession(project, folder=folder, restart=restart, dataset=read)
        except (TrainingError, CompileError) as exc:
            self._set_problem(str(exc))
            self._fingerprint = fingerprint
            return None
        except Exception as exc:  # a bug: say so, keep the window
            log.exception("making a training session failed")
            self._set_problem(f"Training can't be set up: {type(exc).__name__}: {exc}")
            self._fingerprint = fingerprint
            return None
        self.session, self._fingerprint = session, fingerprint
        self.bridge = QtSessionBridge(session, self)
        bridge = self.bridge
        bridge.arrived.connect(lambda event, b=bridge: self._on_bridge_arrived(b, event))
        session.network.set_train(self.train_mode)
        self.curves.set_metrics(session.metrics)
        self._epoch_version = -1
        self._set_problem(None)
        self.boundary_plot.prepare(session)
        self.session_changed.emit()
        return session

    def _drop_session(self) -> None:
        if self.bridge is not None:
            self.bridge.close()
            self.bridge.deleteLater()
        had = self.session is not None
        self.session, self.bridge = None, None
        self.boundary_plot.drop()
        if had:
            self.session_changed.emit()

    def _idle_session(self) -> TrainingSession | None:
        """The session to start from: the current one if the project is as it was made from.

        The learning rate is no part of what a session is made from (it changes live while
        a run goes on): a session kept takes the project's, as set (or undone) since."""
        session = self.session
        if session is not None and self._fingerprint == self.fingerprint():
            rate = TrainingSettings.from_project(self.projects.project.training).learning_rate
            if rate != session.learning_rate:
                session.set_learning_rate(rate)
            return session
        return self._make_session()

    def _set_problem(self, problem: str | None) -> None:
        """No session (why: `problem`): only training and prediction are refused. What the
        project holds stays in view: the step it was trained to, its curves, and the last
        boundary drawn for it (the reason shows in its place only if there is none)."""
        self.problem = problem
        if problem:
            held = held_progress(self.projects.project)
            self.progress.show_status(problem, idle_step=held.step, idle_epoch=held.epoch)
            self.curves.set_metrics(held.metrics)
            if self.boundary.extent is None:
                self.boundary.set_message(problem)
            else:
                self.boundary.setToolTip(f"Drawn with the weights as they were before the "
                                         f"network changed. {problem}")  # fmt: skip

    def _refuse(self, what: str) -> None:
        message = self.problem or "Training can't be set up."
        lines = [line.strip() for line in message.splitlines() if line.strip()]
        self.shell.show_message(f"Can't {what}: " + " ".join(lines), 10000)
        QMessageBox.warning(self.shell.window, f"Can't {what}", message)

    def _stop_and_wait(self) -> bool:
        """End the current run (after its step) and wait for the project to be written."""
        session = self.session
        if session is None or session.status == READY:
            return True
        session.stop()  # also ends a pause
        if session.wait(WAIT_SECONDS) is None:
            self.shell.show_message("The training run did not stop in time.", 10000)
            return False
        if session.project is self.projects.project:  # not a project the window has left
            self.projects.mark_unsaved()
        return True

    def _rebuild_paused(self) -> TrainingSession | None:
        """The network changed during a pause: end that run and compile again, keeping the
        weights and optimizer state of every node that did not change."""
        if not self._stop_and_wait():
            return None
        session = self._make_session()
        if session is not None:
            self.shell.show_message(
                f"The network changed while paused: compiled again, continuing from step "
                f"{session.state.step}.", 8000)  # fmt: skip
        return session

    # ---- commands ----------------------------------------------------------------------------

    def _session_to_train(self, what: str) -> TrainingSession | None:
        """The session to train next: a paused one (compiled again if the network changed
        during the pause), else one for the project as it now is; None, said why, if none."""
        session = self.session
        if session is not None and session.status == PAUSED:
            if self._fingerprint == self.fingerprint():
                return session
            session = self._rebuild_paused()
        elif self.status == READY:
            session = self._idle_session()
        else:
            return None
        if session is None:
            self._refuse(what)
        return session

    def start(self) -> None:
        session = self._session_to_train("start training") if self.status == READY else None
        if session is not None:
            self._rates.clear()
            self.sessions.run_starting.emit()  # autosave keeps unsaved edits on the way in
            session.start()

    def pause(self) -> None:
        if self.session is not None:
            self.session.pause()

    def resume(self) -> None:
        session = self._session_to_train("resume training") if self.status == PAUSED else None
        if session is None:
            return
        self._rates.clear()
        if session.status == PAUSED:
            session.resume()
        else:  # compiled again after an edit: a new run picks up where the pause was
            session.start()

    def step(self) -> None:
        """Exactly one batch, from a pause or with no run going on."""
        if self.status in (READY, PAUSED):
            session = self._session_to_train("take a step")
            if session is not None:
                if session.status == PAUSED and self.bridge is not None:
                    self.bridge.paused.clear()  # set again when the step is done
                session.step()

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()

    def restart(self) -> None:
        answer = QMessageBox.question(
            self.shell.window, "Restart from initial weights",
            "Forget the trained weights, the optimizer state, the progress and the curves, "
            "and train again from freshly initialized weights (the same seed gives the same "
            "start)?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )  # fmt: skip
        if answer != QMessageBox.StandardButton.Yes:
            return
        if not self._stop_and_wait():
            return
        project = self.projects.project
        project.param_values.clear()
        project.training.pop("state", None)
        self.projects.mark_unsaved()
        session = self._make_session(restart=True)
        if session is None:
            self._refuse("restart training")
            return
        self._rates.clear()
        self.progress.clear()
        session.start()

    def set_train_mode(self, training: bool) -> None:
        """The Train/Predict switch: the network's mode whenever no run is going on."""
        self.train_mode = bool(training)
        self.actions["train_mode" if training else "predict_mode"].setChecked(True)
        if self.session is not None and self.session.status == READY:
            self.session.network.set_train(self.train_mode)
        self.editor.scene.set_network_mode(self.train_mode)
        self._show_state()

    # ---- showing the state -------------------------------------------------------------------

    def _show_state(self) -> None:
        """Buttons, locks and the mode label after the session's status changed."""
        status = self.status
        self._shown = (status, self.train_mode)
        actions = self.actions
        actions["start"].setEnabled(status == READY)
        actions["pause"].setEnabled(status == RUNNING)
        actions["resume"].setEnabled(status == PAUSED)
        actions["step"].setEnabled(status in (READY, PAUSED))
        actions["stop"].setEnabled(status in (RUNNING, PAUSED))
        actions["restart"].setEnabled(status != STOPPING)
        running = status in (RUNNING, STOPPING)
        self.projects.set_edit_lock(EDIT_LOCK if running else None)
        self.panel.set_locked(None if status == READY else SETTINGS_LOCK)
        switch = "Train" if self.train_mode else "Predict"
        if status == READY:
            self.shell.set_mode(self.train_mode)
            self.editor.scene.set_network_mode(self.train_mode)
        else:
            self.shell.set_mode(True, f"while the run lasts; then {switch}")
            self.editor.scene.set_network_mode(True)
        session = self.session
        if session is not None and status == READY:
            state = session.state
            text = state.message or ("Ready to train." if not state.step else "")
            self.progress.show_status(text, idle_step=state.step, idle_epoch=state.epoch)
        elif status == PAUSED and session is not None:
            self.progress.show_status(f"Paused after step {session.state.step}. Edits to the "
                                      "network are allowed; Resume compiles them.")  # fmt: skip
        elif status == RUNNING:
            self.progress.show_status("Training…")
        elif status == STOPPING:
            self.progress.show_status("Stopping after the current step…")

    def _on_timer_timeout(self) -> None:
        try:
            self._tick()
        except Exception:  # a timer must never raise into Qt's event loop
            log.exception("run view update failed")

    def _tick(self) -> None:
        if (self.status, self.train_mode) != self._shown:
            self._show_state()
        session, bridge = self.session, self.bridge
        if session is not None and bridge is not None:
            progress = bridge.latest
            if progress is not None and progress is not self._shown_progress:
                self._shown_progress = progress
                live = session.status != READY  # else the bar says where training stands
                self.progress.show_progress(progress, session.state.target_epoch,
                                            self._rate(progress.step), live)  # fmt: skip
            epochs = session.metrics.epochs
            if epochs.version != self._epoch_version:
                self._epoch_version = epochs.version
                self.progress.show_epoch(session.metrics.last_epoch())
        self.boundary_plot.refresh()

    def _rate(self, step: int) -> float | None:
        now = time.monotonic()
        rates = self._rates
        rates.append((now, step))
        while len(rates) > 2 and now - rates[0][0] > RATE_WINDOW:
            rates.popleft()
        (t0, s0), (t1, s1) = rates[0], rates[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 and s1 > s0 else None

    def refresh_session(self) -> None:
        """Make the session again (e.g. code just trusted can now run), if none is running."""
        if self.status == READY:
            self._make_session()
            self._show_state()

    # ---- saving ------------------------------------------------------------------------------

    def _before_save(self) -> None:
        """Bring the project up to where training stands: a run going on hands its weights,
        optimizer state and progress over at its next step boundary (or in its pause) and
        trains on. If it can't within WAIT_SECONDS, the save is refused, saying why: a
        file with older weights is never passed off as the run."""
        session = self.session
        self._trained_on = False
        self._record_file_list()
        if session is None or session.project is not self.projects.project:
            return
        problem = session.fetch(WAIT_SECONDS)
        if problem is not None:
            raise ProjectAccessError(f"{problem} Nothing was saved: save again, or stop the "
                                     "run first.")  # fmt: skip
        self._trained_on = session.status in (RUNNING, STOPPING)  # (a pause: on Resume)

    def _record_file_list(self) -> None:
        """An image folder read as it is now (it changed since the project recorded it):
        the save records its new file list, so the next opening finds it as saved. Only
        with no run going on; the reading is kept for the setting, nothing is read again."""
        project, folder = self.projects.project, self._folder()
        training = getattr(project, "training", None)
        if not isinstance(training, dict):  # a document that is not a project: nothing to do
            return
        spec = training.get("dataset")
        dataset = self.panel.already_read(spec, folder)
        newer = recorded(spec, dataset) if dataset is not None else None
        if newer is None or self.status != READY:
            return
        self.panel.data.loader.keep_as(newer, folder)
        project.set_training("dataset", newer)

    def _after_save(self) -> None:
        if self._trained_on:
            self.projects.mark_unsaved()  # it trains on: the file falls behind again
        self._trained_on = False

    # ---- slots -------------------------------------------------------------------------------

    def _on_bridge_arrived(self, bridge: QtSessionBridge, event: object) -> None:
        if bridge is not self.bridge:
            return  # a session replaced since (its last words arrive late)
        if isinstance(event, TrainingStarted):
            self.shell.show_message(f"Training on {event.dataset}.", 5000)
            self.projects.mark_unsaved()  # the weights change from the first step on
        elif isinstance(event, TrainingPaused):
            self.shell.show_message(f"Paused after step {event.step}.", 5000)
            self.boundary_plot.dirty = True
        elif isinstance(event, TrainingResumed):
            self.shell.show_message("Training…", 3000)
            self.projects.mark_unsaved()  # also after a save in the pause: the file falls behind
        elif isinstance(event, TrainingFinished | TrainingFailed):
            self._on_run_ended(event)
        self._show_state()

    def _on_run_ended(self, event: TrainingFinished | TrainingFailed) -> None:
        session = self.session
        if session is not None and session.status == READY:
            # The trainer put back the mode the run began in; the switch may have moved since.
            session.network.set_train(self.train_mode)
        self.projects.mark_unsaved()
        self.boundary_plot.dirty = True
        self.boundary_plot.refresh()
        if isinstance(event, TrainingFinished):
            self.shell.show_message(event.message, 10000)
            return
        self.shell.show_message(event.message, 15000)
        box = QMessageBox(QMessageBox.Icon.Warning, "Training stopped", event.message,
                          QMessageBox.StandardButton.Ok, self.shell.window)  # fmt: skip
        box.setObjectName("training_failed_dialog")
        box.setInformativeText("The project keeps the weights from before the failing step.")
        box.setDetailedText(event.details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.failure_dialog = box

    def _on_mode_group_triggered(self, action: QAction) -> None:
        self._guarded(lambda: self.set_train_mode(action is self.actions["train_mode"]))

    def _on_panel_setting_changed(self, key: str, value: object) -> None:
        session, project = self.session, self.projects.project
        if key == "learning_rate" and session is not None and session.status != READY:
            try:
                session.set_learning_rate(value)
            except TrainingError as exc:
                self.shell.show_message(str(exc), 8000)
                return
            self.projects.mark_unsaved()  # the session keeps it in the project: live, no undo
            self.shell.show_message(f"Learning rate {value:g} from the next step on.", 5000)
            return
        command = TrainingSettingCommand(project, key, ABSENT if value is None else value)
        problem = perform(self.projects.undo_stack, command)
        if problem:
            self.shell.show_message(problem, 8000)
            self.panel.set_settings(project.training, self._folder())  # the form as it is

    def _on_project_event(self, event: object) -> None:
        if isinstance(event, RunsChanged):
            return  # the run history: nothing the panel or a session is made from
        self.panel.set_settings(self.projects.project.training, self._folder())
        self._refresh_timer.start()

    def _on_stack_index_changed(self, index: int) -> None:
        if not shiboken6.isValid(self.panel):  # the window is being taken down
            return
        self._refresh_timer.start()
        self.panel.set_output_loss(_output_loss(self.projects.project))

    def _on_refresh_timer_timeout(self) -> None:
        """After edits, with no run going on: a session for the project as it now is."""
        if self.status != READY or self._fingerprint == self.fingerprint():
            return
        try:
            self._make_session()
            self._show_state()
        except Exception:
            log.exception("refreshing the training session failed")

    def _on_window_project_changed(self, project: object) -> None:
        self._stop_and_wait()
        self._drop_session()
        if self._project_subscription is not None:
            self._project_subscription.unsubscribe()
            self._project_subscription = None
        self.progress.clear()
        self.boundary.clear()  # the last project's boundary is not this one's
        self.projects.set_edit_lock(None)
        if not isinstance(project, Project):  # no document model: nothing to train
            self._set_problem("There is no network to train.")
            self._show_state()
            return
        self._project_subscription = project.events.subscribe(self._on_project_event)
        self.projects.undo_stack.indexChanged.connect(self._on_stack_index_changed)
        self.panel.set_settings(project.training, self._folder())
        self.panel.set_output_loss(_output_loss(project))
        self.boundary.set_message("")
        self._make_session()
        self._show_state()

    def _on_window_closing(self) -> None:
        self._timer.stop()
        self._stop_and_wait()


def _output_loss(project) -> str | None:
    node = trained_output(project.graph)  # with several Output nodes, the one trained
    if node is None:
        return None
    try:
        return str(CATALOGUE.get("Output").values(node.params)["loss"])
    except Exception:
        return None
