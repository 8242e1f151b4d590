"""Graph -> engine.nn.Cell compiler and shape inference (headless)."""

from app.catalogue import BATCH, ShapeError
from app.compiler.cells import BackwardHooks, GraphCell, HookRemoval
from app.compiler.compile import CompiledNetwork, CompileError, compile_project
from app.compiler.shapes import (
    INSIDE,
    MISSING,
    WRONG,
    ShapeReport,
    check_connection,
    fitting_params,
    infer_shapes,
)

__all__ = [
    "BATCH",
    "INSIDE",
    "MISSING",
    "WRONG",
    "BackwardHooks",
    "CompileError",
    "CompiledNetwork",
    "GraphCell",
    "HookRemoval",
    "ShapeError",
    "ShapeReport",
    "check_connection",
    "compile_project",
    "fitting_params",
    "infer_shapes",
]
