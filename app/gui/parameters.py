"""See and change the weights: the Inspector's Parameters list and the Parameter editor dock,
wired to the project's values and the training session.

Where values are read: the project's arrays (`project.param_values`), brought up to
date from the session's network when nothing trains, or from its weight snapshot
(taken between two steps on request, never making the training thread wait) while a
run goes on, at most twice a second and only while a view is visible. Where values
are written: undo commands (`ParamValuesCommand`, `FreezeCommand`) change the
project; this controller copies each changed region into the session's network, so
a paused run resumes with it and the optimizer keeps its state. Edits are refused
while a run trains (the edit lock); the controls say so.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np
import shiboken6
from PySide6.QtCore import QObject, QSize, Qt, QTimer
from PySide6.QtWidgets import QDialog, QDockWidget

from app.compiler import CompiledNetwork, compile_project
from app.document import FreezeChanged, ParamValuesChanged, Project
from app.gui.session_holder import fingerprint
from app.session import PAUSED, RUNNING, STOPPING, TrainingSettings
from app.session.param_access import (
    ParamInfo,
    frozen_marks,
    inner_node_ids,
    node_params,
    sync,
)
from app.session.param_values import make_values, statistics
from app.undo.commands import FreezeCommand, ParamValuesCommand, perform
from engine import _random
from widgets.param_list import ParameterList
from widgets.reinit_dialog import ReinitDialog
from widgets.tensor_editor import TensorEditor

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell
    from widgets.inspector import Inspector
    from widgets.node_editor import NodeEditor

log = logging.getLogger(__name__)

TICK_MS = 500  # statistics and the open Parameter, while visible
RUN_LOCK = "Training is running: pause or stop it to change Parameters."
STEP_LOCK = "A training step is running: Parameters can be changed once it is done."


class ParameterController(QObject):
    """The Parameters of the selected node, and the Parameter editor, for one main window."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 editor: NodeEditor, inspector: Inspector) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions = shell, projects, sessions
        self.editor, self.inspector = editor, inspector
        self.list = ParameterList()
        inspector.add_section(self.list)
        self.tensor_editor = TensorEditor()
        self.tensor_editor.setObjectName("tensor_editor")
        self.tensor_editor.apply_edit = self._apply_edit
        self.tensor_editor.message.connect(self._on_view_message)
        # A window of its own when a Parameter is first opened (a table of a big matrix
        # wants room); its title bar docks it like any dock.
        self.dock = QDockWidget("Parameter", shell.window)
        self.dock.setObjectName("parameter_dock")
        self.dock.setWidget(self.tensor_editor)
        self.dock.hide()
        self._placed = False
        self._project: Project | None = None
        self._subscription = None
        self._own: tuple[str, CompiledNetwork | None, str] | None = None  # fingerprint, net, why
        self._node_id: str | None = None
        self._infos: list[ParamInfo] = []
        self._open: ParamInfo | None = None  # the Parameter in the editor
        self._open_array: np.ndarray | None = None
        self._seen: tuple = ()  # (session, status, step, snapshot version) last synced
        self._marks_key: tuple = ()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()
        self.list.edit_requested.connect(self._on_list_edit_requested)
        self.list.freeze_requested.connect(self._on_list_freeze_requested)
        self.list.reinit_requested.connect(self._on_list_reinit_requested)
        editor.selection_changed.connect(self._on_editor_selection_changed)
        editor.path_changed.connect(self._on_editor_selection_changed)
        sessions.changed.connect(self._on_run_session_changed)
        # The current undo stack's, not the first one's: New and Open make a new stack.
        projects.stack_changed.connect(self._on_projects_stack_changed)
        projects.project_changed.connect(self._on_window_project_changed)
        shell.closing.connect(self._timer.stop)
        self._on_projects_stack_changed(projects.undo_stack)
        self._on_window_project_changed(projects.project)

    # ---- where the network is --------------------------------------------------------------

    def compiled(self) -> tuple[CompiledNetwork | None, str]:
        """The compiled network whose Parameters are shown: the session's, else one of our
        own made the way a session would (same seed, so the same initial weights)."""
        session = self.sessions.session
        if session is not None:
            return session.compiled, ""
        project = self._project
        if project is None:
            return None, "There is no network."
        made_from = fingerprint(project)
        if self._own is None or self._own[0] != made_from:
            self._own = (made_from, *_compile_like_a_session(project))
        return self._own[1], self._own[2]

    def _source(self, names: list[str]) -> dict[str, np.ndarray] | None:
        """Current values of `names`: live when nothing trains, the snapshot while it does.

        Never a snapshot older than what the project holds: a save hands the run's weights
        over (newer than the last snapshot, perhaps), and they are not written back over."""
        session = self.sessions.session
        if session is not None and self._locked():  # the training thread is at work
            snapshot = session.snapshot
            if not snapshot.version or snapshot.step < _held_step(self._project):
                snapshot.request()
                return None
            return snapshot.values(names)
        compiled, _ = self.compiled()
        if compiled is None:
            return None
        params = compiled.parameters()
        return {name: params[name].asnumpy() for name in names if name in params}

    def _locked(self) -> str:
        session, bridge = self.sessions.session, self.sessions.bridge
        if session is None:
            return ""
        if session.status in (RUNNING, STOPPING):
            return RUN_LOCK
        if session.status == PAUSED and bridge is not None and not bridge.paused.is_set():
            return STEP_LOCK  # a Step from the pause is running (or the pause not reached)
        return ""

    # ---- showing ---------------------------------------------------------------------------

    def show_node(self, node_id: str | None) -> None:
        """List the Parameters of `node_id` (with its inner nodes' for a composite)."""
        self._node_id = node_id
        self._infos = []
        project = self._project
        if node_id is None or project is None:
            self.list.set_params([])
            self.list.set_message("")
            return
        compiled, problem = self.compiled()
        if compiled is None:
            self.list.set_params([])
            self.list.set_message(f"Parameters can't be shown: {problem.splitlines()[0]}"
                                  if problem else "")  # fmt: skip
            return
        ids = inner_node_ids(project, node_id)
        self._infos = node_params(compiled, project, ids)
        composite = len(ids) > 1
        self.list.set_params(self._infos, grouped=composite)
        if not self._infos:
            self.list.set_message("This node has no Parameters.")
        else:
            self.list.set_message("")
        self._seen = ()
        self.refresh()

    def refresh(self, force: bool = False) -> None:
        """Bring the shown values up to date if the weights may have moved since."""
        session = self.sessions.session
        key = (id(session), session.status if session else None,
               session.state.step if session else None,
               session.snapshot.version if session else None)  # fmt: skip
        if key == self._seen and not force:
            return
        infos = list(self._infos)
        if self._open is not None and self._open.name not in {i.name for i in infos}:
            infos.append(self._open)
        values = self._source([info.name for info in infos])
        if values is None:
            return
        self._seen = key
        sync(self._project, infos, values)
        step = session.snapshot.step if session and session.status == RUNNING else (
            session.state.step if session else None)
        self._show_stats(step)
        self._show_open()
        reason = self._locked()
        self.list.set_editable(not reason, reason)
        self.tensor_editor.set_editable(not reason, reason)

    def _show_stats(self, step: int | None = None) -> None:
        """The list's statistics from the project's arrays (as last synced)."""
        values = {info.name: self._value(info) for info in self._infos}
        self.list.set_stats({name: statistics(array) for name, array in values.items()
                             if array is not None}, step)  # fmt: skip

    def _value(self, info: ParamInfo) -> np.ndarray | None:
        return self._project.param_values.get(info.node_id, {}).get(info.local)

    def _show_open(self) -> None:
        info = self._open
        if info is None:
            return
        array = self._value(info)
        if array is not self._open_array:  # a new array (first sync, another shape)
            self._open_array = array
            kernels = _is_kernel(info, array)
            self.tensor_editor.set_tensor(array, info.name, kernels=kernels)
            if kernels:  # a grid of all kernels says more than one kernel's numbers
                self.tensor_editor.set_view("heatmap")
        else:
            self.tensor_editor.refresh()

    def open_parameter(self, name: str) -> None:
        """Show the Parameter `name` in the Parameter dock (table and heatmap)."""
        info = next((i for i in self._infos if i.name == name), None)
        if info is None:
            return
        self._open, self._open_array = info, None
        self.dock.setWindowTitle(f"Parameter — {info.name}")
        if not self._placed:
            self._placed = True
            window = self.shell.window
            window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
            self.dock.setFloating(True)
            canvas = window.centralWidget()
            size = QSize(min(900, max(canvas.width(), 480)), min(560, max(canvas.height(), 320)))
            self.dock.resize(size)
            centre = canvas.mapToGlobal(canvas.rect().center())
            self.dock.move(centre.x() - size.width() // 2, centre.y() - size.height() // 2)
        self.dock.show()
        self.dock.raise_()
        self.refresh(force=True)

    def _update_marks(self) -> None:
        project = self._project
        marks = {}
        if project is not None and project.frozen:  # nothing frozen: nothing to compile for
            compiled, _ = self.compiled()
            marks = frozen_marks(project, compiled) if compiled is not None else {}
        if marks != self.editor.scene.frozen:
            self.editor.scene.set_frozen(marks)

    # ---- editing ---------------------------------------------------------------------------

    def _apply_edit(self, regions: list[tuple[tuple, np.ndarray]], text: str) -> str | None:
        """The editor's changes to the open Parameter, as one undo step; the refusal or None."""
        info = self._open
        if info is None:
            return "No Parameter is open."
        return self._edit(info, regions, text)

    def _edit(self, info: ParamInfo, regions: list, text: str) -> str | None:
        reason = self._locked()
        if reason:
            return reason
        self.refresh(force=True)  # edit what the network holds now
        if self._value(info) is None:
            return f"The values of {info.name} can't be read."
        command = ParamValuesCommand(self._project, info.node_id, info.local, regions, text)
        return self._perform(command)

    def _perform(self, command) -> str | None:
        try:
            problem = perform(self.projects.undo_stack, command)
        except Exception as exc:  # a bug must not take the window down
            log.exception("a Parameter edit failed")
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            self.shell.show_message(problem, 8000)
        return problem

    def freeze(self, names: list[str], frozen: bool) -> str | None:
        """Freeze (or unfreeze) these Parameters of the shown node, as one undo step."""
        infos = [i for i in self._infos if i.name in names and i.trainable]
        if not infos:
            return None
        by_node: dict[str, list[str]] = {}
        for info in infos:
            by_node.setdefault(info.node_id, []).append(info.local)
        verb = "Freeze" if frozen else "Unfreeze"
        what = infos[0].name if len(infos) == 1 else f"{len(infos)} Parameters"
        stack = self.projects.undo_stack
        reason = self._locked()
        if reason:
            problem = reason
        elif len(by_node) == 1:
            node_id, locals_ = next(iter(by_node.items()))
            problem = self._perform(FreezeCommand(self._project, node_id, locals_, frozen,
                                                  f"{verb} {what}"))  # fmt: skip
        else:
            stack.beginMacro(f"{verb} {what}")
            try:
                problem = None
                for node_id, locals_ in by_node.items():
                    problem = problem or self._perform(FreezeCommand(
                        self._project, node_id, locals_, frozen, f"{verb} {what}"))
            finally:
                stack.endMacro()
        if problem:
            self.shell.show_message(problem, 8000)
            self.show_node(self._node_id)  # the check boxes as they are
        return problem

    def reinitialize(self, names: list[str], choice: tuple[str, dict[str, Any], int]
                     ) -> str | None:  # fmt: skip
        """Fill these Parameters from an initializer (name, options, seed): one undo step."""
        kind, options, seed = choice
        infos = [i for i in self._infos if i.name in names]
        reason = self._locked()
        if reason or not infos:
            return reason or None
        self.refresh(force=True)
        made = []
        try:
            for offset, info in enumerate(infos):  # each its own stream of the same seed
                made.append((info, make_values(kind, options, info.shape, info.dtype,
                                               seed + offset)))  # fmt: skip
        except ValueError as exc:
            self.shell.show_message(str(exc), 10000)
            return str(exc)
        what = infos[0].name if len(infos) == 1 else f"{len(infos)} Parameters"
        stack = self.projects.undo_stack
        stack.beginMacro(f"Re-initialize {what} with {kind}")
        problem = None
        try:
            for info, values in made:
                problem = problem or self._edit(info, [((Ellipsis,), values)],
                                                f"Re-initialize {info.name} with {kind}")
        finally:
            stack.endMacro()
        if not problem:
            self.shell.show_message(f"Re-initialized {what} with {kind} (seed {seed}).", 6000)
        return problem

    def _ask_reinit(self, names: list[str]) -> tuple[str, dict[str, Any], int] | None:
        """The initializer to use (a dialog; tests replace this)."""
        what = names[0] if len(names) == 1 else f"{len(names)} Parameters"
        settings = self._project.training if self._project else {}
        dialog = ReinitDialog(what, int(settings.get("seed", 0) or 0), self.shell.window)
        try:
            if dialog.exec() != QDialog.DialogCode.Accepted:
                return None
            return dialog.choice()
        finally:
            dialog.deleteLater()

    # ---- document events -------------------------------------------------------------------

    def _on_project_event(self, event: object) -> None:
        if isinstance(event, ParamValuesChanged):
            self._copy_into_network(event)
            self._after_values_changed()
        elif isinstance(event, FreezeChanged):
            self._apply_freeze(event)
            self._update_marks()
            if self._node_id is not None:
                self.show_node(self._node_id)

    def _copy_into_network(self, event: ParamValuesChanged) -> None:
        """The changed region goes into the networks that hold the Parameter."""
        project = self._project
        array = project.param_values.get(event.node_id, {}).get(event.name)
        if array is None:
            return
        for compiled in self._networks():
            for name, param in compiled.parameters().items():
                if compiled.parameter_owner[name] == (event.node_id, event.name):
                    target = param.asnumpy()
                    if target.shape == array.shape:
                        target[event.index] = array[event.index]

    def _apply_freeze(self, event: FreezeChanged) -> None:
        for compiled in self._networks():
            compiled.apply_frozen(self._project)

    def _networks(self) -> list[CompiledNetwork]:
        """The networks the project's values go into: the session's (not while it trains:
        edits are refused then) and our own."""
        networks = []
        session = self.sessions.session
        if session is not None and session.status not in (RUNNING, STOPPING):
            networks.append(session.compiled)
        if self._own is not None and self._own[1] is not None:
            networks.append(self._own[1])
        return networks

    def _after_values_changed(self) -> None:
        self._seen = ()
        self.sessions.weights_changed.emit()
        self._show_stats()
        if self._open is not None:
            self.tensor_editor.refresh()

    # ---- slots -----------------------------------------------------------------------------

    def _on_timer_timeout(self) -> None:
        try:
            visible = self.list.isVisible() or self.dock.isVisible()
            if not visible or (not self._infos and self._open is None):
                return
            session = self.sessions.session
            if session is not None and session.status == RUNNING:
                session.snapshot.request()  # served between two steps
            self.refresh()
        except Exception:  # a timer must never raise into Qt's event loop
            log.exception("refreshing the Parameters failed")

    def _on_view_message(self, text: str) -> None:
        if text:
            self.shell.show_message(text, 8000)

    def _on_list_edit_requested(self, name: str) -> None:
        self.open_parameter(name)

    def _on_list_freeze_requested(self, names: list, frozen: bool) -> None:
        self.freeze(list(names), frozen)

    def _on_list_reinit_requested(self, names: list) -> None:
        reason = self._locked()
        if reason:
            self.shell.show_message(reason, 8000)
            return
        choice = self._ask_reinit(list(names))
        if choice is not None:
            self.reinitialize(list(names), choice)

    def _on_editor_selection_changed(self) -> None:
        ids = self.editor.selected_node_ids()
        self.show_node(ids[0] if len(ids) == 1 else None)

    def _on_run_session_changed(self) -> None:
        self._seen = ()
        self._update_marks()
        self.show_node(self._node_id)

    def _on_projects_stack_changed(self, stack) -> None:
        stack.indexChanged.connect(self._on_stack_index_changed)

    def _on_stack_index_changed(self, index: int) -> None:
        if not shiboken6.isValid(self.list):  # the window is being taken down
            return
        self._update_marks()
        graph_ids = self._project.node_ids() if self._project is not None else set()
        if self._node_id is not None and self._node_id not in graph_ids:
            self.show_node(None)
        if self._open is not None and self._open.node_id not in graph_ids:
            self._close_editor()

    def _close_editor(self) -> None:
        self._open, self._open_array = None, None
        self.tensor_editor.set_tensor(None, "")
        self.dock.hide()

    def _on_window_project_changed(self, project: object) -> None:
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        self._project = project if isinstance(project, Project) else None
        self._own = None
        self._close_editor()
        if self._project is not None:
            self._subscription = self._project.events.subscribe(self._on_project_event)
        self.show_node(None)
        self._update_marks()


def _compile_like_a_session(project: Project) -> tuple[CompiledNetwork | None, str]:
    """The project's network compiled with the seed a session would use, the engine's random
    generator left where it was; (None, the reason) if it can't be built."""
    try:
        seed = TrainingSettings.from_project(project.training).seed
    except Exception:
        seed = 0
    try:  # drawn as after engine.set_seed(seed), from a generator of its own
        with _random.fork_rng(seed):
            return compile_project(project), ""
    except Exception as exc:
        return None, str(exc)


def _held_step(project: Project | None) -> int:
    """The step the project's weights were handed over at (0 if it holds none)."""
    state = project.training.get("state") if project is not None else None
    step = state.get("step") if isinstance(state, dict) else 0
    return step if isinstance(step, int) else 0


def _is_kernel(info: ParamInfo, array: np.ndarray | None) -> bool:
    return array is not None and array.ndim == 4 and info.local.endswith("weight")

