"""Undo commands: the only writers of the graph document, one per user edit.

Each command does its edit once in `apply()` *before* it is pushed, so an edit the
document refuses (it raises DocumentError and changes nothing) never reaches the
stack; `perform(stack, command)` does both and returns the refusal's message.
Commands name their graph by a path of composite node ids from the root, resolved
at every undo/redo, because undoing a group and redoing it rebuilds the composite.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
from PySide6.QtGui import QUndoCommand, QUndoStack

from app.datasets.loading import KINDS
from app.document import ABSENT, DocumentError, Graph, Hook, Node, Project, editing
from app.document.data import graph_to_data, restore_graph

log = logging.getLogger(__name__)

PAIR_SECONDS = 0.5  # an optimizer's options and its name, sent by one choice
GraphPath = tuple[str, ...]  # composite node ids from the root graph inward
Values = dict[str, dict[str, np.ndarray]]  # a project's param_values


def graph_at(root: Graph, path: Iterable[str]) -> Graph:
    """The graph inside the composites named by `path` (the root for an empty path)."""
    graph = root
    for node_id in path:
        node = graph.nodes.get(node_id)
        if node is None or node.subgraph is None:
            raise DocumentError("That composite Cell is no longer in the network.")
        graph = node.subgraph
    return graph


class DocumentStack(QUndoStack):
    """A project's undo stack, which can refuse edits that change the network for a while.

    While `lock_reason` is set (a training run is going on), `perform` refuses every
    command that changes what the network computes, with that reason; moving nodes
    around stays possible.
    """

    lock_reason: str | None = None


def perform(stack: QUndoStack, command: DocumentCommand) -> str | None:
    """Apply `command` and push it; the document's refusal message (nothing pushed) if refused."""
    lock = getattr(stack, "lock_reason", None)
    if lock and command.structural:
        return lock
    try:
        command.apply()
    except DocumentError as exc:
        return str(exc)
    stack.push(command)
    return None


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


class DocumentCommand(QUndoCommand):
    """An edit of one graph; subclasses give `_do` (also the redo) and `_undo`."""

    structural = True  # changes what the network computes (refused while training runs)

    def __init__(self, root: Graph, path: Iterable[str], text: str) -> None:
        super().__init__(text)
        self._root = root
        self._path: GraphPath = tuple(path)
        self._applied = False
        self._pushed = False

    @property
    def graph(self) -> Graph:
        return graph_at(self._root, self._path)

    @property
    def path(self) -> GraphPath:
        return self._path

    def apply(self) -> None:
        """Do the edit the first time; raises DocumentError (nothing changed) if refused."""
        self._do(self.graph)
        self._applied = True

    def redo(self) -> None:
        if self._applied and not self._pushed:  # QUndoStack.push calls redo: already done
            self._pushed = True
            return
        self._guard(self._do)

    def undo(self) -> None:
        self._guard(self._undo)

    def _guard(self, step: Callable[[Graph], Any]) -> None:
        # Undo/redo run inside Qt; an exception here must not escape into the event loop.
        try:
            step(self.graph)
        except Exception:
            log.exception("%s of %r failed", step.__name__, self.text())

    def _do(self, graph: Graph) -> None:
        raise NotImplementedError

    def _undo(self, graph: Graph) -> None:
        raise NotImplementedError


class AddNodeCommand(DocumentCommand):
    def __init__(self, root: Graph, path: Iterable[str], node: Node) -> None:
        super().__init__(root, path, f"Add {node.type}")
        self._node = node

    @property
    def node_id(self) -> str:
        return self._node.id

    def _do(self, graph: Graph) -> None:
        self._node = graph.add_node(self._node)  # keeps the name it got the first time
        self.setText(f"Add {self._node.type} '{self._node.name}'")

    def _undo(self, graph: Graph) -> None:
        graph.remove_node(self._node.id)


class MoveCommand(DocumentCommand):
    """One drag (or one auto-layout) of any number of nodes."""

    structural = False

    def __init__(
        self,
        root: Graph,
        path: Iterable[str],
        moves: Mapping[str, tuple[tuple[float, float], tuple[float, float]]],
        text: str = "",
    ) -> None:
        graph = graph_at(root, path)
        if not text:
            only = next(iter(moves), None)
            if len(moves) == 1 and only in graph.nodes:
                text = f"Move {graph.nodes[only].name}"
            else:
                text = f"Move {_plural(len(moves), 'node')}"
        super().__init__(root, path, text)
        self._old = {nid: old for nid, (old, _) in moves.items()}
        self._new = {nid: new for nid, (_, new) in moves.items()}

    def _do(self, graph: Graph) -> None:
        graph.move_nodes(self._new)

    def _undo(self, graph: Graph) -> None:
        graph.move_nodes(self._old)


