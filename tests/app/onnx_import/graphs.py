"""Graphs shaped like imported models (built through the catalogue), for the layout, block
and big-window tests."""

from __future__ import annotations

import itertools

from app.catalogue import CATALOGUE
from app.document import Graph, Node
from app.onnx_import.layout import HEADER, ROW, node_size

# ---- how a layout looks -------------------------------------------------------------------


def port_point(graph: Graph, node_id: str, port: str, output: bool) -> tuple[float, float]:
    """Where an edge meets the node on the canvas (node_item.port_pos)."""
    node = graph.node(node_id)
    ports = node.outputs if output else node.inputs
    x, y = node.position
    return (x + node_size(node)[0] if output else x,
            y + HEADER + (ports.index(port) + 0.5) * ROW)  # fmt: skip


def crossings(graph: Graph) -> int:
    """Pairs of edges (as straight lines between their ports) that cross."""
    segments = [(port_point(graph, e.src_node, e.src_port, True),
                 port_point(graph, e.dst_node, e.dst_port, False))
                for e in graph.edges.values()]  # fmt: skip

    def side(a, b, c) -> float:
        return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])

    count = 0
    for (p, q), (r, s) in itertools.combinations(segments, 2):
        if {p, q} & {r, s}:
            continue  # edges sharing a port meet there; that is no crossing
        if side(p, q, r) * side(p, q, s) < 0 and side(r, s, p) * side(r, s, q) < 0:
            count += 1
    return count


def through_nodes(graph: Graph) -> list[tuple[str, str]]:
    """(edge's source, node) for each edge whose straight line passes through another node's
    box: drawn so, it would look connected to that node."""
    found = []
    for e in graph.edges.values():
        (x1, y1), (x2, y2) = (port_point(graph, e.src_node, e.src_port, True),
                              port_point(graph, e.dst_node, e.dst_port, False))  # fmt: skip
        for node in graph.nodes.values():
            if node.id in (e.src_node, e.dst_node):
                continue
            (x, y), (w, h) = node.position, node_size(node)
            if not (x1 < x + w and x < x2):
                continue
            # the line's height at the box's left and right edges (clipped to the segment)
            ys = [y1 + (y2 - y1) * (min(max(t, x1), x2) - x1) / (x2 - x1 or 1.0)
                  for t in (x, x + w)]  # fmt: skip
            if min(ys) < y + h and max(ys) > y:
                found.append((graph.node(e.src_node).name, node.name))
    return found


def overlaps(graph: Graph) -> list[tuple[str, str]]:
    """Pairs of nodes whose boxes overlap (sweeping left to right)."""
    boxes = sorted((*n.position, *node_size(n), n.name) for n in graph.nodes.values())
    found = []
    for i, (x, y, w, h, name) in enumerate(boxes):
        for x2, y2, _, h2, name2 in boxes[i + 1:]:
            if x2 >= x + w:
                break
            if y < y2 + h2 and y2 < y + h:
                found.append((name, name2))
    return found


def left_to_right(graph: Graph) -> bool:
    nodes = graph.nodes
    return all(nodes[e.src_node].position[0] < nodes[e.dst_node].position[0]
               for e in graph.edges.values())  # fmt: skip


# ---- graphs ------------------------------------------------------------------------------


def add(graph: Graph, type_name: str, name: str = "", **params) -> Node:
    return graph.add_node(CATALOGUE.new_node(type_name, name=name, params=params))


def link(graph: Graph, src: Node, dst: Node, port: str | None = None) -> None:
    graph.connect(src.id, src.outputs[0], dst.id, port or dst.inputs[0])


def chain(graph: Graph, start: Node, *nodes: Node) -> Node:
    """Connect start → each node in turn; returns the last."""
    for node in nodes:
        link(graph, start, node)
        start = node
    return start


def conv_bn(graph: Graph, x: Node, cin: int, cout: int, stride: int = 1,
            kernel: int = 3) -> Node:  # fmt: skip
    conv = add(graph, "Conv2d", in_channels=cin, out_channels=cout, kernel_size=kernel,
               stride=stride, pad_mode="same" if stride == 1 else "pad",
               padding=kernel // 2 if stride != 1 else 0)  # fmt: skip
    return chain(graph, x, conv, add(graph, "BatchNorm2d", num_features=cout))


def residual(graph: Graph, x: Node, cin: int, cout: int | None = None) -> Node:
    """Conv-BN-ReLU-Conv-BN, Add the skip (identity, or a strided 1×1 conv and BN when the
    channels change), ReLU."""
    cout = cout or cin
    stride = 1 if cout == cin else 2
    h = chain(graph, conv_bn(graph, x, cin, cout, stride), add(graph, "ReLU"))
    h = conv_bn(graph, h, cout, cout)
    skip = x if cout == cin else conv_bn(graph, x, cin, cout, stride, kernel=1)
    plus = add(graph, "Add")
    link(graph, h, plus, "x")
    link(graph, skip, plus, "y")
    return chain(graph, plus, add(graph, "ReLU"))


def resnet(stages: tuple[int, ...] = (2, 2), width: int = 4, side: int = 8) -> Graph:
    """Input → stem → stages of residual blocks (the first of each stage after the first
    doubles the channels through a conv shortcut) → pool, flatten, dense → Output."""
    graph = Graph()
    x = add(graph, "Input", shape=(3, side, side))
    x = chain(graph, conv_bn(graph, x, 3, width), add(graph, "ReLU"))
    channels = width
    for s, blocks in enumerate(stages):
        for b in range(blocks):
            wider = channels * 2 if s and not b else channels
            x = residual(graph, x, channels, wider)
            channels = wider
    chain(graph, x, add(graph, "AdaptiveAvgPool2d", output_size=1), add(graph, "Flatten"),
          add(graph, "Dense", in_channels=channels, out_channels=5),
          add(graph, "Output", loss="none"))  # fmt: skip
    return graph


def encoder(layers: int = 3, features: int = 8) -> Graph:
    """Input → Dense → layers × (LayerNorm, Dense, ReLU, Dense, Add the skip) → Dense → Output."""
    graph = Graph()
    x = chain(graph, add(graph, "Input", shape=(6,)),
              add(graph, "Dense", in_channels=6, out_channels=features))  # fmt: skip
    for _ in range(layers):
        h = chain(graph, x, add(graph, "LayerNorm", normalized_shape=(features,)),
                  add(graph, "Dense", in_channels=features, out_channels=2 * features),
                  add(graph, "ReLU"),
                  add(graph, "Dense", in_channels=2 * features, out_channels=features))  # fmt: skip
        plus = add(graph, "Add")
        link(graph, h, plus, "x")
        link(graph, x, plus, "y")
        x = plus
    chain(graph, x, add(graph, "Dense", in_channels=features, out_channels=3),
          add(graph, "Output", loss="none"))  # fmt: skip
    return graph
