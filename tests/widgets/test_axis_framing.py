"""Axis framing of the hook panes, without Qt: round ranges that move in jumps, room ahead
while training streams, a close frame once it stops."""

import ast
import math
from pathlib import Path

import pytest

import widgets.plots.framing as framing_module
from widgets.plots.framing import (
    QUIET_SECONDS,
    SETTLED_FILL,
    AxisFraming,
    StreamWatch,
    heatmap_levels,
    log_bounds,
    nice_span,
    round_range,
    step_range,
    value_range,
)


def test_the_framing_module_imports_no_qt():
    # Pure logic out of views: the module states its imports, and none of them is Qt.
    tree = ast.parse(Path(framing_module.__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}  # fmt: skip
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}  # fmt: skip
    assert imported <= {"__future__", "math", "numpy"}, imported


@pytest.mark.parametrize(("span", "nice"), [
    (1, 1), (1.2, 1.5), (2.5, 3), (3.5, 4), (6, 7.5), (8, 10), (0.013, 0.015), (2300, 3000),
])  # fmt: skip
def test_a_nice_span_is_the_smallest_round_span_that_holds_it(span, nice):
    assert nice_span(span) == pytest.approx(nice)


def test_a_round_range_holds_the_values_in_round_numbers():
    low, high = round_range(None, 0.13, 0.87, fill=0.25)
    assert low <= 0.13 and high >= 0.87
    assert (high - low) / (0.87 - 0.13) < 1.5  # close around them
    unit = nice_span((0.87 - 0.13) * 1.25) / 10
    for bound in (low, high):
        assert bound / unit == pytest.approx(round(bound / unit))  # whole units


def test_a_round_range_is_kept_while_the_values_fill_enough_of_it():
    shown = (0.0, 10.0)
    assert round_range(shown, 2.0, 8.0, fill=0.25) is None  # inside, and filling 60 %
    assert round_range(shown, 4.0, 5.0, fill=0.25) is not None  # 10 %: too little
    assert round_range(shown, -1.0, 8.0, fill=0.25) is not None  # out below
    assert round_range(shown, 2.0, 10.5, fill=0.25) is not None  # out above


def test_a_single_value_gets_room_around_it_and_non_finite_keeps_the_range():
    low, high = round_range(None, 5.0, 5.0, fill=0.25)
    assert low < 5.0 < high
    low, high = round_range(None, 0.0, 0.0, fill=0.25)
    assert low < 0.0 < high
    assert round_range((0.0, 1.0), math.nan, 1.0, fill=0.25) is None
    assert round_range(None, 0.0, math.inf, fill=0.25) is None


def test_a_streaming_step_axis_widens_about_once_per_doubling():
    shown, widenings = None, 0
    for last in range(200, 8100, 100):  # a capture every 100 steps from step 100
        framed = step_range(shown, 100.0, float(last), streaming=True)
        if framed is not None:
            widenings += shown is not None
            assert framed[0] == 100.0 and framed[1] - 100 >= 2 * (last - 100)
            shown = framed
        assert shown[0] <= 100.0 and last <= shown[1]  # every step shown
    assert widenings <= 4  # 200 → 8,000 steps: about five doublings, not 79 moves


def test_a_step_axis_closes_in_once_the_stream_stops():
    roomy = step_range(None, 100.0, 8000.0, streaming=True)
    assert (8000 - 100) / (roomy[1] - 100) <= 0.5  # room ahead while training
    assert step_range(roomy, 100.0, 8000.0, streaming=True) is None  # kept while streaming
    settled = step_range(roomy, 100.0, 8000.0, streaming=False)
    assert settled is not None and settled[1] >= 8000
    assert (8000 - 100) / (settled[1] - 100) > SETTLED_FILL  # the steps fill most of it
    assert step_range(settled, 100.0, 8000.0, streaming=False) is None  # and it stays


def test_a_step_axis_keeps_its_range_when_the_first_step_moves_within_the_padding():
    shown = (100.0, 1100.0)
    assert step_range(shown, 85.0, 900.0, streaming=True) is None  # 1.5 % of the span left
    assert step_range(shown, 70.0, 900.0, streaming=True) is not None  # 3 %: out


def test_a_few_steps_get_a_span_of_at_least_ten():
    first, top = step_range(None, 1.0, 1.0, streaming=False)
    assert first == 1.0 and top - first >= 10


def test_a_value_axis_moves_when_the_values_leave_it_or_shrink_to_a_quarter():
    shown = value_range(None, 1.0, 2.0)
    assert value_range(shown, 1.1, 1.9) is None
    moved = value_range(shown, 1.0, 100.0)
    assert moved is not None and moved[1] >= 100.0
    assert value_range(moved, 1.0, 2.0) is not None  # 1 % of it: closes in


def test_gradient_levels_are_symmetric_and_round_and_kept_while_they_fit():
    levels = heatmap_levels(None, -0.37, 0.37, symmetric=True)
    assert levels == (-0.4, 0.4)
    assert heatmap_levels(levels, -0.25, 0.25, symmetric=True) == levels  # at least half
    assert heatmap_levels(levels, -0.1, 0.1, symmetric=True) == (-0.1, 0.1)
    assert heatmap_levels(levels, -3.0, 3.0, symmetric=True) == (-3.0, 3.0)


def test_activation_levels_are_kept_while_the_values_fill_half_of_them():
    levels = heatmap_levels(None, 0.0, 11.0, symmetric=False)
    assert levels[0] <= 0 and levels[1] >= 11 and levels[1] == round(levels[1])
    assert heatmap_levels(levels, 1.0, 10.0, symmetric=False) == levels
    assert heatmap_levels(levels, 1.0, 3.0, symmetric=False) != levels
    assert heatmap_levels(levels, math.nan, 3.0, symmetric=False) == levels  # kept


def test_log_bounds_are_whole_powers_of_ten():
    assert log_bounds(0.003, 42.0) == (-3, 2)
    assert log_bounds(1.0, 1.0) == (0, 0)


def test_axis_framing_hands_each_move_over_once_both_axes_together():
    framing = AxisFraming()
    framing.frame_steps(1.0, 50.0, streaming=True)
    framing.frame_values(0.0, 1.0)
    moved = framing.take_moved()
    assert set(moved) == {"xRange", "yRange"} and moved["xRange"] == framing.x
    assert framing.take_moved() == {}
    framing.frame_steps(1.0, 60.0, streaming=True)  # within the room left
    framing.frame_values(0.1, 0.9)
    assert framing.take_moved() == {}
    framing.clear()
    assert framing.x is None and framing.y is None
    framing.frame_values(0.1, 0.9)
    assert set(framing.take_moved()) == {"yRange"}  # framed afresh


def test_a_stream_stops_once_its_count_held_for_the_quiet_time():
    watch = StreamWatch()
    assert watch.streaming(5, now=10.0)
    assert watch.streaming(5, now=10.0 + QUIET_SECONDS / 2)
    assert not watch.streaming(5, now=10.0 + QUIET_SECONDS)
    assert watch.streaming(6, now=11.0)  # a new copy: streaming again
    watch.forget()
    assert watch.streaming(6, now=20.0)  # the same count, but after forget() it is new
