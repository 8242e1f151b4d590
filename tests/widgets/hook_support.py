"""Helpers for hook pane tests: real captures fed with arrays, panes over them, what they drew."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF

from app.document.project import Hook
from app.session import HookCapture
from widgets.plots import FrameBudget, HookPane

PANE_SHARE = 0.04  # of one core: a budget that lets a lone pane's redraws through


def make_capture(kind="forward", arrays=(), steps=None) -> HookCapture:
    """A real capture fed with `arrays` at `steps` (1, 2, … by default), summarised."""
    capture = HookCapture(Hook(kind, "n1"))
    capture.pace.budget = None
    feed(capture, arrays, steps)
    return capture


def feed(capture, arrays, steps=None) -> None:
    arrays = list(arrays)
    start = 1 + (int(capture.stats.snapshot()[-1, 0]) if len(capture.stats.snapshot()) else 0)
    steps = list(steps) if steps is not None else list(range(start, start + len(arrays)))
    for i, (step, array) in enumerate(zip(steps, arrays, strict=True)):
        capture.record(step, np.asarray(array, dtype=np.float32))
        if i % 32 == 31:  # the reader keeps up: no capture is lost to the ring
            capture.summarise()
    capture.summarise()


def new_pane(qtbot, capture=None, **kwargs) -> HookPane:
    """A 500 × 260 pane over `capture`, with a budget of its own unless given one."""
    kwargs.setdefault("budget", FrameBudget(PANE_SHARE))
    pane = HookPane(capture, **kwargs)
    qtbot.addWidget(pane)
    pane.resize(500, 260)
    return pane


def curve_data(curve):
    x, y = curve.getOriginalDataset() if hasattr(curve, "getOriginalDataset") else curve.getData()
    return (np.empty(0), np.empty(0)) if x is None else (np.asarray(x), np.asarray(y))


def image_x(image, column):
    """The step (x) at the centre of an image column, as the axes read it."""
    return image.mapToParent(QPointF(column + 0.5, 0.5)).x()


def image_y(image, row):
    return image.mapToParent(QPointF(0.5, row + 0.5)).y()


class NeverReady(FrameBudget):
    """A budget that is always spent: it counts what is charged to it."""

    def __init__(self):
        super().__init__(0.01)
        self.charged = 0.0
        self.charges = 0

    def ready(self):
        return False

    def charge(self, seconds):
        self.charged += seconds
        self.charges += 1
