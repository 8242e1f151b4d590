"""Parallel coordinates of a sweep: a line per run coloured by the metric, categorical and log
axes, and brushing (by call and by a real mouse drag along an axis) selecting runs."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest

from tests.widgets.canvas_support import drag
from widgets.plots.parallel_coords import ParallelCoordinates, PCAxis
from widgets.plots.parallel_scale import MIN_GAP

pytestmark = pytest.mark.gui

AXES = [PCAxis("learning_rate", "learning rate", log=True), PCAxis("optimizer"),
        PCAxis("best_val_loss", "best val loss", higher_better=False)]  # fmt: skip
RUNS = [
    ("a", {"learning_rate": 0.001, "optimizer": "SGD", "best_val_loss": 0.9}),
    ("b", {"learning_rate": 0.001, "optimizer": "Adam", "best_val_loss": 0.5}),
    ("c", {"learning_rate": 0.1, "optimizer": "SGD", "best_val_loss": 0.7}),
    ("d", {"learning_rate": 0.1, "optimizer": "Adam", "best_val_loss": 0.2}),
]


@pytest.fixture
def view(qtbot):
    widget = ParallelCoordinates()
    qtbot.addWidget(widget)
    widget.resize(640, 360)
    widget.show()
    qtbot.waitExposed(widget)
    widget.set_runs(AXES, RUNS)
    return widget


def test_four_runs_draw_four_lines_across_every_axis(view):
    assert view.line_count() == 4
    assert view.selected() == ["a", "b", "c", "d"]  # no brush: every run
    # A log axis puts 0.001 at the bottom and 0.1 at the top; categories sit evenly.
    assert view.position("a", "learning_rate") == pytest.approx(0.0)
    assert view.position("d", "learning_rate") == pytest.approx(1.0)
    assert {view.position(r, "optimizer") for r in "ab"} == {0.0, 1.0}


def test_log_axis_spaces_values_by_decade(qtbot, view):
    rows = [(str(i), {"learning_rate": lr, "best_val_loss": 1.0})
            for i, lr in enumerate((0.001, 0.01, 0.1))]  # fmt: skip
    view.set_runs(AXES[::2], rows)
    assert view.position("1", "learning_rate") == pytest.approx(0.5)


def test_colours_follow_the_metric_best_bright(view):
    # Lower loss is better: the best run takes the bright end of the ramp, the worst the
    # dark end, and the others lie between in the metric's order (viridis gets lighter).
    assert view.colour_of("d").name() == "#fde725"  # viridis's bright end
    assert view.colour_of("a").name() == "#440154"  # its dark end
    # Viridis's green rises from its dark end to its bright end.
    green = {r: view.colour_of(r).green() for r in "abcd"}
    order = sorted("abcd", key=lambda r: RUNS["abcd".index(r)][1]["best_val_loss"])
    assert [green[r] for r in order] == sorted(green.values(), reverse=True)
    assert len(set(green.values())) == 4
    # With a metric where higher is better, the same values colour the other way round.
    flipped = [*AXES[:2], PCAxis("best_val_loss", higher_better=True)]
    view.set_runs(flipped, RUNS)
    assert view.colour_of("a").name() == "#fde725"
    assert view.colour_of("d").name() == "#440154"


def test_a_run_without_the_metric_is_grey_and_still_drawn(view):
    rows = [*RUNS, ("e", {"learning_rate": 0.01, "optimizer": "SGD", "best_val_loss": None})]
    view.set_runs(AXES, rows)
    assert view.line_count() == 5
    assert view.colour_of("e").name() == "#9e9e9e"
    assert math.isnan(view.position("e", "best_val_loss"))


def test_brushes_on_several_axes_combine_and_dim_the_rest(qtbot, view):
    with qtbot.waitSignal(view.selection_changed) as signal:
        view.brush("optimizer", "Adam", "Adam")
    assert signal.args == [["b", "d"]]
    assert view.selected() == ["b", "d"]
    view.brush("best_val_loss", 0.1, 0.3)
    assert view.selected() == ["d"]
    assert view.dimmed("b") and not view.dimmed("d")
    view.clear_brush("optimizer")
    assert view.selected() == ["d"]  # the loss brush stays
    view.clear_brush()
    assert view.selected() == ["a", "b", "c", "d"] and not view.dimmed("a")


def _axis_point(view, index: int, t: float) -> QPoint:
    """The graphics view's pixel on axis `index` at height `t` (0 bottom, 1 top)."""
    box = view.plot.getViewBox()
    scene = box.mapViewToScene(QPointF(index, t))
    return view.graphics.mapFromScene(scene)


def double_click(widget, point: QPoint) -> None:
    """What a hand's double-click delivers: press, release, double-click, release (QTest's
    mouseDClick alone sends only the double-click event)."""
    left = Qt.MouseButton.LeftButton
    QTest.mouseClick(widget, left, pos=point)
    QTest.mouseDClick(widget, left, pos=point)
    QTest.mouseRelease(widget, left, pos=point)


def test_a_mouse_drag_along_an_axis_brushes_it(qtbot, view):
    viewport = view.graphics.viewport()
    # Drag along the loss axis (the third) over its lower part: the two lowest losses.
    low, high = view.position("d", "best_val_loss"), view.position("b", "best_val_loss")
    with qtbot.waitSignal(view.selection_changed):
        drag(viewport, _axis_point(view, 2, high + 0.05), _axis_point(view, 2, low - 0.05),
             steps=8)  # fmt: skip
    assert view.selected() == ["b", "d"]
    assert set(view.brushed()) == {"best_val_loss"}
    # A drag between axes brushes nothing more.
    drag(viewport, _axis_point(view, 0.5, 0.9), _axis_point(view, 0.5, 0.1), steps=8)
    assert set(view.brushed()) == {"best_val_loss"}
    # A double-click on the axis clears its brush.
    double_click(viewport, _axis_point(view, 2, 0.5))
    qtbot.waitUntil(lambda: view.brushed() == {})
    assert view.selected() == ["a", "b", "c", "d"]


def test_close_values_get_round_ticks_that_do_not_overlap(view):
    rows = [(str(i), {"learning_rate": 0.01, "optimizer": "SGD", "best_val_loss": loss})
            for i, loss in enumerate((0.185, 0.652, 0.668, 0.672))]  # fmt: skip
    view.set_runs(AXES, rows)
    scale = view._scales[2]
    ticks = scale.ticks([loss for _, values in rows for loss in [values["best_val_loss"]]])
    places = [t for t, _ in ticks]
    assert all(b - a >= MIN_GAP for a, b in zip(places, places[1:], strict=False))
    assert [text for _, text in ticks] == ["0.2", "0.4", "0.6"]  # steps of 1, 2 or 5 × 10^k
    # A few values far apart are labelled one by one, exactly.
    log_ticks = view._scales[0].ticks([0.001, 0.01, 0.1])
    assert [text for _, text in log_ticks] == ["0.001", "0.01", "0.1"]
