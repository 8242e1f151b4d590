"""Lay a graph out left to right in layers (and every composite's inside), for imported models.

Sugiyama's scheme, kept small enough to run on a 1,000-node model in a few tens of ms:
each node goes in the column of its longest path from the inputs; columns are ordered by
barycentre sweeps (the order with fewest crossings between neighbouring columns wins);
then every node gets a row. The main path, the longest from an input to an output, holds
row 0, so a chain of residual blocks reads as one straight line; the nodes beside it take
the free rows nearest their neighbours' (a weighted median, kept in column order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from app.catalogue import CATALOGUE, CatalogueError
from app.document import BOUNDARY_TYPES, COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Graph, Node

# The canvas's node geometry (widgets/node_editor/style.py and layout.py; app must not
# import widgets, so the figures are repeated here).
GRID = 20.0
NODE_MIN_WIDTH = 170.0
HEADER, ROW, FOOTER = 28.0, 22.0, 24.0  # title bar, one port row, the summary line
COLUMN_GAP = 120.0  # room for an edge's shape label, e.g. (N, 16, 4, 4)
ROW_GAP = 40.0
# Rough text advances (px per character) of the title, type and summary fonts; too wide
# is harmless (a wider gap), too narrow would make nodes overlap.
TITLE_CHAR, TYPE_CHAR, SUMMARY_CHAR = 10.0, 7.0, 7.5

PASSES = 4  # barycentre sweeps down and up; more rarely removes another crossing
# A long edge passes each column between its ends as a stand-in point, so it takes part in
# the ordering; at most this many stand-ins per node (DenseNet's concatenations reach far).
STAND_INS_PER_NODE = 4
_INPUTS = ("Input", SUBGRAPH_INPUT)
_FIXED = 1e6  # weight of a main-path node: it keeps row 0

Size = Callable[[Node], tuple[float, float]]


def layout(graph: Graph, *, deep: bool = True, size: Size | None = None) -> None:
    """Place every node of `graph`, and (if `deep`) of every composite's inside, left to right.

    One `move_nodes` per graph level. `size` gives a node's (width, height) on the canvas;
    the default estimates it as the canvas draws nodes.
    """
    size = size or node_size
    for level in _levels(graph) if deep else (graph,):
        positions = place(level, size)
        if positions:
            level.move_nodes(positions)


def node_size(node: Node) -> tuple[float, float]:
    """About the size the canvas draws `node` at (widgets/node_editor/node_item.py)."""
    kind, summary = _kind_and_summary(node)
    rows = max(len(node.inputs), len(node.outputs), 1)
    height = HEADER + rows * ROW + (FOOTER if summary else 6.0)
    ports = max((len(p) for p in node.inputs), default=0)
    ports += max((len(p) for p in node.outputs), default=0)
    width = max(
        NODE_MIN_WIDTH,
        TITLE_CHAR * len(node.name) + TYPE_CHAR * len(kind) + 36,
        SUMMARY_CHAR * len(summary) + 24,
        TYPE_CHAR * ports + 48,
    )
    return _snap_up(width), height


def place(graph: Graph, size: Size = node_size) -> dict[str, tuple[float, float]]:
    """New top-left positions for every node of `graph` (this level only)."""
    order = graph.topological_order()
    if not order:
        return {}
    nodes = graph.nodes
    preds: dict[str, list[tuple[str, float]]] = {n: [] for n in order}  # (node, port offset)
    succs: dict[str, list[tuple[str, float]]] = {n: [] for n in order}
    for e in graph.edges.values():
        src, dst = nodes[e.src_node], nodes[e.dst_node]
        preds[e.dst_node].append((e.src_node, _offset(src.outputs, e.src_port)))
        succs[e.src_node].append((e.dst_node, _offset(dst.inputs, e.dst_port)))
    layer = _layers(order, nodes, preds, succs)
    columns: list[list[str]] = [[] for _ in range(max(layer.values()) + 1)]
    for nid in _first_seen(order, succs):
        columns[layer[nid]].append(nid)
    links = _with_stand_ins(graph, preds, succs, layer, columns)
    _order_columns(columns, *links, layer)
    real = [[n for n in members if n in nodes] for members in columns]
    row = _rows(real, preds, succs, _main_path(order, nodes, succs))
    _clear_skips(row, layer, preds, succs)
    sizes = {nid: size(nodes[nid]) for nid in order}
    xs, x = [], 0.0
    for members in real:
        xs.append(x)
        x += _snap_up(max((sizes[n][0] for n in members), default=NODE_MIN_WIDTH) + COLUMN_GAP)
    pitch: dict[int, float] = {}
    for nid in order:
        pitch[row[nid]] = max(pitch.get(row[nid], 0.0), sizes[nid][1])
    tops, y = {}, 0.0
    for r in sorted(pitch):
        tops[r] = y
        y += _snap_up(pitch[r] + ROW_GAP)
    shift = tops.get(0, 0.0)  # the main path at y = 0
    return {nid: (xs[layer[nid]], tops[row[nid]] - shift) for nid in order}


# ---- layers ------------------------------------------------------------------------------


def _layers(order, nodes, preds, succs) -> dict[str, int]:
    """Longest path from the inputs; what no input feeds (a Constant) sits just left of the
    first node it feeds, not far out in column 0."""
    starts = {n for n in order if nodes[n].type in _INPUTS} or {n for n in order if not preds[n]}
    fed: set[str] = set()
    layer: dict[str, int] = {}
    for nid in order:
        from_start = [layer[p] for p, _ in preds[nid] if p in fed]
        if nid in starts or from_start:
            fed.add(nid)
            layer[nid] = 1 + max(from_start, default=-1)
    for nid in reversed(order):
        if nid not in fed:
            layer[nid] = min((layer[s] for s, _ in succs[nid]), default=1) - 1
    for nid in order:  # what feeds a node stays left of it
        layer[nid] = max([layer[nid]] + [layer[p] + 1 for p, _ in preds[nid]])
    low = min(layer.values())
    return {nid: d - low for nid, d in layer.items()}


def _first_seen(order, succs) -> list[str]:
    """Nodes depth first from the inputs along output ports in order (a tree comes out
    uncrossed); the rest after, in graph order."""
    seen: dict[str, None] = {}
    for start in order:
        if start in seen:
            continue
        stack = [start]
        while stack:
            nid = stack.pop()
            if nid in seen:
                continue
            seen[nid] = None
            stack.extend(s for s, _ in sorted(succs[nid], key=lambda t: -t[1]))
    return list(seen)


def _offset(ports: tuple[str, ...], port: str) -> float:
    """Where on its node's side a port is, as a fraction below 0.5 of a place in a column."""
    index = ports.index(port) if port in ports else 0
    return 0.4 * index / max(1, len(ports))


