"""Custom Cells in the window: the code pane of the selected CustomCell node, and the trust
prompt for a project that carries code.

Code runs only once trusted (app.catalogue.custom_cells). Opening a project whose code
this machine has not trusted for that file asks first, showing the code; the answer is
remembered per file by a hash of the code, so a changed file asks again. Refusing opens
the project with those nodes marked "Not run". Check in the code pane trusts what the
user typed, runs it once on zeros of the incoming shape and, if it works, applies it to
the node as one undoable edit; a failure is shown with its line, in the pane.
"""

from __future__ import annotations

import json
import logging
import re
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, QSize, Qt
from PySide6.QtWidgets import QDockWidget, QMessageBox

from app.catalogue import CATALOGUE
from app.catalogue.custom_cells import (
    CUSTOM_CELL,
    CustomCellError,
    code_digest,
    custom_ports,
    load_custom_cell,
    trust_code,
    trust_project,
    untrusted_code,
)
from app.compiler.shapes import infer_shapes
from app.compiler.shapes import text as shape_text
from app.document import Project
from app.undo.commands import SnapshotCommand, perform
from widgets.code_editor import CodePane

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.session_holder import SessionHolder
    from app.gui.shell import Shell
    from widgets.node_editor import NodeEditor

log = logging.getLogger(__name__)

_LINE = re.compile(r"\bline (\d+):")
TRUSTED_KEY = "custom_code/trusted"  # QSettings: {file path: digest of the code trusted}


