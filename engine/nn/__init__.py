"""Cells: the base class and the layer library."""

from engine.nn.cell import Cell, HookError, HookHandle
from engine.nn.layers_basic import Identity, ReLU

__all__ = ["Cell", "HookError", "HookHandle", "Identity", "ReLU"]