def _with_stand_ins(graph, preds, succs, layer, columns):
    """Links for ordering: each edge spanning columns becomes a chain through stand-in
    points, one per column between its ends (shortest edges first, within the budget)."""
    preds = {n: list(v) for n, v in preds.items()}
    succs = {n: list(v) for n, v in succs.items()}
    nodes = graph.nodes
    long = [e for e in graph.edges.values() if layer[e.dst_node] - layer[e.src_node] > 1]
    long.sort(key=lambda e: layer[e.dst_node] - layer[e.src_node])
    budget = STAND_INS_PER_NODE * len(nodes)
    for e in long:
        span = layer[e.dst_node] - layer[e.src_node]
        if span - 1 > budget:
            break
        budget -= span - 1
        src_off = _offset(nodes[e.src_node].outputs, e.src_port)
        dst_off = _offset(nodes[e.dst_node].inputs, e.dst_port)
        succs[e.src_node].remove((e.dst_node, dst_off))
        preds[e.dst_node].remove((e.src_node, src_off))
        last, off = e.src_node, src_off
        for c in range(layer[e.src_node] + 1, layer[e.dst_node]):
            point = f"~{e.id}~{c}"
            columns[c].append(point)
            layer[point] = c
            preds[point] = [(last, off)]
            succs[last].append((point, 0.0))
            succs[point] = []
            last, off = point, 0.0
        succs[last].append((e.dst_node, dst_off))
        preds[e.dst_node].append((last, off))
    return preds, succs


