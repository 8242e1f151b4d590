"""LiveShapes: after any edit its report equals a fresh `infer_shapes`, and it infers
again only what the edit can change (downstream of it), not the whole graph."""

from __future__ import annotations

import random

import pytest

from app.catalogue import CATALOGUE
from app.compiler import shapes as shapes_module
from app.compiler.shapes import LiveShapes, infer_shapes
from app.compiler.size import MAX_TOTAL_PARAMETERS
from app.document import DocumentError, Graph, editing
from app.document.data import graph_from_data, graph_to_data, restore_graph
from tests.app.compiler.compiler_samples import add, chain, grouped_mlp, mlp


def same(live: LiveShapes, graph: Graph) -> None:
    got, want = live.update(), infer_shapes(graph)
    assert got.edge_shapes == want.edge_shapes
    assert got.output_shapes == want.output_shapes
    assert got.errors == want.errors
    assert got.error_kinds == want.error_kinds


KINDS = ["Dense", "Dense", "ReLU", "Tanh", "Add", "Concat", "Flatten", "BatchNorm1d", "Output"]


def random_edit(graph: Graph, rng: random.Random, undo: list[dict]) -> None:
    nodes = list(graph.nodes.values())
    choice = rng.randrange(11)
    try:
        if choice == 0 or not nodes:
            kind = rng.choice(KINDS)
            params = {"in_channels": rng.choice([4, 8]), "out_channels": rng.choice([4, 8])}
            add(graph, kind, **(params if kind == "Dense" else {}))
        elif choice in (1, 2, 3):
            src, dst = rng.choice(nodes), rng.choice(nodes)
            if src.outputs and dst.inputs:
                graph.connect(src.id, rng.choice(src.outputs), dst.id, rng.choice(dst.inputs))
        elif choice == 4 and graph.edges:
            graph.disconnect(rng.choice(list(graph.edges)))
        elif choice == 5:
            graph.remove_node(rng.choice(nodes).id)
        elif choice in (6, 7):
            dense = [n for n in nodes if n.type == "Dense"]
            if dense:
                key = rng.choice(["in_channels", "out_channels"])
                graph.set_params(rng.choice(dense).id, {key: rng.choice([4, 8, 0])})
        elif choice == 8:
            node = rng.choice(nodes)
            graph.rename_node(node.id, rng.choice(["network", f"n{rng.randrange(99)}"]))
        elif choice == 9:
            undo.append(graph_to_data(graph))
        elif choice == 10 and undo:
            restore_graph(graph, undo.pop())
    except DocumentError:
        pass  # the document refused it: nothing changed


@pytest.mark.parametrize("seed", range(6))
def test_after_every_random_edit_the_report_equals_a_fresh_inference(seed):
    rng = random.Random(seed)
    graph = mlp((4, 8, 8, 4))
    live = LiveShapes(graph)
    same(live, graph)
    undo: list[dict] = []
    partial = 0
    for _ in range(150):
        random_edit(graph, rng, undo)
        if rng.random() < 0.7:  # sometimes several edits come before the next update
            same(live, graph)
            partial += live.touched is not None
    same(live, graph)
    assert partial > 50  # most updates were partial, not a fresh start


def test_edits_inside_a_composite_and_grouping_keep_the_report_exact():
    graph, composite_id = grouped_mlp()
    live = LiveShapes(graph)
    same(live, graph)
    composite = graph.node(composite_id)
    inner = next(n for n in composite.subgraph.nodes.values() if n.type == "Dense")
    composite.subgraph.set_params(inner.id, {"out_channels": 5})
    same(live, graph)
    editing.ungroup(graph, composite.id)
    same(live, graph)
    dense = graph.node_named("dense1")
    editing.group(graph, [dense.id, graph.edges_from(dense.id)[0].dst_node])
    same(live, graph)
    grouped = next(n for n in graph.nodes.values() if n.subgraph is not None)
    first = next(n for n in grouped.subgraph.nodes.values() if n.type == "Dense")
    grouped.subgraph.set_params(first.id, {"out_channels": 3})
    same(live, graph)


def test_the_parameter_cap_moves_with_the_total():
    graph = mlp((4, 8, 4))
    live = LiveShapes(graph)
    same(live, graph)
    dense = [n for n in graph.nodes.values() if n.type == "Dense"]
    side = int(MAX_TOTAL_PARAMETERS ** 0.5) + 10
    graph.set_params(dense[0].id, {"in_channels": side, "out_channels": side})
    same(live, graph)
    assert live.report.errors  # over the cap: the largest node says so
    graph.set_params(dense[0].id, {"in_channels": 4, "out_channels": 8})
    same(live, graph)
    assert live.report.ok


