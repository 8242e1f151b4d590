"""`cellwright export PROJECT --python/--torch/--onnx FILE`: a runnable script or a model file."""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from app.cli import EXIT_OK, fail, say
from app.compiler import CompileError
from app.export.python_script import ExportError, export_python
from app.export.report import ExportReport
from app.export.torch_script import export_torch
from app.io.project_file import ProjectFileError, load_project

ONNX_MISSING = "ONNX export needs the onnx extra: pip install 'cellwright[onnx]'"


def run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    try:
        project = load_project(path)
        if args.python is not None:
            exported = export_python(project, args.python)
            say(f"Wrote {exported.script} (class {exported.class_name}) and its weights "
                f"{exported.weights}")  # fmt: skip
            return EXIT_OK
        if args.torch is not None:
            report = export_torch(project, args.torch)
        else:
            report = _export_onnx(project, args.onnx)
            if report is None:
                return fail(ONNX_MISSING)
    except ProjectFileError as exc:
        return fail(str(exc))
    except (CompileError, ExportError) as exc:
        return fail(f"{path.name}: {exc}")
    text = report.summary()
    say(text[:1].upper() + text[1:])
    return EXIT_OK


def _export_onnx(project, path: str) -> ExportReport | None:
    """The ONNX exporter's report, or None when it or the onnx package is not installed."""
    try:
        export_onnx = importlib.import_module("app.export.onnx_model").export_onnx
    except ImportError:
        return None
    try:
        return export_onnx(project, path)
    except ModuleNotFoundError as exc:  # the exporter imports onnx only when it runs
        if (exc.name or "").split(".")[0] in ("onnx", "onnxruntime"):
            return None
        raise
