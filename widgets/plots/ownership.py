"""Keeping pyqtgraph's parentless widgets from outliving the plot views that made them."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget


def adopt_menus(owner: QWidget, plot: pg.PlotItem) -> None:
    """Make the context menus of `plot` children of `owner`: pyqtgraph creates them without
    a parent, so they would outlive the view as stray top-level windows while `plot` lives."""
    for menu in (plot.ctrlMenu, plot.getViewBox().menu):
        if menu is not None and menu.parent() is None:
            menu.setParent(owner, menu.windowFlags())