def long_chains(chains: int, length: int = 10) -> Graph:
    graph = Graph()
    for _ in range(chains):
        nodes = [add(graph, "Input", shape=(16,))]
        for i in range(length - 2):
            nodes.append(add(graph, "Dense", in_channels=16, out_channels=16) if i % 2 == 0
                         else add(graph, "ReLU"))
        chain(graph, *nodes)
    chain(graph, nodes[-1], add(graph, "Output"))
    return graph


def inferred_nodes(monkeypatch) -> list[str]:
    """From now on, the id of every node inferred (at any level), in order."""
    seen: list[str] = []
    original = shapes_module._Inference.node

    def counting(self, node, *args):
        seen.append(node.id)
        return original(self, node, *args)

    monkeypatch.setattr(shapes_module._Inference, "node", counting)
    return seen


def test_an_edit_infers_only_the_nodes_downstream_of_it(monkeypatch):
    graph = long_chains(100)  # 1,000 nodes
    live = LiveShapes(graph)
    live.update()
    seen = inferred_nodes(monkeypatch)
    first = next(n for n in graph.nodes.values() if n.type == "Dense")
    graph.set_params(first.id, {"out_channels": 24})
    live.update()
    # The edited Dense, then the ReLU after it (its shape changed), then the next Dense,
    # whose input no longer fits (an error, no output): nothing further needs inferring.
    assert 1 <= len(seen) <= 9 and first.id in seen
    assert live.touched is not None and first.id in live.touched[0]
    assert len(live.touched[0]) <= 9
    same(live, graph)
    seen.clear()
    graph.move_node(first.id, (500.0, 500.0))
    live.update()
    assert seen == [] and live.touched == (set(), set())


def test_an_edit_costs_the_same_in_a_small_and_a_large_graph(monkeypatch):
    """The work of one edit does not grow with the graph (counted, not timed)."""
    counts = []
    for chains in (10, 400):
        graph = long_chains(chains)
        live = LiveShapes(graph)
        live.update()
        seen = inferred_nodes(monkeypatch)
        dense = [n for n in graph.nodes.values() if n.type == "Dense"][len(graph) // 20]
        graph.set_params(dense.id, {"out_channels": 8})
        live.update()
        monkeypatch.undo()
        counts.append(len(seen))
        same(live, graph)
    assert counts[0] == counts[1] > 0


def test_closing_stops_following_the_graph():
    graph = mlp((4, 8, 4))
    live = LiveShapes(graph)
    live.update()
    live.close()
    before = dict(live.report.edge_shapes)
    dense = next(n for n in graph.nodes.values() if n.type == "Dense")
    graph.set_params(dense.id, {"out_channels": 6})
    assert live.update().edge_shapes == before
    assert CATALOGUE is live.catalogue


@pytest.mark.parametrize("seed", range(4))
def test_a_connection_check_from_the_kept_report_says_what_a_full_check_says(seed):
    from app.compiler.shapes import check_connection, fitting_params

    rng = random.Random(100 + seed)
    graph = mlp((4, 8, 8, 4))
    live = LiveShapes(graph)
    undo: list[dict] = []
    asked = refused = 0
    for _ in range(120):
        random_edit(graph, rng, undo)
        nodes = list(graph.nodes.values())
        for _ in range(3):
            src, dst = rng.choice(nodes), rng.choice(nodes)
            if not (src.outputs and dst.inputs):
                continue
            ends = (src.id, rng.choice(src.outputs), dst.id, rng.choice(dst.inputs))
            want = check_connection(graph, *ends)
            assert live.check_connection(*ends) == want
            asked += 1
            refused += want is not None
            shape = live.update().shape(ends[0], ends[1])
            fit = fitting_params(dst.type, shape) if shape is not None else {}
            if fit and want is not None:  # as the canvas asks: with the receiver refitted
                copy = graph_from_data(graph_to_data(graph))
                copy.set_params(dst.id, fit)
                assert live.check_connection(*ends, fit=fit) == check_connection(copy, *ends)
        same(live, graph)  # asking changed nothing
    assert asked > 100 and 0 < refused < asked


def test_a_connection_check_infers_only_downstream_of_the_receiver(monkeypatch):
    graph = long_chains(100)
    live = LiveShapes(graph)
    live.update()
    seen = inferred_nodes(monkeypatch)
    relu = add(graph, "ReLU")
    live.update()
    seen.clear()
    dense = next(n for n in graph.nodes.values() if n.type == "Dense")
    assert live.check_connection(dense.id, "out", relu.id, "in") is None
    assert seen == [relu.id]
    narrow = add(graph, "Dense", in_channels=3, out_channels=2)
    live.update()
    reason = live.check_connection(relu.id, "out", narrow.id, "in")
    assert reason is None  # relu's input is unconnected: nothing known to refuse
    graph.connect(dense.id, "out", relu.id, "in")
    reason = live.check_connection(relu.id, "out", narrow.id, "in")
    assert reason is not None and "16" in reason
    assert live.check_connection(relu.id, "out", narrow.id, "in", fit={"in_channels": 16}) is None
