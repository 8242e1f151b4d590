"""Puts the node editor, palette and inspector into the main window and wires them together.

The project holder has the project and its undo stack; on every project change the
editor and the inspector are pointed at the new document and stack. Status messages
from every view go to the shell's status line.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QInputDialog

from app.document import DocumentError
from app.gui.user_cells import UserCells
from widgets.inspector import Inspector
from widgets.node_editor import NodeEditor
from widgets.palette import Palette

if TYPE_CHECKING:
    from app.gui.project_holder import ProjectHolder
    from app.gui.shell import Shell

log = logging.getLogger(__name__)

EDIT_ITEMS = (
    None,
    "cut",
    "copy",
    "paste",
    "duplicate",
    "delete",
    None,
    "select_all",
    None,
    "group",
    "ungroup",
    "save_user_cell",
    None,
    "auto_layout",
    "fit_all",
    "snap",
)


class Workbench:
    """The editing views of one main window."""

    def __init__(self, shell: Shell, projects: ProjectHolder, settings: QSettings) -> None:
        self.shell, self.projects = shell, projects
        self.user_cells = UserCells(settings)
        self.editor = NodeEditor(parent=shell.window)
        self.palette = Palette()
        self.inspector = Inspector()
        shell.set_canvas(self.editor)
        shell.set_dock_widget("palette_dock", self.palette)
        # Its settings scroll when the dock is short; the Parameters stay in view under them.
        shell.set_dock_widget("inspector_dock", self.inspector)
        self.editor.user_cell = self.user_cells.data
        self.editor.user_cell_names = self.user_cells.names
        self.palette.user_cell_names = self.user_cells.names
        self.palette.refresh()
        self._add_user_cell_action()
        self._fill_menus()

        self.editor.message.connect(self._on_view_message)
        self.inspector.message.connect(self._on_view_message)
        self.inspector.cleared.connect(self._on_inspector_cleared)
        self.palette.add_requested.connect(self._on_palette_add_requested)
        self.editor.selection_changed.connect(self._on_editor_selection_changed)
        self.editor.path_changed.connect(self._on_editor_selection_changed)
        projects.project_changed.connect(self._on_window_project_changed)
        self._on_window_project_changed(projects.project)

    def _add_user_cell_action(self) -> None:
        action = self.editor.addAction("Save as &User Cell…")
        action.setObjectName("save_user_cell_action")
        action.setToolTip("Save the selected composite to the palette under 'User Cells'")
        action.triggered.connect(self._on_save_user_cell_action_triggered)
        self.editor.actions["save_user_cell"] = action

    def _fill_menus(self) -> None:
        edit_menu = self.shell.menu("edit_menu")
        for name in EDIT_ITEMS:
            if name is None:
                edit_menu.addSeparator()
            else:
                edit_menu.addAction(self.editor.actions[name])
        self.editor.actions["fit_all"].setShortcut("F")

    # ---- slots ---------------------------------------------------------------------------------

    def _on_window_project_changed(self, project) -> None:
        stack = self.projects.undo_stack
        self.editor.set_project(project, stack)
        self.inspector.set_document(self.editor.root, stack)

    def _on_view_message(self, text: str) -> None:
        self.shell.show_message(text, 8000)

    def _on_inspector_cleared(self, text: str) -> None:
        """A refused value was put right: its message goes, unless another replaced it."""
        self.shell.clear_message(text)

    def _on_palette_add_requested(self, payload: str) -> None:
        self.editor.run(lambda: self.editor.add(payload))
        self.editor.view.setFocus()

    def _on_editor_selection_changed(self) -> None:
        ids = self.editor.selected_node_ids()
        self.inspector.show_node(self.editor.path, ids[0] if len(ids) == 1 else None)

    def _on_save_user_cell_action_triggered(self, checked: bool = False) -> None:
        graph = self.editor.graph
        ids = self.editor.selected_node_ids()
        node = graph.node(ids[0]) if graph is not None and len(ids) == 1 else None
        if node is None or not node.is_composite:
            self.shell.show_message("Select one composite Cell (Edit → Group) to save it.", 8000)
            return
        name, ok = QInputDialog.getText(
            self.shell.window, "Save as User Cell", "Name in the palette:", text=node.definition
        )
        if not ok or not name.strip():
            return
        try:
            self.user_cells.add(name.strip(), node)
        except DocumentError as exc:
            self.shell.show_message(str(exc), 8000)
            return
        self.palette.refresh()
        self.shell.show_message(f"Saved '{name.strip()}' to the palette under User Cells.", 8000)
