"""Reusable plot views: live training curves, hook panes and a 2-feature decision boundary."""

from widgets.plots.budget import FrameBudget
from widgets.plots.curves import TrainingCurves
from widgets.plots.decision_boundary import DecisionBoundaryView, extent_for, grid_points
from widgets.plots.hook_pane import HookPane

__all__ = [
    "DecisionBoundaryView",
    "FrameBudget",
    "HookPane",
    "TrainingCurves",
    "extent_for",
    "grid_points",
]
