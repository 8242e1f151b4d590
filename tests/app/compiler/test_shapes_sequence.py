"""Embedding, positional encodings and Select: shapes agree with the engine, bad inputs are
refused at the node with the reason; number types flow through the graph (token ids into
Embedding, floats into float layers); the time-selection presets."""

from __future__ import annotations

import numpy as np
import pytest

from app.catalogue import CATALOGUE
from app.compiler import compile_project, infer_shapes
from app.compiler.dtypes import token_problem
from app.compiler.shapes import LiveShapes
from app.document import Graph, Project, editing
from engine import Tensor
from tests.app.compiler.compiler_samples import add, chain, engine_shape, shape_after


def tokens(length: int = 6, dtype: str = "int64", vocab: int = 10, size: int = 4):
    """input1 (N, length) ids → embedding1 (vocab → size); the graph and its nodes."""
    graph = Graph()
    source = add(graph, "Input", shape=(length,), dtype=dtype)
    embed = add(graph, "Embedding", vocab_size=vocab, embedding_size=size)
    chain(graph, source, embed)
    return graph, source, embed


@pytest.mark.parametrize("type_name, sample, params, expected", [
    ("PositionalEncoding", (7, 4), {}, ("N", 7, 4)),
    ("PositionalEncoding", (3, 5), {}, ("N", 3, 5)),
    ("LearnedPositionalEncoding", (7, 4), {"max_len": 7, "embedding_size": 4}, ("N", 7, 4)),
    ("Select", (7, 4), {}, ("N", 4)),
    ("Select", (7, 4), {"axis": 2, "index": 1}, ("N", 7)),
    ("Select", (3, 5, 2), {"axis": -2, "index": -5}, ("N", 3, 2)),
])
def test_shapes_agree_with_the_engine(type_name, sample, params, expected):
    shape, error = shape_after(type_name, sample, **params)
    assert (shape, error) == (expected, None)
    assert engine_shape(type_name, sample, **params) == (2, *expected[1:])


def test_embedding_adds_a_feature_axis_and_compiles_with_its_table():
    graph, source, embed = tokens()
    chain(graph, embed, add(graph, "Output", loss="none"))
    report = infer_shapes(graph)
    assert report.ok and report.shape(embed.id) == ("N", 6, 4)
    assert report.dtype(source.id) == "int64" and report.dtype(embed.id) == "float32"
    compiled = compile_project(Project(graph))
    assert compiled.input_dtypes == ["int64"]
    assert compiled.parameters()["embedding1.embedding_table"].shape == (10, 4)
    out = compiled.network(Tensor(np.array([[1, 2, 3, 4, 5, 9]] * 2)))
    assert out.shape == (2, 6, 4)


@pytest.mark.parametrize("type_name, sample, params, reason", [
    ("LearnedPositionalEncoding", (70, 4), {"max_len": 64, "embedding_size": 4},
     "LearnedPositionalEncoding holds positions for sequences of up to max_len 64 steps, but "
     "70 steps arrive ((N, 70, 4)); raise max_len to 70 or more."),
    ("LearnedPositionalEncoding", (7, 5), {"max_len": 8, "embedding_size": 4},
     "LearnedPositionalEncoding expects 4 features per step (embedding_size), gets 5 in "
     "(N, 7, 5)."),
    ("PositionalEncoding", (7,), {},
     "PositionalEncoding expects a sequence (N, T, E), batch first, gets (N, 7)."),
    ("Select", (7, 4), {"axis": 0}, "Select can't pick from the batch axis (0) of (N, 7, 4); "
     "use a sample axis, e.g. 1 for time in (N, T, F)."),
    ("Select", (7, 4), {"index": 7}, "Select: index 7 is outside the 7 entries along axis 1 "
     "of (N, 7, 4) (from -7 to 6)."),
    ("Select", (7, 4), {"axis": 3}, "Select: axis 3 is out of range for (N, 7, 4)."),
])
def test_bad_inputs_are_refused_at_the_node_with_the_reason(type_name, sample, params, reason):
    assert shape_after(type_name, sample, **params) == (None, reason)


def test_a_sequence_too_long_for_a_learned_encoding_is_refused_by_the_engine_too():
    cell = CATALOGUE.get("LearnedPositionalEncoding")
    graph = Graph()
    node = add(graph, cell.name, max_len=4, embedding_size=2)
    chain(graph, add(graph, "Input", shape=(4, 2)), node, add(graph, "Output", loss="none"))
    network = compile_project(Project(graph)).network
    with pytest.raises(ValueError, match="up to max_len 4 steps, but 5 arrive"):
        network(Tensor(np.zeros((1, 5, 2), np.float32)))


