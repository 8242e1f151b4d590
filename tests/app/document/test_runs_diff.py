"""What changed between two runs, in lines a user reads: the network and the settings."""

import json

from app.catalogue import CATALOGUE
from app.document import editing
from app.document.run_diff import change_text, diff, show, summarise
from tests.app.session.session_samples import chain

SETTINGS = {"optimizer": "Adam", "learning_rate": 0.001, "batch_size": 32,
            "optimizer_options": {"beta1": 0.9}}  # fmt: skip


def mlp():
    return chain(
        ("Input", {"shape": (2,)}),
        ("Dense", {"in_channels": 2, "out_channels": 32}),
        ("ReLU", {}),
        ("Dense", {"in_channels": 32, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )


def lines(old_graph_summary, new_graph_summary, old=SETTINGS, new=SETTINGS):
    return [change_text(c) for c in diff(old_graph_summary, new_graph_summary, old, new)]


def test_a_summary_is_json_with_path_names_through_composites():
    graph = mlp()
    editing.group(graph, [graph.node_named("dense1").id, graph.node_named("relu1").id],
                  definition="Block")  # fmt: skip
    summary = summarise(graph)
    assert json.loads(json.dumps(summary)) == summary
    paths = {n["path"] for n in summary["nodes"].values()}
    assert {"block1", "block1/dense1", "block1/relu1", "dense2", "input1"} <= paths
    dense1 = graph.find(next(i for i, n in summary["nodes"].items()
                             if n["path"] == "block1/dense1"))[1]  # fmt: skip
    assert summary["nodes"][dense1.id]["params"]["out_channels"] == 32
    assert len(summary["edges"]) == sum(len(g.edges) for g in
                                        [graph] + [n.subgraph for _, n in graph.walk()
                                                   if n.subgraph is not None])  # fmt: skip


def test_the_same_network_and_settings_differ_in_nothing():
    graph = mlp()
    graph.move_node(graph.node_named("relu1").id, (999.0, 5.0))  # a move is no change
    before = summarise(graph)
    assert diff(before, summarise(graph), SETTINGS, dict(SETTINGS)) == []
    graph.move_node(graph.node_named("relu1").id, (0.0, 0.0))
    assert lines(before, summarise(graph)) == []


def test_a_width_change_reads_as_the_hyper_parameter_old_and_new():
    graph = mlp()
    before = summarise(graph)
    graph.set_params(graph.node_named("dense1").id, {"out_channels": 64})
    graph.set_params(graph.node_named("dense2").id, {"in_channels": 64})
    assert lines(before, summarise(graph)) == ["dense1.out_channels 32 \u2192 64",
                                               "dense2.in_channels 32 \u2192 64"]  # fmt: skip


def test_nodes_added_removed_and_renamed_are_matched_by_id():
    graph = mlp()
    before = summarise(graph)
    relu = graph.node_named("relu1")
    dense2 = graph.node_named("dense2")
    graph.remove_node(relu.id)
    dropout = graph.add_node(CATALOGUE.new_node("Dropout", params={"p": 0.2}))
    graph.connect(graph.node_named("dense1").id, "out", dropout.id, "in")
    graph.connect(dropout.id, "out", dense2.id, "in")
    graph.rename_node(dense2.id, "head")
    graph.set_params(dense2.id, {"has_bias": False})
    assert lines(before, summarise(graph)) == [
        "\u2212 relu1 (ReLU)",
        f"+ {dropout.name} (Dropout)",
        "renamed dense2 \u2192 head",
        "head.has_bias true \u2192 false",
    ]  # the connections of the added and removed node go with them


def test_a_rewired_connection_is_a_removal_and_an_addition():
    graph = chain(("Input", {"shape": (2,)}), ("ReLU", {}), ("Tanh", {}),
                  ("Output", {"loss": "MSELoss"}))  # fmt: skip
    before = summarise(graph)
    relu, tanh, output = (graph.node_named(n) for n in ("relu1", "tanh1", "output1"))
    graph.disconnect(graph.edge_into(output.id, "in").id)
    graph.connect(relu.id, "out", output.id, "in")
    assert lines(before, summarise(graph)) == ["\u2212 tanh1.out \u2192 output1.in",
                                               "+ relu1.out \u2192 output1.in"]  # fmt: skip
    assert tanh.id in graph


def test_grouping_moves_nodes_into_a_composite_without_renaming_them():
    graph = mlp()
    before = summarise(graph)
    editing.group(graph, [graph.node_named("dense1").id, graph.node_named("relu1").id],
                  definition="Block")  # fmt: skip
    changes = diff(before, summarise(graph), SETTINGS, SETTINGS)
    assert not [c for c in changes if c["kind"] == "renamed"]
    assert "+ block1 (Composite)" in [change_text(c) for c in changes]


def test_settings_changes_include_nested_options_and_unset_keys():
    new = {"optimizer": "Momentum", "learning_rate": 0.01, "batch_size": 64,
           "optimizer_options": {"beta1": 0.9, "momentum": 0.95}, "seed": 3}  # fmt: skip
    old = {**SETTINGS, "epochs": 10}
    network = summarise(mlp())
    assert lines(network, network, old, new) == [
        "optimizer Adam \u2192 Momentum",
        "learning_rate 0.001 \u2192 0.01",
        "batch_size 32 \u2192 64",
        "optimizer_options.momentum (unset) \u2192 0.95",
        "epochs 10 \u2192 (unset)",
        "seed (unset) \u2192 3",
    ]


def test_values_that_print_alike_but_differ_are_a_change_and_long_ones_are_cut():
    network = summarise(mlp())
    same_looking = lines(network, network, {"x": 1}, {"x": 1.0})
    assert same_looking == ["x 1 \u2192 1"]  # 1 and 1.0 are saved differently
    assert show(list(range(100))).endswith("\u2026") and len(show(list(range(100)))) == 48
    assert show(True) == "true" and show(None) == "none" and show(1e-7) == "1e-07"
    assert show({"builtin": "spirals"}) == '{"builtin": "spirals"}'


def test_a_damaged_summary_or_change_never_raises():
    assert diff({"nodes": "x"}, {"edges": [1, [2]]}, None, []) == []
    assert diff({}, {"nodes": {"a": {"path": 5}}}, {}, {}) == [
        {"kind": "added", "what": "5", "old": None, "new": "?"}]
    assert change_text({}) == "none none \u2192 none"
    assert change_text({"kind": "added", "what": None, "new": None}) == "+ none (none)"
