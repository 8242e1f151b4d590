"""Canary for the PySide6 6.12.0 refcount bug behind the `<6.12` pin in pyproject.toml.

PySide6 6.12.0 drops a reference to `None` on each of many painter calls such as
`QPainter.setPen`. Under CPython 3.11, where `None` is not immortal, its refcount
falls with every paint; after a few thousand repaints (a plot pane redrawing
while training) it reaches zero and the interpreter aborts in `none_dealloc`.
pyproject.toml therefore pins `PySide6-Essentials<6.12`. This test paints enough
to make the leak plain: if it fails, the installed PySide6 has the bug, so keep
the pin (or move past the broken release); if a later release passes, the cap can
be lifted.
"""

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen

CALLS = 20_000


def test_setpen_does_not_drain_none_refcount(qapp):
    image = QImage(64, 64, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.white)
    pens = [QPen(QColor("black"), 1.5), QColor("red"), Qt.PenStyle.DashLine]
    painter = QPainter(image)
    try:
        before = sys.getrefcount(None)
        for i in range(CALLS):
            painter.setPen(pens[i % len(pens)])
        after = sys.getrefcount(None)
        painter.drawLine(0, 0, 63, 63)
    finally:
        painter.end()
    # Unrelated activity moves None's count by a handful; the bug moves it by ~CALLS.
    assert after > before - CALLS // 10, f"None refcount fell by {before - after}"
