"""HookPane: pause, clear, settings, the status line, polling and streaming."""

from functools import partial

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QVBoxLayout, QWidget

from tests.widgets.hook_support import (
    NeverReady,
    curve_data,
    feed,
    make_capture,
    new_pane,
)
from widgets.plots import FrameBudget, HookPane
from widgets.plots.framing import QUIET_SECONDS

pytestmark = pytest.mark.gui


@pytest.fixture
def make_pane(qtbot):
    return partial(new_pane, qtbot)


# ---- controls -----------------------------------------------------------------------------------


def test_pause_stops_redraws_and_is_emitted(make_pane, qtbot):
    capture = make_capture(arrays=[np.ones(4)] * 3)
    pane = make_pane(capture, view="stats")
    assert pane.poll()
    with qtbot.waitSignal(pane.settings_changed) as blocker:
        qtbot.mouseClick(pane.pause_button, Qt.MouseButton.LeftButton)
    assert blocker.args == ["stats", {"channel": 0, "sample": 0, "paused": True,
                                      "every_step": False}]  # fmt: skip
    assert "Paused" in pane.status_label.text()
    feed(capture, [np.ones(4)] * 2)
    assert not pane.poll()
    pane.tick()
    pane.tick()
    assert pane.redraws == 1
    assert len(curve_data(pane.stats_view.mean_curve)[0]) == 3
    with qtbot.waitSignal(pane.settings_changed) as blocker:
        qtbot.mouseClick(pane.pause_button, Qt.MouseButton.LeftButton)
    assert blocker.args[1]["paused"] is False
    caught_up = len(curve_data(pane.stats_view.mean_curve)[0]) == 5
    assert pane.redraws == 2 and caught_up  # at once


def test_clear_empties_the_capture_and_the_plots(make_pane, qtbot):
    capture = make_capture(arrays=[np.arange(6.0)] * 4)
    pane = make_pane(capture, view="histogram")
    pane.poll()
    assert pane.histogram_view.image.image is not None
    qtbot.mouseClick(pane.clear_button, Qt.MouseButton.LeftButton)
    assert len(capture.stats.snapshot()) == 0 and capture.latest.snapshot() is None
    assert pane.histogram_view.image.image is None
    pane.set_view("stats")
    assert len(curve_data(pane.stats_view.mean_curve)[0]) == 0
    feed(capture, [np.arange(6.0)])
    assert pane.poll()
    assert len(curve_data(pane.stats_view.mean_curve)[0]) == 1


def test_settings_given_at_construction_are_restored_without_emitting(make_pane, qtbot):
    tensor = np.zeros((4, 3, 2, 2))
    saved = {"channel": 2, "sample": 1, "paused": False, "every_step": True, "every": 2}
    pane = make_pane(make_capture(arrays=[tensor]), view="heatmap", settings=saved)
    emitted = []
    pane.settings_changed.connect(lambda *args: emitted.append(args))
    pane.show()
    qtbot.waitExposed(pane)
    pane.set_view("norm")
    pane.set_view("heatmap")
    assert pane.view == "heatmap" and pane.view_combo.currentData() == "heatmap"
    assert pane.settings == {"channel": 2, "sample": 1, "paused": False, "every_step": True}
    assert (pane.sample_spin.value(), pane.channel_spin.value()) == (1, 2)
    assert pane.every_step_button.isChecked() and not pane.pause_button.isChecked()
    assert emitted == []

    paused = make_pane(make_capture(), view="nonsense", settings={"paused": True, "channel": -3})
    assert paused.view == "histogram" and paused.pause_button.isChecked()
    assert paused.settings == {"channel": 0, "sample": 0, "paused": True, "every_step": False}


