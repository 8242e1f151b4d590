"""`cellwright export PROJECT --python FILE`: a runnable script and its weights."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli import EXIT_OK, fail, say
from app.compiler import CompileError
from app.export.python_script import ExportError, export_python
from app.io.project_file import ProjectFileError, load_project


def run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    try:
        project = load_project(path)
        exported = export_python(project, args.python)
    except ProjectFileError as exc:
        return fail(str(exc))
    except (CompileError, ExportError) as exc:
        return fail(f"{path.name}: {exc}")
    say(f"Wrote {exported.script} (class {exported.class_name}) and its weights "
        f"{exported.weights}")  # fmt: skip
    return EXIT_OK
