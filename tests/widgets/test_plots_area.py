"""PlotsArea: the curves beside the decision boundary (square by default, the user's own
split kept once they drag the handle), or the two as tabs when the dock is too narrow for
both to read; a boundary that only says why there is none takes a narrow column."""

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from widgets.plots import DecisionBoundaryView, TrainingCurves
from widgets.plots.area import BOUNDARY_MIN, MESSAGE_WIDTH, PlotsArea, boundary_width

pytestmark = pytest.mark.gui

LEFT, NONE = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier


@pytest.fixture
def area(qtbot):
    widget = PlotsArea(TrainingCurves(), DecisionBoundaryView())
    qtbot.addWidget(widget)
    widget.resize(750, 330)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_the_boundary_is_about_square_and_the_curves_get_the_rest(area, qtbot):
    assert not area.tabbed
    curves, boundary = area.splitter.sizes()
    assert boundary == boundary_width(area.width() - area.splitter.handleWidth(), area.height())
    assert curves >= 2 * boundary - 10  # the curves are what is watched
    area.resize(1400, 420)
    qtbot.wait(20)
    curves, boundary = area.splitter.sizes()
    assert abs(boundary - (420 + 16)) <= 2  # square plot: the height, its legend and axis
    assert curves == area.width() - area.splitter.handleWidth() - boundary


@pytest.mark.parametrize(("width", "height", "expected"), [
    (750, 330, 250),  # a third of the width at most
    (1400, 420, 436),  # the square
    (500, 100, BOUNDARY_MIN),  # never narrower than its axes and points need
])  # fmt: skip
def test_boundary_width(width, height, expected):
    assert boundary_width(width, height) == expected


def test_a_dragged_handle_keeps_the_users_split(area, qtbot):
    handle = area.splitter.handle(1)
    start = QPoint(handle.width() // 2, handle.height() // 2)
    QTest.mousePress(handle, LEFT, NONE, start)
    QTest.mouseMove(handle, start + QPoint(-60, 0))
    QTest.mouseMove(handle, start + QPoint(-120, 0))
    QTest.mouseRelease(handle, LEFT, NONE, start + QPoint(-120, 0))
    assert area.user_sized
    chosen = area.splitter.sizes()[1]
    assert chosen > boundary_width(area.width() - area.splitter.handleWidth(),
                                   area.height()) + 60  # fmt: skip
    area.resize(area.width(), 300)  # a lower dock: the default would narrow the boundary
    qtbot.wait(20)
    assert area.splitter.sizes()[1] == chosen


def test_a_narrow_dock_shows_the_curves_and_the_boundary_as_tabs(area, qtbot):
    area.resize(420, 330)  # e.g. a hook pane beside the Plots dock at 1280 x 800
    qtbot.wait(20)
    assert area.tabbed and area.curves.isVisible() and not area.boundary.isVisible()
    assert area.curves.width() >= 400  # the curves get the whole width
    bar = area.tabs.tabBar()
    QTest.mouseClick(bar, LEFT, NONE, bar.tabRect(1).center())
    assert area.boundary.isVisible() and not area.curves.isVisible()
    area.resize(900, 330)  # wide again: side by side
    qtbot.wait(20)
    assert not area.tabbed and area.curves.isVisible() and area.boundary.isVisible()
    assert area.splitter.indexOf(area.curves) == 0 and area.splitter.indexOf(area.boundary) == 1


def test_a_boundary_message_takes_a_narrow_column(area, qtbot):
    area.boundary.set_message("The decision boundary needs data with 2 input features.")
    qtbot.wait(20)
    assert area.splitter.sizes()[1] == MESSAGE_WIDTH
    area.resize(680, 330)  # too narrow for a plot beside the curves, not for a message
    qtbot.wait(20)
    assert not area.tabbed
    area.boundary.set_message("")
    qtbot.wait(20)
    assert area.tabbed  # the plot would not fit beside the curves: tabs
