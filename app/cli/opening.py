"""Opening the project a command works on, the same way for every command."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.catalogue.custom_cells import trust_if_asked
from app.cli import warn
from app.document import Project
from app.io.project_file import load_project


def open_project(path: Path, args: argparse.Namespace) -> Project:
    """The project at `path`: what its load left out is warned about on stderr, and its
    custom Cell code runs only if `--trust` was given. Raises ProjectFileError."""
    notes: list[str] = []
    project = load_project(path, notes)
    for note in notes:
        warn(note)
    trust_if_asked(project, args)
    return project
