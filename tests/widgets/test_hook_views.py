"""HookPane's views: each draws a real capture's summaries, and frames its axes in jumps."""

import time
from functools import partial

import numpy as np
import pytest

from tests.widgets.hook_support import curve_data, feed, image_x, image_y, make_capture, new_pane
from widgets.plots import HookPane
from widgets.plots.distribution import MAX_COLUMNS, VALUE_ROWS, distribution_image

pytestmark = pytest.mark.gui


@pytest.fixture
def make_pane(qtbot):
    return partial(new_pane, qtbot)


# ---- views --------------------------------------------------------------------------------------


def test_the_stats_view_draws_mean_band_and_extremes_over_steps(make_pane):
    rng = np.random.default_rng(1)
    arrays = [rng.normal(k, 1 + k, (4, 5)) for k in range(6)]
    pane = make_pane(make_capture(arrays=arrays), view="stats")
    assert pane.poll()
    values = np.asarray(arrays, dtype=np.float32).reshape(6, -1).astype(np.float64)
    x, mean = curve_data(pane.stats_view.mean_curve)
    np.testing.assert_array_equal(x, np.arange(1, 7))
    np.testing.assert_allclose(mean, values.mean(axis=1), rtol=1e-5)
    _, low = curve_data(pane.stats_view.band_low)
    _, high = curve_data(pane.stats_view.band_high)
    np.testing.assert_allclose(low, values.mean(axis=1) - values.std(axis=1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(high, values.mean(axis=1) + values.std(axis=1), rtol=1e-4)
    view = pane.stats_view
    np.testing.assert_allclose(curve_data(view.min_curve)[1], values.min(axis=1), rtol=1e-6)
    np.testing.assert_allclose(curve_data(view.max_curve)[1], values.max(axis=1), rtol=1e-6)
    assert view.band.path().elementCount() > 0  # the fill between the band's edges


def test_the_histogram_image_puts_the_mass_where_the_values_are(make_pane):
    two_values = np.array([-1.0] * 10 + [1.0] * 10)
    pane = make_pane(make_capture(arrays=[two_values] * 5), view="histogram")
    pane.poll()
    image = pane.histogram_view.image.image
    assert image.shape == (VALUE_ROWS, 5)  # five evenly spaced steps: one column each
    columns = [image_x(pane.histogram_view.image, c) for c in range(5)]
    np.testing.assert_allclose(columns, [1, 2, 3, 4, 5])
    rows = np.array([image_y(pane.histogram_view.image, r) for r in range(VALUE_ROWS)])
    near = (np.abs(rows + 1) < 0.1) | (np.abs(rows - 1) < 0.1)  # value rows by -1 and +1
    assert image[~near].max() == 0
    assert image[near].sum(axis=0).min() > 0 and image.max() == 1.0  # each column at its peak
    assert image[rows < 0].sum() == pytest.approx(image[rows > 0].sum())  # half and half


def test_the_histogram_image_has_at_most_max_columns(make_pane):
    rng = np.random.default_rng(2)
    pane = make_pane(make_capture(arrays=rng.normal(0, 1, (1000, 8))), view="histogram")
    pane.poll()
    assert pane.histogram_view.image.image.shape == (VALUE_ROWS, MAX_COLUMNS)
    item = pane.histogram_view.image
    first, last = image_x(item, 0), image_x(item, MAX_COLUMNS - 1)
    assert first == pytest.approx(1) and last == pytest.approx(1000)


def test_uneven_steps_are_placed_at_their_step(make_pane):
    steps = [1, 2, 3, 500, 10000, 10001]
    arrays = [np.full(4, float(i)) for i in range(len(steps))]  # step i holds only the value i
    capture = make_capture(arrays=arrays, steps=steps)
    pane = make_pane(capture, view="stats")
    pane.poll()
    np.testing.assert_array_equal(curve_data(pane.stats_view.mean_curve)[0], steps)
    np.testing.assert_array_equal(curve_data(pane.stats_view.mean_curve)[1], range(6))
    pane.set_view("histogram")
    item = pane.histogram_view.image
    image = item.image
    rows = np.array([image_y(item, r) for r in range(image.shape[0])])
    for column in range(image.shape[1]):
        x = image_x(item, column)
        shown = rows[int(np.argmax(image[:, column]))]  # the value this column's mass sits at
        expected = max(i for i, s in enumerate(steps) if s <= x + 1e-6)  # newest row at or before
        assert abs(shown - expected) <= 5 / VALUE_ROWS + 1e-9, (column, x)
    assert image_x(item, 0) == pytest.approx(1)
    assert image_x(item, image.shape[1] - 1) == pytest.approx(10001)
    pane.set_view("norm")
    x, _ = curve_data(pane.norm_view.curve)
    np.testing.assert_array_equal(x, steps[1:])  # step 1's norm is 0: not on a log axis


def test_the_norm_view_draws_the_l2_norms_on_a_log_axis(make_pane):
    arrays = [np.full((3, 4), 10.0**-k) for k in range(5)]
    pane = make_pane(make_capture("backward", arrays), view="norm")
    pane.poll()
    x, y = curve_data(pane.norm_view.curve)
    np.testing.assert_array_equal(x, np.arange(1, 6))
    np.testing.assert_allclose(y, [np.linalg.norm(np.float32(a)) for a in arrays], rtol=1e-5)
    assert pane.plot_views["norm"].getPlotItem().getAxis("left").logMode
    assert pane.view_combo.itemText(pane.VIEWS.index("norm")) == "Gradient norm"
    pane.set_capture(make_capture("forward", arrays))
    assert pane.view_combo.itemText(pane.VIEWS.index("norm")) == "L2 norm"  # activations too


def test_a_4d_heatmap_shows_the_chosen_sample_and_channel(make_pane, qtbot):
    tensor = np.arange(3 * 4 * 5 * 6, dtype=np.float32).reshape(3, 4, 5, 6)
    capture = make_capture(arrays=[tensor])
    pane = make_pane(capture, view="heatmap")
    pane.show()
    qtbot.waitExposed(pane)
    assert pane.sample_spin.isVisible() and pane.channel_spin.isVisible()
    assert (pane.sample_spin.maximum(), pane.channel_spin.maximum()) == (2, 3)
    pane.sample_spin.setValue(2)
    pane.channel_spin.setValue(3)
    np.testing.assert_array_equal(pane.heatmap_view.image.image, tensor[2, 3])
    assert pane.plot_views["heatmap"].getPlotItem().getViewBox().state["aspectLocked"]

    smaller = -np.arange(2 * 2 * 5 * 6, dtype=np.float32).reshape(2, 2, 5, 6)
    feed(capture, [smaller])
    assert pane.poll()
    assert (pane.sample_spin.maximum(), pane.channel_spin.maximum()) == (1, 1)
    assert (pane.sample_spin.value(), pane.channel_spin.value()) == (1, 1)  # clamped
    assert (pane.settings["sample"], pane.settings["channel"]) == (1, 1)
    np.testing.assert_array_equal(pane.heatmap_view.image.image, smaller[1, 1])

    pane.set_view("stats")  # the selectors belong to the heatmap
    assert not pane.sample_spin.isVisible() and not pane.channel_spin.isVisible()


def test_heatmaps_of_1d_2d_and_3d_tensors(make_pane, qtbot):
    matrix = np.arange(12, dtype=np.float32).reshape(3, 4)
    pane = make_pane(make_capture(arrays=[matrix]), view="heatmap")
    pane.show()
    qtbot.waitExposed(pane)
    np.testing.assert_array_equal(pane.heatmap_view.image.image, matrix)
    assert not pane.sample_spin.isVisible() and not pane.channel_spin.isVisible()
    # An activation's (min, max), 0 and 11, in round numbers that they fill at least half of.
    low, high = pane.heatmap_view.image.getLevels().tolist()
    assert low <= 0 and high >= 11 and (high - low) / 2 <= 11 and high == round(high)
    assert pane.heatmap_view.color_bar.levels() == (low, high)

    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    pane.set_capture(make_capture(arrays=[cube]))
    assert pane.sample_spin.isVisible() and not pane.channel_spin.isVisible()
    pane.sample_spin.setValue(1)
    np.testing.assert_array_equal(pane.heatmap_view.image.image, cube[1])

    line = np.arange(7, dtype=np.float32)
    pane.set_capture(make_capture(arrays=[line]))
    np.testing.assert_array_equal(pane.heatmap_view.image.image, line.reshape(1, 7))


def test_a_gradient_heatmap_has_symmetric_levels(make_pane):
    grad = np.array([[-0.2, 0.1], [0.5, 0.0]])
    pane = make_pane(make_capture("hook_backward", [grad]), view="heatmap")
    pane.poll()
    low, high = pane.heatmap_view.image.getLevels()
    assert (low, high) == pytest.approx((-0.5, 0.5))
    assert pane.heatmap_view.color_bar.levels() == pytest.approx((-0.5, 0.5))
    colours = pane.heatmap_view.color_bar.colorMap().getLookupTable(nPts=3, mode="byte")
    assert colours[1].min() > 200  # white at 0: a diverging map

def test_scalars_empty_and_non_finite_tensors_draw_in_every_view(make_pane, qtbot):
    captures = [
        make_capture(),  # nothing captured yet
        make_capture(arrays=[np.float32(k) for k in range(4)]),  # 0-D
        make_capture(arrays=[np.arange(5.0)] * 3),  # 1-D
        make_capture(arrays=[np.full((2, 3), np.nan)] * 2),  # nothing finite
        make_capture(arrays=[np.array([1.0, np.inf, np.nan, -2.0])] * 2),
        make_capture(arrays=[np.empty((0, 4))] * 2),  # an empty batch
        make_capture("backward", arrays=[np.zeros((2, 2))] * 2),  # all zero (no log norm)
    ]
    pane = make_pane(view="histogram")
    pane.show()
    qtbot.waitExposed(pane)
    for capture in captures:
        pane.set_capture(capture)
        for view in HookPane.VIEWS:
            pane.set_view(view)
            pane.repaint()
    pane.set_capture(captures[1])
    pane.set_view("heatmap")
    assert pane.heatmap_view.image.image.shape == (1, 1)
    pane.set_capture(None)
    assert pane.capture is None and not pane.poll()


def test_five_thousand_rows_redraw_quickly(make_pane, qtbot, qapp):
    capture = make_capture()
    rng = np.random.default_rng(3)
    feed(capture, rng.normal(0, 1, (5000, 32, 8)))
    assert len(capture.stats.snapshot()) == 5000
    pane = make_pane(capture)
    pane.show()
    qtbot.waitExposed(pane)
    for view in HookPane.VIEWS:
        pane.set_view(view)
        started = time.perf_counter()
        for _ in range(5):
            feed(capture, rng.normal(0, 1, (1, 32, 8)))
            assert pane.poll()
            pane.plot_views[view].viewport().repaint()
        per_redraw = (time.perf_counter() - started) / 5
        assert per_redraw < 0.25, view  # sanity only: ~3 ms here; a stall would be seconds


# ---- the distribution image ---------------------------------------------------------------------


def test_distribution_image_rebins_rows_of_different_ranges_onto_one_grid():
    counts = np.zeros((2, 4))
    counts[0, 3] = 10  # row 1: all in its top bin, [0.75, 1] of [0, 1]
    counts[1, 0] = 10  # row 2: all in its bottom bin, [-4, -2] of [-4, 4]
    histograms = np.column_stack(([0.0, -4.0], [1.0, 4.0], counts))
    image, (x, width, y, height) = distribution_image(np.array([10.0, 20.0]), histograms, rows=16)
    assert (x, width, y, height) == (5.0, 20.0, -4.0, 8.0)
    assert image.shape == (16, 2)
    grid = -4 + 0.5 * np.arange(16) + 0.25  # each value row's centre
    assert set(grid[image[:, 0] > 0]) <= {0.75, 1.25}  # [0.75, 1] overlaps rows 0.5-1 and 1-1.5
    assert set(grid[image[:, 1] > 0]) == {-3.75, -3.25, -2.75, -2.25}
    assert image[:, 1].max() == 1.0


def test_distribution_image_puts_a_single_value_in_one_row():
    histograms = np.zeros((3, 2 + 8))
    histograms[:, 0] = histograms[:, 1] = [2.0, 2.0, 6.0]  # each step holds one value only
    histograms[:, 2 + 4] = 5  # counted in the middle bin (of [v - 0.5, v + 0.5])
    image, (_, _, y, height) = distribution_image(np.array([1.0, 2.0, 3.0]), histograms, rows=8)
    assert (y, height) == (2.0, 4.0)
    assert [int(np.argmax(column)) for column in image.T] == [0, 0, 7]
    assert (image > 0).sum() == 3


def test_distribution_image_of_nothing_is_none():
    assert distribution_image(np.empty(0), np.empty((0, 34))) is None
    assert distribution_image(np.array([1.0]), np.full((1, 34), np.nan)) is None


def test_rows_out_of_step_order_are_drawn_in_step_order(make_pane):
    capture = make_capture(arrays=[np.full(3, float(s)) for s in (30, 10, 20)], steps=[30, 10, 20])
    pane = make_pane(capture, view="stats")
    pane.poll()
    np.testing.assert_array_equal(curve_data(pane.stats_view.mean_curve)[0], [10, 20, 30])
    np.testing.assert_array_equal(curve_data(pane.stats_view.mean_curve)[1], [10, 20, 30])
    pane.set_view("histogram")
    item = pane.histogram_view.image
    assert image_x(item, 0) == pytest.approx(10)
    top = image_y(item, int(np.argmax(item.image[:, -1])))
    assert abs(top - 30) <= 20 / VALUE_ROWS  # step 30's value, in the last column


def test_a_heatmap_chosen_before_any_data_labels_rows_and_columns_by_index(make_pane, qtbot):
    pane = make_pane(None)
    pane.show()
    qtbot.waitExposed(pane)
    qtbot.wait(20)
    pane.set_view("heatmap")  # laid out with no data, as a user picks it before training
    qtbot.wait(20)
    capture = make_capture(arrays=[np.ones((4, 8, 8, 8), dtype=np.float32)])
    pane.set_capture(capture)
    qtbot.wait(20)
    plot = pane.heatmap_view.image.getViewBox().parentItem()
    for name in ("left", "bottom"):
        assert plot.getAxis(name).autoSIPrefixScale == 1.0, name  # 0 … 8, not 0 … 8000


@pytest.mark.parametrize("view", ["histogram", "stats", "norm", "heatmap"])
def test_axes_and_colour_levels_hold_while_the_data_fits_and_follow_when_it_leaves(
        make_pane, qtbot, view):  # fmt: skip
    # An axis or colour bar whose range moves at every frame draws its labels again at
    # every frame (most of a pane's cost): they move in round steps, and only when the
    # data leaves them or shrinks to a small part of them — never hiding any of it.
    rng = np.random.default_rng(3)

    def between_1_and_2(count):  # each reaching both 1 and 2
        arrays = [rng.uniform(1, 2, (4, 8)) for _ in range(count)]
        for array in arrays:
            array[0, :2] = 1, 2
        return arrays

    capture = make_capture(arrays=between_1_and_2(20))
    pane = make_pane(capture, view=view)
    pane.show()
    qtbot.waitExposed(pane)
    plot = pane.plot_views[view].getPlotItem()

    def shown():  # what the value axis (the colour bar, for a heatmap) spans now
        if view == "heatmap":
            return tuple(pane.heatmap_view.color_bar.levels())
        return tuple(plot.getViewBox().viewRange()[1])

    def covers(low, high):
        if view == "norm":  # the log axis's own coordinates
            low, high = np.log10(low), np.log10(high)
        first, last = shown()
        return first <= low + 1e-9 and high - 1e-9 <= last

    def values(capture):
        stats = capture.stats.snapshot()
        if view == "norm":
            return stats[:, 5].min(), stats[:, 5].max()
        if view == "heatmap":
            return float(capture.latest.snapshot().min()), float(capture.latest.snapshot().max())
        return np.nanmin(stats[:, 3]), np.nanmax(stats[:, 4])

    pane.poll()  # (showing it drew it already)
    assert covers(*values(capture))
    before = shown()
    axis = pane.heatmap_view.color_bar.axis if view == "heatmap" else plot.getAxis("left")
    pane.grab()  # the labels drawn once, and cached
    assert axis.picture is not None
    for _ in range(5):  # more of the same: the range and its cached labels stay
        feed(capture, between_1_and_2(5))
        assert pane.poll()
        assert shown() == before and axis.picture is not None
        pane.grab()
    feed(capture, [array * 50 for array in between_1_and_2(3)])  # out of range
    assert pane.poll()
    assert shown() != before and covers(*values(capture))


def test_the_value_axis_keeps_its_width_when_its_labels_get_shorter(make_pane, qtbot):
    # A narrower axis would move the plot and repaint the whole pane at every such frame.
    capture = make_capture(arrays=[np.full((2, 3), 12345.6) + k for k in range(5)])
    pane = make_pane(capture, view="stats")
    pane.show()
    qtbot.waitExposed(pane)
    pane.grab()
    qtbot.wait(50)  # (the width follows the labels once they are painted)
    axis = pane.plot_views["stats"].getPlotItem().getAxis("left")
    wide = axis.width()
    pane.set_capture(make_capture(arrays=[np.full((2, 3), 0.5) + k for k in range(4)]))
    pane.grab()  # short labels now
    qtbot.wait(50)
    assert pane.stats_view.getViewBox().viewRange()[1][1] < 1000  # the range moved
    assert axis.width() == wide


def test_a_new_range_is_painted_once(make_pane, qtbot):
    # pyqtgraph moves the view at its next paint; moved during that paint, it asked for
    # a second full paint of the pane at every new range.
    capture = make_capture(kind="backward", arrays=[np.full((2, 3), 10.0**-k) for k in range(5)])
    pane = make_pane(capture, view="norm")
    pane.show()
    qtbot.waitExposed(pane)
    qtbot.wait(50)
    view = pane.plot_views["norm"]
    paints = []
    original = type(view).paintEvent
    view.paintEvent = lambda event: paints.append(event.rect()) or original(view, event)
    feed(capture, [np.full((2, 3), 1e4)] * 3, steps=[500, 900, 2000])  # new x and y ranges
    assert pane.poll()
    qtbot.wait(100)
    full = [rect for rect in paints if rect.width() >= view.viewport().width() - 1]
    assert len(full) == 1


def test_pane_axes_draw_their_labelled_ticks_only(make_pane):
    # pyqtgraph's finer tick levels cost a Python object per tick at every new range.
    pane = make_pane(make_capture(arrays=[np.zeros(2)]))
    for view in pane.VIEWS:
        for name in ("left", "bottom"):
            assert pane.plot_views[view].getPlotItem().getAxis(name).style["maxTickLevel"] == 0
