"""The Inspector in the window: whatever node is selected, its Parameters table and their
buttons stay in view under the node's settings; settings that don't fit scroll on their
own (a wheel over a field not clicked into scrolls them and edits nothing)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox, QScrollArea

from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import DIGITS, TIMEOUT, open_example, shown_window
from tests.widgets.test_layout_default import (
    LARGE,
    SMALL,
    in_view,
    select_by_click,
    window_rect,
)

pytestmark = pytest.mark.gui

SHOTS = Path(os.environ.get("CELLWRIGHT_SHOTS", "/tmp/shots"))
BUTTONS = ("edit", "reinit", "freeze", "unfreeze")


@pytest.fixture(params=[SMALL, LARGE], ids=["1280x800", "1920x1080"])
def window(request, qtbot, monkeypatch):
    record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)
    yield from shown_window(qtbot, request.param)


def settings_area(window) -> QScrollArea:
    return window.findChild(QScrollArea, "inspector_scroll")


def select_conv(qtbot, window, name: str = "conv2d2"):
    """Open the digits CNN and click its Conv2d node; the Parameters list once filled."""
    open_example(window, qtbot, DIGITS)
    select_by_click(qtbot, window, name)
    params = window.parameters.list
    qtbot.waitUntil(lambda: params.tree.topLevelItemCount() == 2, timeout=TIMEOUT)
    qtbot.wait(100)  # the Inspector's layout settles
    return params


def test_a_conv_layer_shows_its_parameters_and_their_buttons_in_view(window, qtbot):
    params = select_conv(qtbot, window)
    inspector = window.workbench.inspector
    assert inspector.node.type == "Conv2d" and len(inspector.fields) >= 9
    dock = window_rect(window.inspector_dock)
    assert window.rect().contains(dock)
    assert in_view(params.tree) and dock.contains(window_rect(params.tree))
    assert params.tree.viewport().height() >= 40  # its rows show, not only its header
    for key in BUTTONS:
        button = params.buttons[key]
        assert in_view(button) and dock.contains(window_rect(button)), f"{key} is out of view"
    SHOTS.mkdir(parents=True, exist_ok=True)
    size = f"{window.width()}x{window.height()}"
    assert window.grab().save(str(SHOTS / f"inspector_conv_{size}.png"))


def test_conv_settings_that_do_not_fit_scroll_under_the_wheel_and_edit_nothing(window, qtbot):
    params = select_conv(qtbot, window, "conv2d1")
    inspector = window.workbench.inspector
    area = settings_area(window)
    bar = area.verticalScrollBar()
    if window.height() >= LARGE[1]:
        assert bar.maximum() == 0  # room for them all: nothing scrolls
        assert all(in_view(field) for field in inspector.fields.values())
        return
    assert bar.maximum() > 0  # 1280 x 800: the settings scroll, not the Parameters
    node = dict(inspector.node.params)
    steps = window.undo_stack.count()
    field = inspector.fields["pad_mode"]  # a drop-down not clicked into
    area.ensureWidgetVisible(field)
    before = bar.value()
    centre = field.mapTo(window, field.rect().center())
    notches = -1 if before < bar.maximum() else 1
    QTest.wheelEvent(window.windowHandle(), QPointF(centre), QPoint(0, 120 * notches))
    assert bar.value() != before and not field.hasFocus()
    assert dict(inspector.node.params) == node and window.undo_stack.count() == steps
    # The Parameters did not move with the settings.
    for key in BUTTONS:
        assert in_view(params.buttons[key]), f"{key} is out of view"
    # Scrolled to the end, the last setting shows whole, the Parameters still under it.
    bar.setValue(bar.maximum())
    qtbot.wait(50)
    assert in_view(inspector.fields["has_bias"]) and in_view(params.tree)


def test_a_short_inspector_keeps_the_parameter_buttons_and_scrolls_the_settings(window, qtbot):
    params = select_conv(qtbot, window)
    window.resizeDocks([window.inspector_dock], [1], Qt.Orientation.Vertical)  # its least
    qtbot.wait(100)
    assert window.inspector_dock.height() <= 420  # it did not hold the window tall
    for key in BUTTONS:
        assert in_view(params.buttons[key]), f"{key} is out of view"
    assert settings_area(window).viewport().height() >= 60  # a few settings still show
