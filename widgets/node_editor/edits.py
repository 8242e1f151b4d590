"""Canvas edits: what the node editor's gestures and Edit actions do, each as undo commands.

A mixin of NodeEditor (kept apart for size): it expects the editor's `root`, `graph`,
`path`, `project`, `stack`, `scene`, `view`, `types`, `message` and `push`.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF
from PySide6.QtGui import QCursor

from app.catalogue import CatalogueError
from app.document import BOUNDARY_TYPES, Node
from app.undo.commands import (
    AddNodeCommand,
    ConnectCommand,
    DisconnectCommand,
    MoveCommand,
    PasteCommand,
    delete_command,
    group_command,
    ungroup_command,
)
from app.undo.size_edit import SizeEditCommand
from widgets.node_editor import style
from widgets.node_editor.clipboard import Clipping, clip
from widgets.node_editor.layout import auto_layout, free_spot
from widgets.node_editor.node_item import NodeItem
from widgets.node_editor.node_types import check_connection, fitting, shapes_now

PASTE_STEP = 40.0


class CanvasEdits:
    """Add, connect, delete, copy/cut/paste/duplicate, group/ungroup and auto-layout."""

    clipboard: Clipping | None = None  # shared by every editor in the process

    def _editable(self) -> bool:
        if self.root is None or self.stack is None:
            self.message.emit("There is no document to edit.")
            return False
        return True

    def view_centre(self) -> QPointF:
        return self.view.mapToScene(self.view.viewport().rect().center())

    def add(self, payload: str, scene_pos: QPointF | None = None) -> bool:
        """Add a palette entry ('type:Dense', 'preset:<label>' or 'user:Name') centred at
        `scene_pos`."""
        if not self._editable():
            return False
        at = self.view_centre() if scene_pos is None else scene_pos
        kind, _, name = payload.partition(":")
        if kind == "user":
            return self._add_user_cell(name, at)
        try:
            node = self._in_free_room(self._new_node(payload, self._corner_for(at)))
        except CatalogueError as exc:
            self.message.emit(f"Can't add {name}: {exc}")
            return False
        command = AddNodeCommand(self.root, self.path, node)
        if self.push(command):
            self.scene.select([command.node_id])
            return True
        return False

    def insert_into_edge(self, payload: str, edge_id: str, scene_pos: QPointF) -> bool:
        """A palette node dropped on a connection goes into it (one undoable step)."""
        if not self._editable():
            return False
        name = payload.partition(":")[2]
        try:
            node = self._in_free_room(self._new_node(payload, self._corner_for(scene_pos)))
        except CatalogueError as exc:
            self.message.emit(f"Can't add {name}: {exc}")
            return False
        return self.splice(node, edge_id)

    def _new_node(self, payload: str, corner: tuple[float, float]) -> Node:
        """A node for a palette entry: 'type:Dense', or 'preset:<label>' (a type with some
        values preset); CatalogueError for anything else."""
        kind, _, name = payload.partition(":")
        if kind == "preset":
            preset = self.types.catalogue.preset(name)
            return self.types.new_node(preset.type_name, corner, dict(preset.params))
        if kind != "type":
            raise CatalogueError(f"{payload!r} is not a node the canvas can add")
        return self.types.new_node(name, corner)

    def _in_free_room(self, node: Node) -> Node:
        """`node` moved to the free room nearest where it was to go: none overlaps another."""
        t = self.types
        size = NodeItem(node, t.kind(node), t.summary(node), t.category(node))
        taken = [(i.x(), i.y(), i.width, i.height) for i in self.scene.nodes.values()]
        corner = free_spot(node.position, (size.width, size.height), taken, style.GRID)
        return node.replace(position=corner)

    def _corner_for(self, centre: QPointF) -> tuple[float, float]:
        """Top-left for a new node centred near `centre`, on the grid."""
        g = style.GRID
        x, y = centre.x() - style.NODE_MIN_WIDTH / 2, centre.y() - style.HEADER
        return (round(x / g) * g, round(y / g) * g)

    def _add_user_cell(self, name: str, at: QPointF) -> bool:
        data = self.user_cell(name)
        if data is None:
            self.message.emit(f"There is no user Cell called '{name}'.")
            return False
        corner = self._corner_for(at)
        x, y = data.get("position", (0.0, 0.0))
        offset = (corner[0] - x, corner[1] - y)
        values = self.project.param_values
        command = PasteCommand(
            self.root,
            self.path,
            {"nodes": [data], "edges": []},
            {},
            values,
            offset=offset,
            text=f"Add user Cell '{name}'",
        )
        if self.push(command):
            self.scene.select(command.node_ids)
            return True
        return False

    def connect_ports(
        self, src: str, src_port: str, dst: str, dst_port: str, moving: str = ""
    ) -> bool:
        """Connect (moving edge `moving` there, if given), refitting the receiving node first."""
        if not self._editable():
            return False
        root, path = self.root, self.path
        command = ConnectCommand(root, path, src, src_port, dst, dst_port)
        live = self.scene.live_shapes
        fit = fitting(self.graph, src, src_port, dst, root, live=live)
        before = shapes_now(root, live)
        text = command.text()
        self.stack.beginMacro(f"Re{text[0].lower()}{text[1:]}" if moving else text)
        try:
            ok = not moving or self.push(DisconnectCommand(root, path, moving))
            if ok and fit:  # what arrives sets these: no longer typed, if they were
                ok = self.push(SizeEditCommand(root, path, dst, fit, typed=False))
            if ok and fit:
                reason = check_connection(self.graph, src, src_port, dst, dst_port, self.root,
                                          live=live)
                if reason is not None:
                    self.message.emit(f"Can't connect: {reason}")
                    ok = False
            ok = ok and self.push(command)
            if ok:  # what the new input feeds may now be known: sizes after it follow
                self.push(SizeEditCommand(root, path, dst, {}, typed=False, before=before))
        finally:
            self.stack.endMacro()
        if not ok:
            self._drop_last_macro()
        return ok

    def _drop_last_macro(self) -> None:
        """Undo a half-done macro and take it off the stack (an obsolete command is deleted)."""
        self.stack.command(self.stack.index() - 1).setObsolete(True)
        self.stack.undo()

    def delete_selection(self, text: str = "") -> bool:
        if not self._editable():
            return False
        graph = self.graph
        ids = self.selected_node_ids()
        ports = [i for i in ids if graph.node(i).type in BOUNDARY_TYPES]
        ids = [i for i in ids if i not in ports]
        edges = self.scene.selected_edge_ids()
        if ports:
            self.message.emit("A composite's ports stay; ungroup it to change them.")
        if not ids and not edges:
            return False
        command = delete_command(self.root, self.path, ids, edges)
        if text:
            command.setText(text)
        return self.push(command)

    def copy(self) -> bool:
        if not self._editable():
            return False
        clipping = clip(self.graph, self.selected_node_ids(), self.project.param_values)
        if clipping is None:
            self.message.emit("Select nodes to copy.")
            return False
        CanvasEdits.clipboard = clipping
        self._pastes = 0
        self.message.emit(f"Copied {clipping.count} node{'s' if clipping.count != 1 else ''}.")
        return True

    def cut(self) -> bool:
        return self.copy() and self.delete_selection(f"Cut {CanvasEdits.clipboard.count} nodes")

    def paste(self, at: QPointF | None = None) -> bool:
        """Paste the clipboard with its top-left at `at` (default: cursor, else a step aside)."""
        clipping = CanvasEdits.clipboard
        if not self._editable() or clipping is None:
            return False
        if at is None:
            cursor = self.view.viewport().mapFromGlobal(QCursor.pos())
            if self.view.viewport().rect().contains(cursor):
                at = self.view.mapToScene(cursor)
        if at is None:
            self._pastes += 1
            offset = (PASTE_STEP * self._pastes, PASTE_STEP * self._pastes)
        else:
            offset = (at.x() - clipping.corner[0], at.y() - clipping.corner[1])
        return self._paste(clipping, offset, "")

    def duplicate(self) -> bool:
        if not self._editable():
            return False
        clipping = clip(self.graph, self.selected_node_ids(), self.project.param_values)
        if clipping is None:
            return False
        return self._paste(clipping, (PASTE_STEP, PASTE_STEP), f"Duplicate {clipping.count} nodes")

    def _paste(self, clipping: Clipping, offset: tuple[float, float], text: str) -> bool:
        command = PasteCommand(
            self.root,
            self.path,
            clipping.data,
            clipping.values,
            self.project.param_values,
            offset=offset,
            text=text,
        )
        if self.push(command):
            self.scene.select(command.node_ids)
            return True
        return False

    def group_selection(self) -> bool:
        if not self._editable():
            return False
        ids = self.selected_node_ids()
        if not ids:
            self.message.emit("Select the nodes to group.")
            return False
        command = group_command(self.root, self.path, ids)
        if self.push(command):
            self.scene.select([command.result.node_id])
            return True
        return False

    def ungroup_selection(self) -> bool:
        if not self._editable():
            return False
        composites = [i for i in self.selected_node_ids() if self.graph.node(i).is_composite]
        if not composites:
            self.message.emit("Select a composite Cell to ungroup.")
            return False
        self.stack.beginMacro(f"Ungroup {len(composites)} composites")
        try:
            inner = []
            for node_id in composites:
                command = ungroup_command(self.root, self.path, node_id)
                if self.push(command):
                    inner += command.result.node_ids
        finally:
            self.stack.endMacro()
        self.scene.select(inner)
        return bool(inner)

    def auto_layout(self) -> bool:
        if not self._editable() or not self.scene.nodes:
            return False
        ids = self.selected_node_ids()
        ids = ids if len(ids) > 1 else list(self.scene.nodes)
        sizes = {i: (self.scene.nodes[i].width, self.scene.nodes[i].height) for i in ids}
        placed = auto_layout(self.graph, ids, sizes, style.GRID)
        moves = {
            i: (self.graph.node(i).position, xy)
            for i, xy in placed.items()
            if xy != self.graph.node(i).position
        }
        if not moves:
            return False
        text = f"Auto-layout {len(ids)} nodes"
        return self.push(MoveCommand(self.root, self.path, moves, text))
