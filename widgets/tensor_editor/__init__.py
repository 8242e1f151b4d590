"""The Parameter editor's reusable view: a table and a heatmap of one Parameter's values."""

from widgets.tensor_editor.editor import TensorEditor
from widgets.tensor_editor.heatmap import TensorHeatmap, kernel_grid, value_levels
from widgets.tensor_editor.model import TensorTableModel

__all__ = ["TensorEditor", "TensorHeatmap", "TensorTableModel", "kernel_grid", "value_levels"]