# ---- order within columns ------------------------------------------------------------------


def _order_columns(columns, preds, succs, layer) -> None:
    """Barycentre sweeps; the columns end in the order with the fewest crossings seen."""
    pos = {nid: float(i) for members in columns for i, nid in enumerate(members)}
    best, fewest = [list(c) for c in columns], _crossings(columns, succs, layer, pos)
    for _ in range(PASSES):
        if fewest == 0:
            break
        for sweep, links in ((range(1, len(columns)), preds),
                             (range(len(columns) - 2, -1, -1), succs)):  # fmt: skip
            for c in sweep:
                members = columns[c]

                def key(nid: str, links=links) -> tuple[float, float]:
                    near = links[nid]
                    if not near:
                        return pos[nid], pos[nid]
                    return sum(pos[n] + off for n, off in near) / len(near), pos[nid]

                members.sort(key=key)
                for i, nid in enumerate(members):
                    pos[nid] = float(i)
            count = _crossings(columns, succs, layer, pos)
            if count < fewest:
                best, fewest = [list(c) for c in columns], count
    columns[:] = best


def _crossings(columns, succs, layer, pos) -> int:
    """Crossings among edges between neighbouring columns (by place and port)."""
    total = 0
    for members in columns:
        ends = sorted(
            (pos[src], pos[dst] + off)
            for src in members
            for dst, off in succs[src]
            if layer[dst] == layer[src] + 1
        )
        total += _inversions([b for _, b in ends])
    return total


def _inversions(values: list[float]) -> int:
    """Pairs out of order (merge sort count)."""
    if len(values) < 2:
        return 0
    mid = len(values) // 2
    left, right = sorted(values[:mid]), sorted(values[mid:])
    count = _inversions(values[:mid]) + _inversions(values[mid:])
    j = 0
    for a in left:  # pairs (a in left, b in right) with b < a
        while j < len(right) and right[j] < a:
            j += 1
        count += j
    return count


# ---- rows ------------------------------------------------------------------------------


def _main_path(order, nodes, succs) -> set[str]:
    """The longest path from an input (or a source) to an output; ties take first ports."""
    longest: dict[str, int] = {}
    for nid in reversed(order):
        longest[nid] = 1 + max((longest[s] for s, _ in succs[nid]), default=-1)
    starts = [n for n in order if nodes[n].type in _INPUTS] or order
    nid = max(starts, key=lambda n: longest[n])  # first of the longest
    path = {nid}
    while succs[nid]:
        nid = min(succs[nid], key=lambda t: (-longest[t[0]], t[1]))[0]
        path.add(nid)
    return path


def _rows(columns, preds, succs, spine) -> dict[str, int]:
    """A row for each node: the main path on row 0, the others near their neighbours,
    rows increasing down each column in its order."""
    row: dict[str, int] = {}
    passes = ((columns, preds, False), (columns[::-1], succs, True), (columns, preds, True))
    for sweep, links, both in passes:
        for members in sweep:
            wanted: list[float | None] = []
            weights: list[float] = []
            for nid in members:
                near = [row[n] for n, _ in links[nid] if n in row]
                if both:
                    other = succs if links is preds else preds
                    near += [row[n] for n, _ in other[nid] if n in row]
                if nid in spine:
                    wanted.append(0.0)
                    weights.append(_FIXED)
                else:
                    wanted.append(_median(near) if near else None)
                    weights.append(1.0 if near else 1e-3)
            for nid, r in zip(members, _increasing(_fill(wanted), weights), strict=True):
                row[nid] = r
    return row


