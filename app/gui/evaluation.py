"""The Evaluation dock: the evaluation view wired to the window's training session.

An `Evaluator` (app.session.evaluation) measures a copy of the network on a whole set in
predict mode. It runs on a worker thread of its own — never the training thread, never the
GUI thread — and a GUI timer picks its result up and shows it. The dock evaluates again
after each epoch (the timer watches the session's epoch history while a run trains), when
a run pauses or ends, when weights are edited, on Refresh and when the set is switched;
out of view it only notes that it is behind and catches up when it is seen. For 2-feature
data the samples listed are also marked on the decision boundary.

From any sample view the user relabels or excludes a sample: one undoable data edit
(app.undo.data_edits) on the window's undo stack; a refusal shows in the status bar. The
Run controller then makes a session with the edited sets, and this dock evaluates it,
keeping the listed cell, so the sample's new label (or its absence) shows.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, QTimer

from app.session import (
    READY,
    RUNNING,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingSession,
)
from app.session.evaluation import (
    Evaluation,
    EvaluationCancelled,
    EvaluationError,
    Evaluator,
)
from app.session.predict import image_shape
from app.session.predict_sequence import is_sequence
from app.undo import data_edits
from widgets.evaluation_view import SPLIT_TITLES, EvaluationView

if TYPE_CHECKING:
    from app.gui.boundary import BoundaryPlot
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_bridge import QtSessionBridge
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell

log = logging.getLogger(__name__)

POLL_MS = 100  # how often the GUI looks for a finished evaluation or an ended epoch
# While a run trains, an evaluation after an epoch waits this many times as long as the
# last one took since it ended: with short epochs it takes at most about a third of a core.
PAUSE_FACTOR = 2.0


@dataclass(eq=False)
class EvaluationJob:
    """One evaluation on its worker thread; the thread writes `result`/`error`, then `done`."""

    session: TrainingSession
    split: str
    stop: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    result: Evaluation | None = None
    error: str = ""
    thread: threading.Thread | None = None
    started: float = 0.0
    seconds: float = 0.0  # how long it took

    def start(self, evaluator: Evaluator) -> None:
        self.started = time.monotonic()
        self.thread = threading.Thread(target=self._work, args=(evaluator,),
                                       name="cellwright-evaluation", daemon=True)  # fmt: skip
        self.thread.start()

    def _work(self, evaluator: Evaluator) -> None:
        try:
            self.result = evaluator.evaluate(self.split, should_stop=self.stop.is_set)
        except EvaluationCancelled:
            pass
        except EvaluationError as exc:
            self.error = str(exc)
        except Exception as exc:  # a bug, or a network that fails on this data: say so
            log.exception("evaluation failed")
            self.error = f"The evaluation failed: {type(exc).__name__}: {exc}"
        finally:
            self.seconds = time.monotonic() - self.started
            self.done.set()


class EvaluationController(QObject):
    """The Evaluation dock of one main window, following the session holder's session."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 boundary: BoundaryPlot) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects = shell, projects
        self.sessions, self.boundary = sessions, boundary
        self.view = EvaluationView()
        # Beside the Plots once shown from View → Evaluation: as a tab of the Plots it would
        # take the hook panes' place there (Qt tabs a dock split against a tab group).
        self.dock = shell.add_dock_when_shown("Evaluation", "evaluation_dock", self.view,
                                              beside="plots_dock")  # fmt: skip
        self.evaluator: Evaluator | None = None
        self.image_shape: tuple[int, ...] | None = None
        self.points = False  # 2-feature data: samples are marked on the decision boundary
        self.job: EvaluationJob | None = None
        self.evaluation: Evaluation | None = None  # the one shown
        self.stale = True  # the weights or the set changed since the one shown was made
        self._epochs_seen = 0  # epochs in the session's history when last evaluated
        self._next_after_epoch = 0.0  # monotonic time before which an ended epoch waits
        self._bridge: QtSessionBridge | None = None
        self._data_key: tuple = ()  # what the last session evaluated was made on
        self.in_view = False  # a dock behind a tab stays "visible": visibilityChanged tells
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self.view.refresh_requested.connect(self._on_view_refresh_requested)
        self.view.split_changed.connect(self._on_view_split_changed)
        self.view.samples_shown.connect(self._on_view_samples_shown)
        self.view.relabel_requested.connect(self._on_view_relabel_requested)
        self.view.exclude_requested.connect(self._on_view_exclude_requested)
        self.dock.visibilityChanged.connect(self._on_dock_visibility_changed)
        sessions.changed.connect(self._on_sessions_changed)
        sessions.weights_changed.connect(self._on_sessions_weights_changed)
        shell.closing.connect(self._on_window_closing)
        self._on_sessions_changed()

    # ---- evaluating ------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.job is not None and not self.job.done.is_set()

    def refresh(self) -> None:
        """Evaluate the chosen set again (after the one under way, if any)."""
        self.stale = True
        if self.evaluator is None:
            return
        if self.busy:
            return  # `stale` makes the timer start another when this one is done
        session = self.evaluator.session
        self._epochs_seen = session.metrics.epochs.total
        self.stale = False
        self.job = EvaluationJob(session, self.view.split)
        self.job.start(self.evaluator)
        if self.evaluation is None:
            self.view.set_message(f"Evaluating the {SPLIT_TITLES[self.view.split].lower()}…")
        self.view.refresh_button.setEnabled(False)
        self._timer.start()

    def _take_result(self) -> None:
        """On the GUI thread: show what the finished job made (if it is still wanted)."""
        job, self.job = self.job, None
        self.view.refresh_button.setEnabled(True)
        if job is not None:
            self._next_after_epoch = time.monotonic() + PAUSE_FACTOR * job.seconds
        if job is None or self.evaluator is None or job.session is not self.evaluator.session:
            return
        if job.split != self.view.split:
            self.stale = True  # switched while it ran
            return
        if job.result is not None:
            self.evaluation = job.result
            self.view.show_evaluation(job.result, self.image_shape)
            session = job.session
            if session.status == READY and job.result.step != session.state.step:
                self.stale = True  # made from a snapshot just before the run ended
        elif job.error:
            self.evaluation = None
            self.view.clear(job.error)

    def _cancel(self) -> None:
        if self.job is not None:
            self.job.stop.set()

    def _update_timer(self) -> None:
        session = self.sessions.session
        # A job not yet taken keeps it going, also one that finished at once.
        wanted = self.job is not None or (self.in_view and session is not None
                               and (session.status == RUNNING or self.stale))  # fmt: skip
        if not wanted:
            self._timer.stop()
        elif not self._timer.isActive():
            self._timer.start()

    # ---- the session -----------------------------------------------------------------------

    def _rebuild(self) -> None:
        self._cancel()
        self.job = None
        self.view.refresh_button.setEnabled(True)
        self.evaluator, self.evaluation = None, None
        self.boundary.clear_highlight()
        self._watch_bridge()
        session = self.sessions.session
        if session is None:  # (the cell listed stays chosen for a session on the same data)
            self.view.clear(self.sessions.problem or "There is no network to evaluate.",
                            keep_cell=True)  # fmt: skip
            QTimer.singleShot(0, self, self._show_problem)  # the reason is known a bit later
            self._update_timer()
            return
        try:
            self.evaluator = Evaluator(session)
        except Exception as exc:
            log.exception("making the evaluator failed")
            self.view.clear(f"The evaluation can't be set up: {exc}")
            return
        data = session.dataset
        self.points = data.sample_shape == (2,)
        self.image_shape = None if is_sequence(data, session.project) else image_shape(data)
        data_key, self._data_key = self._data_key, _data_key(session)
        self.view.clear("", keep_cell=data_key == self._data_key)
        self.stale = True
        if self.in_view:
            self.refresh()
        self._update_timer()

    def _show_problem(self) -> None:
        if self.sessions.session is None:
            self.view.clear(self.sessions.problem or "There is no network to evaluate.")

    def _watch_bridge(self) -> None:
        bridge = self.sessions.bridge
        if bridge is self._bridge:
            return
        self._bridge = bridge
        if bridge is not None:
            bridge.arrived.connect(lambda event, b=bridge: self._on_bridge_arrived(b, event))

    # ---- slots -----------------------------------------------------------------------------

    def _on_timer_timeout(self) -> None:
        try:
            if self.job is not None and self.job.done.is_set():
                self._take_result()
            evaluator = self.evaluator
            if evaluator is not None and not self.busy and self.in_view:
                ended = (evaluator.session.metrics.epochs.total != self._epochs_seen
                         and time.monotonic() >= self._next_after_epoch)  # fmt: skip
                if ended or self.stale:
                    self.refresh()
            self._update_timer()
        except Exception:  # a timer must never raise into Qt's event loop
            log.exception("evaluation view update failed")

    def _on_bridge_arrived(self, bridge: QtSessionBridge, event: object) -> None:
        if bridge is not self._bridge:
            return
        if isinstance(event, TrainingPaused | TrainingFinished | TrainingFailed):
            self.stale = True  # the weights the run left
        self._update_timer()

    def _on_sessions_changed(self) -> None:
        try:
            self._rebuild()
        except Exception as exc:
            log.exception("following the training session failed")
            self.view.clear(f"The evaluation can't be set up: {type(exc).__name__}: {exc}")

    def _on_sessions_weights_changed(self) -> None:
        self.stale = True
        self._update_timer()

    def _on_view_refresh_requested(self) -> None:
        self.refresh()

    def _on_view_split_changed(self, split: str) -> None:
        self.stale = True
        self.boundary.clear_highlight()
        if not self.busy:
            self.refresh()

    def _on_view_samples_shown(self, indices: object) -> None:
        try:
            evaluation = self.evaluation
            rows = np.asarray(indices, dtype=np.int64)
            if not self.points or evaluation is None or not len(rows):
                self.boundary.clear_highlight()
                return
            x = np.asarray(evaluation.data.x[rows], dtype=np.float64).reshape(len(rows), -1)
            self.boundary.highlight_points(x[:, 0], x[:, 1])
        except Exception:
            log.exception("marking samples on the decision boundary failed")

    def _on_view_relabel_requested(self, index: int, label: int) -> None:
        self._edit_data(data_edits.relabel, index, label)

    def _on_view_exclude_requested(self, index: int) -> None:
        self._edit_data(data_edits.exclude, index)

    def _edit_data(self, edit, index: int, *args: int) -> None:
        """Make a data edit of sample `index` of the evaluation shown (one undo step)."""
        try:
            evaluation = self.view.evaluation
            if evaluation is None:
                self.shell.show_message("There is no evaluation to edit the data of.", 8000)
                return
            stack = self.projects.undo_stack
            message = edit(stack, self.projects.project, evaluation.data, index, *args)
            self.shell.show_message(message or f"{stack.undoText()}: training and the "
                                    "evaluation use it from now on.", 8000)  # fmt: skip
        except Exception as exc:  # a bug must not take the window down
            log.exception("the data edit failed")
            self.shell.report_error("Data edit", exc)

    def _on_dock_visibility_changed(self, visible: bool) -> None:
        self.in_view = visible
        self._update_timer()

    def _on_window_closing(self) -> None:
        self._timer.stop()
        self._cancel()
        if self.job is not None and self.job.thread is not None:
            self.job.thread.join(timeout=10)


def _data_key(session: TrainingSession) -> tuple:
    """What a session evaluates: its project and data set (the same after a data edit)."""
    data = session.dataset
    return (id(session.project), data.name, tuple(data.class_names or ()), data.sample_shape)
