"""Right-click menus on the canvas: hooks on nodes and edges, and the usual edits.

A mixin of NodeEditor (kept apart for size): it expects the editor's `project`,
`root`, `graph`, `path`, `stack`, `scene`, `types`, `actions`, `message`, `push`,
`run` and `pane_requested`. Hooks are document edits too (`HookCommand`, undoable and
saved); they are not structural, so they can be added and removed while training.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF
from PySide6.QtWidgets import QMenu

from app.document import BOUNDARY_TYPES, DocumentError, Hook
from app.session.probes import PROBE_TEXTS, probe_kinds
from app.undo.commands import HookCommand, splice_command
from app.undo.size_edit import SizeEditCommand
from widgets.node_editor.node_types import fitting, shapes_now

NO_CELL_TYPES = frozenset({"Input", "Output"}) | BOUNDARY_TYPES
NODE_HOOKS = (
    ("forward_pre", "&Forward-pre Hook (what goes in)",
     "register_forward_pre_hook: the tensor the node receives, before it computes"),
    ("forward", "F&orward Hook (what comes out)",
     "register_forward_hook: the tensor the node outputs"),
    ("backward", "&Backward Hook (gradient)",
     "register_backward_hook: the gradient arriving at the node's output in backprop"),
)  # fmt: skip
KIND_NAMES = {
    "forward_pre": "forward-pre hook",
    "forward": "forward hook",
    "backward": "backward hook",
    "hook_backward": "HookBackward",
    "attention": "attention weights",
    "recurrent": "recurrent state",
}


class ContextMenus:
    """Builds the canvas's right-click menus and does what their hook entries say."""

    def _on_view_context_requested(self, what: str, target: str, at: QPointF,
                                   global_pos: QPoint) -> None:  # fmt: skip
        menu = self.context_menu(what, target, at)
        if menu is not None:
            menu.popup(global_pos)

    def context_menu(self, what: str, target: str, at: QPointF | None = None) -> QMenu | None:
        """The menu for a node, an edge or the empty canvas (deleted once closed)."""
        menu = QMenu(self)
        menu.setObjectName(f"{what}_context_menu")
        menu.aboutToHide.connect(menu.deleteLater)
        if what == "node" and self.graph is not None and target in self.graph.nodes:
            self._fill_node_menu(menu, target)
        elif what == "edge" and self.graph is not None and target in self.graph.edges:
            self._fill_edge_menu(menu, target)
        else:
            for name in ("paste", "select_all", None, "auto_layout", "fit_all"):
                self._add_edit(menu, name)
        return menu

    # ---- node and edge menus -----------------------------------------------------------

    def _fill_node_menu(self, menu: QMenu, node_id: str) -> None:
        node = self.graph.node(node_id)
        add = menu.addMenu("Add &Hook")
        add.setObjectName("add_hook_menu")
        hookable = node.type not in NO_CELL_TYPES
        kinds = list(NODE_HOOKS)
        if node.type == "HookBackward":
            kinds.append(("hook_backward", "&HookBackward (gradient through this node)",
                          "The gradient flowing back through this HookBackward node"))
        for kind, text, tip in kinds:
            action = add.addAction(text)
            action.setObjectName(f"add_{kind}_hook_action")
            action.setToolTip(tip)
            action.setStatusTip(tip)
            action.setEnabled(hookable)
            action.triggered.connect(
                lambda _=False, k=kind: self.run(lambda: self.add_hook(k, node_id)))
        if not hookable:
            add.setToolTip(f"{node.type} nodes compute nothing to hook: hook the node "
                           "next to it.")  # fmt: skip
        add.setToolTipsVisible(True)
        for kind in probe_kinds(node.type):  # panes looking inside a sequence layer
            text, tip = PROBE_TEXTS[kind]
            look = menu.addAction(text)
            look.setObjectName(f"add_{kind}_pane_action")
            look.setStatusTip(tip)
            look.triggered.connect(
                lambda _=False, k=kind: self.run(lambda: self.add_hook(k, node_id)))
        self._add_hook_entries(menu, node_id)
        menu.addSeparator()
        for name in ("cut", "copy", "duplicate", "delete", None, "group", "ungroup"):
            self._add_edit(menu, name)

    def _fill_edge_menu(self, menu: QMenu, edge_id: str) -> None:
        insert = menu.addAction("Insert &HookBackward (watch the gradient here)")
        insert.setObjectName("insert_hook_backward_action")
        insert.setStatusTip("Put a HookBackward on this connection: its pane shows the gradient "
                            "flowing back along it.")  # fmt: skip
        insert.setEnabled(not self.hooks_on(edge_id))
        insert.triggered.connect(
            lambda: self.run(lambda: self.add_hook("hook_backward", edge_id)))
        self._add_hook_entries(menu, edge_id)
        menu.addSeparator()
        delete = menu.addAction("&Delete Connection")
        delete.setObjectName("delete_edge_action")
        delete.triggered.connect(lambda: self.run(lambda: self._delete_edge(edge_id)))

    def _add_hook_entries(self, menu: QMenu, target: str) -> None:
        hooks = self.hooks_on(target)
        if not hooks:
            return
        menu.addSeparator()
        for hook in hooks:
            name = KIND_NAMES[hook.kind]
            show = menu.addAction(f"Show {name} pane")
            show.setObjectName(f"show_{hook.kind}_pane_action")
            show.triggered.connect(lambda _=False, i=hook.id: self.pane_requested.emit(i))
            remove = menu.addAction(f"Remove {name}")
            remove.setObjectName(f"remove_{hook.kind}_hook_action")
            remove.triggered.connect(
                lambda _=False, i=hook.id: self.run(lambda: self.remove_hook(i)))

    def _add_edit(self, menu: QMenu, name: str | None) -> None:
        if name is None:
            menu.addSeparator()
        elif name in self.actions:
            menu.addAction(self.actions[name])

    def _delete_edge(self, edge_id: str) -> None:
        self.scene.clearSelection()
        item = self.scene.edges.get(edge_id)
        if item is not None:
            item.setSelected(True)
            self.delete_selection()

    # ---- hooks ----------------------------------------------------------------------------

    def hooks_on(self, target: str) -> list[Hook]:
        """The project's hooks on a node or an edge."""
        hooks = getattr(self.project, "hooks", None) or []
        return [h for h in hooks if h.target == target]

    def add_hook(self, kind: str, target: str) -> Hook | None:
        """Attach a hook of `kind` to a node or an edge (one undo step); its pane opens."""
        if not self._editable():
            return None
        existing = [h for h in self.hooks_on(target) if h.kind == kind]
        if existing:  # one of each kind is all one can see: show the one there is
            self.pane_requested.emit(existing[0].id)
            return existing[0]
        try:
            pane = "norm" if kind in ("backward", "hook_backward") else "histogram"
            hook = Hook(kind, target, kind if kind in PROBE_TEXTS else pane)
        except DocumentError as exc:
            self.message.emit(f"Can't add the hook: {exc}")
            return None
        command = HookCommand(self.project, hook, add=True, text=self._hook_text("Add", hook))
        if self.push(command):
            self.pane_requested.emit(hook.id)
            return hook
        return None

    def remove_hook(self, hook_id: str) -> bool:
        """Take a hook away (one undo step); its engine hook goes with it."""
        if not self._editable():
            return False
        hook = self.project.hook(hook_id)
        if hook is None:
            return False
        return self.push(HookCommand(self.project, hook, add=False,
                                     text=self._hook_text("Remove", hook)))  # fmt: skip

    def _hook_text(self, verb: str, hook: Hook) -> str:
        return f"{verb} {KIND_NAMES[hook.kind]} on {self.target_name(hook.target)}"

    def target_name(self, target: str) -> str:
        """A node's name, or 'a → b' for an edge, at any level of the network."""
        root = self.root
        if root is None:
            return target
        found = root.find(target)
        if found is not None:
            return found[1].name
        for graph in [root] + [n.subgraph for _, n in root.walk() if n.subgraph is not None]:
            edge = graph.edges.get(target)
            if edge is not None:
                return f"{graph.node(edge.src_node).name} → {graph.node(edge.dst_node).name}"
        return target

    # ---- splicing a node into an edge -----------------------------------------------------

    def splice(self, node, edge_id: str) -> bool:
        """Put a new node into a connection; a HookBackward gets its hook too (one step)."""
        root, path = self.root, self.path

        def fit(graph, src, src_port, dst):
            return fitting(graph, src, src_port, dst, root)

        if not node.name:  # named now: the undo step names it
            node = node.replace(name=self.graph.unique_name(node.type.lower()))
        try:
            command = splice_command(root, path, edge_id, node, fit)
        except DocumentError as exc:
            self.message.emit(f"Can't insert {node.type} there: {exc}")
            return False
        hooked = node.type == "HookBackward"
        before = shapes_now(root, self.scene.live_shapes)
        self.stack.beginMacro(f"Insert {node.type if hooked else node.name} into a connection")
        try:
            ok = self.push(command)
            if ok and hooked:
                hook = Hook("hook_backward", command.result.id, "norm")
                ok = self.push(HookCommand(self.project, hook, add=True))
            if ok:  # what the new node gives may differ: sizes after it follow
                self.push(SizeEditCommand(root, path, command.result.id, {}, typed=False,
                                          before=before))
        finally:
            self.stack.endMacro()
        if not ok:
            self._drop_last_macro()  # half done (or empty): off the stack
            return False
        if ok:
            self.scene.select([command.result.id])
            if hooked:
                self.pane_requested.emit(hook.id)
        return ok
