"""Repeated blocks along the main path become composites block1…blockN, and the network
computes exactly what it did before."""

from __future__ import annotations

from collections import Counter

import numpy as np

from app.compiler import compile_project
from app.document import COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Graph, Project, editing
from app.document.data import graph_from_data, graph_to_data
from app.onnx_import.blocks import group_repeats, main_path_pieces
from app.onnx_import.group_all import group_all
from engine import Tensor
from tests.app.onnx_import.graphs import (
    add,
    chain,
    crossings,
    encoder,
    left_to_right,
    link,
    overlaps,
    resnet,
)


def with_random_values(graph: Graph, seed: int = 0) -> Project:
    """The graph as a project whose every Parameter holds random values (variances > 0)."""
    project = Project(graph)
    rng = np.random.default_rng(seed)
    compiled = compile_project(project)
    for name, param in compiled.parameters().items():
        node_id, local = compiled.parameter_owner[name]
        values = rng.uniform(0.5, 1.5, param.shape) if "variance" in local else rng.normal(
            0.0, 0.5, param.shape)  # fmt: skip
        project.param_values.setdefault(node_id, {})[local] = values.astype(np.float32)
    return project


def predict(project: Project, *arrays: np.ndarray) -> np.ndarray:
    compiled = compile_project(project)
    assert sorted(compiled.loaded) == sorted(compiled.parameters())  # every value reached it
    compiled.network.set_train(False)
    return compiled.network(*(Tensor(a) for a in arrays)).asnumpy()


def composites(graph: Graph) -> list:
    return [n for n in graph.nodes.values() if n.type == COMPOSITE]


def inside_types(node) -> Counter:
    return Counter(n.type for n in node.subgraph.nodes.values()
                   if n.type not in ("SubgraphInput", "SubgraphOutput"))  # fmt: skip


def test_residual_blocks_are_grouped_in_path_order_and_compute_the_same():
    graph = resnet(stages=(2, 3))  # blocks: 2 plain, 1 with a conv shortcut, 2 plain
    project = with_random_values(graph)
    x = np.random.default_rng(1).normal(size=(2, 3, 8, 8)).astype(np.float32)
    before = predict(project, x)
    values = {nid: dict(v) for nid, v in project.param_values.items()}

    made = group_repeats(graph)

    blocks = composites(graph)
    assert [graph.node(i).name for i in made] == ["block1", "block2", "block3", "block4"]
    assert [n.id for n in blocks] == made  # in path order in the graph too
    assert {n.definition for n in blocks} == {"Conv_BN_ReLU_Conv_BN_Add_ReLU"}
    for block in blocks:  # each opens to the whole block, its skip inside
        assert inside_types(block) == Counter(Conv2d=2, BatchNorm2d=2, ReLU=2, Add=1)
        port = next(n for n in block.subgraph.nodes.values() if n.type == SUBGRAPH_INPUT)
        fed = {block.subgraph.node(e.dst_node).type for e in block.subgraph.edges_from(port.id)}
        assert fed == {"Conv2d", "Add"}
    # The block with a conv shortcut happens once: it stays as it was, between the others.
    shortcut = [n for n in graph.nodes.values() if n.type == "Conv2d"
                and n.params["kernel_size"] == 1]  # fmt: skip
    assert len(shortcut) == 1
    assert project.param_values == values  # the values stay with their nodes' ids
    np.testing.assert_allclose(predict(project, x), before, rtol=1e-6, atol=1e-6)
    compiled = compile_project(project)
    inner = graph.node(made[0]).subgraph.node_named("conv2d2")
    assert compiled.parameter_owner["block1.conv2d2.weight"] == (inner.id, "weight")


def test_both_kinds_of_residual_block_are_grouped_when_each_repeats():
    graph = resnet(stages=(2, 2, 2))
    made = group_repeats(graph)
    names = [graph.node(i).name for i in made]
    definitions = [graph.node(i).definition for i in made]
    assert names == [f"block{i}" for i in range(1, 7)]
    plain, wide = "Conv_BN_ReLU_Conv_BN_Add_ReLU", "Conv_BN_ReLU_Conv_BN_x2_Add_ReLU"
    assert definitions == [plain, plain, wide, plain, wide, plain]
    assert [n.type for n in graph.nodes.values()] == [
        "Input", "Conv2d", "BatchNorm2d", "ReLU", *[COMPOSITE] * 6,
        "AdaptiveAvgPool2d", "Flatten", "Dense", "Output"]  # fmt: skip


def test_transformer_like_layers_become_one_block_each():
    graph = encoder(layers=3)
    project = with_random_values(graph)
    x = np.random.default_rng(2).normal(size=(4, 6)).astype(np.float32)
    before = predict(project, x)
    made = group_repeats(graph)
    assert [graph.node(i).name for i in made] == ["block1", "block2", "block3"]
    for node_id in made:
        block = graph.node(node_id)
        assert block.definition == "LN_Dense_ReLU_Dense_Add"
        assert inside_types(block) == Counter(LayerNorm=1, Dense=2, ReLU=1, Add=1)
    np.testing.assert_allclose(predict(project, x), before, rtol=1e-6, atol=1e-6)