def _clear_skips(row: dict[str, int], layer: dict[str, int], preds, succs) -> None:
    """An edge along a row over nodes on that row would be drawn through them (a ResNet
    block's identity shortcut through its convolutions): the nodes in the columns it spans
    move one row aside, with whatever lies beyond them, so the edge runs clear of them. They
    go to the side of the port they enter the edge's end by, so nothing crosses there."""
    for _ in range(4 * len(row)):
        taken = {(layer[n], row[n]) for n in row}
        found = next(((u, v, at) for u in row for v, at in succs[u]
                      if row[v] == row[u] and layer[v] - layer[u] > 1
                      and any((c, row[u]) in taken for c in range(layer[u] + 1, layer[v]))),
                     None)  # fmt: skip
        if found is None:
            return
        u, v, at = found
        first, last, level = layer[u], layer[v], row[u]
        inside = [o for n, o in preds[v] if n != u and first < layer[n] < last]
        step = -1 if inside and min(inside) < at else 1  # they enter above the edge: go up
        for nid in row:
            if first < layer[nid] < last and (row[nid] - level) * step >= 0:
                row[nid] += step


def _median(values: list[int]) -> float:
    values = sorted(values)
    return float(values[(len(values) - 1) // 2])


def _fill(wanted: list[float | None]) -> list[float]:
    """Rows for nodes with no placed neighbour: next to the previous one in the column."""
    known = [i for i, w in enumerate(wanted) if w is not None]
    if not known:
        return [float(i) for i in range(len(wanted))]
    out: list[float] = []
    for i, w in enumerate(wanted):
        if w is None:
            before = [k for k in known if k < i]
            k = before[-1] if before else known[0]
            w = wanted[k] + (i - k)
        out.append(float(w))
    return out


def _increasing(wanted: list[float], weights: list[float]) -> list[int]:
    """Integer rows, strictly increasing, as near `wanted` as the weights ask: rows minus
    their index must not decrease, an L1 isotonic regression (pool adjacent violators,
    each pool at its weighted median)."""
    pools: list[tuple[list[tuple[float, float]], float]] = []  # (values and weights, median)
    for i, (w, weight) in enumerate(zip(wanted, weights, strict=True)):
        items = [(round(w) - i, weight)]
        level = items[0][0]
        while pools and pools[-1][1] > level:
            items = pools.pop()[0] + items
            level = _weighted_median(items)
        pools.append((items, level))
    rows: list[int] = []
    for items, level in pools:
        rows += [int(level) + len(rows) + k for k in range(len(items))]
    return rows


def _weighted_median(items: list[tuple[float, float]]) -> float:
    items = sorted(items)
    half, seen = sum(w for _, w in items) / 2, 0.0
    for value, weight in items:
        seen += weight
        if seen >= half:
            return value
    return items[-1][0]


# ---- helpers -----------------------------------------------------------------------------


def _levels(graph: Graph) -> Iterator[Graph]:
    """The graph and every composite's inside, at every depth."""
    yield graph
    for _, node in graph.walk():
        if node.subgraph is not None:
            yield node.subgraph


def _kind_and_summary(node: Node) -> tuple[str, str]:
    """What the canvas writes on a node: its type (or definition) and its summary line."""
    if node.type == COMPOSITE:
        inner = sum(1 for n in node.subgraph.nodes.values() if n.type not in BOUNDARY_TYPES)
        return node.definition, f"{node.definition} · {inner} nodes"
    if node.type in (SUBGRAPH_INPUT, SUBGRAPH_OUTPUT):
        return ("input port" if node.type == SUBGRAPH_INPUT else "output port"), ""
    try:
        return node.type, CATALOGUE.get(node.type).describe(node.params)
    except CatalogueError:
        return node.type, node.type


def _snap_up(value: float) -> float:
    return -(-value // GRID) * GRID