def test_each_user_change_emits_the_settings_once(make_pane, qtbot):
    pane = make_pane(make_capture(arrays=[np.zeros((4, 3, 2, 2))]), view="heatmap")
    pane.show()
    qtbot.waitExposed(pane)
    emitted = []
    pane.settings_changed.connect(lambda view, settings: emitted.append((view, settings)))
    qtbot.keyClick(pane.sample_spin, Qt.Key.Key_Up)
    qtbot.keyClick(pane.channel_spin, Qt.Key.Key_Up)
    qtbot.mouseClick(pane.every_step_button, Qt.MouseButton.LeftButton)
    pane.view_combo.setCurrentIndex(pane.VIEWS.index("stats"))
    assert emitted == [
        ("heatmap", {"channel": 0, "sample": 1, "paused": False, "every_step": False}),
        ("heatmap", {"channel": 1, "sample": 1, "paused": False, "every_step": False}),
        ("heatmap", {"channel": 1, "sample": 1, "paused": False, "every_step": True}),
        ("stats", {"channel": 1, "sample": 1, "paused": False, "every_step": True}),
    ]


def test_every_step_shows_what_it_costs(make_pane, qtbot):
    capture = make_capture(arrays=[np.zeros(3)])
    capture.pace.stride = 4
    pane = make_pane(capture)
    pane.poll()
    assert "every 4th step" in pane.status_label.text()
    pane.set_cost("every step costs 0.8% of the training time")
    assert "costs" not in pane.status_label.text()  # only while every step is on
    qtbot.mouseClick(pane.every_step_button, Qt.MouseButton.LeftButton)
    assert "every step costs 0.8% of the training time" in pane.status_label.text()
    qtbot.mouseClick(pane.every_step_button, Qt.MouseButton.LeftButton)
    assert "costs" not in pane.status_label.text()


def test_the_status_line_says_step_shape_and_rows(make_pane):
    capture = make_capture(arrays=[np.zeros((32, 16))] * 3, steps=[1000, 1117, 1234])
    pane = make_pane(capture)
    assert "waiting" in pane.status_label.text()
    pane.poll()
    assert pane.status_label.text() == "step 1,234 · tensor (32, 16) · 3 rows · every step"


def test_a_capture_error_shows_in_the_status_line(make_pane, qtbot):
    capture = make_capture(arrays=[np.zeros(3)])
    pane = make_pane(capture)
    pane.show()
    qtbot.waitExposed(pane)
    capture.error = "Capturing stopped: ValueError: odd tensor"
    pane.tick()  # the version never changes again, yet the tick shows the error
    assert "odd tensor" in pane.status_label.text()


def test_set_message_shows_the_text_instead_of_the_plot(make_pane, qtbot):
    pane = make_pane()
    pane.show()
    qtbot.waitExposed(pane)
    text = "Not capturing: the node has no Cell to hook."
    pane.set_message(text)
    assert pane.message_label.isVisible() and pane.message_label.text() == text
    assert not pane.plot_views["histogram"].isVisible()
    pane.set_capture(None)  # the controller resets a missing capture: the message stays
    assert pane.message_label.isVisible()
    pane.set_capture(make_capture(arrays=[np.zeros(2)]))
    assert not pane.message_label.isVisible() and pane.plot_views["histogram"].isVisible()


# ---- polling ------------------------------------------------------------------------------------


def test_a_poll_redraws_only_when_the_version_changed(make_pane):
    capture = make_capture(arrays=[np.zeros(2)])
    pane = make_pane(capture, view="stats")
    assert pane.poll()
    assert not pane.poll() and not pane.poll()
    feed(capture, [np.ones(2)])
    assert pane.poll() and pane.redraws == 2


def test_only_the_view_shown_is_computed(make_pane):
    capture = make_capture(arrays=[np.zeros(2)] * 3)
    calls = []
    histograms = capture.histograms
    capture.histograms = type("Spy", (), {
        "snapshot": lambda self: calls.append(1) or histograms.snapshot(),
    })()  # fmt: skip
    pane = make_pane(capture, view="stats")
    pane.poll()
    assert calls == []
    pane.set_view("histogram")
    assert calls == [1]


def test_a_pane_draws_when_shown_and_its_ticks_draw_nothing_while_hidden(qtbot):
    holder = QWidget()  # stands in for the dock (hidden when closed or tabbed away)
    qtbot.addWidget(holder)
    capture = make_capture(arrays=[np.zeros(2)])
    pane = HookPane(capture, view="stats", budget=FrameBudget(1.0))
    QVBoxLayout(holder).addWidget(pane)
    holder.show()
    qtbot.waitExposed(holder)
    assert pane.redraws == 1  # drawn at once when shown
    feed(capture, [np.ones(2)])
    pane.tick()
    assert pane.redraws == 2
    holder.hide()
    feed(capture, [np.ones(2)])
    pane.tick()
    assert pane.redraws == 2
    holder.show()
    assert pane.redraws == 3  # caught up at once


