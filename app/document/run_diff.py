"""What changed between two runs: the network (nodes added or removed, hyper-parameters,
connections) and the training settings.

    network = summarise(project.graph)      # JSON: what a run record keeps of its network
    changes = diff(old_network, new_network, old_settings, new_settings)
    [change_text(c) for c in changes]       # "dense2.out_channels 32 → 64", ...

A change is a JSON dict {"kind", "what", "old", "new"}: kind "added" / "removed" (a
node: what is its path name, new/old its type), "param" (what is
"<node path>.<hyper-parameter>"), "connection" (what is "a.out → b.x"; old/new
None or the connection), "setting" (what is a training setting's key, e.g.
"optimizer", "learning_rate", "optimizer_options.momentum"). Node path names join the
names of enclosing composites with "/" ("block1/conv2"). Nodes are matched by id, so a
renamed node is one "renamed" change ("what" the old path, "new" the new name), not a
removal and an addition. Connections to a node added or removed go with it (not listed
apart). A hyper-parameter or setting one side lacks has `"unset": "old"` (or "new").

A summary (JSON): {"nodes": {id: {"path", "type", "params"}}, "edges": [[source id,
port, destination id, port], ...]}; what it does not hold (positions) is no change.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from app.document.graph import Graph

__all__ = ["change_text", "diff", "summarise"]

SHOWN = 48  # most characters of one value in a change's line
_ORDER = {"removed": 0, "added": 1, "renamed": 2, "param": 3, "connection": 4, "setting": 5}


def summarise(graph: Graph) -> dict[str, Any]:
    """What a run keeps of its network, as JSON."""
    nodes: dict[str, dict[str, Any]] = {}
    edges: list[list[str]] = []
    todo: list[tuple[Graph, str]] = [(graph, "")]
    while todo:
        here, prefix = todo.pop()
        for node in here.nodes.values():
            path = prefix + node.name
            nodes[node.id] = {"path": path, "type": node.type,
                              "params": {k: _plain(v) for k, v in node.params.items()}}
            if node.subgraph is not None:
                todo.append((node.subgraph, f"{path}/"))
        edges += [[e.src_node, e.src_port, e.dst_node, e.dst_port] for e in here.edges.values()]
    return {"nodes": nodes, "edges": sorted(edges)}


def diff(old: Mapping[str, Any], new: Mapping[str, Any], old_settings: Mapping[str, Any],
         new_settings: Mapping[str, Any]) -> list[dict[str, Any]]:  # fmt: skip
    """The changes from `old` to `new` (networks from `summarise`) and their settings."""
    before, after = _nodes(old), _nodes(new)
    changes: list[dict[str, Any]] = []
    for node_id, node in before.items():
        if node_id not in after or after[node_id]["type"] != node["type"]:
            changes.append(_change("removed", node["path"], node["type"], None))
    for node_id, node in after.items():
        was = before.get(node_id)
        if was is None or was["type"] != node["type"]:
            changes.append(_change("added", node["path"], None, node["type"]))
            continue
        if _name(was["path"]) != _name(node["path"]):  # not its composite's renaming
            changes.append(_change("renamed", was["path"], _name(was["path"]),
                                   _name(node["path"])))  # fmt: skip
        changes += _compare(was["params"], node["params"], "param", f"{node['path']}.")
    changes += _connections(old, new, before, after)
    changes += _compare({k: v for k, v in _mapping(old_settings).items() if k != "state"},
                        {k: v for k, v in _mapping(new_settings).items() if k != "state"},
                        "setting", "")  # fmt: skip
    return sorted(changes, key=lambda c: _ORDER[c["kind"]])  # stable: paths in graph order


def change_text(change: Mapping[str, Any]) -> str:
    """One change in a line: "dense2.out_channels 32 → 64", "optimizer Adam → Momentum",
    "+ dropout1 (Dropout)", "− relu2 (ReLU)"."""
    kind, what = change.get("kind"), _text(change.get("what"))
    old, new = change.get("old"), change.get("new")
    if kind == "added":
        return f"+ {what} ({_text(new)})"
    if kind == "removed":
        return f"\u2212 {what} ({_text(old)})"
    if kind == "renamed":
        return f"renamed {what} \u2192 {_text(new)}"
    if kind == "connection":
        return f"+ {what}" if old is None else f"\u2212 {what}"
    unset = change.get("unset")
    shown_old = "(unset)" if unset == "old" else show(old)
    shown_new = "(unset)" if unset == "new" else show(new)
    return f"{what} {shown_old} \u2192 {shown_new}"


def show(value: Any) -> str:
    """A value, compactly: 0.001, Adam, [2, 3], true, none; long ones cut with "…"."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}" if math.isfinite(value) else str(value)
    if isinstance(value, int | str):
        text = str(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "),
                              default=str)  # fmt: skip
        except (TypeError, ValueError, RecursionError):
            text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN - 1] + "\u2026"


