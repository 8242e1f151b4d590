"""Import an ONNX model as a Cellwright project (headless: `cellwright import`, File → Import).

    result = import_onnx("resnet18.onnx")        # OnnxImportError says why not
    result.project                               # a Project: nodes, edges, Parameter values
    result.summary                               # "Imported resnet18.onnx: 52 nodes, …"

Steps: read the model (ir), fold its shape computations for the known input shapes with
the batch axis left free (fold), fuse op patterns that one Cellwright node expresses
(patterns: MatMul+Add → Dense, the erf form of GELU, a spelled-out LayerNorm…), convert
every node through the converter tables (convert_*), lay the graph out and group repeated
blocks into composites (layout, blocks). A model with any op no converter knows is
refused as a whole, naming each such op with its count: nothing is half-imported.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.onnx_import.ir import OnnxImportError, OnnxModel, read_model

__all__ = ["ImportResult", "OnnxImportError", "import_onnx", "supported_ops"]


@dataclass
class ImportResult:
    project: Any  # app.document.Project
    summary: str
    nodes: int
    parameters: int
    folded: int
    seconds: float
    blocks: int = 0


def supported_ops() -> frozenset[str]:
    """The ONNX op types the importer converts."""
    from app.onnx_import.convert import CONVERTERS

    return frozenset(CONVERTERS)


def import_onnx(source: str | os.PathLike[str] | bytes | Any, *,
                shapes: dict[str, tuple[int, ...]] | None = None, name: str | None = None,
                group_blocks: bool = True) -> ImportResult:  # fmt: skip
    """Build a project from the ONNX model in `source` (a path, bytes or a ModelProto).

    `shapes` fixes the sample shape (without the batch axis) of inputs whose axes the
    model leaves open. Raises OnnxImportError with a message for the user.
    """
    from app.compiler import CompileError, compile_project
    from app.onnx_import import blocks, layout
    from app.onnx_import.build import Builder
    from app.onnx_import.convert import convert_graph
    from app.onnx_import.fold import fold, input_sample_shapes
    from app.onnx_import.patterns import fuse

    start = time.perf_counter()
    model = read_model(source)
    title = name or _title(source, model)
    sample = input_sample_shapes(model, shapes)
    folded = fold(model, sample)
    folded.nodes = fuse(folded)
    _refuse_unsupported(folded.nodes)
    builder = Builder(folded, opset=model.opset, name=title)
    convert_graph(builder, model, folded)
    project = builder.project
    try:
        compiled = compile_project(project)
    except CompileError as exc:
        raise OnnxImportError(f"The imported network does not compile: {exc}") from None
    missing = sorted(set(compiled.parameters()) - set(compiled.loaded))
    if missing:
        raise OnnxImportError("Some imported weights don't fit their layers: "
                              + ", ".join(missing[:8]) + ("…" if len(missing) > 8 else ""))
    compiled.store_values(project)  # layers' own non-trained state (BatchNorm statistics…)
    count = sum(1 for _ in project.graph.walk())
    grouped = blocks.group_repeats(project.graph) if group_blocks else []
    layout.layout(project.graph)
    params = sum(int(p.size) for p in compiled.parameters().values())
    seconds = time.perf_counter() - start
    tensors = len(compiled.parameters())
    summary = (f"Imported {title}: {count} nodes, {tensors} Parameters ({params:,} values), "
               f"{folded.folded} shape computations folded into constants"
               + (f", {len(grouped)} repeated blocks grouped" if grouped else "")
               + f", in {seconds:.2f} s.")
    project.metadata["imported_from"] = _source_name(source)
    return ImportResult(project, summary, count, params, folded.folded, seconds, len(grouped))


def _refuse_unsupported(nodes) -> None:
    from app.onnx_import.convert import CONVERTERS

    missing = Counter(_op_key(n) for n in nodes if _op_key(n) not in CONVERTERS)
    if missing:
        listed = ", ".join(f"{op} ×{count}" for op, count in sorted(missing.items()))
        raise OnnxImportError(f"The model uses ops Cellwright can't import: {listed}. "
                              "Nothing was imported.")


def _op_key(node) -> str:
    return node.op if node.domain in ("", "ai.onnx", "cellwright") else f"{node.domain}::{node.op}"


def _title(source: Any, model: OnnxModel) -> str:
    if isinstance(source, str | os.PathLike):
        return Path(source).stem or "Imported"
    return model.name or "Imported"


def _source_name(source: Any) -> str:
    return Path(source).name if isinstance(source, str | os.PathLike) else "(in memory)"
