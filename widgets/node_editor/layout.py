"""Auto-layout: nodes in columns from left to right in topological order, tidy rows in each."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.document import Graph

COLUMN_GAP = 130.0  # room for the widest shape label on an edge, e.g. (N, 16, 4, 4)
ROW_GAP = 40.0


def auto_layout(
    graph: Graph,
    node_ids: Iterable[str],
    sizes: Mapping[str, tuple[float, float]],
    grid: float = 20.0,
) -> dict[str, tuple[float, float]]:
    """New top-left positions for `node_ids`, keeping the group's top-left corner in place.

    A node's column is the length of the longest path reaching it from the chosen
    nodes; within a column nodes follow the average row of what feeds them, so edges
    cross less. Nodes not chosen stay put and are ignored.
    """
    chosen = [nid for nid in graph.topological_order() if nid in set(node_ids)]
    if not chosen:
        return {}
    inside = set(chosen)
    feeds: dict[str, list[str]] = {nid: [] for nid in chosen}
    for e in graph.edges.values():
        if e.src_node in inside and e.dst_node in inside:
            feeds[e.dst_node].append(e.src_node)
    column: dict[str, int] = {}
    for nid in chosen:  # topological order: every feeder has its column already
        column[nid] = 1 + max((column[s] for s in feeds[nid]), default=-1)
    columns: list[list[str]] = [[] for _ in range(max(column.values()) + 1)]
    for nid in chosen:
        columns[column[nid]].append(nid)

    left = min(graph.node(n).position[0] for n in chosen)
    top = min(graph.node(n).position[1] for n in chosen)
    row_of: dict[str, float] = {}
    placed: dict[str, tuple[float, float]] = {}
    x = left
    for members in columns:

        def key(nid: str) -> tuple[float, float]:
            rows = [row_of[s] for s in feeds[nid] if s in row_of]
            return (sum(rows) / len(rows) if rows else graph.node(nid).position[1], 0.0)

        members.sort(key=key)
        y = top
        for nid in members:
            w, h = sizes.get(nid, (160.0, 80.0))
            placed[nid] = (_snap(x, grid), _snap(y, grid))
            row_of[nid] = y + h / 2
            y += h + ROW_GAP
        x += max(sizes.get(n, (160.0, 80.0))[0] for n in members) + COLUMN_GAP
    return placed


def _snap(value: float, grid: float) -> float:
    return round(value / grid) * grid if grid else value