class ConnectCommand(DocumentCommand):
    def __init__(
        self, root: Graph, path: Iterable[str], src: str, src_port: str, dst: str, dst_port: str
    ) -> None:
        graph = graph_at(root, path)
        names = [graph.nodes[n].name if n in graph.nodes else "?" for n in (src, dst)]
        super().__init__(root, path, f"Connect {names[0]} → {names[1]}")
        self._ends = (src, src_port, dst, dst_port)
        self._edge_id: str | None = None

    @property
    def edge_id(self) -> str | None:
        return self._edge_id

    def _do(self, graph: Graph) -> None:
        self._edge_id = graph.connect(*self._ends, edge_id=self._edge_id).id

    def _undo(self, graph: Graph) -> None:
        if self._edge_id is not None:
            graph.disconnect(self._edge_id)


class DisconnectCommand(DocumentCommand):
    def __init__(self, root: Graph, path: Iterable[str], edge_id: str) -> None:
        graph = graph_at(root, path)
        edge = graph.edge(edge_id)
        src, dst = graph.node(edge.src_node).name, graph.node(edge.dst_node).name
        super().__init__(root, path, f"Disconnect {src} → {dst}")
        self._edge = edge

    def _do(self, graph: Graph) -> None:
        graph.disconnect(self._edge.id)

    def _undo(self, graph: Graph) -> None:
        e = self._edge
        graph.connect(e.src_node, e.src_port, e.dst_node, e.dst_port, edge_id=e.id)


