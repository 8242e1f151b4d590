"""The Predict dock: the Predict panel wired to the window's training session.

A `Predictor` (app.session.predict) runs its own copy of the network, so nothing here
ever runs the network being trained. The prediction is made again when the input
changes, when a run pauses or ends, when weights are edited (Parameter editor), and —
while a run trains and the dock is in view — on a slow timer from the session's weight
snapshot (the training thread copies the
weights between two steps when asked; it never waits for the GUI). For 2-feature data
a click on the decision boundary makes the clicked point the input.

Sequences are drawn over time (with a forecast after the window). For a text data set a
`TextPredictor` (app.session.predict_text) answers the typed text or a row's context with
the next character's likeliest choices, and draws continuations on a thread and a copy
of the network of their own; a timer here shows how far they got.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget

from app.document import ParamValuesChanged, Project
from app.session import (
    READY,
    RUNNING,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingResumed,
    TrainingStarted,
)
from app.session.predict import PredictError, Predictor, format_value
from app.session.predict_sequence import sequence_picture, vocabulary_of
from app.session.predict_text import SamplingJob, TextPredictor, readable, readable_text
from widgets.form_fields import clear_refusal, show_refusal
from widgets.predict_panel import POINT, TEXT, VECTOR, PredictPanel

if TYPE_CHECKING:
    from app.gui.boundary import BoundaryPlot
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_bridge import QtSessionBridge
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell

log = logging.getLogger(__name__)

TICK_MS = 500  # while a run trains and the dock is in view: ~2 predictions a second
EDIT_DELAY_MS = 50
SHOWN_FEATURES = 4  # a row's values are listed beside its label up to this many features
SAMPLE_POLL_MS = 50  # a continuation being drawn is shown this often
SHOWN_CONTEXT = 60  # characters of a text row's context in its line


class PredictController(QObject):
    """The Predict dock of one main window, following the session holder's session."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 boundary: BoundaryPlot) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.sessions, self.boundary = shell, sessions, boundary
        self.predictor: Predictor | None = None
        self.text: TextPredictor | None = None  # a text data set's side
        self._text_problem = ""  # why a text data set can't be predicted as text
        self.job: SamplingJob | None = None  # the continuation being drawn, or last drawn
        self._job_prompt = ""
        self.panel = PredictPanel()
        self.dock = self._build_dock()
        self._bridge: QtSessionBridge | None = None
        self._shown_version = -1  # of the snapshot the shown prediction was made from
        # A dock behind another tab is moved out of sight, not hidden (isVisible() stays
        # True): only visibilityChanged tells whether it can be seen.
        self.in_view = False
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._edit_timer = QTimer(self)  # after an edit of the weights (a burst runs once),
        self._edit_timer.setSingleShot(True)  # and after the edit reached the session
        self._edit_timer.setInterval(EDIT_DELAY_MS)
        self._edit_timer.timeout.connect(self.refresh)
        self._sample_timer = QTimer(self)
        self._sample_timer.setInterval(SAMPLE_POLL_MS)
        self._sample_timer.timeout.connect(self._on_sample_timer_timeout)
        self.panel.text_view.sample_requested.connect(self._on_text_view_sample_requested)
        self.panel.text_view.stop_requested.connect(self._on_text_view_stop_requested)
        self._project_subscription = None
        self.panel.input_changed.connect(self._on_panel_input_changed)
        self.panel.message.connect(lambda text: shell.show_message(text, 8000))
        self.dock.visibilityChanged.connect(self._on_dock_visibility_changed)
        sessions.changed.connect(self._on_run_session_changed)
        boundary.point_clicked.connect(self._on_boundary_point_clicked)
        shell.closing.connect(self._on_window_closing)
        projects.project_changed.connect(self._on_window_project_changed)
        self._on_window_project_changed(projects.project)
        self._on_run_session_changed()

    def _build_dock(self) -> QDockWidget:
        # The Run panel stays in front; Predict is one tab away.
        return self.shell.add_dock("Predict", "predict_dock", Qt.DockWidgetArea.RightDockWidgetArea,
                                   self.panel, tab_with="run_dock", view_menu=True)

    # ---- predicting --------------------------------------------------------------------------

    def refresh(self) -> None:
        """Run the network on the chosen input and show the answer; never raises."""
        try:
            self._refresh()
        except Exception as exc:  # a bug, or a network that fails on this input: say so
            log.exception("prediction failed")
            message = f"The prediction failed: {type(exc).__name__}: {exc}"
            self.panel.set_message(message)
            self.shell.show_message(message, 10000)

    def _refresh(self) -> None:
        predictor, panel = self.predictor, self.panel
        if predictor is None or not panel.ready:
            return
        if panel.text_mode:
            self._refresh_text()
            return
        x, label, text = self._chosen_input(predictor)
        panel.show_input(text, None if panel.source == POINT else predictor.image(x))
        try:
            predicted = predictor.predict(x)
        except PredictError as exc:
            panel.set_message(str(exc))
            return
        if predictor.sequence and panel.source != POINT:
            panel.show_sequence(sequence_picture(predictor.dataset, x, label, predicted.output))
        trained, note = None, ""
        if panel.both_modes:
            try:
                trained = predictor.train_mode(x)
            except PredictError as exc:
                note = str(exc)
        panel.show_result(predicted, trained, note)
        self._shown_version = predictor.session.snapshot.version
        self._show_marker()

    def _chosen_input(self, predictor: Predictor) -> tuple[np.ndarray, object, str]:
        """The chosen sample, its label (None if typed) and a line saying what it is."""
        panel = self.panel
        if panel.source == VECTOR:
            return predictor.sample(panel.vector), None, ""
        if panel.source == POINT:
            return predictor.sample(panel.point), None, ""
        x, label = predictor.row(panel.source, panel.row)
        text = f"Label: {predictor.label_text(label)}"
        names = predictor.dataset.feature_names
        if x.ndim == 1 and 0 < len(x) <= SHOWN_FEATURES and len(names) == len(x):
            values = ", ".join(f"{n} = {format_value(v)}" for n, v in zip(names, x, strict=True))
            text += f" · {values}"
        return x, label, text

    # ---- text ----------------------------------------------------------------------------------

    def _refresh_text(self) -> None:
        """A text set: the next character's choices after the typed text or a row's context."""
        panel, text = self.panel, self.text
        if text is None:
            panel.show_input("")
            panel.set_message(self._text_problem)
            return
        prompt, actual = self._text_input(text)
        try:
            answer = text.next_characters(prompt)
        except PredictError as exc:
            if panel.source == TEXT:
                show_refusal(panel.prompt_edit, str(exc))
            panel.set_message(str(exc))
            return
        clear_refusal(panel.prompt_edit)
        panel.show_next(answer, actual)
        self._shown_version = text.predictor.session.snapshot.version

    def _text_input(self, text: TextPredictor) -> tuple[str, int | None]:
        """The text to continue (typed, or a row's context) and the true next id (rows)."""
        panel = self.panel
        if panel.source == TEXT:
            panel.show_input("")
            return panel.prompt, None
        x, label = self.predictor.row(panel.source, panel.row)
        context = text.decode(x)
        shown = readable_text(context[-SHOWN_CONTEXT:])
        cut = "…" if len(context) > SHOWN_CONTEXT else ""
        true = readable(text.vocabulary[label]) if 0 <= label < len(text.vocabulary) else "?"
        panel.show_input(f"Context: {cut}{shown} → next: {true}")
        return context, int(label)

    def start_sampling(self) -> None:
        """Draw a continuation of the shown text with the view's settings (Sample)."""
        view, text = self.panel.text_view, self.text
        if text is None or view.sampling:
            return
        prompt, _ = self._text_input(text)
        try:
            self.job = text.start_sampling(prompt, view.length, view.temperature, view.seed)
        except (PredictError, ValueError) as exc:
            view.show_continuation("", "", f"Nothing sampled: {exc}")
            self.shell.show_message(str(exc), 8000)
            return
        self._job_prompt = prompt
        view.set_sampling(True)
        view.show_continuation(prompt, "", f"0 of {view.length} characters…")
        self._sample_timer.start()

    def stop_sampling(self) -> None:
        """Stop drawing (the thread ends after its current character)."""
        if self.job is not None:
            self.job.cancel()

    def _show_job(self) -> None:
        job, view = self.job, self.panel.text_view
        if job is None:
            return
        done, length = job.progress
        continuation = job.continuation
        if job.error:
            note = f"Stopped: {job.error}"
        elif job.finished:
            ended = "stopped" if job.cancelled and done < length else "done"
            note = (f"{done} characters, {ended} · temperature "
                    f"{format_value(continuation.temperature)} · seed {continuation.seed}")
        else:
            note = f"{done} of {length} characters…"
        view.show_continuation(self._job_prompt, job.text, note)
        if job.finished:
            self._sample_timer.stop()
            view.set_sampling(False)

    def choose_point(self, x: float, y: float) -> None:
        """Make the point (x, y) of the decision boundary's plane the input, as a click does."""
        if self.predictor is None or not self.predictor.takes_points:
            return
        self.panel.set_point(x, y)  # runs the prediction (input_changed)
        output = self.panel.outputs["predict"].prediction
        if output is not None and output.classification:
            share = output.values[output.predicted]
            result = f"{output.predicted_name} ({share:.0%})"
        elif output is not None:
            result = ", ".join(format_value(v) for v in output.values)
        else:
            result = "see the Predict panel"
        self.shell.show_message(
            f"Predict: ({format_value(x)}, {format_value(y)}) → {result}", 6000
        )

    def _show_marker(self) -> None:
        point = self.panel.point
        shown = (self.predictor is not None and self.predictor.takes_points
                 and self.panel.source == POINT and point is not None)  # fmt: skip
        if shown:
            self.boundary.show_point(point[0], point[1])
        else:
            self.boundary.hide_point()

    # ---- the session ---------------------------------------------------------------------

    def _rebuild(self) -> None:
        """A predictor for the run controller's session as it now is (or a message why not)."""
        self.predictor = None
        self._end_sampling()
        self.text, self._text_problem = None, ""
        self._timer.stop()
        self._watch_bridge()
        session = self.sessions.session
        if session is None:
            self._show_problem()
            # The session is dropped before a new one is tried: the reason there is none
            # is known once the run controller is done.
            QTimer.singleShot(0, self, self._show_problem)
            self._show_marker()
            return
        try:
            predictor = Predictor(session)
        except Exception as exc:
            log.exception("making the predictor failed")
            message = f"Predict can't be set up: {exc}"
            self.panel.set_message(message)
            self.shell.show_message(message, 10000)
            return
        self.predictor = predictor
        is_text = bool(vocabulary_of(session.dataset))
        if is_text:
            try:
                self.text = TextPredictor(predictor)
            except PredictError as exc:
                self._text_problem = str(exc)
        self.panel.configure(len(session.train_set), len(session.val_set), predictor.n_features,
                             points=predictor.takes_points, text=is_text)  # fmt: skip
        if session.status == RUNNING and self.in_view:
            self._timer.start()
        self.refresh()
        if not self.panel.ready:
            self._show_marker()

    def _show_problem(self) -> None:
        if self.sessions.session is None:
            self.panel.set_message(self.sessions.problem or "There is no network to run.")

    def _watch_bridge(self) -> None:
        bridge = self.sessions.bridge
        if bridge is self._bridge:
            return
        self._bridge = bridge
        if bridge is not None:
            bridge.arrived.connect(lambda event, b=bridge: self._on_bridge_arrived(b, event))

    # ---- slots -------------------------------------------------------------------------------

    def _on_run_session_changed(self) -> None:
        try:
            self._rebuild()
        except Exception as exc:
            log.exception("following the training session failed")
            self.panel.set_message(f"Predict can't be set up: {type(exc).__name__}: {exc}")

    def _on_panel_input_changed(self) -> None:
        self.refresh()
        self._show_marker()

    def _on_bridge_arrived(self, bridge: QtSessionBridge, event: object) -> None:
        if bridge is not self._bridge:
            return  # a session replaced since
        if isinstance(event, TrainingStarted | TrainingResumed):
            if self.in_view:
                self._timer.start()
        elif isinstance(event, TrainingPaused | TrainingFinished | TrainingFailed):
            self._timer.stop()
            self.refresh()  # the weights at the pause, or as the run left them

    def _on_timer_timeout(self) -> None:
        try:
            predictor = self.predictor
            if predictor is None or predictor.session.status == READY:
                self._timer.stop()
                return
            if not self.in_view:
                self._timer.stop()
                return
            snapshot = predictor.session.snapshot
            snapshot.request()  # served between two steps; read at the next tick
            if snapshot.version in (0, self._shown_version):
                return  # nothing new yet
            self.refresh()
        except Exception:  # a timer must never raise into Qt's event loop
            log.exception("predict view update failed")

    def _on_dock_visibility_changed(self, visible: bool) -> None:
        self.in_view = visible
        predictor = self.predictor
        if not visible or predictor is None:
            self._timer.stop()
            return
        if predictor.session.status == RUNNING:
            self._timer.start()
        self.refresh()  # the weights may have moved while it was out of view

    def _on_boundary_point_clicked(self, x: float, y: float) -> None:
        try:
            if self.predictor is not None:
                self.choose_point(x, y)
        except Exception:
            log.exception("choosing a point on the decision boundary failed")

    def _on_window_project_changed(self, project: object) -> None:
        if self._project_subscription is not None:
            self._project_subscription.unsubscribe()
            self._project_subscription = None
        if isinstance(project, Project):
            self._project_subscription = project.events.subscribe(self._on_project_event)

    def _on_project_event(self, event: object) -> None:
        if isinstance(event, ParamValuesChanged):
            self._edit_timer.start()

    def _end_sampling(self) -> None:
        """Stop a continuation being drawn, and wait for its thread (a character or two)."""
        self._sample_timer.stop()
        if self.text is not None:
            self.text.stop()
        if self.job is not None:
            self._show_job()
            self.job = None
        self.panel.text_view.set_sampling(False)

    def _on_text_view_sample_requested(self) -> None:
        try:
            self.start_sampling()
        except Exception as exc:  # a bug: say so, never raise into Qt
            log.exception("sampling failed")
            self.shell.show_message(f"Sampling failed: {type(exc).__name__}: {exc}", 10000)

    def _on_text_view_stop_requested(self) -> None:
        self.stop_sampling()

    def _on_sample_timer_timeout(self) -> None:
        try:
            self._show_job()
        except Exception:  # a timer must never raise into Qt's event loop
            log.exception("showing the continuation failed")
            self._sample_timer.stop()

    def _on_window_closing(self) -> None:
        self._timer.stop()
        self._edit_timer.stop()
        self._end_sampling()
