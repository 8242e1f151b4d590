"""The node editor widget: canvas, breadcrumb and Edit actions, turning gestures into commands.

Every change goes through an undo command pushed on the project's one QUndoStack;
the canvas then updates from the document's events. A refused edit changes nothing
and its reason goes out on `message` (the status bar).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.catalogue.registry import query_words
from app.document import Graph
from app.undo.commands import (
    DisconnectCommand,
    DocumentCommand,
    MoveCommand,
    graph_at,
    perform,
)
from widgets.node_editor.breadcrumb import Breadcrumb
from widgets.node_editor.context_menu import ContextMenus
from widgets.node_editor.edits import CanvasEdits
from widgets.node_editor.node_types import NodeTypes, payload_of
from widgets.node_editor.quick_add import Entry, QuickAdd
from widgets.node_editor.scene import GraphScene
from widgets.node_editor.view import GraphView

log = logging.getLogger(__name__)


class NodeEditor(CanvasEdits, ContextMenus, QWidget):
    """Edits one project's graph; `set_project(project, undo_stack)` when the project changes."""

    selection_changed = Signal()
    path_changed = Signal()
    message = Signal(str)
    pane_requested = Signal(str)  # a hook's id: show its pane (a probe clicked, a menu entry)

    def __init__(self, types: NodeTypes | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("canvas_area")
        self.types = types or NodeTypes()
        self.scene = GraphScene(self.types, self)
        self.view = GraphView(self.scene, self)
        self.view.setObjectName("canvas_view")
        self.breadcrumb = Breadcrumb(self)
        self.quick_add = QuickAdd(self._quick_entries, self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.breadcrumb)
        layout.addWidget(self.view, 1)
        self.project = None
        self.stack: QUndoStack | None = None
        self.path: tuple[str, ...] = ()
        self._path_watch: list = []
        self._pastes = 0
        # The user Cell store plugs in here: name -> composite node data, and the names.
        self.user_cell: Callable[[str], dict | None] = lambda name: None
        self.user_cell_names: Callable[[], list[str]] = list
        self._build_actions()
        self.view.connect_requested.connect(self._on_view_connect_requested)
        self.view.disconnect_requested.connect(self._on_view_disconnect_requested)
        self.view.move_finished.connect(self._on_view_move_finished)
        self.view.drop_requested.connect(self._on_view_drop_requested)
        self.view.quick_add_requested.connect(self._on_view_quick_add_requested)
        self.view.open_requested.connect(self._on_view_open_requested)
        self.view.message.connect(self.message)
        self.view.context_requested.connect(self._on_view_context_requested)
        self.scene.probe_clicked.connect(self.pane_requested)
        self.quick_add.chosen.connect(self._on_quick_add_chosen)
        self.breadcrumb.level_chosen.connect(self._on_breadcrumb_level_chosen)
        self.scene.selectionChanged.connect(self._on_scene_selection_changed)

    # ---- project and navigation ----------------------------------------------------------------

    @property
    def root(self) -> Graph | None:
        graph = getattr(self.project, "graph", None)
        return graph if isinstance(graph, Graph) else None

    @property
    def graph(self) -> Graph | None:
        return self.scene.graph

    def set_project(self, project, stack: QUndoStack | None) -> None:
        """Show `project` (anything without a Graph shows an empty, read-only canvas)."""
        self.project, self.stack = project, stack
        self._pastes = 0
        self._show_path((), details=False)  # Fit All below turns labels on if they fit
        self.view.resetTransform()
        self.view.fit_all()
        QTimer.singleShot(0, self.view, self.view.fit_all)  # again once the view has its size

    def open_composite(self, node_id: str) -> None:
        graph = self.graph
        node = graph.nodes.get(node_id) if graph is not None else None
        if node is None or node.subgraph is None:
            return
        self._show_path((*self.path, node_id), details=False)
        self.view.fit_all()
        self.message.emit(f"Editing inside {node.name}; the breadcrumb leads back.")

    def go_up(self, depth: int = -1) -> None:
        """Back to the level at `depth` (0 the whole network; -1 the parent)."""
        depth = len(self.path) - 1 if depth < 0 else depth
        came_from = self.path[depth] if depth < len(self.path) else None
        self._show_path(self.path[: max(0, depth)])
        if came_from is not None:
            self.scene.select([came_from])

    def _show_path(self, path: tuple[str, ...], details: bool | None = None) -> None:
        root = self.root
        while path and root is not None:
            try:
                graph_at(root, path)
                break
            except Exception:
                path = path[:-1]  # that composite is gone (an undo): show what is left
        self.path = path if root is not None else ()
        graph = graph_at(root, self.path) if root is not None else None
        self.scene.set_graph(graph, root, details=details)
        self._watch_path()
        names = ["Network"]
        level = root
        for node_id in self.path:
            node = level.node(node_id)
            names.append(node.name)
            level = node.subgraph
        self.breadcrumb.set_levels(names)
        self.path_changed.emit()
        self.selection_changed.emit()

    def _watch_path(self) -> None:
        """Hear of the composites on the path going away (undo of a group, deletion)."""
        for subscription in self._path_watch:
            subscription.unsubscribe()
        self._path_watch = []
        level = self.root
        for node_id in self.path:
            subscription = level.events.subscribe(self._on_path_level_changed)
            self.destroyed.connect(subscription.unsubscribe)
            self._path_watch.append(subscription)
            level = level.node(node_id).subgraph

    def _on_path_level_changed(self, event) -> None:
        node_id = getattr(event, "node_id", None)
        if node_id in self.path and type(event).__name__ in ("NodeRemoved", "NodeRenamed"):
            QTimer.singleShot(0, self, lambda: self._show_path(self.path))

    # ---- selection -----------------------------------------------------------------------------

    def selected_node_ids(self) -> list[str]:
        return self.scene.selected_node_ids()

    def select_all(self) -> None:
        for item in list(self.scene.nodes.values()) + list(self.scene.edges.values()):
            item.setSelected(True)

    def _on_scene_selection_changed(self) -> None:
        self.selection_changed.emit()

    # ---- edits -----------------------------------------------------------------------------

    def push(self, command: DocumentCommand) -> bool:
        """Apply and push one command; a refusal or a bug is reported, never raised."""
        if self.stack is None:
            self.message.emit("There is no document to edit.")
            return False
        try:
            problem = perform(self.stack, command)
        except Exception as exc:
            log.exception("edit %r failed", command.text())
            problem = f"{command.text()} failed: {type(exc).__name__}: {exc}"
        if problem:
            self.message.emit(problem)
            return False
        return True

    # ---- actions -----------------------------------------------------------------------------

    def _build_actions(self) -> None:
        key = QKeySequence.StandardKey
        specs = [
            ("cut", "Cu&t", [key.Cut], self.cut),
            ("copy", "&Copy", [key.Copy], self.copy),
            ("paste", "&Paste", [key.Paste], lambda: self.paste()),
            ("duplicate", "&Duplicate", ["Ctrl+D"], self.duplicate),
            (
                "delete",
                "&Delete",
                [QKeySequence(Qt.Key.Key_Delete), QKeySequence(Qt.Key.Key_Backspace)],
                self.delete_selection,
            ),
            ("select_all", "Select &All", [key.SelectAll], self.select_all),
            ("group", "&Group", ["Ctrl+G"], self.group_selection),
            ("ungroup", "&Ungroup", ["Ctrl+Shift+G"], self.ungroup_selection),
            ("auto_layout", "Auto-&layout", ["Ctrl+L"], self.auto_layout),
            ("fit_all", "&Fit All", [], self.view.fit_all),
        ]
        self.actions: dict[str, QAction] = {}
        for name, text, keys, slot in specs:
            action = QAction(text, self)
            action.setObjectName(f"{name}_action")
            action.setShortcuts([QKeySequence(k) if isinstance(k, str) else k for k in keys])
            # Only while the canvas has focus: Backspace in a text field stays a Backspace.
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(lambda _=False, slot=slot: self.run(slot))
            self.addAction(action)
            self.actions[name] = action
        self.actions["fit_all"].setToolTip("Fit the whole network in view (F on the canvas)")
        snap = QAction("&Snap to Grid", self)
        snap.setObjectName("snap_action")
        snap.setCheckable(True)
        snap.setChecked(True)
        snap.toggled.connect(self._on_snap_action_toggled)
        self.actions["snap"] = snap

    def run(self, slot: Callable[[], object]) -> None:
        """Call `slot`; an exception is logged and reported on `message`, never raised."""
        try:
            slot()
        except Exception as exc:  # never let a bug in an edit take the window down
            log.exception("canvas action failed")
            self.message.emit(f"That failed: {type(exc).__name__}: {exc}")

    # ---- slots ---------------------------------------------------------------------------------

    def _on_view_connect_requested(self, ends, moving: str) -> None:
        self.run(lambda: self.connect_ports(*ends, moving=moving))

    def _on_view_disconnect_requested(self, edge_id: str) -> None:
        if self._editable():
            self.run(lambda: self.push(DisconnectCommand(self.root, self.path, edge_id)))

    def _on_view_move_finished(self, moves: dict) -> None:
        moved = self._editable() and self.push(MoveCommand(self.root, self.path, moves))
        if not moved:  # put the items back where the document has them
            for node_id, (before, _) in moves.items():
                item = self.scene.nodes.get(node_id)
                if item is not None:
                    item.setPos(*before)
        self.scene.fit_scene_rect()

    def _on_view_drop_requested(self, payload: str, scene_pos: QPointF) -> None:
        edge = self.scene.edge_at(scene_pos)
        if edge is not None and payload.startswith(("type:", "preset:")):  # on a connection
            self.run(lambda: self.insert_into_edge(payload, edge.edge_id, scene_pos))
        else:
            self.run(lambda: self.add(payload, scene_pos))

    def _on_view_quick_add_requested(self, scene_pos: QPointF, global_pos) -> None:
        self.quick_add.open_at(scene_pos, global_pos)

    def _on_quick_add_chosen(self, payload: str, scene_pos: QPointF) -> None:
        self.run(lambda: self.add(payload, scene_pos))
        self.view.setFocus()

    def _on_view_open_requested(self, node_id: str) -> None:
        self.run(lambda: self.open_composite(node_id))

    def _on_snap_action_toggled(self, on: bool) -> None:
        self.scene.set_snap(on)

    def _on_breadcrumb_level_chosen(self, depth: int) -> None:
        self.run(lambda: self.go_up(depth))

    def _quick_entries(self, text: str) -> list[Entry]:
        entries = [(e.label, e.description, payload_of(e))
                   for e in self.types.catalogue.find(text)]
        words = query_words(text)
        entries += [
            (f"{name} (user Cell)", "A saved composite Cell", f"user:{name}")
            for name in self.user_cell_names()
            if all(word in name.casefold() for word in words)
        ]
        return entries