class RenameCommand(DocumentCommand):
    def __init__(self, root: Graph, path: Iterable[str], node_id: str, name: str) -> None:
        old = graph_at(root, path).node(node_id).name
        super().__init__(root, path, f"Rename {old} to {name}")
        self._node_id, self._old, self._new = node_id, old, name

    def _do(self, graph: Graph) -> None:
        graph.rename_node(self._node_id, self._new)

    def _undo(self, graph: Graph) -> None:
        graph.rename_node(self._node_id, self._old)


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "(" + ", ".join(_show(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:39] + "…"


class SnapshotCommand(DocumentCommand):
    """A compound edit (delete, paste, group, ungroup): undo restores the graph as it was.

    `edit(graph)` runs once; its result is kept in `result`. Redo and undo restore the
    snapshots taken after and before it, so ids come back exactly as they were.
    """

    def __init__(
        self,
        root: Graph,
        path: Iterable[str],
        text: str,
        edit: Callable[[Graph], Any],
        describe: Callable[[Graph, Any], str] | None = None,
    ) -> None:
        super().__init__(root, path, text)
        self._edit: Callable[[Graph], Any] | None = edit
        self._describe = describe
        self._before: dict | None = None
        self._after: dict | None = None
        self.result: Any = None

    def _do(self, graph: Graph) -> None:
        if self._edit is None:
            restore_graph(graph, self._after)
            return
        before = graph_to_data(graph)
        try:
            self.result = self._edit(graph)
        except Exception:
            restore_graph(graph, before)  # an edit of several steps may fail half-way: undo it
            raise
        self._before, self._after, self._edit = before, graph_to_data(graph), None
        if self._describe is not None:
            self.setText(self._describe(graph, self.result))

    def _undo(self, graph: Graph) -> None:
        restore_graph(graph, self._before)


def delete_command(
    root: Graph, path: Iterable[str], node_ids: Iterable[str], edge_ids: Iterable[str] = ()
) -> SnapshotCommand:
    """Delete nodes (with their edges) and edges in one undoable step."""
    graph = graph_at(root, path)
    node_ids = list(dict.fromkeys(node_ids))
    doomed = set(node_ids)
    edge_ids = [  # edges of deleted nodes go with them: only the others count
        e.id
        for e in map(graph.edge, dict.fromkeys(edge_ids))
        if e.src_node not in doomed and e.dst_node not in doomed
    ]

    def edit(graph: Graph) -> None:
        for edge_id in edge_ids:
            graph.disconnect(edge_id)
        if node_ids:
            graph.remove_nodes(node_ids)

    if node_ids and edge_ids:
        text = f"Delete {_plural(len(node_ids), 'node')} and {_plural(len(edge_ids), 'edge')}"
    elif node_ids:
        only = graph.nodes.get(node_ids[0])
        single = len(node_ids) == 1 and only is not None
        text = f"Delete {only.name}" if single else f"Delete {_plural(len(node_ids), 'node')}"
    else:
        text = f"Delete {_plural(len(edge_ids), 'connection')}"
    return SnapshotCommand(root, path, text, edit)


class PasteCommand(SnapshotCommand):
    """Paste clipboard data; the copied nodes' Parameter values follow them to the new ids."""

    def __init__(
        self,
        root: Graph,
        path: Iterable[str],
        data: Mapping,
        values: Values,
        project_values: Values,
        *,
        offset: tuple[float, float],
        text: str = "",
    ) -> None:
        count = len(data.get("nodes", ()))
        super().__init__(root, path, text or f"Paste {_plural(count, 'node')}", self._paste)
        self._data, self._offset = data, offset
        self._values, self._project_values = values, project_values
        self._carried: Values = {}

    @property
    def node_ids(self) -> tuple[str, ...]:
        return self.result.node_ids if self.result is not None else ()

    def _paste(self, graph: Graph) -> Any:
        pasted = editing.paste(graph, self._data, offset=self._offset)
        self._carried = {
            pasted.id_map[old]: {name: np.array(a, copy=True) for name, a in arrays.items()}
            for old, arrays in self._values.items()
            if old in pasted.id_map
        }
        return pasted

    def _do(self, graph: Graph) -> None:
        super()._do(graph)
        for node_id, arrays in self._carried.items():
            self._project_values[node_id] = {n: a.copy() for n, a in arrays.items()}

    def _undo(self, graph: Graph) -> None:
        super()._undo(graph)
        for node_id in self._carried:
            self._project_values.pop(node_id, None)


def group_command(
    root: Graph, path: Iterable[str], node_ids: Iterable[str], definition: str = "Group"
) -> SnapshotCommand:
    ids = list(node_ids)
    return SnapshotCommand(
        root,
        path,
        f"Group {_plural(len(ids), 'node')}",
        lambda graph: editing.group(graph, ids, definition=definition),
        lambda graph, grouping: (
            f"Group {_plural(len(ids), 'node')} into {graph.node(grouping.node_id).name}"
        ),
    )


def ungroup_command(root: Graph, path: Iterable[str], node_id: str) -> SnapshotCommand:
    name = graph_at(root, path).node(node_id).name
    return SnapshotCommand(
        root, path, f"Ungroup {name}", lambda graph: editing.ungroup(graph, node_id)
    )


class TrainingSettingCommand(DocumentCommand):
    """Set (or with ABSENT, remove) one of the project's training settings.

    Choosing another optimizer sends its options first (those the new one takes) and
    then its name: the two arrive as two commands and become one undo step.
    """

    MERGE_ID = 0x7261696E  # QUndoStack merges consecutive commands with the same id

    def __init__(self, project: Project, key: str, value: Any) -> None:
        shown = "default" if value is ABSENT else _show_setting(value)
        super().__init__(project.graph, (), f"Set {key.replace('_', ' ')} to {shown}")
        self._project = project
        self._changes = [(key, project.training.get(key, ABSENT), value)]
        self._made = time.monotonic()

    def id(self) -> int:
        return self.MERGE_ID

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 (Qt override)
        keys = [key for key, _, _ in self._changes]
        if not (isinstance(other, TrainingSettingCommand) and keys == ["optimizer_options"]
                and [key for key, _, _ in other._changes] == ["optimizer"]
                and other._made - self._made < PAIR_SECONDS):  # fmt: skip
            return False  # only the pair one choice of optimizer sends
        self._changes += other._changes
        self.setText(other.text())
        return True

    def _do(self, graph: Graph) -> None:
        for key, _, new in self._changes:
            self._project.set_training(key, new)

    def _undo(self, graph: Graph) -> None:
        for key, old, _ in reversed(self._changes):
            self._project.set_training(key, old)


def _show_setting(value: Any) -> str:
    if isinstance(value, Mapping):
        for kind in KINDS:
            if kind in value:
                return _show(str(value[kind]))
        return "{" + ", ".join(f"{k}={_show(v)}" for k, v in value.items()) + "}"
    return _show(value)


class HookCommand(DocumentCommand):
    """Attach (`add=True`) or take away one hook. Not structural: hooks only watch the
    network, so this works while training (the run attaches or detaches it at once)."""

    structural = False

    def __init__(self, project: Project, hook: Hook, *, add: bool, text: str = "") -> None:
        what = "hook" if hook.kind != "hook_backward" else "HookBackward"
        default = f"{'Add' if add else 'Remove'} {hook.kind.replace('_', '-')} {what}"
        super().__init__(project.graph, (), text or default)
        self._project, self._hook, self._add = project, hook, add
        self._index: int | None = None

    @property
    def hook(self) -> Hook:
        return self._hook

    def _do(self, graph: Graph) -> None:
        if self._add:
            self._project.add_hook(self._hook, self._index)
        else:
            self._hook, self._index = self._project.remove_hook(self._hook.id)

    def _undo(self, graph: Graph) -> None:
        if self._add:
            self._hook, self._index = self._project.remove_hook(self._hook.id)
        else:
            self._project.add_hook(self._hook, self._index)


def splice_command(root: Graph, path: Iterable[str], edge_id: str, node: Node,
                   fit: Callable[[Graph, str, str, str], Mapping[str, Any]] | None = None,
                   ) -> SnapshotCommand:  # fmt: skip
    """Put `node` (new) into the edge: src → node's first input, node's first output → dst.

    `fit(graph, src, src_port, node_id)` may give hyper-parameters the new node takes so
    it accepts what arrives (a Dense's input width). One undoable step; refused (nothing
    changes) if the node has no input or no output, or a connection is not allowed.
    """
    if not node.inputs or not node.outputs:
        raise DocumentError(f"A {node.type} node has no input and output to put in a "
                            "connection.")  # fmt: skip

    def edit(graph: Graph) -> Node:
        edge = graph.edge(edge_id)
        added = graph.add_node(node)
        graph.disconnect(edge_id)
        if fit is not None:
            wanted = dict(fit(graph, edge.src_node, edge.src_port, added.id))
            if wanted:
                graph.set_params(added.id, wanted)
        graph.connect(edge.src_node, edge.src_port, added.id, added.inputs[0])
        graph.connect(added.id, added.outputs[0], edge.dst_node, edge.dst_port)
        return added

    return SnapshotCommand(root, path, f"Insert {node.type} into a connection", edit,
                           lambda graph, added: f"Insert {added.name} into a connection")


class ParamValuesCommand(DocumentCommand):
    """Write new values into regions of one trained Parameter (a typed entry, a fill, an
    import, a re-initialization). Undo puts the old entries back, region by region.

    Structural: it changes what the network computes, so it is refused while a run is
    going on (allowed while paused; the run goes on with the new values).
    """

    def __init__(self, project: Project, node_id: str, name: str,
                 regions: Iterable[tuple[tuple, np.ndarray]], text: str) -> None:  # fmt: skip
        super().__init__(project.graph, (), text)
        self._project, self._node_id, self._name = project, node_id, name
        self._new = [(tuple(index), np.array(values, copy=True)) for index, values in regions]
        self._old: list[tuple[tuple, np.ndarray]] = []

    def _do(self, graph: Graph) -> None:
        old = []
        try:
            for index, values in self._new:
                old.append((index, self._project.set_values(self._node_id, self._name, index,
                                                            values)))  # fmt: skip
        except DocumentError:
            for index, values in reversed(old):  # a later region refused: put back the first
                self._project.set_values(self._node_id, self._name, index, values)
            raise
        self._old = old

    def _undo(self, graph: Graph) -> None:
        for index, values in reversed(self._old):
            self._project.set_values(self._node_id, self._name, index, values)


class FreezeCommand(DocumentCommand):
    """Freeze (training leaves them unchanged) or unfreeze some Parameters of one node."""

    def __init__(self, project: Project, node_id: str, names: Iterable[str], frozen: bool,
                 text: str) -> None:  # fmt: skip
        super().__init__(project.graph, (), text)
        self._project, self._node_id = project, node_id
        self._names = tuple(names)
        self._frozen = bool(frozen)
        self._before = tuple(n for n in self._names if project.is_frozen(node_id, n))

    def _do(self, graph: Graph) -> None:
        self._project.set_frozen(self._node_id, self._names, self._frozen)

    def _undo(self, graph: Graph) -> None:
        self._project.set_frozen(self._node_id, self._names, False)
        if self._before:
            self._project.set_frozen(self._node_id, self._before, True)
