"""Where the training curves go: the arrangement whose smallest plot reads best (no Qt)."""

import pytest

from widgets.plots.curve_layout import ROW, SHARES, STACKED, arrangement_for


@pytest.mark.parametrize(("size", "expected"), [
    ((500, 270), "stacked"),  # the Plots dock at 1280 x 800: loss left, the others beside it
    ((960, 360), "stacked"),
    ((1200, 200), "row"),  # wide and low: three side by side read better
    ((2000, 300), "row"),
])  # fmt: skip
def test_the_arrangement_gives_the_smallest_plot_the_most_room(size, expected):
    assert arrangement_for(*size) == expected


def test_a_near_tie_keeps_the_arrangement_shown():
    width, height = 1000, 360  # as readable either way
    assert arrangement_for(width, height, "row") == "row"
    assert arrangement_for(width, height, "stacked") == "stacked"


def test_each_arrangement_shares_out_the_whole_area():
    for arrangement in (ROW, STACKED):
        shares = SHARES[arrangement].values()
        area = sum(w * h for w, h in shares)
        assert area == pytest.approx(1.0)
