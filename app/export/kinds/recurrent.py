"""(stub) The recurrent family's export tables; forms in app.export.kinds.common."""

from __future__ import annotations

from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState

TORCH: dict[str, TorchLayer] = {}
TORCH_OPS: dict[str, TorchOp] = {}
TORCH_STATE: dict[str, TorchState] = {}
ONNX: dict[str, OnnxRule] = {}
PYTHON_OPS: dict[str, PythonOp] = {}
