"""Reusable plot views: live training curves and a 2-feature decision boundary."""

from widgets.plots.budget import FrameBudget
from widgets.plots.curves import TrainingCurves
from widgets.plots.decision_boundary import DecisionBoundaryView, extent_for, grid_points

__all__ = ["DecisionBoundaryView", "FrameBudget", "TrainingCurves", "extent_for", "grid_points"]
