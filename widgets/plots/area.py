"""The Plots dock's content: the training curves and the decision boundary.

Side by side on a splitter while the dock is wide enough for readable curves and a
square boundary; as two tabs when it is not (a hook pane beside it, a narrow window),
so the curves never shrink to postage stamps. A boundary that only says why there is
none (data without 2 features) takes a narrow column.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSplitter, QStackedLayout, QTabWidget, QWidget

from widgets.plots.curve_layout import READABLE, SHARES, STACKED
from widgets.plots.decision_boundary import DecisionBoundaryView
from widgets.plots.schedule_curve import ScheduleCurve

BOUNDARY_SHARE = 1 / 3  # of the width, at most, by default: the curves are what is watched
BOUNDARY_MIN = 200  # px: narrower, the boundary's points and axes no longer read
MESSAGE_WIDTH = 180  # px: the boundary's column when it only shows why there is none
LEGEND_HEIGHT = 24  # px: the boundary's legend line over its square plot
HANDLE = 6  # px: the splitter's handle, wide enough to find with the mouse
CURVES_MIN = round(READABLE[0] / SHARES[STACKED]["loss"][0])  # px: a readable loss beside
HYSTERESIS = 24  # px: a resize across the edge does not flip side by side and tabs back


def boundary_width(width: int, height: int) -> int:
    """The boundary's default width in a `width` x `height` area: a square plot (its legend
    above, its axis beside), within BOUNDARY_MIN and BOUNDARY_SHARE of the width."""
    square = height - LEGEND_HEIGHT + 40  # the left axis's labels take about 40 px
    return int(max(BOUNDARY_MIN, min(square, width * BOUNDARY_SHARE)))


class PlotsArea(QWidget):
    """Curves on the left, the decision boundary on the right, or the two as tabs.

    Side by side, drag the handle to share the width otherwise (or close the boundary
    against the edge); until the user drags it, a resize gives the boundary its default
    width again.
    """

    def __init__(self, curves: QWidget, boundary: DecisionBoundaryView,
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setObjectName("plots_area")
        self.curves, self.boundary = curves, boundary
        # The planned learning rate, drawn in the curves' learning-rate plot (`set_plan`).
        self.schedule = ScheduleCurve(curves)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("plots_splitter")
        self.splitter.setHandleWidth(HANDLE)
        self.tabs = QTabWidget()
        self.tabs.setObjectName("plots_tabs")
        self.tabs.setDocumentMode(True)
        self._pages = QStackedLayout(self)
        self._pages.addWidget(self.splitter)
        self._pages.addWidget(self.tabs)
        self.user_sized = False
        self.tabbed: bool | None = None
        self._place(tabbed=False)
        self.splitter.splitterMoved.connect(self._on_splitter_moved)
        boundary.message_changed.connect(self._on_boundary_message_changed)

    @property
    def message_only(self) -> bool:
        """True while the boundary shows only why there is none."""
        return self.boundary.message_shown

    def side_by_side_width(self) -> int:
        """The least width that shows the curves readably beside the boundary."""
        beside = MESSAGE_WIDTH if self.message_only else BOUNDARY_MIN
        return CURVES_MIN + beside + HANDLE

    def default_sizes(self) -> list[int]:
        width = max(self.width() - HANDLE, 0)
        if self.message_only:
            boundary = MESSAGE_WIDTH
        else:
            boundary = boundary_width(width, self.height())
        boundary = min(boundary, width)
        return [width - boundary, boundary]

    def _place(self, *, tabbed: bool) -> None:
        """Put the curves and the boundary side by side, or in two tabs."""
        if tabbed == self.tabbed:
            return
        self.tabbed = tabbed
        if tabbed:
            self.tabs.addTab(self.curves, "Curves")  # short: a narrow dock shows both
            self.tabs.addTab(self.boundary, "Boundary")
            self.tabs.setTabToolTip(0, "Loss, accuracy and learning rate over the steps")
            self.tabs.setTabToolTip(1, "The decision boundary over the 2 input features")
            self.tabs.setCurrentWidget(self.curves)
            self._pages.setCurrentWidget(self.tabs)
            return
        self.tabs.clear()  # the pages stay alive: the splitter takes them back
        self.splitter.addWidget(self.curves)
        self.splitter.addWidget(self.boundary)
        self.curves.show()
        self.boundary.show()
        self.splitter.setCollapsible(0, False)  # the curves stay; the boundary may close
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)
        self._pages.setCurrentWidget(self.splitter)
        self._fit()

    def _fit(self) -> None:
        if self.tabbed or self.user_sized or self.width() <= 0:
            return
        self.splitter.setSizes(self.default_sizes())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        edge = self.side_by_side_width()
        if self.tabbed and self.width() >= edge + HYSTERESIS:
            self._place(tabbed=False)
        elif not self.tabbed and self.width() < edge:
            self._place(tabbed=True)
        self._fit()

    def _on_splitter_moved(self, pos: int, index: int) -> None:
        self.user_sized = True  # the user's share holds from now on

    def _on_boundary_message_changed(self, shown: bool) -> None:
        self.resizeEvent(QResizeEvent(self.size(), self.size()))  # another edge, another share