def test_embedding_refuses_float_input_and_float_layers_refuse_token_ids():
    graph, source, embed = tokens(dtype="float32")
    assert infer_shapes(graph).errors[embed.id] == (
        "Embedding needs integer token ids, but float32 arrives from input1; set the Input's "
        "dtype to int32 or int64 (token ids).")
    graph.set_param(source.id, "dtype", "int32")
    assert infer_shapes(graph).ok
    other = Graph()
    dense = add(other, "Dense", in_channels=6, out_channels=2)
    chain(other, add(other, "Input", shape=(6,), dtype="int64"), dense)
    assert infer_shapes(other).errors[dense.id] == (
        "Dense computes with float numbers, but int64 arrives from input1; token ids go "
        "through an Embedding first (or a Cast to float32).")


def test_number_types_pass_through_moving_ops_and_change_at_cast_and_embedding():
    graph = Graph()
    source = add(graph, "Input", shape=(3, 4), dtype="int32")
    flat, select = add(graph, "Flatten"), add(graph, "Select", axis=1, index=0)
    embed = add(graph, "Embedding", vocab_size=10, embedding_size=2)
    cast, tanh = add(graph, "Cast", dtype="float32"), add(graph, "Tanh")
    chain(graph, source, flat, select)
    chain(graph, select, cast, tanh)
    graph.connect(flat.id, "out", embed.id, "in")
    report = infer_shapes(graph)
    assert report.ok, report.errors
    assert [report.dtype(n.id) for n in (flat, select, embed, cast, tanh)] == \
        ["int32", "int32", "float32", "float32", "float32"]
    mixed = add(graph, "Add")
    graph.connect(flat.id, "out", mixed.id, "x")
    graph.connect(embed.id, "out", mixed.id, "y")
    assert infer_shapes(graph).errors[mixed.id].startswith(
        "Add needs inputs of one number type, gets int32 from flatten1 and float32 from "
        "embedding1")


def test_token_ids_reach_an_embedding_inside_a_composite():
    graph, source, embed = tokens()
    tanh = add(graph, "Tanh")
    chain(graph, embed, tanh)
    grouping = editing.group(graph, [embed.id], definition="Embed", name="embed")
    report = infer_shapes(graph)
    assert report.ok, report.errors
    (port,) = graph.node(grouping.node_id).outputs
    assert report.dtype(grouping.node_id, port) == "float32"
    graph.set_param(source.id, "dtype", "float64")
    inner = infer_shapes(graph).errors
    assert "Embedding needs integer token ids, but float64 arrives" in inner[embed.id]


def test_live_shapes_follow_a_change_of_dtype_downstream():
    graph, source, embed = tokens()
    live = LiveShapes(graph)
    assert live.update().ok
    graph.set_param(source.id, "dtype", "float32")
    report = live.update()
    assert embed.id in report.errors and embed.id in live.touched[0]
    assert report.errors == infer_shapes(graph).errors
    graph.set_param(source.id, "dtype", "int64")
    assert live.update().ok


def test_token_ids_above_the_vocabulary_are_refused_before_training():
    graph, _, embed = tokens(vocab=10)
    chain(graph, embed, add(graph, "Output", loss="none"))
    ids = np.array([[0, 3, 9, 2, 1, 1]] * 3)
    assert token_problem(graph, ids) is None
    assert token_problem(graph, ids + 3, "Text") == (
        "Text holds token id 12, but the Embedding 'embedding1' has vocab_size 10 (ids 0 to "
        "9); raise its vocab_size to 13 or more.")
    assert "token id -1" in token_problem(graph, ids - 1)
    assert "not whole" in token_problem(graph, ids + 0.5)
    float_graph = Graph()
    chain(float_graph, add(float_graph, "Input", shape=(6,)), add(float_graph, "Output"))
    assert token_problem(float_graph, ids + 30) is None


def test_the_time_presets_select_the_last_step_or_reduce_over_time():
    presets = {p.label: p for p in CATALOGUE.presets()}
    for label, expected in [("Last time step", ("N", 8)), ("Mean over time", ("N", 8)),
                            ("Max over time", ("N", 8))]:
        preset = presets[label]
        assert CATALOGUE.get(preset.type_name).category and preset.category == "Sequences"
        shape, error = shape_after(preset.type_name, (5, 8), **preset.params)
        assert (shape, error) == (expected, None), label
    last = presets["Last time step"]
    graph = Graph()
    node = add(graph, last.type_name, **last.params)
    chain(graph, add(graph, "Input", shape=(5, 3)), node, add(graph, "Output", loss="none"))
    network = compile_project(Project(graph)).network
    x = np.arange(30, dtype=np.float32).reshape(2, 5, 3)
    np.testing.assert_array_equal(network(Tensor(x)).asnumpy(), x[:, -1])