def test_a_layer_of_two_different_halves_is_one_block():
    """Attention-then-feed-forward style: two kinds of residual piece alternate, each
    followed by a LayerNorm; a layer is one block of both, not two blocks."""
    graph = Graph()
    x = chain(graph, add(graph, "Input", shape=(8,)),
              add(graph, "Dense", in_channels=8, out_channels=8))  # fmt: skip
    for _ in range(2):
        for inner in (("Dense", "Tanh"), ("Dense", "ReLU", "Dense")):
            h = chain(graph, x, *(add(graph, t, in_channels=8, out_channels=8)
                                  if t == "Dense" else add(graph, t) for t in inner))  # fmt: skip
            plus = add(graph, "Add")
            link(graph, h, plus, "x")
            link(graph, x, plus, "y")
            x = chain(graph, plus, add(graph, "LayerNorm", normalized_shape=(8,)))
    chain(graph, x, add(graph, "Output", loss="none"))
    made = group_repeats(graph)
    assert [graph.node(i).name for i in made] == ["block1", "block2"]
    assert inside_types(graph.node(made[0])) == Counter(
        Dense=3, Tanh=1, ReLU=1, Add=2, LayerNorm=2)  # fmt: skip
    assert graph.node(made[0]).definition == graph.node(made[1]).definition


def test_a_constant_used_by_one_block_goes_inside_it():
    graph = Graph()
    x = add(graph, "Input", shape=(4,))
    for _ in range(3):
        scaled = add(graph, "Mul")
        link(graph, chain(graph, x, add(graph, "Dense", in_channels=4, out_channels=4)),
             scaled, "x")  # fmt: skip
        link(graph, add(graph, "Constant", shape=(4,)), scaled, "y")
        plus = add(graph, "Add")
        link(graph, scaled, plus, "x")
        link(graph, x, plus, "y")
        x = plus
    chain(graph, x, add(graph, "Output", loss="none"))
    project = with_random_values(graph)
    sample = np.random.default_rng(3).normal(size=(3, 4)).astype(np.float32)
    before = predict(project, sample)
    made = group_repeats(graph)
    assert len(made) == 3
    assert "Constant" not in {n.type for n in graph.nodes.values()}
    assert all(inside_types(graph.node(i))["Constant"] == 1 for i in made)
    np.testing.assert_allclose(predict(project, sample), before, rtol=1e-6, atol=1e-6)


def test_grouped_graphs_are_laid_out_outside_and_in():
    graph = resnet(stages=(2, 2, 2))
    group_repeats(graph)
    for level in [graph] + [n.subgraph for n in composites(graph)]:
        assert not overlaps(level) and left_to_right(level) and crossings(level) == 0
    rows = {n.position[1] for n in graph.nodes.values()}
    assert rows == {0.0}  # outside, the blocks are one straight chain


def test_names_already_taken_are_skipped():
    graph = resnet(stages=(3,))
    graph.rename_node(graph.node_named("dense1").id, "block2")
    made = group_repeats(graph)
    assert [graph.node(i).name for i in made] == ["block1", "block3", "block4"]


def test_a_graph_without_repeats_is_left_alone():
    graph = Graph()
    chain(graph, add(graph, "Input", shape=(1, 8, 8)),
          add(graph, "Conv2d", in_channels=1, out_channels=4, kernel_size=3),
          add(graph, "ReLU"), add(graph, "MaxPool2d", kernel_size=2, stride=2),
          add(graph, "Flatten"), add(graph, "Dense", in_channels=64, out_channels=3),
          add(graph, "Tanh"), add(graph, "Output"))  # fmt: skip
    before = graph_to_data(graph)
    assert group_repeats(graph) == []
    assert graph_to_data(graph) == before
    graph = resnet(stages=(2, 3))  # four plain blocks: not enough for five
    before = graph_to_data(graph)
    assert group_repeats(graph, min_repeats=5) == []
    assert graph_to_data(graph) == before


MADE = (COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT)  # nodes grouping makes, with new ids


def described(graph: Graph) -> tuple:
    """Nodes (ids, names, types, ports) in order and edges by endpoints, at every level."""
    nodes = tuple((n.name if n.type in MADE else n.id, n.name, n.type, n.definition,
                   n.inputs, n.outputs, n.subgraph and described(n.subgraph)[0])
                  for n in graph.nodes.values())  # fmt: skip
    name = {n.id: n.name for n in graph.nodes.values()}
    edges = sorted((name[e.src_node], e.src_port, name[e.dst_node], e.dst_port)
                   for e in graph.edges.values())  # fmt: skip
    inner = tuple(described(n.subgraph) for n in graph.nodes.values() if n.subgraph)
    return nodes, tuple(edges), inner


def test_grouping_all_blocks_at_once_matches_grouping_them_one_by_one():
    graph = resnet(stages=(2, 3))
    pieces = main_path_pieces(graph)
    runs = [p.nodes for p in pieces if p.signature is not None and len(p.nodes) > 1]
    selections = [(nodes, "Block", f"block{i}") for i, nodes in enumerate(runs, 1)]
    one_by_one = graph_from_data(graph_to_data(graph))
    for nodes, definition, name in selections:
        editing.group(one_by_one, nodes, definition=definition, name=name)
    made = group_all(graph, selections)
    assert [graph.node(i).name for i in made] == ["block1", "block2", "block3", "block4",
                                                  "block5"]  # fmt: skip
    assert described(graph) == described(one_by_one)
