"""How the main window opens and saves projects: a guarded bridge to `app.io.project_file`.

Every failure — a missing or corrupt file, a missing project-file module, an
unexpected bug in the loader — comes out as one `ProjectAccessError` whose
message is fit to show the user, so the window can report it and carry on.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

PROJECT_SUFFIX = ".cwproj"
MAX_HEADER_BYTES = 4 << 20  # an example's project.json read for its name, at most


class ProjectAccessError(Exception):
    """A project could not be opened or saved; ``str(error)`` is for the user."""


def new_project() -> Any:
    """An empty project, or None while the document model cannot make one."""
    try:
        from app.catalogue.custom_cells import trust_scope
        from app.document import Project  # type: ignore[attr-defined]
    except ImportError:
        return None
    trust_scope(None)  # a new file: code trusted for another file does not run in it
    try:
        return Project()
    except Exception:
        # The document model is still taking shape; an empty window works without it.
        return None


def example_paths() -> list[Path]:
    """The example projects shipped with Cellwright, sorted by name."""
    from app.resources_path import resource_path

    folder = resource_path("examples")
    return sorted(folder.glob(f"*{PROJECT_SUFFIX}")) if folder.is_dir() else []


def load(path: str | os.PathLike[str]) -> Any:
    """Read the project at `path`; raises ProjectAccessError and changes nothing on failure."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ProjectAccessError(f"File not found: {path}")
    if path.is_dir():
        raise ProjectAccessError(f"{path} is a folder, not a project file.")
    module = _project_file_module()
    try:
        project = module.load_project(path)
    except Exception as exc:
        raise _user_error(module, exc, f"Could not read {path.name}") from exc
    from app.catalogue.custom_cells import trust_scope

    trust_scope(path)  # before anything is built: only code trusted for this file runs
    return project


def save(project: Any, path: str | os.PathLike[str]) -> Path:
    """Write `project` to `path` (adding the .cwproj suffix if missing); returns the path."""
    path = Path(path).expanduser()
    if not path.suffix:
        path = path.with_suffix(PROJECT_SUFFIX)
    if project is None:
        raise ProjectAccessError(
            "There is no project document to save yet: "
            "the document model is not available in this build."
        )
    module = _project_file_module()
    try:
        module.save_project(project, path)
    except Exception as exc:
        raise _user_error(module, exc, f"Could not save {path.name}") from exc
    return path


def _project_file_module() -> ModuleType:
    try:
        from app.io import project_file
    except ImportError as exc:
        raise ProjectAccessError(
            f"Project files are not supported by this build yet (app.io.project_file: {exc})."
        ) from exc
    return project_file


def _user_error(module: ModuleType, exc: Exception, failed: str) -> ProjectAccessError:
    """Turn whatever the project-file module raised into a message for the user."""
    expected = getattr(module, "ProjectFileError", None)
    if isinstance(expected, type) and isinstance(exc, expected):
        return ProjectAccessError(f"{failed}: {exc}" if str(exc) else failed)
    if isinstance(exc, OSError):
        return ProjectAccessError(f"{failed}: {exc.strerror or exc}")
    # Anything else is a bug in the loader/saver; still say what happened.
    return ProjectAccessError(f"{failed}: unexpected {type(exc).__name__}: {exc}")


ACRONYMS = {"mlp": "MLP", "cnn": "CNN", "rnn": "RNN", "bn": "BN", "lstm": "LSTM", "gru": "GRU"}


def example_title(path: Path) -> str:
    """The name an example shows in the menu: the project's own name, else its file name
    in title case with known acronyms upper case ("spiral_mlp" → "Spiral MLP")."""
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("project.json")
            if info.file_size <= MAX_HEADER_BYTES:
                name = json.loads(archive.read(info)).get("name")
                if isinstance(name, str) and name.strip():
                    return name.strip()
    except (OSError, KeyError, ValueError, AttributeError, zipfile.BadZipFile):
        pass  # a damaged example still gets a readable entry; opening it says what is wrong
    words = path.stem.replace("-", "_").split("_")
    return " ".join(ACRONYMS.get(w.lower(), w.capitalize()) for w in words if w)
