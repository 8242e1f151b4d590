"""`cellwright import MODEL.onnx --out PROJECT.cwproj`: an ONNX model as a new project.

Nothing is written unless the whole model imports: a model with ops Cellwright can't
express is refused, naming each op type with its count. The summary line reports the
nodes, Parameters, folded shape computations and the time taken.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.cli import EXIT_OK, EXIT_USAGE, fail, say
from app.io.project_file import ProjectFileError, save_project
from app.onnx_import import OnnxImportError, import_onnx


def run(args: argparse.Namespace) -> int:
    source, target = Path(args.model), Path(args.out)
    if target.suffix != ".cwproj":
        target = target.with_name(target.name + ".cwproj")
    try:
        shapes = dict(_shape(text) for text in args.shape or ())
    except ValueError as exc:
        say(f"cellwright import: error: {exc}", sys.stderr)
        return EXIT_USAGE
    if target.exists() and not args.force:
        return fail(f"{target} already exists; pass --force to replace it.")
    try:
        result = import_onnx(source, shapes=shapes or None, group_blocks=not args.flat)
        save_project(result.project, target)
    except OnnxImportError as exc:
        return fail(f"{source.name}: {exc}")
    except (ProjectFileError, OSError) as exc:
        return fail(f"{target}: can't be written ({exc}).")
    say(result.summary)
    say(f"Wrote {target}")
    return EXIT_OK


def _shape(text: str) -> tuple[str, tuple[int, ...]]:
    """'x=3,224,224' → ('x', (3, 224, 224)): an input's sample shape, batch axis left out."""
    name, sep, dims = text.partition("=")
    try:
        shape = tuple(int(d) for d in dims.replace("x", ",").split(",") if d.strip())
    except ValueError:
        shape = ()
    if not sep or not name or not shape or min(shape) < 1:
        raise ValueError(f"--shape {text!r}: write NAME=D1,D2,… (the sample shape without the "
                         "batch axis, e.g. x=3,224,224).")
    return name, shape
