"""Plot colours: background, axes and text that follow the application palette (Light/Dark),
and the fixed colours of classes and of the network's mode, which must never be confused.

pyqtgraph paints with colours given once; `follow_palette` gives a view its colours from
the palette now and again whenever the palette changes, so a theme switch needs no restart.
On a light palette the plots keep the white paper look they always had.
"""

from __future__ import annotations

from typing import NamedTuple

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QColor, QGuiApplication, QPalette

# Classes: Tableau 10, distinct hues that stay apart for colour-blind readers (more
# classes repeat). The decision boundary's points and field use them.
CLASS_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                 "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")  # fmt: skip
# The network's mode (the Predict panel's bars): (strong, light) in hues no class has —
# violet and olive — so a bar never reads as "class 0" or "class 1".
MODE_COLOURS = {"predict": ("#673ab7", "#9e8fd6"), "train": ("#827717", "#b8ae5c")}


class PlotColours(NamedTuple):
    background: QColor
    text: QColor  # tick labels and axis titles
    axis: QColor  # axis lines and ticks


LIGHT = PlotColours(QColor("#ffffff"), QColor("#333333"), QColor("#888888"))
DARK_TEXT, DARK_AXIS = QColor("#d6d6d6"), QColor("#8c8c8c")


def plot_colours(palette: QPalette | None = None) -> PlotColours:
    """The colours for `palette` (default: the application's)."""
    palette = palette if palette is not None else QGuiApplication.palette()
    if palette.color(QPalette.ColorRole.Window).lightness() >= 128:
        return LIGHT
    return PlotColours(palette.color(QPalette.ColorRole.Base), DARK_TEXT, DARK_AXIS)


def style_axis(axis: pg.AxisItem, colours: PlotColours | None = None) -> None:
    """Colour an axis's line and text (its title too, unless it is set with a colour)."""
    colours = colours or plot_colours()
    axis.setPen(colours.axis)
    axis.setTextPen(colours.text)


def follow_palette(view: pg.GraphicsView) -> None:
    """Colour `view` and every axis in it from the palette, now and on each change."""
    _PaletteFollower(view).restyle()


class _PaletteFollower(QObject):
    """Lives as a child of the view: restyles it when its palette changes."""

    def __init__(self, view: pg.GraphicsView) -> None:
        super().__init__(view)
        self._view = view
        view.installEventFilter(self)

    def restyle(self) -> None:
        colours = plot_colours(self._view.palette())
        self._view.setBackground(colours.background)
        for item in self._view.scene().items():
            if isinstance(item, pg.AxisItem):
                style_axis(item, colours)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if event.type() == QEvent.Type.PaletteChange:
            self.restyle()
        return False
