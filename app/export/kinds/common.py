"""The forms of the export tables a node family declares (see app.export.kinds)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from app.document import Node

# PyTorch, a layer: fn(node, cell, dotted path, first input's shape) -> (the `nn.…(…)`
# constructor, the call): '{}' in the call is `self.name(x)`, or with '{m}' the call is
# spelled out around `x` ('{m}(F.pad({}, …))'), as torch_script._layer returns them.
TorchLayer = Callable[[Node, Any, str, tuple | None], tuple[str, str]]
# PyTorch, an op node: fn(cell, argument expressions) -> the expression ('torch.sub(a, b)');
# for several outputs, an expression giving a tuple. Arguments after an unconnected
# optional port come as 'port=expr', as the compiled graph passes them. An op holding
# state (the Constant) gives (its Module's constructor, statements setting it up with '{}'
# for the Module, the call with '{}' for its attribute 'self.const1') instead.
TorchOp = Callable[[Any, list[str]], str | tuple[str, list[str], str]]
# PyTorch state_dict: fn(engine Parameter's local name, its array) -> (torch's local name,
# the array in torch's layout), or None to leave it out.
TorchState = Callable[[str, np.ndarray], tuple[str, np.ndarray] | None]
# ONNX: fn(writer, node, cell, [(tensor name, shape) per input], dotted path) -> the output
# tensor names in port order. The inputs come as an onnx_model.Args: that list, plus
# `.ports`, the input port of each entry (for nodes with optional ports). The writer
# (onnx_model._Writer) offers `_op(op_type, inputs, out, **attrs)`, `_param(cell, local,
# path)`, `_const(name, value)`, `helper`, `onnx`.
OnnxRule = Callable[[Any, Node, Any, list[tuple[str, tuple]], str], list[str]]
# Engine script, an op node: fn(parsed values, argument expressions) -> the expression
# ('ops.sub(a, b)'); an op holding a Parameter gives (its Cell's constructor, statements
# setting it up, the call) instead, as TorchOp does.
PythonOp = Callable[[Mapping[str, Any], list[str]], str | tuple[str, list[str], str]]


def op_call(made: str | tuple[str, list[str], str], init: list[str], assign: str, attr: str,
            var: str) -> str:
    """The call of an op node as a TorchOp or PythonOp gave it (`made`). An op holding state
    (a Constant) is built as `var` with its setup lines, then attached as the node's
    attribute: setting it up before attaching names its Parameters after the node."""
    if isinstance(made, str):
        return made
    built, setup, call = made
    init.append(f"        {var} = {built}")
    init.extend("        " + line.format(var) for line in setup)
    init.append(assign.format(var))
    return call.format(attr)
