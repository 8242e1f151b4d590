"""Layout of imported graphs: left to right in layers, no needless crossings, the main path
of a residual network on one row, composites' insides too."""

from __future__ import annotations

import itertools
import random
import time

from app.document import Graph, editing
from app.onnx_import.layout import layout
from tests.app.onnx_import.graphs import (
    add,
    chain,
    crossings,
    left_to_right,
    link,
    overlaps,
    resnet,
    through_nodes,
)


def merging_tree(order: list[int]) -> Graph:
    """Input → three branches of lengths 2, 1 and 3 → merged pairwise by Adds → Output,
    the branches added in `order`: every insertion order has a crossing-free layout."""
    graph = Graph()
    source = add(graph, "Input", shape=(4,))
    ends = {}
    for b in order:
        ends[b] = chain(graph, source, *(add(graph, "Dense") for _ in range((2, 1, 3)[b])))
    first, second = add(graph, "Add"), add(graph, "Add")
    link(graph, ends[2], first, "x")
    link(graph, ends[0], first, "y")
    link(graph, first, second, "x")
    link(graph, ends[1], second, "y")
    chain(graph, second, add(graph, "Output"))
    return graph


def test_a_graph_with_a_crossing_free_layout_gets_one_whatever_order_it_was_built_in():
    for order in itertools.permutations(range(3)):
        graph = merging_tree(list(order))
        layout(graph)
        assert crossings(graph) == 0, order
        assert not overlaps(graph)
        assert left_to_right(graph)


def test_each_node_sits_one_column_right_of_its_longest_feed():
    graph = merging_tree([0, 1, 2])
    layout(graph)
    xs = sorted({n.position[0] for n in graph.nodes.values()})
    column = {n.name: xs.index(n.position[0]) for n in graph.nodes.values()}
    assert column["input1"] == 0
    assert column["add1"] == 4 and column["add2"] == 5 and column["output1"] == 6
    # The shortest branch (one Dense) is not stretched: it sits beside the input.
    short = [n for n in graph.nodes.values() if n.type == "Dense"
             and graph.edges_from(n.id)[0].dst_node == graph.node_named("add2").id]
    assert column[short[0].name] == 1


def test_a_residual_network_reads_left_to_right_with_its_shortcuts_clear():
    graph = resnet(stages=(2, 2, 2))
    layout(graph)
    shortcut = set()
    for node in graph.nodes.values():  # the strided 1×1 convs and their BatchNorms
        if node.type == "Conv2d" and node.params["kernel_size"] == 1:
            shortcut |= {node.id, graph.edges_from(node.id)[0].dst_node}
    # The Adds and the ReLUs between blocks keep row 0; an identity shortcut runs along it,
    # its block's convolutions a row aside; a strided block keeps its convolutions on row 0
    # and its shortcut's 1×1 convolution a row aside.
    joints = [n for n in graph.nodes.values() if n.type in ("Add", "Input", "Output")]
    assert {n.position[1] for n in joints} == {0.0}
    assert len(shortcut) == 4 and all(graph.node(i).position[1] != 0.0 for i in shortcut)
    level = {n.name for n in graph.nodes.values() if n.position[1] == 0.0}
    assert [(a, b) for a, b in through_nodes(graph) if a in level] == []  # shortcuts clear
    assert crossings(graph) == 0
    assert not overlaps(graph)
    assert left_to_right(graph)


def test_a_constant_sits_beside_the_node_it_feeds_not_in_the_first_column():
    graph = Graph()
    nodes = [add(graph, "Input", shape=(4,))] + [add(graph, "Dense") for _ in range(5)]
    chain(graph, *nodes)
    bias, plus = add(graph, "Constant", shape=(4,)), add(graph, "Add")
    link(graph, nodes[-1], plus, "x")
    link(graph, bias, plus, "y")
    chain(graph, plus, add(graph, "Output"))
    layout(graph)
    assert graph.node(bias.id).position[0] == graph.node(nodes[-1].id).position[0]
    assert crossings(graph) == 0 and not overlaps(graph)


def test_the_insides_of_composites_are_laid_out_too():
    graph = resnet(stages=(2,))
    convs = [n for n in graph.nodes.values() if n.type == "Conv2d"]
    block = graph.edges_from(convs[0].id)[0].dst_node  # stem conv → its BN: stem ReLU next
    stem_relu = graph.edges_from(block)[0].dst_node
    inside, todo = set(), [e.dst_node for e in graph.edges_from(stem_relu)]
    while todo:  # the first residual block: up to its closing ReLU
        nid = todo.pop()
        if nid in inside:
            continue
        inside.add(nid)
        if graph.node(nid).type != "ReLU" or all(
                graph.node(e.src_node).type != "Add" for e in graph.edges_of(nid)
                if e.dst_node == nid):  # fmt: skip
            todo += [e.dst_node for e in graph.edges_from(nid)]
    grouping = editing.group(graph, inside, definition="Block", name="block1")
    sub = graph.node(grouping.node_id).subgraph
    random.Random(0).shuffle(nodes := list(sub.nodes))
    sub.move_nodes({nid: (0.0, 0.0) for nid in nodes})
    layout(graph)
    assert not overlaps(sub) and not overlaps(graph)
    assert left_to_right(sub) and crossings(sub) == 0
    assert sub.node_named("in").position[1] == sub.node_named("out").position[1] == 0.0


def test_a_thousand_node_network_is_laid_out_quickly():
    graph = resnet(stages=(50, 50, 50))
    assert len(graph) > 1000
    start = time.perf_counter()
    layout(graph)
    seconds = time.perf_counter() - start
    print(f"layout of {len(graph)} nodes: {seconds * 1000:.0f} ms")
    assert not overlaps(graph) and left_to_right(graph)
