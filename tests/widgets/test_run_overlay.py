"""Past runs over the training curves: each run's loss, validation loss (dashed) and accuracy in
its colour, x counted from the run's start, a legend naming them; the live curves as they
were; nothing drawn again while the runs shown stay the same."""

import numpy as np
import pytest
from PySide6.QtCore import Qt

from tests.widgets.runs_support import record
from tests.widgets.test_training_curves import make_metrics
from widgets.plots import TrainingCurves
from widgets.plots.run_overlay import RunOverlay

pytestmark = pytest.mark.gui


@pytest.fixture
def curves(qtbot):
    widget = TrainingCurves()
    qtbot.addWidget(widget)
    widget.resize(1000, 300)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def two_runs():
    first = record(steps=40, first_step=0)
    second = record(steps=60, first_step=40, scale=0.5, validation=False)
    first.name, first.colour = "narrow", "#1f77b4"
    second.name, second.colour = "wide", "#ff7f0e"
    return first, second


def pen_of(item):
    return item.opts["pen"]


def test_each_run_is_drawn_in_its_colour_from_its_own_start(curves):
    overlay = RunOverlay(curves)
    first, second = two_runs()
    assert overlay.show_runs([first, second])
    loss, val_loss, accuracy, val_accuracy = (item for _plot, item in overlay.items[first.id])
    x, y = loss.getData()
    np.testing.assert_array_equal(x, np.arange(1, 41))  # steps since the run's start
    np.testing.assert_allclose(y, 2.0 / np.arange(1, 41), rtol=1e-6)
    assert pen_of(loss).color().name() == "#1f77b4"
    assert pen_of(val_loss).style() == Qt.PenStyle.DashLine
    assert pen_of(val_loss).color().name() == "#1f77b4"
    np.testing.assert_array_equal(val_loss.getData()[0], [10, 20, 30, 40])
    assert accuracy in curves.accuracy_plot.items and loss in curves.loss_plot.items
    assert val_loss in curves.loss_plot.items and val_accuracy in curves.accuracy_plot.items
    assert accuracy.getData()[1].max() == pytest.approx(100.0)  # in percent, as the live one
    second_items = [item for _plot, item in overlay.items[second.id]]
    assert len(second_items) == 2  # no validation set: no dashed lines
    assert all(pen_of(item).style() == Qt.PenStyle.SolidLine for item in second_items)
    x, _y = second_items[0].getData()
    assert x[0] == 1 and x[-1] == 60  # it began at step 40: drawn from 1 all the same
    assert pen_of(second_items[0]).color().name() == "#ff7f0e"


def test_a_legend_in_the_loss_plot_names_the_runs(curves):
    overlay = RunOverlay(curves)
    first, second = two_runs()
    second.name = "wide <64>"
    overlay.show_runs([first, second])
    assert overlay.legend.isVisible() and overlay.names == ["narrow", "wide <64>"]
    assert overlay.legend.parentItem() is curves.loss_plot.getViewBox()
    overlay.show_runs([second])
    assert overlay.names == ["wide <64>"] and first.id not in overlay.items


def test_an_empty_selection_takes_every_run_away_and_the_live_curves_stay(curves):
    metrics = make_metrics(steps=30)
    curves.set_metrics(metrics)
    curves.poll()
    live = {key: curve.getData()[0].copy() for key, curve in curves.curves.items()
            if curve.getData()[0] is not None}  # fmt: skip
    overlay = RunOverlay(curves)
    overlay.show_runs(two_runs())
    before = len(curves.loss_plot.items)
    assert overlay.show_runs([])
    assert len(curves.loss_plot.items) == before - 3 and not overlay.legend.isVisible()
    assert not overlay.items and overlay.names == []
    for key, x in live.items():
        np.testing.assert_array_equal(curves.curves[key].getData()[0], x)


def test_the_same_runs_again_draw_nothing(curves):
    overlay = RunOverlay(curves)
    runs = two_runs()
    overlay.show_runs(runs)
    items = [item for pairs in overlay.items.values() for _plot, item in pairs]
    assert not overlay.show_runs(list(runs))
    assert [item for pairs in overlay.items.values() for _plot, item in pairs] == items
    runs[1].colour = "#2ca02c"  # recoloured: drawn again
    assert overlay.show_runs(list(runs))


def test_the_step_axis_shows_every_run_whole(qtbot, curves):
    overlay = RunOverlay(curves)
    long_run = record(steps=500)
    overlay.show_runs([long_run])
    left, right = curves.loss_plot.getViewBox().viewRange()[0]
    assert left <= 1 and right >= 500
    curves.set_metrics(make_metrics(steps=30))  # a new session: the live steps are framed
    curves.poll()
    qtbot.waitUntil(lambda: curves.loss_plot.getViewBox().viewRange()[0][1] >= 500)
