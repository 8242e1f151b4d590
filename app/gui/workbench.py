"""Puts the node editor, palette and inspector into the main window and wires them together.

The window owns the project and its undo stack; on every project change the editor
and the inspector are pointed at the new document and stack. Status messages from
every view go to the window's status bar.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFrame, QInputDialog, QMenu, QScrollArea

from app.document import DocumentError
from app.gui.user_cells import UserCells
from widgets.inspector import Inspector
from widgets.node_editor import NodeEditor
from widgets.palette import Palette

if TYPE_CHECKING:
    from app.gui.main_window import MainWindow

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

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.user_cells = UserCells(window.settings)
        self.editor = NodeEditor(parent=window)
        self.palette = Palette(parent=window.palette_dock)
        self.inspector = Inspector(parent=window.inspector_dock)
        window.set_canvas(self.editor)
        # The Inspector scrolls when the dock is short, rather than holding the window tall.
        inspector_area = QScrollArea(window.inspector_dock)
        inspector_area.setObjectName("inspector_scroll")
        inspector_area.setWidgetResizable(True)
        inspector_area.setFrameShape(QFrame.Shape.NoFrame)
        inspector_area.setWidget(self.inspector)
        for dock, view in (
            (window.palette_dock, self.palette),
            (window.inspector_dock, inspector_area),
        ):
            placeholder = dock.widget()
            dock.setWidget(view)
            if placeholder is not None:
                placeholder.deleteLater()
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
        window.project_changed.connect(self._on_window_project_changed)
        self._on_window_project_changed(window.project)

    def _add_user_cell_action(self) -> None:
        action = self.editor.addAction("Save as &User Cell…")
        action.setObjectName("save_user_cell_action")
        action.setToolTip("Save the selected composite to the palette under 'User Cells'")
        action.triggered.connect(self._on_save_user_cell_action_triggered)
        self.editor.actions["save_user_cell"] = action

    def _fill_menus(self) -> None:
        edit_menu = self.window.findChild(QMenu, "edit_menu")
        for name in EDIT_ITEMS:
            if name is None:
                edit_menu.addSeparator()
            else:
                edit_menu.addAction(self.editor.actions[name])
        self.editor.actions["fit_all"].setShortcut("F")

    # ---- slots ---------------------------------------------------------------------------------

    def _on_window_project_changed(self, project) -> None:
        stack = self.window.undo_stack
        self.editor.set_project(project, stack)
        self.inspector.set_document(self.editor.root, stack)

    def _on_view_message(self, text: str) -> None:
        self.window.show_message(text, 8000)

    def _on_inspector_cleared(self, text: str) -> None:
        """A refused value was put right: its message goes, unless another replaced it."""
        if self.window.statusBar().currentMessage() == text:
            self.window.statusBar().clearMessage()

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
            self.window.show_message("Select one composite Cell (Edit → Group) to save it.", 8000)
            return
        name, ok = QInputDialog.getText(
            self.window, "Save as User Cell", "Name in the palette:", text=node.definition
        )
        if not ok or not name.strip():
            return
        try:
            self.user_cells.add(name.strip(), node)
        except DocumentError as exc:
            self.window.show_message(str(exc), 8000)
            return
        self.palette.refresh()
        self.window.show_message(f"Saved '{name.strip()}' to the palette under User Cells.", 8000)
