"""Turning one graph's contents into another's while telling its watchers only what differs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.document.events import (
    EdgeAdded,
    EdgeRemoved,
    Events,
    NodeAdded,
    NodeMoved,
    NodeRemoved,
    NodeRenamed,
    ParamChanged,
    PortsChanged,
)
from app.document.node import ABSENT, Node, same_value

if TYPE_CHECKING:
    from app.document.graph import Graph

Pending = list[tuple[Events, object]]  # events computed during an edit, emitted after it


def transfer(graph: Graph, target: Graph) -> Pending:
    """Make `graph` hold `target`'s (already checked) contents; returns the events to emit.

    The caller emits them once everything, at every level, is in place. Composites
    present on both sides keep their own subgraph object (views may be watching it),
    which takes over the target's subgraph contents in turn.
    """
    pending: Pending = []
    bus = graph.events
    old_edges, new_edges = graph._edges, target._edges
    for edge_id, edge in old_edges.items():
        if new_edges.get(edge_id) != edge:
            pending.append((bus, EdgeRemoved(edge_id, edge)))
    kept: dict[str, Node] = {}
    for node_id, node in graph._nodes.items():
        new = target._nodes.get(node_id)
        if new is None or not _same_kind(node, new):
            pending.append((bus, NodeRemoved(node_id, node)))
        else:
            kept[node_id] = node
    nodes: dict[str, Node] = {}
    for node_id, new in target._nodes.items():
        old = kept.get(node_id)
        if old is not None:
            if old.subgraph is not None and new.subgraph is not old.subgraph:
                pending += transfer(old.subgraph, new.subgraph)
                new = new.replace(subgraph=old.subgraph)
            pending += [(bus, e) for e in _differences(old, new)]
        nodes[node_id] = new
    pending += [(bus, NodeAdded(nid)) for nid in nodes if nid not in kept]
    pending += [(bus, EdgeAdded(eid)) for eid, e in new_edges.items() if old_edges.get(eid) != e]
    graph._nodes, graph._edges, graph._into = nodes, dict(new_edges), dict(target._into)
    graph._rebuild_out()
    return pending


def _same_kind(old: Node, new: Node) -> bool:
    """Whether `new` can be reached from `old` by in-place edits (else: removed and re-added)."""
    return (
        old.type == new.type
        and old.is_composite == new.is_composite
        and old.definition == new.definition
    )


def _differences(old: Node, new: Node) -> list[object]:
    events: list[object] = []
    if old.name != new.name:
        events.append(NodeRenamed(old.id, old.name, new.name))
    if old.position != new.position:
        events.append(NodeMoved(old.id, old.position, new.position))
    for key in list(old.params) + [k for k in new.params if k not in old.params]:
        before, after = old.params.get(key, ABSENT), new.params.get(key, ABSENT)
        if not same_value(before, after):
            events.append(ParamChanged(old.id, key, before, after))
    if (old.inputs, old.outputs) != (new.inputs, new.outputs):
        events.append(PortsChanged(old.id, old.inputs, old.outputs))
    return events