# ---- helpers ---------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, tuple | list) else value


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _nodes(network: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The summary's nodes, each with a path, a type and params (a damaged one made so)."""
    found = {}
    for node_id, node in _mapping(_mapping(network).get("nodes")).items():
        node = _mapping(node)
        found[str(node_id)] = {"path": _text(node.get("path", node_id)),
                               "type": _text(node.get("type", "?")),
                               "params": dict(_mapping(node.get("params")))}  # fmt: skip
    return found


def _edges(network: Mapping[str, Any]) -> set[tuple[str, str, str, str]]:
    edges = _mapping(network).get("edges")
    return {tuple(str(part) for part in edge) for edge in (edges if isinstance(edges, list)
            else ()) if isinstance(edge, list | tuple) and len(edge) == 4}  # fmt: skip


def _connections(old: Mapping[str, Any], new: Mapping[str, Any], before: dict[str, Any],
                 after: dict[str, Any]) -> list[dict[str, Any]]:  # fmt: skip
    """Connections removed and added between nodes on both sides (a node's own go with it)."""
    both = {i for i in before if i in after and before[i]["type"] == after[i]["type"]}
    old_edges, new_edges = _edges(old), _edges(new)
    changes = []
    for edges, others, nodes, gone in ((old_edges, new_edges, before, True),
                                       (new_edges, old_edges, after, False)):  # fmt: skip
        for edge in sorted(edges - others):
            if edge[0] in both and edge[2] in both:
                text = (f"{nodes[edge[0]]['path']}.{edge[1]} \u2192 "
                        f"{nodes[edge[2]]['path']}.{edge[3]}")  # fmt: skip
                changes.append(_change("connection", text, text if gone else None,
                                       None if gone else text))  # fmt: skip
    return changes


def _compare(old: Mapping[str, Any], new: Mapping[str, Any], kind: str,
             prefix: str) -> list[dict[str, Any]]:  # fmt: skip
    """A change per key whose value differs; objects on both sides compared key by key."""
    changes = []
    for key in list(old) + [k for k in new if k not in old]:
        what = f"{prefix}{key}"
        if key not in new:
            changes.append({**_change(kind, what, old[key], None), "unset": "new"})
        elif key not in old:
            changes.append({**_change(kind, what, None, new[key]), "unset": "old"})
        elif isinstance(old[key], Mapping) and isinstance(new[key], Mapping):
            changes += _compare(old[key], new[key], kind, f"{what}.")
        elif not _same(old[key], new[key]):
            changes.append(_change(kind, what, old[key], new[key]))
    return changes


def _same(a: Any, b: Any) -> bool:
    """Equal as saved: 1, 1.0 and true differ; lists and objects item by item."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _change(kind: str, what: str, old: Any, new: Any) -> dict[str, Any]:
    return {"kind": kind, "what": what, "old": _plain(old), "new": _plain(new)}


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else show(value)
