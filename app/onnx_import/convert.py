"""The converter tables, and the walk that turns a folded ONNX graph into the project's graph.

Each convert_* module has a table CONVERTERS {op type: fn(builder, node)}; op types the
patterns module makes (domain "cellwright") are converted the same way. Graph inputs
become Input nodes in the model's order (the order `cellwright info` and `predict`
list them), graph outputs Output nodes with no loss, named after them where legal.
"""

from __future__ import annotations

from app.catalogue import NO_LOSS
from app.onnx_import import convert_basic, convert_conv, convert_layers, convert_sequence
from app.onnx_import.build import Builder, _legal
from app.onnx_import.fold import Folded
from app.onnx_import.ir import OnnxImportError, OnnxModel

CONVERTERS = {**convert_basic.CONVERTERS, **convert_conv.CONVERTERS,
              **convert_layers.CONVERTERS, **convert_sequence.CONVERTERS}  # fmt: skip
DTYPES = {"float32": "float32", "float64": "float32", "float16": "float32", "int64": "int64",
          "int32": "int32"}  # fmt: skip


def convert_graph(builder: Builder, model: OnnxModel, folded: Folded) -> None:
    for spec in model.inputs:
        dtype = DTYPES.get(str(spec.dtype) if spec.dtype is not None else "float32")
        if dtype is None:
            raise OnnxImportError(f"Input '{spec.name}' holds {spec.dtype} values; Cellwright "
                                  "feeds float32, int32 or int64.")
        builder.add("Input", None, params={"shape": folded.input_shapes[spec.name],
                                           "dtype": dtype},
                    outputs=[spec.name], name=_legal(spec.name) or "input")
    for node in folded.nodes:
        key = node.op if node.domain in ("", "ai.onnx", "cellwright") else \
            f"{node.domain}::{node.op}"
        CONVERTERS[key](builder, node)
    for spec in model.outputs:
        if builder.is_const(spec.name) and spec.name not in builder.sources:
            raise OnnxImportError(f"Output '{spec.name}' is a constant: it does not depend on "
                                  "any input.")
        builder.add("Output", None, params={"loss": NO_LOSS}, inputs=[spec.name],
                    name=_legal(spec.name) or "output")
