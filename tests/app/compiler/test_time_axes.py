"""Time axes on edges: a pass over the graph marks the tensors that are sequences, and their
edges read '(N, T 20, F 8)', or '(T 20, N, F 8)' once a Transpose puts time first; the
nodes that need the batch first refuse such a tensor with the reason."""

from __future__ import annotations

import numpy as np
import pytest

from app.compiler import compile_project, infer_shapes
from app.compiler.shapes import LiveShapes
from app.compiler.time_axes import label
from app.document import Graph, Project
from engine import Tensor
from tests.app.compiler.compiler_samples import add, chain


def labels(graph: Graph, report=None) -> dict[str, str]:
    """{source node name: its edge's label} (one edge per source in these graphs)."""
    report = report or infer_shapes(graph)
    return {graph.node(e.src_node).name: report.describe(e.id) for e in graph.edges.values()}


def test_the_label_names_time_and_features():
    assert label(("N", 20, 8), 1) == "(N, T 20, F 8)"
    assert label((20, "N", 8), 0) == "(T 20, N, F 8)"
    assert label(("N", 20), 1) == "(N, T 20)"


def test_token_ids_embeddings_and_what_keeps_their_steps_show_the_time_axis():
    graph = Graph()
    chain(graph, add(graph, "Input", shape=(6,), dtype="int64"),
          add(graph, "Embedding", vocab_size=9, embedding_size=4),
          add(graph, "PositionalEncoding"), add(graph, "Dense", in_channels=4, out_channels=3),
          add(graph, "ReLU"), add(graph, "Select"), add(graph, "Output", loss="none"))
    assert labels(graph) == {
        "input1": "(N, T 6)", "embedding1": "(N, T 6, F 4)",
        "positionalencoding1": "(N, T 6, F 4)", "dense1": "(N, T 6, F 3)",
        "relu1": "(N, T 6, F 3)", "select1": "(N, 3)",
    }


def test_sequences_are_marked_back_from_a_sequence_node_and_nowhere_else():
    graph = Graph()
    chain(graph, add(graph, "Input", shape=(5, 3)), add(graph, "Dense", in_channels=3,
                                                        out_channels=4),
          add(graph, "PositionalEncoding"), add(graph, "Output", loss="none"))
    assert labels(graph) == {"input1": "(N, T 5, F 3)", "dense1": "(N, T 5, F 4)",
                             "positionalencoding1": "(N, T 5, F 4)"}
    plain = Graph()  # (N, C, L) data that never meets a sequence node stays as it is
    chain(plain, add(plain, "Input", shape=(5, 3)), add(plain, "Dense", in_channels=3,
                                                        out_channels=4), add(plain, "Output"))
    assert labels(plain) == {"input1": "(N, 5, 3)", "dense1": "(N, 5, 4)"}
    flat = Graph()  # a Flatten loses the time axis
    chain(flat, add(flat, "Input", shape=(5, 3)), add(flat, "PositionalEncoding"),
          add(flat, "Flatten"), add(flat, "Output"))
    assert labels(flat)["flatten1"] == "(N, 15)"


def time_major() -> tuple[Graph, dict]:
    """tokens → embedding (N, T, F) → Transpose (1, 0, 2) → (T, N, F) → dense1."""
    graph = Graph()
    n = {"input": add(graph, "Input", shape=(6,), dtype="int64"),
         "embed": add(graph, "Embedding", vocab_size=9, embedding_size=4),
         "swap": add(graph, "Transpose", perm=(1, 0, 2)),
         "dense": add(graph, "Dense", in_channels=4, out_channels=2)}
    chain(graph, *n.values())
    return graph, n


def test_a_transpose_puts_time_first_and_the_label_follows():
    graph, n = time_major()
    report = infer_shapes(graph)
    assert report.ok, report.errors
    assert report.shape(n["swap"].id) == (6, "N", 4)
    assert labels(graph, report) == {"input1": "(N, T 6)", "embedding1": "(N, T 6, F 4)",
                                     "transpose1": "(T 6, N, F 4)"}
    assert report.shape(n["dense"].id) == (6, "N", 2)


@pytest.mark.parametrize("type_name, params, expected", [
    ("Mean", {"axis": 0}, ("N", 2)), ("Select", {"axis": 0, "index": -1}, ("N", 2)),
    ("Transpose", {"perm": (1, 0, 2)}, ("N", 6, 2)), ("Tanh", {}, (6, "N", 2)),
    ("Max", {"axis": -1}, (6, "N")),
])
def test_time_first_tensors_go_through_ops_that_take_the_batch_anywhere(type_name, params,
                                                                        expected):
    graph, n = time_major()
    node = add(graph, type_name, **params)
    chain(graph, n["dense"], node)
    report = infer_shapes(graph)
    assert report.ok, report.errors
    assert report.shape(node.id) == expected


@pytest.mark.parametrize("type_name, params, reason", [
    ("Flatten", {}, "Flatten needs the batch axis first, (N, …), but gets (T 6, N, F 2); put a "
                    "Transpose (1, 0, 2) before it to bring the batch to the front."),
    ("Output", {}, "Output needs the batch axis first"),
    ("Reshape", {"shape": (12,)}, "Reshape needs the batch axis first"),
    ("Mean", {"axis": 1}, "Mean can't reduce over the batch axis (1); use a sample axis (any "
                          "but that one)."),
    ("Select", {"axis": 1}, "Select can't pick from the batch axis (1) of (6, N, 2)"),
])
def test_nodes_that_need_the_batch_first_refuse_a_time_first_tensor(type_name, params, reason):
    graph, n = time_major()
    node = add(graph, type_name, **params)
    chain(graph, n["dense"], node)
    assert infer_shapes(graph).errors[node.id].startswith(reason)


def test_a_time_first_network_runs_with_the_shapes_inferred():
    graph, n = time_major()
    back = add(graph, "Transpose", perm=(1, 0, 2))
    chain(graph, n["dense"], back, add(graph, "Output", loss="none"))
    compiled = compile_project(Project(graph))
    assert compiled.output_shape == ("N", 6, 2)
    ids = np.array([[1, 2, 3, 4, 5, 6], [0, 0, 8, 8, 1, 1], [3, 3, 3, 3, 3, 3]])
    out = compiled.network(Tensor(ids)).asnumpy()
    net = compiled.network
    table = net.embedding1.embedding_table.asnumpy()
    weight, bias = net.dense1.weight.asnumpy(), net.dense1.bias.asnumpy()
    np.testing.assert_allclose(out, table[ids] @ weight.T + bias, rtol=1e-6)


def test_live_shapes_keep_the_time_axes_current():
    graph = Graph()
    source, dense = add(graph, "Input", shape=(5, 3)), add(graph, "Dense", in_channels=3)
    chain(graph, source, dense)
    live = LiveShapes(graph)
    report = live.update()
    (edge,) = graph.edges.values()
    assert report.describe(edge.id) == "(N, 5, 3)"
    encode = add(graph, "PositionalEncoding")
    graph.connect(dense.id, "out", encode.id, "in")
    report = live.update()
    assert report.describe(edge.id) == "(N, T 5, F 3)" and edge.id in live.touched[1]
    assert report.time_axes == infer_shapes(graph).time_axes
    graph.remove_node(encode.id)
    assert live.update().describe(edge.id) == "(N, 5, 3)" and edge.id in live.touched[1]
