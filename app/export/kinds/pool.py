"""Pooling, adaptive (global) pooling, Upsample, PixelShuffle and padding.

PyTorch, ONNX and engine-script export (see app.export.kinds for each table's form).
"""

from __future__ import annotations

from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState

TORCH: dict[str, TorchLayer] = {}
TORCH_OPS: dict[str, TorchOp] = {}
TORCH_STATE: dict[str, TorchState] = {}
ONNX: dict[str, OnnxRule] = {}
PYTHON_OPS: dict[str, PythonOp] = {}