def test_streaming_keeps_to_the_budget_and_the_last_version_draws_at_once(make_pane, qtbot):
    capture = make_capture(arrays=[np.zeros(2)])
    budget = NeverReady()
    pane = make_pane(capture, view="stats", budget=budget)
    pane.tick()  # not shown: nothing is looked at
    assert pane.redraws == 0 and budget.charged == 0
    pane.show()
    qtbot.waitExposed(pane)
    pane._seen = pane.stream.count = -1  # as if the version were new (show() polled it)
    pane.tick()  # a version not seen before: streaming, and the budget says no
    redraws = pane.redraws
    pane.tick()  # the same version soon after: still streaming, still no
    assert pane.redraws == redraws
    pane.stream.changed_at -= QUIET_SECONDS  # no new version for a while: the stream stopped
    pane.tick()  # so the last version is drawn at once
    assert pane.redraws == redraws + 1 and budget.charged > 0
    qtbot.wait(50)  # let the layout settle: a view not laid out yet paints nothing
    charges = budget.charges
    pane.plot_views["stats"].viewport().repaint()
    assert budget.charges == charges + 1  # painting is charged too



@pytest.mark.parametrize("view", ["histogram", "stats", "norm"])
def test_while_streaming_the_step_axis_leaves_room_and_closes_in_once_training_stops(
        make_pane, qtbot, view):  # fmt: skip
    # A step axis that widens costs a whole repaint of the pane: while training streams
    # it leaves room for as many steps again, so it widens about once per doubling of
    # the steps; once the stream stops, one redraw frames the steps closely.
    capture = make_capture(arrays=[np.full((2, 3), 1.0 + k) for k in range(10)],
                           steps=range(100, 1100, 100))  # fmt: skip
    pane = make_pane(capture, view=view, budget=FrameBudget(1.0))
    pane.show()
    qtbot.waitExposed(pane)
    box = pane.plot_views[view].getPlotItem().getViewBox()

    def top():
        return box.viewRange()[0][1]

    widenings = 0
    shown = top()
    for last in range(1100, 8100, 100):  # training goes on: a capture at each tick
        feed(capture, [np.full((2, 3), 2.0)], steps=[last])
        drawn = pane.redraws
        pane.tick()
        assert pane.redraws == drawn + 1  # streaming, within a budget that allows it
        assert top() >= last  # every step shown
        if top() != shown:  # widened: room ahead for as many steps again
            widenings += 1
            assert top() - 100 >= 2 * (last - 100)
        shown = top()
    assert widenings <= 3  # 1,100 → 8,000 steps: about three doublings, not 70 moves
    pane.stream.changed_at -= QUIET_SECONDS  # nothing copied for a while: the run stopped
    drawn = pane.redraws
    pane.tick()  # no new version, yet the axis closes in, once
    assert pane.redraws == drawn + 1
    assert top() >= 8000 and (8000 - 100) / (top() - 100) > 0.5
    pane.tick()
    assert pane.redraws == drawn + 1


def test_a_streaming_redraw_asks_the_budget_before_working_out_what_is_visible(
        make_pane, qtbot, monkeypatch):  # fmt: skip
    # Most ticks while training find the shared budget spent; they cost a version check,
    # not the visible region of the pane (which Qt works out through every parent).
    capture = make_capture(arrays=[np.zeros(2)])
    pane = make_pane(capture, view="stats", budget=NeverReady())
    pane.show()
    qtbot.waitExposed(pane)
    asked = []
    monkeypatch.setattr(pane, "visibleRegion", lambda: asked.append(1) or pane.rect())
    for _ in range(5):
        feed(capture, [np.ones(2)])
        pane.tick()
    assert asked == [] and pane.redraws == 1  # (the one when shown)

