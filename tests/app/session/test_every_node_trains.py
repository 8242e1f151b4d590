"""Every node type in the palette trains inside a network, end to end: fed what it takes,
followed by Flatten, Dense and a cross-entropy Output, a few steps of a real training
session on an NPZ data set of that shape change the Dense's weights, with a finite loss.
Types that take token ids (Embedding) are fed integers through an Input of an int dtype;
a node with several outputs (an LSTM's output, h_n, c_n) feeds the head its first one.

The families' own tests train each type in networks that make sense for it; this one
catches a type added later that nobody wired into training."""

import numpy as np
import pytest

from app.catalogue import CATALOGUE
from app.compiler import fitting_params, infer_shapes
from app.document import Graph, Project
from app.session import COMPLETED, EPOCH_COLUMNS, TrainingSession
from tests.app.compiler.compiler_samples import feed_batch, feed_for, input_params

# Types with no input (a Constant is trained beside an Input in test_train_op_nodes) and the
# boundaries themselves.
SKIPPED = {"Input", "Output", "Constant"}
TYPES = [t.name for t in CATALOGUE.types() if t.name not in SKIPPED and t.inputs]


def network(type_name: str, feed: tuple[int, ...]) -> Graph:
    graph = Graph()
    params = {**input_params(type_name), "shape": feed}
    source = graph.add_node(CATALOGUE.new_node("Input", params=params))
    node = graph.add_node(CATALOGUE.new_node(type_name,
                                             params=fitting_params(type_name, ("N", *feed))))
    graph.connect(source.id, "out", node.id, node.inputs[0])
    # Two-input ops (Sub, MatMul, Stack, …) get the input, halved, at their other required
    # inputs; optional ones (an LSTM's hx, attention's masks) stay open.
    optional = {p.name for p in CATALOGUE.get(type_name).inputs if p.optional}
    others = [port for port in node.inputs[1:] if port not in optional]
    if others:
        half = graph.add_node(CATALOGUE.new_node("Rescale", params={"scale": 0.5}))
        graph.connect(source.id, "out", half.id, "in")
        for port in others:
            graph.connect(half.id, "out", node.id, port)
    flatten = graph.add_node(CATALOGUE.new_node("Flatten"))
    graph.connect(node.id, node.outputs[0], flatten.id, "in")
    width = infer_shapes(graph).shape(flatten.id)[-1]
    dense = graph.add_node(CATALOGUE.new_node("Dense", name="head",
                                              params={"in_channels": width,
                                                      "out_channels": 2}))
    graph.connect(flatten.id, "out", dense.id, "in")
    output = graph.add_node(CATALOGUE.new_node("Output", params={"loss": "CrossEntropyLoss"}))
    graph.connect(dense.id, "out", output.id, "in")
    return graph


@pytest.mark.parametrize("type_name", TYPES)
def test_every_palette_node_trains_in_a_network(tmp_path, type_name):
    feed = feed_for(type_name)
    x = feed_batch(type_name, 24, seed=0)  # positive: Log and Sqrt too
    means = x.reshape(24, -1).mean(axis=1)
    y = means > np.median(means)
    np.savez(tmp_path / "data.npz", x=x, y=y.astype(np.int64))
    training = {"dataset": {"npz": "data.npz", "x_key": "x", "y_key": "y"},
                "batch_size": 8, "epochs": 2, "validation_fraction": 0.25, "seed": 0}
    project = Project(graph=network(type_name, feed), name=type_name, training=training)
    session = TrainingSession(project, folder=tmp_path)
    before = session.compiled.parameters()["head.weight"].asnumpy().copy()
    result = session.run()
    assert result.reason == COMPLETED, result.message
    losses = session.metrics.epochs.snapshot()[:, EPOCH_COLUMNS.index("loss")]
    assert len(losses) == 2 and np.isfinite(losses).all()
    assert not np.array_equal(session.compiled.parameters()["head.weight"].asnumpy(), before)
