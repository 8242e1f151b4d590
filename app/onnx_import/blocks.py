"""Group the blocks repeated along a graph's main path (ResNet's residual blocks, a
Transformer's encoder layers) into composites named block1…blockN.

The main path is cut at its articulation nodes, the nodes every path from an input to an
output passes through; the pieces between two of them are the candidate blocks. A piece's
signature is its subgraph of node types and hyper-parameters, channel counts left out, so
a ResNet's basic blocks of 64 and of 128 channels are one pattern, and those with a
downsampling shortcut another. A block is a run of 1…MAX_UNIT consecutive pieces; the
patterns grouped are the ones that describe the path most briefly (each occurrence becomes
one node, each pattern's nodes are drawn once), so a Transformer's attention and
feed-forward halves make one block while a ResNet's two kinds of block stay apart.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from app.document import COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Graph, Node
from app.onnx_import.group_all import group_all
from app.onnx_import.layout import layout

MAX_UNIT = 8  # pieces of the main path one block may span
MAX_DEFINITION = 40  # characters of a definition name made from a pattern
# Hyper-parameters that size a layer to its data rather than shape the block: blocks that
# differ only in these are the same pattern (a ResNet stage doubles its channels).
SIZES = frozenset({
    "in_channels", "out_channels", "num_features", "num_channels", "normalized_shape",
    "channel", "input_size", "hidden_size", "embed_dim", "kdim", "vdim", "d_model",
    "dim_feedforward", "embedding_size", "vocab_size", "max_len",
})  # fmt: skip
_ENDS = ("Input", "Output", SUBGRAPH_INPUT, SUBGRAPH_OUTPUT)
_SHORT = {"BatchNorm": "BN", "LayerNorm": "LN", "GroupNorm": "GN", "InstanceNorm": "IN",
          "MultiheadAttention": "MHA", "AdaptiveAvgPool": "GAP", "AdaptiveMaxPool": "GMP",
          "TransformerEncoderLayer": "Encoder", "TransformerDecoderLayer": "Decoder"}  # fmt: skip


@dataclass
class Piece:
    """The nodes between two articulation nodes of the main path (the later one included)."""

    nodes: list[str]  # canonical order: the same pattern lists its nodes alike
    signature: tuple | None  # None: holds an input or output, never grouped
    types: list[str]


def group_repeats(graph: Graph, *, min_repeats: int = 2, min_size: int = 2) -> list[str]:
    """Group each occurrence of a block repeated along the main path into a composite.

    Composites are named block1, block2, … in path order (skipping names taken); the same
    pattern gets the same definition name. Node ids are kept, so Parameter values stay
    attached. The new composites' insides and `graph` are laid out again. Returns the
    composites' ids in path order; a graph with no repeats is left as it was.
    """
    pieces = main_path_pieces(graph)
    chosen = choose_blocks([p.signature for p in pieces], [len(p.nodes) for p in pieces],
                           min_repeats=min_repeats, min_size=min_size)  # fmt: skip
    if not chosen:
        return []
    definitions = _definition_names(pieces, chosen)
    taken = {n.name for n in graph.nodes.values()}
    numbers = itertools.count(1)
    loops = _side_loops(graph, pieces)
    selections = []
    for start, length in sorted(chosen):
        span = set(range(start, start + length))
        if any(fed & span and feeds & span for fed, feeds in loops):
            continue  # a side computation leaves the block and comes back: leave it open
        key = tuple(p.signature for p in pieces[start:start + length])
        members = [n for p in pieces[start:start + length] for n in p.nodes]
        name = next(f"block{i}" for i in numbers if f"block{i}" not in taken)
        selections.append((members, definitions[key], name))
    made = group_all(graph, selections)
    for node_id in made:
        layout(graph.node(node_id).subgraph, deep=False)
    if made:
        layout(graph, deep=False)
    return made


# ---- the main path's pieces ----------------------------------------------------------------


def main_path_pieces(graph: Graph) -> list[Piece]:
    """The main path cut at its articulation nodes, in path order."""
    order = graph.topological_order()
    nodes = graph.nodes
    preds: dict[str, list[str]] = {n: [] for n in order}
    succs: dict[str, list[str]] = {n: [] for n in order}
    into: dict[str, list] = {n: [] for n in order}
    for e in graph.edges.values():
        preds[e.dst_node].append(e.src_node)
        succs[e.src_node].append(e.dst_node)
        into[e.dst_node].append(e)
    rank = {n: i for i, n in enumerate(graph.nodes)}
    starts = [n for n in order if nodes[n].type in ("Input", SUBGRAPH_INPUT)]
    ends = [n for n in order if nodes[n].type in ("Output", SUBGRAPH_OUTPUT)]
    starts = starts or [n for n in order if not preds[n]]
    ends = ends or [n for n in order if not succs[n]]
    on = _reachable(starts, succs) & _reachable(ends, preds)
    path = [n for n in order if n in on]
    if not path:
        return []
    place = {n: i for i, n in enumerate(path)}
    # A node is on every input-to-output path unless some edge jumps over it (in this
    # topological order); the inputs and outputs hang off a virtual source and sink.
    jumps = [0] * (len(path) + 1)
    spans = [(place[e.src_node], place[e.dst_node]) for e in graph.edges.values()
             if e.src_node in on and e.dst_node in on]  # fmt: skip
    spans += [(-1, place[n]) for n in starts if n in on]
    spans += [(place[n], len(path)) for n in ends if n in on]
    for a, b in spans:
        if b - a > 1:
            jumps[a + 1] += 1
            jumps[b] -= 1
    cuts, level = [], 0
    for i in range(len(path)):
        level += jumps[i]
        if level == 0:
            cuts.append(i)
    piece_of: dict[str, int] = {}
    lows = [-1, *cuts]
    for k, (low, high) in enumerate(itertools.pairwise(lows)):
        for i in range(low + 1, high + 1):
            piece_of[path[i]] = k
    if cuts[-1] < len(path) - 1:  # what follows the last cut (several outputs)
        for i in range(cuts[-1] + 1, len(path)):
            piece_of[path[i]] = len(cuts)
    _attach_side_nodes(order, preds, succs, piece_of)
    members: dict[int, set[str]] = {}
    for node_id, k in piece_of.items():
        members.setdefault(k, set()).add(node_id)
    pieces = []
    for k in sorted(members):
        exits = [path[i] for i in cuts if piece_of[path[i]] == k] or [
            n for n in reversed(path) if piece_of.get(n) == k][:1]  # fmt: skip
        pieces.append(_piece(graph, members[k], exits[0], into, rank))
    return pieces


def _reachable(starts: Iterable[str], links: dict[str, list[str]]) -> set[str]:
    seen, todo = set(starts), list(starts)
    while todo:
        for nxt in links[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _attach_side_nodes(order, preds, succs, piece_of: dict[str, int]) -> None:
    """Nodes off the main path (a Constant, a side branch) join the piece they touch, when
    their whole connected cluster touches just that one."""
    seen: set[str] = set()
    for start in order:
        if start in piece_of or start in seen:
            continue
        cluster, touched, todo = {start}, set(), [start]
        while todo:
            nid = todo.pop()
            for nxt in preds[nid] + succs[nid]:
                if nxt in piece_of:
                    touched.add(piece_of[nxt])
                elif nxt not in cluster:
                    cluster.add(nxt)
                    todo.append(nxt)
        seen |= cluster
        if len(touched) == 1:
            piece = touched.pop()
            for nid in cluster:
                piece_of[nid] = piece


def _piece(graph: Graph, members: set[str], exit_id: str, into: dict[str, list],
           rank: dict[str, int]) -> Piece:  # fmt: skip
    """A piece with its nodes in canonical order: back from its exit through input ports in
    port order, then any node that did not lead there, in graph order."""
    nodes = graph.nodes
    feeds = {n: list(into.get(n, ())) for n in members}
    for n in feeds:
        inputs = nodes[n].inputs
        feeds[n].sort(key=lambda e, inputs=inputs: inputs.index(e.dst_port)
                      if e.dst_port in inputs else len(inputs))  # fmt: skip
    ranked: dict[str, int] = {}
    stack: list[tuple[str, bool]] = [(exit_id, False)]
    while stack:  # post-order, iterative
        nid, done = stack.pop()
        if nid in ranked:
            continue
        if done:
            ranked[nid] = len(ranked)
            continue
        stack.append((nid, True))
        stack += [(e.src_node, False) for e in reversed(feeds[nid]) if e.src_node in members
                  and e.src_node not in ranked]  # fmt: skip
    for nid in sorted(members - ranked.keys(), key=rank.__getitem__):
        ranked[nid] = len(ranked)
    listed = sorted(ranked, key=ranked.__getitem__)
    if any(nodes[n].type in _ENDS for n in listed):
        return Piece(listed, None, [nodes[n].type for n in listed])
    signature = []
    for nid in listed:
        refs = []
        for e in feeds[nid]:
            if e.src_node in members:
                refs.append((e.dst_port, ranked[e.src_node], e.src_port))
            else:
                refs.append((e.dst_port, "outside", e.src_port))
        signature.append((_kind(nodes[nid]), _shape_params(nodes[nid]), tuple(refs)))
    return Piece(listed, tuple(signature), [_token(nodes[n]) for n in listed])


def _kind(node: Node) -> tuple:
    if node.type == COMPOSITE:
        return (COMPOSITE, node.definition, node.inputs, node.outputs)
    return (node.type, node.inputs, node.outputs)


def _shape_params(node: Node) -> tuple:
    """The hyper-parameters that shape what a node computes, its sizes left out."""
    params = dict(node.params)
    if params.get("group", 1) not in (None, 1) and params.get("group") == params.get(
            "in_channels"):  # fmt: skip
        params["group"] = "depthwise"
    if node.type == "Constant" and isinstance(params.get("shape"), tuple):
        params["shape"] = len(params["shape"])  # its rank, not its sizes
    return tuple(sorted((k, repr(v)) for k, v in params.items() if k not in SIZES))


def _side_loops(graph: Graph, pieces: list[Piece]) -> list[tuple[set[int], set[int]]]:
    """For each cluster of nodes outside every piece: the pieces feeding it and those it
    feeds. A block holding one of each would be fed by what it feeds: a loop."""
    piece_of = {nid: k for k, p in enumerate(pieces) for nid in p.nodes}
    links: dict[str, list[str]] = {}
    for e in graph.edges.values():
        links.setdefault(e.src_node, []).append(e.dst_node)
        links.setdefault(e.dst_node, []).append(e.src_node)
    cluster_of: dict[str, int] = {}
    for start in graph.nodes:
        if start in piece_of or start in cluster_of:
            continue
        cluster_of[start], todo = len(set(cluster_of.values())), [start]
        while todo:
            for nxt in links.get(todo.pop(), ()):
                if nxt not in piece_of and nxt not in cluster_of:
                    cluster_of[nxt] = cluster_of[start]
                    todo.append(nxt)
    found: dict[int, tuple[set[int], set[int]]] = {}
    for e in graph.edges.values():
        if e.src_node in piece_of and e.dst_node in cluster_of:
            found.setdefault(cluster_of[e.dst_node], (set(), set()))[0].add(piece_of[e.src_node])
        elif e.src_node in cluster_of and e.dst_node in piece_of:
            found.setdefault(cluster_of[e.src_node], (set(), set()))[1].add(piece_of[e.dst_node])
    return list(found.values())


# ---- choosing the blocks ------------------------------------------------------------------


def choose_blocks(signatures: list, sizes: list[int], *, min_repeats: int = 2,
                  min_size: int = 2) -> list[tuple[int, int]]:  # fmt: skip
    """The blocks to group, as (first piece, number of pieces).

    Patterns of up to k pieces are taken greedily, most saving first, where grouping a
    pattern of m nodes found r times (not overlapping) saves r·(m − 1) − m drawn nodes;
    of the choices for k = 1 … MAX_UNIT the one saving most wins (ties: smaller k).
    """
    ids: dict = {}
    seq = [None if s is None else ids.setdefault(s, len(ids)) for s in signatures]
    best: tuple[int, list[tuple[int, int]]] = (0, [])
    for k in range(1, min(MAX_UNIT, len(seq)) + 1):
        saved, blocks = _greedy(seq, sizes, k, min_repeats, min_size)
        if saved > best[0]:
            best = (saved, blocks)
    return best[1]


def _greedy(seq, sizes, k_max, min_repeats, min_size) -> tuple[int, list[tuple[int, int]]]:
    used = [s is None for s in seq]
    saved, blocks = 0, []
    while True:
        found: dict[tuple, list[int]] = {}
        for k in range(1, k_max + 1):
            for i in range(len(seq) - k + 1):
                if any(used[i:i + k]):
                    continue
                key = tuple(seq[i:i + k])
                if _periodic(key):
                    continue
                starts = found.setdefault(key, [])
                if not starts or starts[-1] + k <= i:  # occurrences must not overlap
                    starts.append(i)
        choice, rank = None, (0, False, 0)
        for key, starts in found.items():
            size = sum(sizes[starts[0]:starts[0] + len(key)])
            gain = len(starts) * (size - 1) - size
            # Of equal savings, a block starts where a branch opens (a residual block ends
            # with the ReLU after its Add, not with the ReLU before it), then earliest.
            candidate = (gain, sizes[starts[0]] > 1, -starts[0])
            if len(starts) >= min_repeats and size >= min_size and candidate > rank:
                choice, rank = key, candidate
        if choice is None:
            return saved, blocks
        saved += rank[0]
        for i in found[choice]:
            blocks.append((i, len(choice)))
            used[i:i + len(choice)] = [True] * len(choice)


def _periodic(key: tuple) -> bool:
    """Whether `key` repeats a shorter pattern, wholly or in part: (B, R, B, R) and
    (R, B, R) are runs of (B, R), never a block of their own."""
    return any(key[p:] == key[:-p] for p in range(1, len(key)))


# ---- names ------------------------------------------------------------------------------


def _definition_names(pieces: list[Piece], chosen: list[tuple[int, int]]) -> dict[tuple, str]:
    """A legal name per pattern, from its node types: 'Conv_BN_ReLU_Conv_BN_Add_ReLU'."""
    names: dict[tuple, str] = {}
    for start, length in sorted(chosen):
        key = tuple(p.signature for p in pieces[start:start + length])
        if key in names:
            continue
        tokens = _compress([t for p in pieces[start:start + length] for t in p.types])
        name = ""
        for token in tokens:
            if len(name) + len(token) + 1 > MAX_DEFINITION:
                name += "_etc"
                break
            name = f"{name}_{token}" if name else token
        if not name.isidentifier():
            name = f"Block_{name}"
        base, n = name, 2
        while name in names.values():
            name, n = f"{base}{n}", n + 1
        names[key] = name
    return names


def _token(node: Node) -> str:
    if node.type == COMPOSITE:
        return node.definition
    name = node.type
    for long, short in _SHORT.items():
        name = name.replace(long, short)
    if name[-2:] in ("1d", "2d", "3d") and name[:-2]:
        name = name[:-2]
    return name


def _compress(tokens: list[str]) -> list[str]:
    """Runs of a repeated unit of up to 4 tokens written once with '×r': 'Conv_BN_x2'."""
    out, i = [], 0
    while i < len(tokens):
        best = (1, 1)  # (period, repeats)
        for p in range(1, 5):
            r = 1
            while tokens[i + r * p:i + (r + 1) * p] == tokens[i:i + p] and len(
                    tokens[i:i + p]) == p:  # fmt: skip
                r += 1
            if r > 1 and p * r > best[0] * best[1]:
                best = (p, r)
        p, r = best
        out += tokens[i:i + p] + ([f"x{r}"] if r > 1 else [])
        i += p * r
    return out
