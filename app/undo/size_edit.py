"""The undo command for a size typed in the Inspector, with every size that follows it,
and the output ports that follow a hyper-parameter (Split's `output_num`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.catalogue import CATALOGUE, CatalogueError
from app.compiler.shapes import ShapeReport, infer_shapes
from app.compiler.size_flow import follow, following_keys
from app.document import ABSENT, DocumentError, Edge, Graph
from app.undo.commands import DocumentCommand, GraphPath, _plural, _show, graph_at

# Output ports changed by an edit: (graph path, node id, ports before, ports after, the
# edges that left the ports gone, in graph order).
PortStep = tuple[GraphPath, str, tuple[str, ...], tuple[str, ...], tuple[Edge, ...]]


class SizeEditCommand(DocumentCommand):
    """Set hyper-parameters of one node; the sizes nobody typed that depend on it follow.

    With `typed` (an edit in the Inspector) the sizes among `values` (a Dense's
    in_channels, ...) become typed: they stay put from then on. Without it (a
    connection's fit) they become inferred again. The edit and every size that follows
    it, at any level of the graph, are one undo step. With no `values` it only lets the
    sizes follow an edit made just before (a connection; pass the shapes from before it
    as `before`); when nothing follows, the command is obsolete and the stack drops it.

    When the node's type names its output ports from its values (NodeType.ports), the
    ports follow too, in the same undo step: a connection leaving a port that goes is
    taken away, and comes back on undo.
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
        self._ports: PortStep | None = None  # done right after the first step

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
        ports = None
        try:
            ports = self._port_step()
            if ports is not None:
                self._set_ports(ports, forward=True)
            for change in follow(self._root, before):
                inner = graph_at(self._root, change.path).node(change.node_id)
                step = (change.path, change.node_id, dict(change.old), dict(change.new),
                        inner.typed, inner.typed)
                self._set(step, forward=True)
                steps.append(step)
        except DocumentError:
            for step in reversed(steps[1:]):
                self._set(step, forward=False)
            if ports is not None and ports[3] == self.graph.node(self._node_id).outputs:
                self._set_ports(ports, forward=False)
            self._set(steps[0], forward=False)
            raise
        self._steps, self._ports, self._applied = steps, ports, True
        self.setObsolete(not self._values and len(steps) == 1 and ports is None)
        names = [graph_at(self._root, s[0]).node(s[1]).name for s in steps[1:]]
        if names:
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            self.setText(f"{self.text()} ({shown} follow{'s' if len(names) == 1 else ''})")
        if ports is not None and ports[4]:
            gone = sorted({edge.src_port for edge in ports[4]}, key=ports[2].index)
            self.setText(f"{self.text()} ({_plural(len(ports[4]), 'connection')} from "
                         f"{', '.join(gone)} removed)")

    def _port_step(self) -> PortStep | None:
        """The output ports the edited node has with its new values, if they differ."""
        graph = self.graph
        node = graph.node(self._node_id)
        if node.type not in CATALOGUE or CATALOGUE.get(node.type).ports is None:
            return None
        try:
            outputs = CATALOGUE.get(node.type).output_ports(node.params)
        except CatalogueError:
            return None  # a value the type refuses: the node says so, its ports stay
        if outputs == node.outputs:
            return None
        gone = tuple(e for e in graph.edges.values()
                     if e.src_node == node.id and e.src_port not in outputs)
        return self._path, node.id, node.outputs, outputs, gone

    def _set_ports(self, step: PortStep, *, forward: bool) -> None:
        """Give the node its new output ports (or, backward, its old ones and edges)."""
        path, node_id, old, new, gone = step
        graph = graph_at(self._root, path)
        inputs = graph.node(node_id).inputs
        if forward:
            for edge in gone:
                graph.disconnect(edge.id)
            graph.set_ports(node_id, inputs, new)
            return
        graph.set_ports(node_id, inputs, old)
        for e in gone:
            graph.connect(e.src_node, e.src_port, e.dst_node, e.dst_port, edge_id=e.id)

    def _set(self, step: tuple, *, forward: bool) -> None:
        path, node_id, old, new, typed_old, typed_new = step
        graph_at(self._root, path).set_params(node_id, new if forward else old,
                                              typed=typed_new if forward else typed_old)

    def _do(self, graph: Graph) -> None:
        for i, step in enumerate(self._steps):
            self._set(step, forward=True)
            if i == 0 and self._ports is not None:
                self._set_ports(self._ports, forward=True)

    def _undo(self, graph: Graph) -> None:
        for i, step in reversed(list(enumerate(self._steps))):
            if i == 0 and self._ports is not None:
                self._set_ports(self._ports, forward=False)
            self._set(step, forward=False)
