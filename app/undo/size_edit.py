"""The undo command for a size typed in the Inspector, with every size that follows it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.compiler.shapes import ShapeReport, infer_shapes
from app.compiler.size_flow import follow, following_keys
from app.document import ABSENT, DocumentError, Graph
from app.undo.commands import DocumentCommand, GraphPath, _show, graph_at


class SizeEditCommand(DocumentCommand):
    """Set hyper-parameters of one node; the sizes nobody typed that depend on it follow.

    With `typed` (an edit in the Inspector) the sizes among `values` (a Dense's
    in_channels, ...) become typed: they stay put from then on. Without it (a
    connection's fit) they become inferred again. The edit and every size that follows
    it, at any level of the graph, are one undo step. With no `values` it only lets the
    sizes follow an edit made just before (a connection; pass the shapes from before it
    as `before`); when nothing follows, the command is obsolete and the stack drops it.
    """

    def __init__(self, root: Graph, path: Iterable[str], node_id: str,
                 values: Mapping[str, Any], *, typed: bool = True,
                 before: ShapeReport | None = None) -> None:  # fmt: skip
        node = graph_at(root, path).node(node_id)
        shown = ", ".join(f"{node.name}.{k} to {'default' if v is ABSENT else _show(v)}"
                          for k, v in values.items())  # fmt: skip
        super().__init__(root, path, f"Set {shown}" if values else f"Fit sizes after {node.name}")
        self._node_id, self._values, self._typed = node_id, dict(values), typed
        self._before = before
        # (graph path, node id, old values, new values, old typed, new typed), in order
        self._steps: list[tuple[GraphPath, str, dict, dict, frozenset, frozenset]] = []

    @property
    def followed(self) -> list[str]:
        """Ids of the nodes whose sizes followed the edit."""
        return [step[1] for step in self._steps[1:]]

    def apply(self) -> None:
        before = self._before if self._before is not None else infer_shapes(self._root)
        self._before = None
        node = self.graph.node(self._node_id)
        keys = set(following_keys(node.type)) & self._values.keys()
        typed = node.typed | keys if self._typed else node.typed - keys
        old = {k: node.params.get(k, ABSENT) for k in self._values}
        steps = [(self._path, node.id, old, self._values, node.typed, frozenset(typed))]
        self._set(steps[0], forward=True)  # refused: DocumentError, nothing changed
        try:
            for change in follow(self._root, before):
                inner = graph_at(self._root, change.path).node(change.node_id)
                step = (change.path, change.node_id, dict(change.old), dict(change.new),
                        inner.typed, inner.typed)
                self._set(step, forward=True)
                steps.append(step)
        except DocumentError:
            for step in reversed(steps):
                self._set(step, forward=False)
            raise
        self._steps, self._applied = steps, True
        self.setObsolete(not self._values and len(steps) == 1)
        names = [graph_at(self._root, s[0]).node(s[1]).name for s in steps[1:]]
        if names:
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            self.setText(f"{self.text()} ({shown} follow{'s' if len(names) == 1 else ''})")

    def _set(self, step: tuple, *, forward: bool) -> None:
        path, node_id, old, new, typed_old, typed_new = step
        graph_at(self._root, path).set_params(node_id, new if forward else old,
                                              typed=typed_new if forward else typed_old)

    def _do(self, graph: Graph) -> None:
        for step in self._steps:
            self._set(step, forward=True)

    def _undo(self, graph: Graph) -> None:
        for step in reversed(self._steps):
            self._set(step, forward=False)
