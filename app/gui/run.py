"""Training from the window: the Run menu and toolbar, the Train/Predict switch, the Run panel,
progress, live curves and the decision boundary, wired to one `TrainingSession`.

The training thread never calls Qt: a `SessionBridge` keeps the latest `Progress` in
an attribute and re-emits only a run's start, pause, resume and end as a queued
signal. Everything per step (progress text, curves, the decision boundary) is read on
GUI timers from the session's ring buffers, its last Progress and its weight snapshot.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMessageBox, QSplitter, QToolBar, QVBoxLayout, QWidget

from app.catalogue import CATALOGUE
from app.compiler import CompileError, compile_project
from app.document import ABSENT, Project
from app.session import (
    PAUSED,
    READY,
    RUNNING,
    STOPPING,
    EpochEnded,
    Progress,
    TrainingError,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingResumed,
    TrainingSession,
    TrainingStarted,
)
from app.session.boundary import predict_points
from app.session.progress import rng_state, set_rng_state
from app.undo.commands import TrainingSettingCommand, perform
from widgets.plots import (
    DecisionBoundaryView,
    FrameBudget,
    TrainingCurves,
    extent_for,
    grid_points,
)
from widgets.run_panel import RunPanel
from widgets.run_progress import RunProgress

if TYPE_CHECKING:
    from app.gui.main_window import MainWindow
    from widgets.node_editor import NodeEditor

log = logging.getLogger(__name__)

EDIT_LOCK = "Training is running: pause or stop it to change the network."
SETTINGS_LOCK = ("Settings are locked while a run is active (running or paused): stop it to "
                 "change them. The learning rate can be changed at any time.")  # fmt: skip
TICK_MS = 250  # progress text and the decision boundary; the curves poll at ~30 Hz themselves
BOUNDARY_SHARE = 0.03  # of one core, for the boundary's redraws while a run streams
GRID = (120, 120)
RATE_WINDOW = 2.0  # seconds of steps the steps/s figure averages over
WAIT_SECONDS = 30.0  # for a run to end after Stop (one step, then the project is written)


class SessionBridge(QObject):
    """One session's events on the GUI thread: the few that matter as a queued signal.

    `latest` is the newest Progress (written by the training thread, read by a GUI
    timer); `paused` is set while the run waits in a pause.
    """

    arrived = Signal(object)

    def __init__(self, session: TrainingSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.latest: Progress | None = None
        self.paused = threading.Event()
        self._subscription = session.events.subscribe(self._on_session_event)

    def _on_session_event(self, event: object) -> None:  # the training thread
        if isinstance(event, Progress):
            self.latest = event  # one attribute write per step, nothing else
            return
        if isinstance(event, EpochEnded):
            return  # the curves read epochs from the ring buffer
        if isinstance(event, TrainingPaused):
            self.paused.set()
        else:
            self.paused.clear()
        self.arrived.emit(event)

    def close(self) -> None:
        self._subscription.unsubscribe()


class RunController(QObject):
    """Everything about training one window's project; `session` is None until one can be made."""

    session_changed = Signal()  # `session` was replaced (or dropped)

    def __init__(self, window: MainWindow, editor: NodeEditor) -> None:
        super().__init__(window)
        self.window = window
        self.editor = editor
        self.session: TrainingSession | None = None
        self.bridge: SessionBridge | None = None
        self.problem: str | None = None  # why no session could be made
        self.train_mode = False  # the Train/Predict switch
        self.failure_dialog: QMessageBox | None = None
        self._fingerprint: str | None = None
        self._preview: Any = None  # a predict-mode copy of the network for the boundary
        self._preview_params: dict = {}
        self._boundary_version = -1
        self._boundary_dirty = True
        self._boundary_budget = FrameBudget(BOUNDARY_SHARE)
        self._grid: tuple | None = None  # (extent, points) for 2-feature data
        self._shown: tuple = ()
        self._epoch_version = -1
        self._rates: deque[tuple[float, int]] = deque()
        self._shown_progress: Progress | None = None
        self._resume_after_save = False
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
        window.before_save.append(self._before_save)
        window.after_save.append(self._after_save)
        window.closing.connect(self._on_window_closing)
        window.project_changed.connect(self._on_window_project_changed)
        self._on_window_project_changed(window.project)

    # ---- building ----------------------------------------------------------------------------

    def _build_views(self) -> None:
        window = self.window
        self.progress = RunProgress()
        self.panel = RunPanel()
        host = QWidget()
        host.setObjectName("run_host")
        layout = QVBoxLayout(host)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.progress)
        layout.addWidget(self.panel, 1)
        _put_in_dock(window.run_dock, host)
        self.curves = TrainingCurves()
        self.boundary = DecisionBoundaryView()
        plots = QSplitter(Qt.Orientation.Horizontal)
        plots.setObjectName("plots_area")
        plots.addWidget(self.curves)
        plots.addWidget(self.boundary)
        plots.setStretchFactor(0, 2)
        plots.setStretchFactor(1, 1)
        plots.setSizes([640, 360])
        _put_in_dock(window.plots_dock, plots)
        self.panel.setting_changed.connect(self._on_panel_setting_changed)
        self.panel.message.connect(lambda text: window.show_message(text, 8000))

    def _build_actions(self) -> None:
        window = self.window
        specs = [
            ("start", "&Start", "F5", "Train from where the project stands", self.start),
            ("pause", "&Pause", "F6", "Pause after the current step", self.pause),
            ("resume", "&Resume", "F7", "Go on training after a pause", self.resume),
            ("step", "S&tep", "F10", "Train exactly one batch", self.step),
            ("stop", "St&op", "Shift+F5", "End the run after the current step", self.stop),
            ("restart", "Restart from &Initial Weights…", "Ctrl+Shift+F5",
             "Forget the trained weights and progress, and train again", self.restart),
        ]  # fmt: skip
        self.actions: dict[str, QAction] = {}
        for name, text, key, tip, slot in specs:
            action = QAction(text, window)
            action.setObjectName(f"{name}_action")
            action.setShortcut(QKeySequence(key))
            action.setToolTip(f"{tip} ({key})")
            action.setStatusTip(tip)
            action.triggered.connect(lambda _=False, slot=slot: self._guarded(slot))
            self.actions[name] = action
        self.mode_group = QActionGroup(window)
        self.mode_group.setExclusive(True)
        for name, text, tip in (
            ("train", "Train", "Train mode: Dropout drops, BatchNorm uses batch statistics"),
            ("predict", "Predict", "Predict mode: Dropout passes all, BatchNorm uses its "
                                   "moving statistics"),
        ):  # fmt: skip
            action = QAction(text, window)
            action.setObjectName(f"{name}_mode_action")
            action.setCheckable(True)
            action.setToolTip(tip)
            self.mode_group.addAction(action)
            self.actions[f"{name}_mode"] = action
        self.actions["predict_mode"].setChecked(True)
        self.mode_group.triggered.connect(self._on_mode_group_triggered)

        menu = window.run_menu
        for name in ("start", "pause", "resume", "step", "stop"):
            menu.addAction(self.actions[name])
        menu.addSeparator()
        menu.addAction(self.actions["restart"])
        menu.addSeparator()
        mode_menu = menu.addMenu("Network &Mode")
        mode_menu.setObjectName("mode_menu")
        mode_menu.addActions(self.mode_group.actions())
        toolbar = QToolBar("Run", window)
        toolbar.setObjectName("run_toolbar")
        for name in ("start", "pause", "resume", "step", "stop", "restart"):
            toolbar.addAction(self.actions[name])
        toolbar.addSeparator()
        toolbar.addActions(self.mode_group.actions())
        window.addToolBar(toolbar)
        self.toolbar = toolbar

    def _guarded(self, slot) -> None:
        try:
            slot()
        except Exception as exc:  # a bug in a button must not take the window down
            log.exception("run action failed")
            self.window.report_error("Training", exc)
        self._show_state()

    # ---- the session -------------------------------------------------------------------------

    @property
    def status(self) -> str:
        return self.session.status if self.session is not None else READY

    def _folder(self) -> Path | None:
        path = self.window.project_path
        return path.parent if path is not None else None

    def fingerprint(self) -> str:
        """What a session is made from: the network (not where nodes sit) and the settings."""
        project = self.window.project
        if not isinstance(project, Project):
            return ""
        graph = _without_positions(project.graph.to_data())
        training = {k: v for k, v in project.training.items()
                    if k not in ("state", "learning_rate")}  # fmt: skip
        return json.dumps([graph, training], sort_keys=True, default=repr)

    def _make_session(self, *, restart: bool = False) -> TrainingSession | None:
        """A new session on the project, or None with the reason in `problem` (and shown)."""
        self._drop_session()
        project = self.window.project
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
        self.bridge = SessionBridge(session, self)
        bridge = self.bridge
        bridge.arrived.connect(lambda event, b=bridge: self._on_bridge_arrived(b, event))
        session.network.set_train(self.train_mode)
        self.curves.set_metrics(session.metrics)
        self._epoch_version = -1
        self._set_problem(None)
        self._build_preview(session)
        self.session_changed.emit()
        return session

    def _drop_session(self) -> None:
        if self.bridge is not None:
            self.bridge.close()
            self.bridge.deleteLater()
        had = self.session is not None
        self.session, self.bridge = None, None
        self._preview, self._preview_params, self._grid = None, {}, None
        self._boundary_dirty = True
        if had:
            self.session_changed.emit()

    def _idle_session(self) -> TrainingSession | None:
        """The session to start from: the current one if the project is as it was made from."""
        if self.session is not None and self._fingerprint == self.fingerprint():
            return self.session
        return self._make_session()

    def _set_problem(self, problem: str | None) -> None:
        self.problem = problem
        if problem:
            self.boundary.set_message(problem)
            self.progress.show_status(problem)
            self.curves.set_metrics(None)

    def _refuse(self, what: str) -> None:
        message = self.problem or "Training can't be set up."
        self.window.show_message(f"Can't {what}: {message.splitlines()[0]}", 10000)
        QMessageBox.warning(self.window, f"Can't {what}", message)

    def _stop_and_wait(self) -> bool:
        """End the current run (after its step) and wait for the project to be written."""
        session = self.session
        if session is None or session.status == READY:
            return True
        session.stop()  # also ends a pause
        if session.wait(WAIT_SECONDS) is None:
            self.window.show_message("The training run did not stop in time.", 10000)
            return False
        if session.project is self.window.project:  # not a project the window has left
            self.window.mark_unsaved()
        return True

    def _rebuild_paused(self) -> TrainingSession | None:
        """The network changed during a pause: end that run and compile again, keeping the
        weights and optimizer state of every node that did not change."""
        if not self._stop_and_wait():
            return None
        session = self._make_session()
        if session is not None:
            self.window.show_message(
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
            autosave = getattr(self.window, "autosave", None)
            if autosave is not None:
                autosave.write_now()  # on the way into training: unsaved edits are kept
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
            self.window, "Restart from initial weights",
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
        project = self.window.project
        project.param_values.clear()
        project.training.pop("state", None)
        self.window.mark_unsaved()
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
        self.window.set_edit_lock(EDIT_LOCK if running else None)
        self.panel.set_locked(None if status == READY else SETTINGS_LOCK)
        switch = "Train" if self.train_mode else "Predict"
        if status == READY:
            self.window.set_mode(self.train_mode)
            self.editor.scene.set_network_mode(self.train_mode)
        else:
            self.window.set_mode(True, f"while the run lasts; then {switch}")
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
        self.refresh_boundary()

    def _rate(self, step: int) -> float | None:
        now = time.monotonic()
        rates = self._rates
        rates.append((now, step))
        while len(rates) > 2 and now - rates[0][0] > RATE_WINDOW:
            rates.popleft()
        (t0, s0), (t1, s1) = rates[0], rates[-1]
        return (s1 - s0) / (t1 - t0) if t1 > t0 and s1 > s0 else None

    # ---- the decision boundary ---------------------------------------------------------------

    def _build_preview(self, session: TrainingSession) -> None:
        """A second, predict-mode copy of the network that the boundary evaluates, so the
        GUI never runs the network being trained. Made while nothing trains; the random
        generator is put back so training is the same with or without the view."""
        data = session.dataset
        if data.sample_shape != (2,):
            self._preview = None
            self.boundary.set_message(
                f"The decision boundary needs data with 2 input features; {data.name} has "
                f"samples of shape {data.sample_shape}."
            )
            return
        state = rng_state()
        try:
            compiled = compile_project(self.window.project)
        finally:
            set_rng_state(state)
        compiled.network.set_train(False)
        self._preview = compiled.network
        self._preview_params = compiled.parameters()
        extent = extent_for(data.x)
        self._grid = (extent, grid_points(extent, GRID))
        train, val = session.train_set, session.val_set
        self.boundary.set_points(train.x, train.y, val.x, val.y,
                                 data.class_names if data.task == "classification" else None)
        self._boundary_dirty = True

    def refresh_boundary(self, force: bool = False) -> bool:
        """Redraw the boundary if the weights moved since it was drawn; True if it was."""
        session = self.session
        if session is None or self._preview is None or self._grid is None:
            return False
        if not force and not self.boundary.isVisible():
            return False
        snapshot = session.snapshot
        status = session.status
        if status == RUNNING and not force and not self._boundary_budget.ready():
            return False
        if status == RUNNING:
            snapshot.request()  # served by the training thread between two steps
        elif status == READY and (self._boundary_dirty or force):
            snapshot.take_now(session.state.step)
        if snapshot.version == self._boundary_version and not force:
            return False
        self._boundary_version = snapshot.version
        self._boundary_dirty = False
        self._boundary_budget.timed(self._draw_boundary, session)
        return True

    def refresh_session(self) -> None:
        """Make the session again (e.g. code just trusted can now run), if none is running."""
        if self.status == READY:
            self._make_session()
            self._show_state()

    def weights_changed(self) -> None:
        """Parameter values were edited (with no run training): views of the weights redraw."""
        session = self.session
        if session is not None and session.status in (READY, PAUSED):
            session.snapshot.take_now(session.state.step)
        self._boundary_dirty = True
        self.refresh_boundary()

    def _draw_boundary(self, session: TrainingSession) -> None:
        step = session.snapshot.copy_into(self._preview_params)
        extent, points = self._grid
        values = predict_points(self._preview, points, session.targets,
                                session.compiled.input_dtypes[0])  # fmt: skip
        classes = session.dataset.num_classes if session.targets.classification else None
        self.boundary.set_field(extent, values.reshape(GRID[1], GRID[0]), classes)
        self.boundary.setToolTip(f"Predicted in predict mode with the weights after step {step}")

    # ---- saving ------------------------------------------------------------------------------

    def _before_save(self) -> None:
        """Put the weights, optimizer state and progress of a run that is going on into the
        project: a running one is paused for the moment it takes."""
        session, bridge = self.session, self.bridge
        self._resume_after_save = False
        if session is None or bridge is None or session.status == READY:
            return
        if session.status == RUNNING:
            session.pause()
            self._resume_after_save = True
        if session.status == PAUSED and bridge.paused.wait(WAIT_SECONDS):
            session.store()

    def _after_save(self) -> None:
        if self._resume_after_save and self.session is not None:
            self.session.resume()
            self.window.mark_unsaved()  # it trains on: the file falls behind again
        self._resume_after_save = False

    # ---- slots -------------------------------------------------------------------------------

    def _on_bridge_arrived(self, bridge: SessionBridge, event: object) -> None:
        if bridge is not self.bridge:
            return  # a session replaced since (its last words arrive late)
        if isinstance(event, TrainingStarted):
            self.window.show_message(f"Training on {event.dataset}.", 5000)
            self.window.mark_unsaved()  # the weights change from the first step on
        elif isinstance(event, TrainingPaused):
            self.window.show_message(f"Paused after step {event.step}.", 5000)
            self._boundary_dirty = True
        elif isinstance(event, TrainingResumed):
            self.window.show_message("Training…", 3000)
        elif isinstance(event, TrainingFinished | TrainingFailed):
            self._on_run_ended(event)
        self._show_state()

    def _on_run_ended(self, event: TrainingFinished | TrainingFailed) -> None:
        session = self.session
        if session is not None and session.status == READY:
            # The trainer put back the mode the run began in; the switch may have moved since.
            session.network.set_train(self.train_mode)
        self.window.mark_unsaved()
        self._boundary_dirty = True
        self.refresh_boundary()
        if isinstance(event, TrainingFinished):
            self.window.show_message(event.message, 10000)
            return
        self.window.show_message(event.message, 15000)
        box = QMessageBox(QMessageBox.Icon.Warning, "Training stopped", event.message,
                          QMessageBox.StandardButton.Ok, self.window)  # fmt: skip
        box.setObjectName("training_failed_dialog")
        box.setInformativeText("The project keeps the weights from before the failing step.")
        box.setDetailedText(event.details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.failure_dialog = box

    def _on_mode_group_triggered(self, action: QAction) -> None:
        self._guarded(lambda: self.set_train_mode(action is self.actions["train_mode"]))

    def _on_panel_setting_changed(self, key: str, value: object) -> None:
        session, project = self.session, self.window.project
        if key == "learning_rate" and session is not None and session.status != READY:
            try:
                session.set_learning_rate(value)
            except TrainingError as exc:
                self.window.show_message(str(exc), 8000)
                return
            project.training["learning_rate"] = value  # live, not an undo step
            self.window.mark_unsaved()
            self.window.show_message(f"Learning rate {value:g} from the next step on.", 5000)
            return
        command = TrainingSettingCommand(project, key, ABSENT if value is None else value)
        problem = perform(self.window.undo_stack, command)
        if problem:
            self.window.show_message(problem, 8000)
            self.panel.set_settings(project.training, self._folder())  # the form as it is

    def _on_project_event(self, event: object) -> None:
        self.panel.set_settings(self.window.project.training, self._folder())
        self._refresh_timer.start()

    def _on_stack_index_changed(self, index: int) -> None:
        if not shiboken6.isValid(self.panel):  # the window is being taken down
            return
        self._refresh_timer.start()
        self.panel.set_output_loss(_output_loss(self.window.project))

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
        self.window.set_edit_lock(None)
        if not isinstance(project, Project):  # no document model: nothing to train
            self._set_problem("There is no network to train.")
            self._show_state()
            return
        self._project_subscription = project.events.subscribe(self._on_project_event)
        self.window.undo_stack.indexChanged.connect(self._on_stack_index_changed)
        self.panel.set_settings(project.training, self._folder())
        self.panel.set_output_loss(_output_loss(project))
        self.boundary.set_message("")
        self._make_session()
        self._show_state()

    def _on_window_closing(self) -> None:
        self._timer.stop()
        self._stop_and_wait()


def _put_in_dock(dock, widget: QWidget) -> None:
    placeholder = dock.widget()
    dock.setWidget(widget)
    if placeholder is not None:
        placeholder.deleteLater()


def _without_positions(graph: dict) -> dict:
    """Graph data (`Graph.to_data`) without where its nodes sit, inside composites too."""
    return {**graph, "nodes": [_node_without_position(node) for node in graph["nodes"]]}


def _node_without_position(node: dict) -> dict:
    node = {k: v for k, v in node.items() if k != "position"}
    if "subgraph" in node:
        node["subgraph"] = _without_positions(node["subgraph"])
    return node


def _output_loss(project) -> str | None:
    for node in project.graph.nodes.values():
        if node.type == "Output":
            try:
                return str(CATALOGUE.get("Output").values(node.params)["loss"])
            except Exception:
                return None
    return None
