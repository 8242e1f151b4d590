"""File → Import: an ONNX model as a new untitled project, and trained weights into the
open project.

- ONNX Model…: the current project, if it has unsaved work, is asked about first (as New
  and Open do); the model is read by `app.onnx_import.import_onnx`, and the result opens as
  a new untitled project (Save asks where) with the import's summary on the status line.
  A model that can't be imported is reported in a message box and nothing changes.
- Weights…: an `.npz` or a PyTorch state_dict (`.pt`, `.pth`) under the names the PyTorch
  export writes (`app.export.torch_weights`), put into the current project's Parameters
  as one undo step; the session's network takes them at once (the Parameter controller
  copies each change into it). Refused while a run trains, as every Parameter edit is;
  allowed while it is paused (the run goes on with the new weights). Misfits (shapes,
  missing or unknown names) are listed in a message box and nothing changes.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu

from app.compiler import CompileError
from app.export.python_script import ExportError
from app.export.torch_weights import WeightsMismatch, match_torch_state
from app.io.weights_import import WeightsFileError, read_weights
from app.undo.commands import ParamValuesCommand, perform

# The main window (app.gui.main_window.MainWindow, which imports this module): its shell,
# project holder, undo stack, Parameter controller and the question before work is lost.
MainWindow = Any

ONNX_FILTER = "ONNX models (*.onnx);;All files (*)"
WEIGHTS_FILTER = "Weights (*.npz *.pt *.pth);;All files (*)"
WEIGHTS_TITLE = "Could not import the weights"
ONNX_TITLE = "Could not import the ONNX model"


def add_import_menu(window: MainWindow) -> QMenu:
    """The File → Import submenu (ONNX Model…, Weights…), placed before File → Export."""
    menu = QMenu("&Import", window)
    menu.setObjectName("import_menu")
    onnx = QAction("&ONNX Model…", menu)
    onnx.setObjectName("import_onnx_action")
    onnx.setStatusTip("Open an ONNX model as a new untitled project")
    onnx.triggered.connect(lambda _=False: _on_onnx_triggered(window))
    weights = QAction("&Weights…", menu)
    weights.setObjectName("import_weights_action")
    weights.setStatusTip("Put weights trained elsewhere (.npz, PyTorch .pt) into this project")
    weights.triggered.connect(lambda _=False: _on_weights_triggered(window))
    menu.addActions([onnx, weights])
    file_menu = window.shell.menu("file_menu")
    export = window.shell.window.findChild(QMenu, "export_menu")
    before = export.menuAction() if export is not None else window.shell.action("quit_action")
    file_menu.insertMenu(before, menu)
    return menu


# ---- ONNX ------------------------------------------------------------------------------------


def _on_onnx_triggered(window: MainWindow) -> None:
    try:
        if not window._confirm_discard_changes():  # as New and Open ask
            return
        path, _ = QFileDialog.getOpenFileName(window, "Import ONNX Model", _start(window),
                                              ONNX_FILTER)  # fmt: skip
        if path:
            import_onnx_file(window, path)
    except Exception as exc:  # a bug must not take the window down
        window.report_error("ONNX import failed", exc)


def import_onnx_file(window: MainWindow, path: str | Path) -> bool:
    """Import the ONNX model at `path` and open it as a new untitled project; False (with a
    message box saying why, the current project untouched) if it can't be imported.
    Unsaved work is not asked about here: the menu action asks before the file dialog."""
    try:
        onnx_import = importlib.import_module("app.onnx_import")
    except ImportError as exc:
        window.shell.show_error(ONNX_TITLE, f"ONNX import is not available here ({exc}).")
        return False
    expected = getattr(onnx_import, "OnnxImportError", None)
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        result = onnx_import.import_onnx(str(path))
    except Exception as exc:
        if isinstance(expected, type) and isinstance(exc, expected):
            window.show_message(f"{ONNX_TITLE}: {Path(path).name}")
            window.shell.show_error(ONNX_TITLE, str(exc))
        else:
            window.report_error(ONNX_TITLE, exc)
        return False
    finally:
        QApplication.restoreOverrideCursor()
    from app.catalogue.custom_cells import trust_scope

    trust_scope(None)  # a new untitled project, as New makes
    window.project_holder.replace(result.project, None)
    window.project_holder.mark_unsaved()  # nothing of it is saved yet
    window.show_message(str(result.summary))
    return True


# ---- weights ---------------------------------------------------------------------------------


def _on_weights_triggered(window: MainWindow) -> None:
    try:
        path, _ = QFileDialog.getOpenFileName(window, "Import Weights", _start(window),
                                              WEIGHTS_FILTER)  # fmt: skip
        if path:
            import_weights_file(window, path)
    except Exception as exc:  # a bug must not take the window down
        window.report_error("Importing weights failed", exc)


def import_weights_file(window: MainWindow, path: str | Path) -> str | None:
    """Put the weights in `path` into the current project as one undo step; the problem
    (also shown in a message box) or None."""
    path = Path(path)
    problem = _weights_problem(window, path)
    if problem:
        window.show_message(f"{WEIGHTS_TITLE}: {path.name}")
        window.shell.show_error(WEIGHTS_TITLE, problem)
    return problem


def _weights_problem(window: MainWindow, path: Path) -> str | None:
    project, stack = window.project, window.undo_stack
    if project is None:
        return "There is no project to put weights into."
    reason = stack.lock_reason or window.parameters._locked()
    if reason:
        return f"{reason} Weights are imported while no run trains (or while it is paused)."
    compiled, why = window.parameters.compiled()
    if compiled is None:
        return f"The network can't be built, so its Parameters are unknown: {why}"
    compiled.store_values(project)  # the project holds the network's weights as they are now
    try:
        arrays = read_weights(path)
        values = match_torch_state(project, arrays)
    except WeightsFileError as exc:
        return str(exc)
    except WeightsMismatch as exc:
        return f"{path.name} does not fit this project ({len(exc.problems)} problem" \
               f"{'s' if len(exc.problems) != 1 else ''}):\n\n" \
               + "\n".join(f"• {p}" for p in exc.problems) + "\n\nNothing was changed."
    except (CompileError, ExportError) as exc:
        return str(exc)
    count = sum(len(node) for node in values.values())
    text = f"Import {count} Parameter{'s' if count != 1 else ''} from {path.name}"
    stack.beginMacro(text)
    problem = None
    try:
        for node_id, arrays_of_node in values.items():
            for local, value in arrays_of_node.items():
                problem = perform(stack, ParamValuesCommand(project, node_id, local,
                                                            [((), value)], text))  # fmt: skip
                if problem:
                    break
            if problem:
                break
    finally:
        stack.endMacro()
    if problem:  # not expected once everything matched: put back what was done
        stack.undo()
        return f"{problem} Nothing was changed."
    window.show_message(f"Imported {count} Parameter{'s' if count != 1 else ''} from "
                        f"{path.name} (Undo puts the previous weights back).")  # fmt: skip
    return None


def _start(window: MainWindow) -> str:
    folder = window.project_path.parent if window.project_path else Path.cwd()
    return str(folder)
