"""What changed between two versions of a node, as the events a graph emits for it.

`Graph._take` (graph.py) turns one graph's contents into another's and tells its
watchers only what differs; these are its node-level pieces, which need no graph.
"""

from __future__ import annotations

from app.document.events import (
    Events,
    NodeMoved,
    NodeRenamed,
    ParamChanged,
    PortsChanged,
)
from app.document.node import ABSENT, Node, same_value

Pending = list[tuple[Events, object]]  # events computed during an edit, emitted after it


def same_kind(old: Node, new: Node) -> bool:
    """Whether `new` can be reached from `old` by in-place edits (else: removed and re-added)."""
    return (
        old.type == new.type
        and old.is_composite == new.is_composite
        and old.definition == new.definition
    )


def differences(old: Node, new: Node) -> list[object]:
    """The events for the in-place edits that make `old` into `new` (of the same kind)."""
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
