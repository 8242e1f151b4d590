"""Where nodes go: auto-layout in layers by depth, and free room for a node dropped in."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import cache

from app.document import Graph

COLUMN_GAP = 120.0  # room for the widest shape label on an edge, e.g. (N, 16, 4, 4)
ROW_GAP = 40.0
CLEARANCE = 20.0  # kept free around a node that lands among others
SEARCH_STEPS = 60  # how far (in grid steps) a dropped node may go to find free room

Rect = tuple[float, float, float, float]  # x, y, width, height


def auto_layout(
    graph: Graph,
    node_ids: Iterable[str],
    sizes: Mapping[str, tuple[float, float]],
    grid: float = 20.0,
) -> dict[str, tuple[float, float]]:
    """New top-left positions for `node_ids`, keeping the group's top-left corner in place.

    A node's layer (column) is the length of the longest path reaching it in the whole
    graph, so chosen nodes with unchosen ones between them still go in separate columns;
    the layers the chosen nodes use are then packed left to right. Columns are
    `COLUMN_GAP` apart (after the widest node of each) and nodes within a column
    `ROW_GAP` apart (to the grid); each column is centred on the tallest one, in
    the order of the average row of what feeds them, so edges cross less. Nodes not
    chosen stay put.
    """
    wanted = set(node_ids)
    order = graph.topological_order()
    chosen = [nid for nid in order if nid in wanted]
    if not chosen:
        return {}
    feeds: dict[str, list[str]] = {nid: [] for nid in order}
    for e in graph.edges.values():
        feeds[e.dst_node].append(e.src_node)
    depth: dict[str, int] = {}
    for nid in order:  # topological order: every feeder has its depth already
        depth[nid] = 1 + max((depth[s] for s in feeds[nid]), default=-1)
    layers = sorted({depth[nid] for nid in chosen})
    column_of = {d: i for i, d in enumerate(layers)}
    columns: list[list[str]] = [[] for _ in layers]
    for nid in chosen:
        columns[column_of[depth[nid]]].append(nid)

    def size(nid: str) -> tuple[float, float]:
        return sizes.get(nid, (160.0, 80.0))

    def rows(members: list[str]) -> tuple[list[float], float]:
        """Each member's top below the column's, on the grid, and the column's height."""
        tops = [0.0]
        for nid in members[:-1]:
            tops.append(_snap(tops[-1] + size(nid)[1] + ROW_GAP, grid))
        return tops, tops[-1] + size(members[-1])[1]

    # Positions on the grid, as the canvas snaps them; widths are whole grid steps, so
    # with a gap of whole steps the gaps between columns come out exactly even.
    left = _snap(min(graph.node(n).position[0] for n in chosen), grid)
    top = _snap(min(graph.node(n).position[1] for n in chosen), grid)
    middle = top + max(rows(members)[1] for members in columns) / 2
    row_of: dict[str, float] = {}
    placed: dict[str, tuple[float, float]] = {}
    x = left
    for members in columns:

        def key(nid: str) -> float:
            rows = [row_of[s] for s in feeds[nid] if s in row_of]
            return sum(rows) / len(rows) if rows else graph.node(nid).position[1]

        members.sort(key=key)
        tops, height = rows(members)
        y = _snap(middle - height / 2, grid)
        for nid, below in zip(members, tops, strict=True):
            placed[nid] = (x, y + below)
            row_of[nid] = y + below + size(nid)[1] / 2
        x += _snap(max(size(n)[0] for n in members) + COLUMN_GAP, grid)
    return placed


def free_spot(corner: tuple[float, float], size: tuple[float, float], taken: Iterable[Rect],
              grid: float = 20.0) -> tuple[float, float]:
    """The top-left nearest `corner`, on the grid, where a node of `size` overlaps none of
    the `taken` rectangles (nor comes within CLEARANCE of one); `corner` if none is free."""
    width, height = size
    reach = SEARCH_STEPS * grid
    near = [
        (x - CLEARANCE, y - CLEARANCE, x + w + CLEARANCE, y + h + CLEARANCE)
        for x, y, w, h in taken
        if x - reach - width <= corner[0] <= x + w + reach and
        y - reach - height <= corner[1] <= y + h + reach
    ]  # fmt: skip
    for dx, dy in _offsets(SEARCH_STEPS):
        x, y = corner[0] + dx * grid, corner[1] + dy * grid
        if all(x + width <= a or x >= c or y + height <= b or y >= d for a, b, c, d in near):
            return (x, y)
    return corner


@cache
def _offsets(steps: int) -> tuple[tuple[int, int], ...]:
    """Grid offsets within `steps` of the origin, nearest first (ties: right, then down)."""
    cells = [(dx, dy) for dx in range(-steps, steps + 1) for dy in range(-steps, steps + 1)]
    return tuple(sorted(cells, key=lambda c: (math.hypot(*c), -c[0], -c[1])))


def _snap(value: float, grid: float) -> float:
    return round(value / grid) * grid if grid else value
