"""The default window layout at 1280 x 800 and 1920 x 1080: what a user watches while training
(curves, boundary, the selected node's Parameters and their buttons) is in view, readable,
and stays so; the Run dock's lines never overlap or get cut, however the dock is sized."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel, QMessageBox, QProgressBar, QToolBar, QWidget

from app.session import PAUSED
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import MOONS, TIMEOUT, open_example, shown_window
from tests.widgets.canvas_support import LEFT, NO_MODIFIER, title_point
from widgets.run_progress import Readout

pytestmark = pytest.mark.gui

SMALL, LARGE = (1280, 800), (1920, 1080)
READABLE = (300, 180)  # px: the least a curve or the boundary gets at the default size
SMALL_PLOT = (180, 110)  # px: accuracy and learning rate beside the loss at 1280 x 800


@pytest.fixture
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


def window_at(qtbot, size):
    return shown_window(qtbot, size)


@pytest.fixture
def small_window(qtbot, dialogs):
    yield from window_at(qtbot, SMALL)


@pytest.fixture(params=[SMALL, LARGE], ids=["1280x800", "1920x1080"])
def any_window(request, qtbot, dialogs):
    yield from window_at(qtbot, request.param)


def click_toolbar(qtbot, window, name: str) -> None:
    action = window.run.actions[name]
    assert action.isEnabled(), f"{name} is disabled"
    toolbar = window.findChild(QToolBar, "run_toolbar")
    qtbot.mouseClick(toolbar.widgetForAction(action), LEFT)


def train_and_pause(qtbot, window, epochs: int = 3) -> int:
    """Start from the toolbar, let `epochs` epochs end, pause; the step it paused at."""
    run = window.run
    click_toolbar(qtbot, window, "start")
    qtbot.waitUntil(lambda: run.session.state.epoch >= epochs, timeout=TIMEOUT)
    click_toolbar(qtbot, window, "pause")
    qtbot.waitUntil(lambda: run.status == PAUSED, timeout=TIMEOUT)
    qtbot.wait(600)  # the progress lines, curves and boundary catch up on their timers
    return run.session.state.step


def select_by_click(qtbot, window, name: str) -> None:
    editor = window.workbench.editor
    editor.view.fit_all()
    node = editor.graph.node_named(name)
    QTest.mouseClick(editor.view.viewport(), LEFT, NO_MODIFIER, title_point(editor, node.id))
    qtbot.waitUntil(lambda: editor.selected_node_ids() == [node.id], timeout=TIMEOUT)


def in_view(widget: QWidget) -> bool:
    """Shown whole: nothing of it scrolled away, clipped by its dock or off the window."""
    window = widget.window()
    top_left = widget.mapTo(window, QPoint(0, 0))
    on_window = window.rect().contains(QRect(top_left, widget.size()))
    return (widget.isVisible() and on_window
            and widget.visibleRegion().boundingRect() == widget.rect())  # fmt: skip


def window_rect(widget: QWidget) -> QRect:
    return QRect(widget.mapTo(widget.window(), QPoint(0, 0)), widget.size())


def at_least(widget: QWidget, size: tuple[int, int]) -> bool:
    return widget.width() >= size[0] and widget.height() >= size[1]


# ---- the default layout -------------------------------------------------------------------


def test_a_selected_layer_shows_its_parameters_and_their_buttons_in_view(any_window, qtbot):
    window = any_window
    open_example(window, qtbot)
    select_by_click(qtbot, window, "dense2")
    params = window.parameters.list
    qtbot.waitUntil(lambda: params.tree.topLevelItemCount() == 2, timeout=TIMEOUT)
    qtbot.wait(100)  # the Inspector's layout settles
    assert in_view(params.tree)
    for key in ("freeze", "reinit", "unfreeze", "edit"):
        assert in_view(params.buttons[key]), f"{key} is out of view"


def test_the_curves_and_the_boundary_get_a_readable_size(any_window, qtbot):
    window = any_window
    open_example(window, qtbot)
    qtbot.wait(100)
    curves, boundary = window.run.curves, window.run.boundary
    assert at_least(curves.loss_view, READABLE), curves.loss_view.size()
    others = (curves.accuracy_view, curves.lr_view)
    least = READABLE if window.width() >= LARGE[0] else SMALL_PLOT
    for view in others:
        assert at_least(view, least), (view.size(), least)
    assert boundary.plot_view.width() >= 200 and boundary.plot_view.height() >= 200
    # Side by side: the boundary does not take a row of its own from the curves.
    assert window_rect(boundary).left() >= window_rect(curves).right()


# ---- the Run dock --------------------------------------------------------------------------


def run_dock_texts(window) -> list[QWidget]:
    kinds = (QLabel, Readout, QProgressBar)
    return [w for w in window.run_dock.findChildren(QWidget)
            if isinstance(w, kinds) and w.isVisible() and w.height() > 0]  # fmt: skip


def cut_or_overlapping(window) -> list[str]:
    """What a user would see wrong in the Run dock: a line drawn over another, or text cut."""
    problems = []
    shown = run_dock_texts(window)
    for a, b in itertools.combinations(shown, 2):
        if a.isAncestorOf(b) or b.isAncestorOf(a):
            continue
        if window_rect(a).intersects(window_rect(b)):
            problems.append(f"{a.objectName()} overlaps {b.objectName()}")
    for widget in shown:
        wrapped = isinstance(widget, QLabel) and widget.wordWrap() and widget.text()
        if wrapped and widget.height() < widget.heightForWidth(widget.width()):
            problems.append(f"{widget.objectName()} is cut: {widget.text()[:40]!r}")
        if isinstance(widget, Readout) and widget.text():
            wrap = Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
            text = widget.fontMetrics().boundingRect(QRect(0, 0, widget.width(), 10_000), wrap,
                                                     widget.text())  # fmt: skip
            if widget.height() < text.height():
                problems.append(f"{widget.objectName()} is cut: {widget.text()[:40]!r}")
    return problems


def test_run_dock_lines_neither_overlap_nor_get_cut_narrow_wide_or_short(small_window, qtbot):
    window = small_window
    run = open_example(window, qtbot)
    train_and_pause(qtbot, window)
    progress = run.progress
    assert progress.train_numbers.text() and progress.val_numbers.text()
    assert run.panel.locked_label.isVisible()  # paused: the settings say why they are locked
    for width in (120, 600, 330):  # the narrowest the dock takes, wide, the default
        window.resizeDocks([window.run_dock], [width], Qt.Orientation.Horizontal)
        qtbot.wait(100)
        assert cut_or_overlapping(window) == [], f"at width {window.run_dock.width()}"
    for height in (120, 500):
        window.resizeDocks([window.run_dock], [height], Qt.Orientation.Vertical)
        qtbot.wait(100)
        assert cut_or_overlapping(window) == [], f"at height {window.run_dock.height()}"
    # The progress lines stay whole; the settings below them scroll instead.
    assert in_view(progress.val_numbers)


def test_a_long_problem_message_is_shown_whole_in_the_run_dock(small_window, qtbot):
    window = small_window
    open_example(window, qtbot)
    editor = window.workbench.editor
    for _ in range(4):  # four stray layers: one line each in the message
        editor.add("type:Dense")
    run = window.run
    qtbot.waitUntil(lambda: run.problem is not None and run.problem.count("\n") >= 4,
                    timeout=TIMEOUT)  # fmt: skip
    window.resizeDocks([window.run_dock], [120], Qt.Orientation.Horizontal)
    window.resizeDocks([window.run_dock], [120], Qt.Orientation.Vertical)
    qtbot.wait(100)
    status = run.progress.status
    assert status.text() == run.problem  # all of it, not a first line or an elided one
    assert status.wordWrap() and status.height() >= status.heightForWidth(status.width())
    assert in_view(status)
    assert cut_or_overlapping(window) == []


# ---- the curves follow the project ---------------------------------------------------------


def steps_shown(window) -> tuple[float, float]:
    return tuple(window.run.curves.loss_plot.getViewBox().viewRange()[0])


def test_after_new_or_open_the_curves_do_not_frame_the_last_projects_steps(small_window,
                                                                           qtbot):  # fmt: skip
    window = small_window
    open_example(window, qtbot)
    trained = train_and_pause(qtbot, window, epochs=12)
    assert steps_shown(window)[1] >= trained  # the run is framed
    window.activateWindow()
    QTest.keySequence(window, QKeySequence(QKeySequence.StandardKey.New))
    qtbot.waitUntil(lambda: window.run.session is None or not window.run.session.state.step,
                    timeout=TIMEOUT)  # fmt: skip
    qtbot.wait(100)
    assert steps_shown(window)[1] < trained / 2, steps_shown(window)

    open_example(window, qtbot)  # trained again, then another project with no history
    trained = train_and_pause(qtbot, window, epochs=12)
    open_example(window, qtbot, MOONS)
    qtbot.wait(100)
    assert steps_shown(window)[1] < trained / 2, steps_shown(window)


def test_with_a_hook_pane_beside_them_the_curves_keep_the_plots_width(small_window, qtbot):
    window = small_window
    open_example(window, qtbot)
    editor = window.workbench.editor
    editor.add_hook("forward", editor.graph.node_named("dense1").id)
    qtbot.waitUntil(lambda: len(window.hooks.docks) == 1, timeout=TIMEOUT)
    qtbot.wait(100)
    curves, area = window.run.curves, window.run.curves.parentWidget()
    while area is not None and area.objectName() != "plots_area":
        area = area.parentWidget()
    dock = window.plots_dock
    assert curves.width() >= dock.width() - 20  # the boundary went behind a tab
    assert at_least(curves.loss_view, (220, 180)), curves.loss_view.size()
    bar = area.tabs.tabBar()  # one click shows the boundary
    QTest.mouseClick(bar, LEFT, NO_MODIFIER, bar.tabRect(1).center())
    assert window.run.boundary.isVisible() and at_least(window.run.boundary, (200, 200))
