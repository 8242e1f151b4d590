"""Cellwright engine: a NumPy autograd with MindSpore-style Tensor, Parameter and Cell.

Imports NumPy only.  Seed programs written for MindSpore run with only the
import changed (`import engine as ms`, `from engine import nn, ops`).
"""

from engine import (
    _allocator,
    nn,  # noqa: E402
    ops,  # noqa: E402,I001 - binds Tensor methods
)
from engine._dtype import (
    DType,
    bool_,
    float16,
    float32,
    float64,
    float_,
    int8,
    int16,
    int32,
    int64,
    int_,
    uint8,
)
from engine._random import get_seed, set_seed
from engine.autograd import enable_grad, no_grad
from engine.common import initializer as _initializer  # Tensor(init=...) fills through it
from engine.context import GRAPH_MODE, PYNATIVE_MODE, get_context, jit, set_context
from engine.grad import GradOperation, get_grad, grad, value_and_grad
from engine.parameter import Parameter, ParameterTuple
from engine.serialization import load_checkpoint, load_param_into_net, save_checkpoint
from engine.tensor import Tensor

__version__ = "0.1.0"
_allocator.tune()

__all__ = [
    "DType", "Tensor", "Parameter", "ParameterTuple", "grad", "value_and_grad", "get_grad",
    "GradOperation",
    "no_grad", "enable_grad", "set_context", "get_context", "jit", "PYNATIVE_MODE", "GRAPH_MODE",
    "set_seed", "get_seed", "ops", "nn", "float16", "float32", "float64", "int8", "int16",
    "int32", "int64", "uint8", "bool_", "float_", "int_",
    "save_checkpoint", "load_checkpoint", "load_param_into_net",
]