class CustomCellController(QObject):
    """The code dock and the trust prompt of one main window."""

    def __init__(self, shell: Shell, projects: ProjectHolder, sessions: SessionHolder,
                 editor: NodeEditor, settings: QSettings) -> None:  # fmt: skip
        super().__init__(shell)
        self.shell, self.projects, self.sessions = shell, projects, sessions
        self.editor, self.settings = editor, settings
        self.pane = CodePane()
        self.pane.check_requested.connect(self._on_pane_check_requested)
        self.dock = QDockWidget("Custom Cell Code", shell.window)
        self.dock.setObjectName("code_dock")
        self.dock.setWidget(self.pane)
        self.dock.hide()
        self._placed = False
        self.node_id: str | None = None
        editor.selection_changed.connect(self._on_editor_selection_changed)
        editor.path_changed.connect(self._on_editor_selection_changed)
        projects.project_changed.connect(self._on_window_project_changed)
        self._on_window_project_changed(projects.project)

    # ---- trust -------------------------------------------------------------------------------

    def _trusted_files(self) -> dict[str, str]:
        try:
            value = json.loads(str(self.settings.value(TRUSTED_KEY, "{}")))
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def check_trust(self, project: Project) -> bool:
        """Trust the project's code if this file's code was trusted before, else ask."""
        codes = untrusted_code(project)
        if not codes:
            return True
        path = str(self.projects.path) if self.projects.path else ""
        digest = code_digest(project)
        known = self._trusted_files()
        if path and known.get(path) == digest:
            trust_project(project)
            return True
        if not self._ask_trust(codes):
            self.shell.show_message("The project's custom Cell code was not run: those nodes "
                                    "are marked “Not run”.", 10000)  # fmt: skip
            return False
        trust_project(project)
        if path:
            known[path] = digest
            self.settings.setValue(TRUSTED_KEY, json.dumps(known))
        self.editor.scene.refresh_shapes()
        self.sessions.refresh_requested.emit()  # refused while the code could not run
        return True

    def _ask_trust(self, codes: list[str]) -> bool:
        """Ask whether to run this code (a dialog; tests replace this)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Run this project's code?",
                          "This project contains Python code (custom Cells). Code can do "
                          "anything your account can: run it only if you trust where the "
                          "file came from.", parent=self.shell.window)  # fmt: skip
        box.setObjectName("trust_dialog")
        box.setInformativeText("Show Details… shows the code. Not running it opens the "
                               "project with those nodes marked “Not run”.")  # fmt: skip
        box.setDetailedText("\n\n# ----\n\n".join(codes))
        run = box.addButton("Run the Code", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Don't Run", QMessageBox.ButtonRole.RejectRole)
        box.exec()
        return box.clickedButton() is run

    # ---- the code pane ---------------------------------------------------------------------

    def show_node(self, node_id: str | None) -> None:
        graph = self.editor.graph
        node = graph.nodes.get(node_id) if graph is not None and node_id else None
        if node is None or node.type != CUSTOM_CELL:
            self.node_id = None
            return
        self.node_id = node.id
        self.pane.set_code(str(node.params.get("code", "")), f"{node.name} — custom Cell")
        problem = self.editor.scene.shapes.errors.get(node.id) if self.editor.scene.shapes \
            else None
        if problem:
            self._show_problem(problem)
        if not self._placed:
            self._placed = True
            window = self.shell.window
            window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
            self.dock.setFloating(True)
            self.dock.resize(QSize(640, 460))
            canvas = window.centralWidget()
            corner = canvas.mapToGlobal(canvas.rect().topRight())
            self.dock.move(corner.x() - 660, corner.y() + 20)
        self.dock.show()

    def check(self, code: str) -> str | None:
        """Trust and run `code` once; apply it to the node if it works. The problem, or None."""
        graph, node_id = self.editor.graph, self.node_id
        node = graph.nodes.get(node_id) if graph is not None and node_id else None
        if node is None:
            return "No custom Cell is selected."
        class_name = str(node.params.get("class_name", ""))
        trust_code(code)  # the user typed it: it may run
        try:
            load_custom_cell(code, class_name)
            inputs, outputs = custom_ports(code, class_name)
        except CustomCellError as exc:
            self.pane.show_error(exc.message, exc.line)
            return str(exc)
        problem = self._probe(node, code, inputs)
        if problem:  # fails on what arrives: say where, apply nothing
            self._show_problem(problem)
            return problem

        def edit(graph) -> None:
            graph.set_params(node.id, {"code": code})
            if (tuple(inputs), tuple(outputs)) != (node.inputs, node.outputs):
                graph.set_ports(node.id, inputs, outputs)

        if code != node.params.get("code") or (inputs, outputs) != (node.inputs, node.outputs):
            problem = perform(self.projects.undo_stack, SnapshotCommand(
                self.editor.root, self.editor.path, f"Edit the code of {node.name}", edit))
            if problem:
                self.pane.show_error(problem)
                return problem
        report = infer_shapes(self.editor.graph)  # the canvas follows on its own timer
        found = report.errors.get(node.id)
        if found:
            self._show_problem(found)
            return found
        shape = report.shape(node.id, outputs[0]) if outputs else None
        self.pane.show_ok(f"Checked: output {shape_text(shape)}." if shape else "Checked.")
        return None

    def _probe(self, node, code: str, inputs: tuple[str, ...]) -> str | None:
        """Run the code once on zeros of the shapes arriving at the node; the problem, if any."""
        graph = self.editor.graph
        report = infer_shapes(graph)
        ins = {}
        for port in inputs:
            edge = graph.edge_into(node.id, port)
            shape = report.shape(edge.src_node, edge.src_port) if edge else None
            if shape is None:
                return None  # nothing known arrives yet: shape inference will tell later
            ins[port] = shape
        node_type = CATALOGUE.get(CUSTOM_CELL)
        try:
            node_type.infer(node_type.values({**node.params, "code": code}), ins)
        except Exception as exc:  # the user's code, run on zeros: any failure is theirs
            return str(exc)
        return None

    def _show_problem(self, problem: str) -> None:
        found = _LINE.search(problem)
        line = int(found.group(1)) if found else 0
        text = problem[found.end():].strip() if found else problem
        self.pane.show_error(text, line)

    # ---- slots -------------------------------------------------------------------------------

    def _on_pane_check_requested(self, code: str) -> None:
        try:
            self.check(code)
        except Exception as exc:  # user code must never take the window down
            log.exception("checking custom Cell code failed")
            self.pane.show_error(f"{type(exc).__name__}: {exc}")

    def _on_editor_selection_changed(self) -> None:
        ids = self.editor.selected_node_ids()
        self.show_node(ids[0] if len(ids) == 1 else None)

    def _on_window_project_changed(self, project: object) -> None:
        self.node_id = None
        self.dock.hide()
        if isinstance(project, Project):
            try:
                self.check_trust(project)
            except Exception:
                log.exception("the trust check failed")
