"""Hooks you can see: a pane (a dock in the Plots area) and a probe on the canvas for each of
the project's hooks, and the health overlay, wired to the training session's captures.

The training thread only copies captured tensors into slots (`HookCapture.record`).
Everything else happens here, on a GUI timer at display rate and within a share of
one core (`FrameBudget`): the captures that something visible shows — a visible pane,
a probe on the level of the network the canvas shows, the health overlay — are
summarised, the probes' sparklines are redrawn, and the visible panes are ticked (one
timer for all: every wakeup of the GUI thread takes the interpreter from the training
thread). A hook nobody can see costs the copy and nothing more.

Hooks are document edits (`HookCommand`, undoable and saved). The controller follows
the project's hook events, the undo stack (an undo may bring a hooked node back) and
the window's sessions (`SessionHolder`): it attaches and detaches the engine hooks of the
current session, also while it trains. Closing a pane removes its hook.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

import numpy as np
import shiboken6
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import QDockWidget

from app.document import HookAdded, HookChanged, HookRemoved, Project
from app.session import RUNNING
from app.session.health import PREFIX as HEALTH_PREFIX
from app.session.health import Health, HealthMonitor
from app.session.hook_captures import READ_INTERVAL, STAT_COLUMNS
from app.session.probes import PROBE_KINDS, token_node
from widgets.node_editor.probes import Indicator
from widgets.plots import FrameBudget, HookPane
from widgets.plots.attention_pane import AttentionPane
from widgets.plots.recurrent_pane import RecurrentPane

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell
    from app.session.hook_captures import HookCapture
    from widgets.node_editor import NodeEditor

log = logging.getLogger(__name__)

TICK_MS = round(READ_INTERVAL * 1000)  # summaries, probes and the panes' redraws
HEALTH_MS = 500
MAX_READ_GAP = 2.0  # seconds: a longer pause between summaries says nothing of their pace
PANE_SHARE = 0.005  # of one core, for all panes' redraws together
SUMMARY_SHARE = 0.004  # of one core, for the summaries and the probes (painting included)
SPARK_POINTS = 64
KIND_NAMES = {
    "forward_pre": "Forward-pre hook",
    "forward": "Forward hook",
    "backward": "Backward hook",
    "hook_backward": "HookBackward",
    "attention": "Attention weights",
    "recurrent": "Recurrent state",
}
PROBE_PANES = {"attention": AttentionPane, "recurrent": RecurrentPane}  # panes inside a layer


class HookDock(QDockWidget):
    """The dock holding one HookPane; closing it (×) asks for the hook to go."""

    close_requested = Signal()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        self.close_requested.emit()
        event.ignore()  # the hook's removal deletes the dock (and an undo brings it back)


class HookController(QObject):
    """The hook panes, probes and health overlay of one main window."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 editor: NodeEditor) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions = shell, projects, sessions
        self.editor = editor
        self.docks: dict[str, HookDock] = {}
        self.budget = FrameBudget(PANE_SHARE)  # shared by every pane
        self.summary_budget = FrameBudget(SUMMARY_SHARE)
        editor.scene.probe_budget = self.summary_budget  # the sparklines' repaints too
        self.monitor: HealthMonitor | None = None
        self.summaries = 0  # captures summarised (tests: nothing when nothing is visible)
        self._project: Project | None = None
        self._subscription = None
        self._probe_versions: dict[str, int] = {}
        self._waiting: set[str] = set()  # panes hidden while their target is deleted
        self._next_pane = 0  # the pane that asks the shared budget first at the next tick
        self._summarised_at: float | None = None  # when the last summary ran
        self._read_gap = READ_INTERVAL  # seconds between summaries, smoothed
        self._health_at = 0.0
        self._cost: dict[str, tuple[float, float]] = {}  # hook id -> (spent, when)
        self._build_actions()
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()
        editor.pane_requested.connect(self._on_editor_pane_requested)
        sessions.changed.connect(self._on_run_session_changed)
        projects.project_changed.connect(self._on_window_project_changed)
        shell.closing.connect(self._on_window_closing)
        self._on_window_project_changed(projects.project)

    # ---- building ----------------------------------------------------------------------------

    def _build_actions(self) -> None:
        window = self.shell.window
        health = QAction("&Health Overlay", window)
        health.setObjectName("health_overlay_action")
        health.setCheckable(True)
        health.setStatusTip("Show on each node its gradient norm, dead ReLU units, saturated "
                            "sigmoid/tanh outputs, LSTM/GRU gate saturation and gradient "
                            "through time, and NaN/inf, from what training captures")
        health.toggled.connect(self._on_health_action_toggled)
        tile = QAction("&Tile Hook Panes", window)
        tile.setObjectName("tile_hook_panes_action")
        tile.triggered.connect(lambda: self.arrange(tiled=True))
        tab = QAction("Ta&b Hook Panes", window)
        tab.setObjectName("tab_hook_panes_action")
        tab.triggered.connect(lambda: self.arrange(tiled=False))
        self.actions = {"health": health, "tile": tile, "tab": tab}
        menu = self.shell.menu("view_menu")
        menu.addSeparator()
        menu.addActions([health, tile, tab])

    # ---- the project's hooks -----------------------------------------------------------------

    def live(self) -> dict:
        """The project's hooks whose node or edge is in the network now, by id."""
        project = self._project
        return {h.id: h for h in project.live_hooks()} if project is not None else {}

    def show_pane(self, hook_id: str) -> HookDock | None:
        """Show (and raise) the pane of a hook; None if the hook is not in the network."""
        self.sync()
        dock = self.docks.get(hook_id)
        if dock is None:
            return None
        dock.show()
        dock.raise_()
        return dock

    def sync(self) -> None:
        """Docks, engine hooks and probes in step with the project's hooks and the session."""
        live = self.live()
        for hook_id in [i for i in self.docks if self._project is None
                        or self._project.hook(i) is None]:  # fmt: skip
            self._drop_dock(hook_id)
        for hook in live.values():
            if hook.id not in self.docks:
                self._add_dock(hook)
        for hook_id, dock in self.docks.items():
            hook = live.get(hook_id)
            if hook is not None:  # its node may have been renamed
                dock.setWindowTitle(self._title(hook))
            if hook is None and hook_id not in self._waiting:  # its node or edge was deleted:
                self._waiting.add(hook_id)  # the pane waits, hidden, for an undo
                dock.hide()
            elif hook is not None and hook_id in self._waiting:
                self._waiting.discard(hook_id)
                dock.show()
        self._sync_captures(live)
        self.editor.scene.set_probes([(h.id, h.kind, h.target) for h in live.values()
                                      if h.kind not in PROBE_KINDS])  # fmt: skip

    def _sync_captures(self, live: dict) -> None:
        session = self.sessions.session
        captures = session.captures if session is not None else None
        if captures is not None:
            captures.pace.read_interval = max(READ_INTERVAL, self._read_gap)  # rows evenly spaced
            held = {i for i in (*captures.captures, *captures.skipped)
                    if not i.startswith(HEALTH_PREFIX)}  # fmt: skip
            for hook_id in held - set(live):
                captures.detach(hook_id)  # handle.remove(): no capture work remains
            for hook_id in set(live) - held:
                captures.attach(live[hook_id])
        for hook_id, dock in self.docks.items():
            pane: HookPane = dock.widget()
            capture = captures.captures.get(hook_id) if captures is not None else None
            if pane.capture is not capture or capture is None:
                pane.set_capture(capture)
            if capture is None:
                if captures is not None and hook_id in captures.skipped:
                    pane.set_message(f"Not capturing: {captures.skipped[hook_id]}.")
                elif captures is None:
                    problem = self.sessions.problem
                    pane.set_message(f"Not capturing: {problem}" if problem
                                     else "Not capturing: there is no network to train.")
            else:
                hook = live.get(hook_id)
                if hook is not None:
                    capture.paused = bool(hook.settings.get("paused", False))
                    capture.every_step = bool(hook.settings.get("every_step", False))
                if hook is not None and hook.kind in PROBE_KINDS and session is not None:
                    self._follow_tokens(captures, capture, hook, pane, session)

    def _follow_tokens(self, captures, capture, hook, pane, session) -> None:
        """A probe pane labels its axes with the characters its layer's Embedding receives."""
        if not capture.tokens_watched:
            captures.watch_tokens(hook.id, token_node(session.project.graph, hook.target))
        pane.set_vocabulary(getattr(session.dataset, "vocabulary", ()) or ())

    def _add_dock(self, hook) -> HookDock:
        window = self.shell.window
        title = self._title(hook)
        dock = HookDock(title, window)
        dock.setObjectName(f"hook_pane_{hook.id}")
        dock.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
        if hook.kind in PROBE_PANES:
            pane = PROBE_PANES[hook.kind](None, settings=dict(hook.settings), budget=self.budget)
        else:
            pane = HookPane(None, view=hook.pane, settings=dict(hook.settings), budget=self.budget)
        pane.setObjectName(f"hook_pane_widget_{hook.id}")
        dock.setWidget(pane)
        others = [d for d in self.docks.values() if not d.isFloating()]
        if others:
            window.tabifyDockWidget(others[-1], dock)
        else:
            window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            window.splitDockWidget(self.shell.dock("plots_dock"), dock,
                                   Qt.Orientation.Horizontal)  # fmt: skip
        hook_id = hook.id
        dock.close_requested.connect(lambda: self._remove_hook(hook_id))
        pane.settings_changed.connect(
            lambda view, settings: self._on_pane_settings_changed(hook_id, view, settings))
        self.docks[hook_id] = dock
        dock.show()  # also when an undo brings the hook back
        return dock

    def _title(self, hook) -> str:
        return f"{KIND_NAMES[hook.kind]} · {self.editor.target_name(hook.target)}"

    def _drop_dock(self, hook_id: str) -> None:
        dock = self.docks.pop(hook_id, None)
        self._waiting.discard(hook_id)
        self._probe_versions.pop(hook_id, None)
        self._cost.pop(hook_id, None)
        if dock is not None and shiboken6.isValid(dock):
            pane = dock.widget()
            if pane is not None:
                pane.set_capture(None)
            self.shell.window.removeDockWidget(dock)
            dock.deleteLater()

    def arrange(self, *, tiled: bool) -> None:
        """Hook panes side by side (tiled) or as tabs of one dock area.

        Tiled, as many panes go side by side as fit beside the training curves at their
        smallest width (a window never grows past the screen for them); the others are
        tabs of the last tile.
        """
        docks = [d for d in self.docks.values() if d.isVisible() and not d.isFloating()]
        window = self.shell.window
        if not tiled or len(docks) < 2:
            for previous, dock in zip(docks, docks[1:], strict=False):
                window.tabifyDockWidget(previous, dock)
            return
        # Split a dock that is (or was) in a tab group and Qt adds a tab: every pane
        # leaves the layout first, then each goes right of the one before, the first
        # right of the training curves.
        for dock in docks:
            window.removeDockWidget(dock)
        plots = self.shell.dock("plots_dock")
        beside = plots.isVisible() and not plots.isFloating()
        room = window.centralWidget().width() - (plots.minimumSizeHint().width() if beside else 0)
        fit = max(1, room // max(docks[0].minimumSizeHint().width(), 1))
        tiles, tabs = docks[:fit], docks[fit:]
        anchors = [plots, *tiles] if beside else tiles
        for dock in tiles:
            window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            if dock is not anchors[0]:
                window.splitDockWidget(anchors[anchors.index(dock) - 1], dock,
                                       Qt.Orientation.Horizontal)  # fmt: skip
            dock.show()
        for dock in tabs:
            window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
            window.tabifyDockWidget(tiles[-1], dock)
            dock.show()
        # The training curves keep a double share: they are what a run is watched by.
        shares = [2 if dock is plots else 1 for dock in anchors]
        part = max(window.centralWidget().width() // sum(shares), 1)
        window.resizeDocks(anchors, [part * share for share in shares],
                           Qt.Orientation.Horizontal)  # fmt: skip

    def _remove_hook(self, hook_id: str) -> None:
        if not self.editor.remove_hook(hook_id):
            self.shell.show_message("That hook could not be removed.", 5000)

    # ---- display rate --------------------------------------------------------------------------

    def _on_timer_timeout(self) -> None:
        try:
            self.tick()
        except Exception:  # a timer must never raise into Qt's event loop
            log.exception("hook views update failed")

    def tick(self) -> None:
        """Summarise what is visible, then redraw the probes and the health overlay."""
        session = self.sessions.session
        if session is None or not self.shell.window.isVisible():
            return
        if self.monitor is not None and time.monotonic() - self._health_at >= HEALTH_MS / 1000:
            self._health_at = time.monotonic()
            self.summary_budget.timed(self._show_health)
        # While training, within the budget (asked first: finding what is visible has a
        # cost of its own); paused or done, catch up at once.
        if session.status != RUNNING or self.summary_budget.ready():
            wanted = self.visible_hooks()
            if wanted:
                self.summary_budget.timed(self._summarise, session.captures, wanted)
        self._tick_panes()

    def _tick_panes(self) -> None:
        """The panes' own ticks, on this one timer, taking turns: they share one budget,
        and the pane asked first after it recovers would otherwise always be the one drawn."""
        panes = [d.widget() for d in self.docks.values() if d.isVisible()]
        if not panes:
            return
        start = self._next_pane % len(panes)
        for i, pane in enumerate(panes[start:] + panes[:start]):
            drawn = pane.redraws
            pane.tick()
            if pane.redraws != drawn:  # it had its turn: the next one goes first next time
                self._next_pane = start + i + 1

    def visible_hooks(self) -> list[str]:
        """Hooks whose pane or probe can be seen now (only these are summarised)."""
        shown = self.editor.scene.shown_probe_ids() if self.editor.isVisible() else set()
        panes = {i for i, d in self.docks.items()
                 if d.isVisible() and not d.visibleRegion().isEmpty()}  # fmt: skip
        return sorted(shown | panes)

    def _summarise(self, captures, wanted: list[str]) -> None:
        scene = self.editor.scene
        shown = scene.shown_probe_ids()
        now = time.monotonic()
        # The capture stride follows how often summaries really come (the budget may
        # space them out): captures then fit the slots between two reads, evenly spaced,
        # instead of the history's head waiting full while newer ones are dropped.
        if self._summarised_at is not None:
            gap = min(now - self._summarised_at, MAX_READ_GAP)  # (nothing was on screen)
            self._read_gap += (gap - self._read_gap) * 0.3
            captures.pace.read_interval = max(READ_INTERVAL, self._read_gap)
        self._summarised_at = now
        for hook_id in wanted:
            capture = captures.captures.get(hook_id)
            if capture is None:
                continue
            capture.summarise()
            self.summaries += 1
            if capture.every_step:
                self._show_cost(hook_id, capture, now)
            if hook_id in shown and self._probe_versions.get(hook_id) != capture.version:
                self._probe_versions[hook_id] = capture.version
                values, text = self._probe(capture)
                scene.set_probe_values(hook_id, values, text)

    def _probe(self, capture: HookCapture) -> tuple[np.ndarray, str]:
        hook = capture.hook
        column = STAT_COLUMNS.index("norm" if hook.gradient else "mean")
        rows = capture.stats.newest(SPARK_POINTS)
        values = rows[:, column] if len(rows) else np.empty(0)
        what = "gradient norm" if hook.gradient else "mean"
        name = f"{KIND_NAMES[hook.kind]} on {self.editor.target_name(hook.target)}"
        if len(rows):
            text = f"{name} — {what} {rows[-1, column]:.4g} at step {int(rows[-1, 0])}"
        else:
            text = f"{name} — waiting for the next training step"
        return values, f"{text}; click to show its pane"

    def _show_cost(self, hook_id: str, capture: HookCapture, now: float) -> None:
        """What capturing every step costs, for a pane that asked for it."""
        spent, when = self._cost.get(hook_id, (capture.spent, now))
        if now - when >= 1.0:
            share = (capture.spent - spent) / (now - when)
            dock = self.docks.get(hook_id)
            if dock is not None:
                dock.widget().set_cost(f"every step costs {share:.1%} of the training time")
            self._cost[hook_id] = (capture.spent, now)
        elif hook_id not in self._cost:
            self._cost[hook_id] = (spent, when)

    def _show_health(self) -> None:
        monitor, scene = self.monitor, self.editor.scene
        if monitor is None:
            return
        found = monitor.indicators()
        scene.set_health({node_id: [_indicator(h) for h in items]
                          for node_id, items in found.items() if items})  # fmt: skip

    # ---- health overlay ------------------------------------------------------------------------

    def _start_health(self) -> None:
        self._stop_health()
        session = self.sessions.session
        if session is None or not self.actions["health"].isChecked():
            return
        self.monitor = HealthMonitor(session.captures, session.project)
        self.monitor.attach()
        self._health_at = 0.0

    def _stop_health(self) -> None:
        if self.monitor is not None:
            self.monitor.detach()
            self.monitor = None

    def _on_health_action_toggled(self, on: bool) -> None:
        if on:
            self._start_health()
            if self.sessions.session is None:
                self.shell.show_message("The health overlay shows once the network can train.",
                                        8000)  # fmt: skip
            else:
                self.shell.show_message("Health overlay: indicators appear on the nodes as "
                                        "training captures data.", 8000)  # fmt: skip
        else:
            self._stop_health()
        self.editor.scene.set_health({} if on else None)

    # ---- slots -----------------------------------------------------------------------------------

    def _on_pane_settings_changed(self, hook_id: str, view: str, settings: dict) -> None:
        project = self._project
        hook = project.hook(hook_id) if project is not None else None
        if hook is None:
            return
        merged = {**hook.settings, **settings}
        if hook.pane == view and dict(hook.settings) == merged:
            return
        project.change_hook(hook.with_view(view, merged))  # saved; not an undo step
        self.projects.mark_unsaved()

    def _on_project_event(self, event: object) -> None:
        if isinstance(event, HookAdded | HookRemoved | HookChanged):
            self.sync()

    def _on_editor_pane_requested(self, hook_id: str) -> None:
        if self.show_pane(hook_id) is None:
            self.shell.show_message("That hook's node or connection is not in the network.",
                                    5000)  # fmt: skip

    def _on_run_session_changed(self) -> None:
        session = self.sessions.session
        if session is not None and session.project is not self._project:
            return  # a new project's session: the project change comes next and syncs
        self._probe_versions.clear()
        self._cost.clear()
        self._summarised_at, self._read_gap = None, READ_INTERVAL
        self.sync()
        if self.actions["health"].isChecked():
            self._start_health()

    def _on_stack_index_changed(self, index: int) -> None:
        self.sync()

    def _on_window_project_changed(self, project: object) -> None:
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        self._stop_health()
        for hook_id in list(self.docks):
            self._drop_dock(hook_id)
        self._project = project if isinstance(project, Project) else None
        if self._project is not None:
            self._subscription = self._project.events.subscribe(self._on_project_event)
            self.projects.undo_stack.indexChanged.connect(self._on_stack_index_changed)
        self.sync()
        if self.actions["health"].isChecked():
            self._start_health()

    def _on_window_closing(self) -> None:
        self._timer.stop()  # the panes tick on it too
        self._stop_health()


def _indicator(health: Health) -> Indicator:
    return Indicator(health.name, health.text, health.status, health.tooltip)
