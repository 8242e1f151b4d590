"""The decision boundary of the current session: what the network predicts over the plane of
2-feature data, with the data's points, redrawn as the weights move.

It evaluates its own predict-mode copy of the network (never the one being trained),
from the session's weight snapshot, within a share of one core while a run streams.
Others use it through a small API: the Run controller prepares it for a session and
asks it to redraw; the Predict dock marks a point (`show_point`) and hears clicks
(`point_clicked`); the Evaluation dock rings samples (`highlight_points`), never
touching the plot.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal

from app.compiler import compile_project
from app.session import PAUSED, READY, RUNNING, TrainingSession
from app.session.boundary import predict_points
from engine import _random
from widgets.plots import DecisionBoundaryView, FrameBudget, extent_for, grid_points
from widgets.predict_panel import point_marker

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_holder import SessionHolder

log = logging.getLogger(__name__)

BOUNDARY_SHARE = 0.03  # of one core, for the boundary's redraws while a run streams
GRID = (120, 120)


def highlight_marker() -> pg.ScatterPlotItem:
    """Wide dark rings over the points, above every other item."""
    rings = pg.ScatterPlotItem(symbol="o", size=16, brush=None,
                               pen=pg.mkPen("#111111", width=2.5))  # fmt: skip
    rings.setZValue(30)
    rings.hide()
    return rings


class BoundaryPlot(QObject):
    """The decision-boundary view of one window, following the session it is prepared for."""

    point_clicked = Signal(float, float)  # a left click on the plot, in data coordinates

    def __init__(self, projects: ProjectHolder, sessions: SessionHolder,
                 parent: QObject | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.projects, self.sessions = projects, sessions
        self.view = DecisionBoundaryView()
        self.marker = point_marker()
        self.marker.hide()
        self.view.plot.addItem(self.marker)
        self.highlight = highlight_marker()  # samples the Evaluation dock lists
        self.view.plot.addItem(self.highlight)
        self._preview: Any = None  # a predict-mode copy of the network
        self._preview_params: dict = {}
        self._grid: tuple | None = None  # (extent, points) for 2-feature data
        self._version = -1  # of the snapshot last drawn
        self.dirty = True  # the weights may have moved with no new snapshot version
        self._budget = FrameBudget(BOUNDARY_SHARE)
        self.view.plot_view.scene().sigMouseClicked.connect(self._on_scene_mouse_clicked)
        sessions.weights_changed.connect(self._on_sessions_weights_changed)

    # ---- the API ---------------------------------------------------------------------------

    def set_message(self, text: str | None) -> None:
        self.view.set_message(text)

    def show_point(self, x: float, y: float) -> None:
        """Mark the point (x, y), e.g. the Predict dock's input."""
        self.marker.setData([x], [y])
        self.marker.show()

    def hide_point(self) -> None:
        self.marker.hide()

    def highlight_points(self, x: np.ndarray, y: np.ndarray) -> None:
        """Ring the points (x[i], y[i]), e.g. the samples of a confusion-matrix cell."""
        self.highlight.setData(x=np.asarray(x, dtype=np.float64),
                               y=np.asarray(y, dtype=np.float64))  # fmt: skip
        self.highlight.show()

    def clear_highlight(self) -> None:
        self.highlight.setData(x=[], y=[])
        self.highlight.hide()

    @property
    def highlighted(self) -> np.ndarray:
        """(n, 2): the points ringed now."""
        if not self.highlight.isVisible():
            return np.zeros((0, 2))
        x, y = self.highlight.getData()
        return np.column_stack((x, y))

    def prepare(self, session: TrainingSession) -> None:
        """Follow `session`: a second, predict-mode copy of its network to evaluate, made
        while nothing trains; the random generator is put back so training is the same
        with or without the view."""
        data = session.dataset
        if data.sample_shape != (2,):
            self.drop()
            self.view.set_message(
                f"The decision boundary needs data with 2 input features; {data.name} has "
                f"samples of shape {data.sample_shape}."
            )
            return
        with _random.fork_rng():  # the engine's generator is left where it was
            compiled = compile_project(self.projects.project)
        compiled.network.set_train(False)
        self._preview = compiled.network
        self._preview_params = compiled.parameters()
        extent = extent_for(data.x)
        self._grid = (extent, grid_points(extent, GRID))
        train, val = session.train_set, session.val_set
        self.view.set_points(train.x, train.y, val.x, val.y,
                             data.class_names if data.task == "classification" else None)
        self.dirty = True

    def drop(self) -> None:
        """No session: nothing to evaluate."""
        self._preview, self._preview_params, self._grid = None, {}, None
        self.dirty = True

    def refresh(self, force: bool = False) -> bool:
        """Redraw if the weights moved since it was drawn; True if it was."""
        session = self.sessions.session
        if session is None or self._preview is None or self._grid is None:
            return False
        if not force and not self.view.isVisible():
            return False
        snapshot = session.snapshot
        status = session.status
        if status == RUNNING and not force and not self._budget.ready():
            return False
        if status == RUNNING:
            snapshot.request()  # served by the training thread between two steps
        elif status == READY and (self.dirty or force):
            snapshot.take_now(session.state.step)
        if snapshot.version == self._version and not force:
            return False
        self._version = snapshot.version
        self.dirty = False
        self._budget.timed(self._draw, session)
        return True

    # ---- drawing ---------------------------------------------------------------------------

    def _draw(self, session: TrainingSession) -> None:
        step = session.snapshot.copy_into(self._preview_params)
        extent, points = self._grid
        values = predict_points(self._preview, points, session.targets,
                                session.compiled.input_dtypes[0])  # fmt: skip
        classes = session.dataset.num_classes if session.targets.classification else None
        self.view.set_field(extent, values.reshape(GRID[1], GRID[0]), classes)
        self.view.setToolTip(f"Predicted in predict mode with the weights after step {step}")

    # ---- slots -----------------------------------------------------------------------------

    def _on_sessions_weights_changed(self) -> None:
        """Parameter values were edited (with no run training): redraw from them."""
        session = self.sessions.session
        if session is not None and session.status in (READY, PAUSED):
            session.snapshot.take_now(session.state.step)
        self.dirty = True
        self.refresh()

    def _on_scene_mouse_clicked(self, event) -> None:
        try:
            if event.button() != Qt.MouseButton.LeftButton or self._grid is None:
                return
            view_box = self.view.plot.getViewBox()
            where = event.scenePos()
            if not view_box.sceneBoundingRect().contains(where):
                return  # on an axis or the colour bar
            point = view_box.mapSceneToView(where)
            self.point_clicked.emit(point.x(), point.y())
        except Exception:
            log.exception("a click on the decision boundary failed")
