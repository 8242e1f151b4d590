"""Graphs built through the catalogue and document API, shared by the shape and compiler tests."""

from __future__ import annotations

import numpy as np

from app.catalogue import CATALOGUE
from app.compiler import compile_project, infer_shapes
from app.document import Graph, Node, Project, editing
from engine import Parameter, Tensor, nn
from tests.app.compiler import feeds_attention, feeds_recurrent, feeds_sequence


class Scale(nn.Cell):
    """Multiplies each feature by a learned scale."""

    def __init__(self, features: int = 2, start: float = 1.0):
        super().__init__()
        self.scale = Parameter(Tensor(np.full(features, start, np.float32)))

    def construct(self, x, bias=None, shift=None):
        out = x * self.scale
        out = out if bias is None else out + bias
        return out if shift is None else out - shift


def add(graph: Graph, type_name: str, name: str = "", **params) -> Node:
    return graph.add_node(CATALOGUE.new_node(type_name, name=name, params=params))


def chain(graph: Graph, *nodes: Node) -> list[Node]:
    """Connect each node's first output to the next node's first input."""
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, a.outputs[0], b.id, b.inputs[0])
    return list(nodes)


def mlp(sizes=(2, 16, 2), loss: str = "CrossEntropyLoss", activation: str = "Tanh") -> Graph:
    """input1 → dense1 → tanh1 → dense2 … → output1."""
    graph = Graph()
    nodes = [add(graph, "Input", shape=(sizes[0],))]
    for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
        nodes.append(add(graph, "Dense", in_channels=a, out_channels=b))
        if i < len(sizes) - 2:
            nodes.append(add(graph, activation))
    nodes.append(add(graph, "Output", loss=loss))
    chain(graph, *nodes)
    return graph


def cnn() -> Graph:
    """The SPEC's benchmark CNN on 1×28×28 images."""
    graph = Graph()
    chain(
        graph,
        add(graph, "Input", shape=(1, 28, 28)),
        add(graph, "Conv2d", in_channels=1, out_channels=8, kernel_size=3),
        add(graph, "ReLU"),
        add(graph, "MaxPool2d", kernel_size=2, stride=2),
        add(graph, "Conv2d", in_channels=8, out_channels=16, kernel_size=3, pad_mode="valid"),
        add(graph, "ReLU"),
        add(graph, "MaxPool2d", kernel_size=2, stride=2),
        add(graph, "Flatten"),
        add(graph, "Dense", in_channels=16 * 6 * 6, out_channels=10),
        add(graph, "Output"),
    )
    return graph


def branches() -> tuple[Graph, dict[str, Node]]:
    """input1 → a (Dense 2→4) and b (Dense 2→3) → concat1 → head (Dense 7→2) → output1,
    plus a skip: a → tanh1 → add1 ← a."""
    graph = Graph()
    n = {
        "input": add(graph, "Input", "input1", shape=(2,)),
        "a": add(graph, "Dense", "a", in_channels=2, out_channels=4),
        "b": add(graph, "Dense", "b", in_channels=2, out_channels=3),
        "tanh": add(graph, "Tanh"),
        "add": add(graph, "Add"),
        "concat": add(graph, "Concat", axis=1),
        "head": add(graph, "Dense", "head", in_channels=7, out_channels=2),
        "output": add(graph, "Output"),
    }
    c = graph.connect
    c(n["input"].id, "out", n["a"].id, "in")
    c(n["input"].id, "out", n["b"].id, "in")
    c(n["a"].id, "out", n["tanh"].id, "in")
    c(n["tanh"].id, "out", n["add"].id, "x")
    c(n["a"].id, "out", n["add"].id, "y")
    c(n["add"].id, "out", n["concat"].id, "x")
    c(n["b"].id, "out", n["concat"].id, "y")
    c(n["concat"].id, "out", n["head"].id, "in")
    c(n["head"].id, "out", n["output"].id, "in")
    return graph, n


def grouped_mlp() -> tuple[Graph, str]:
    """An MLP whose hidden layer and activation are grouped into composite 'block1'."""
    graph = mlp((2, 8, 2))
    inner = [graph.node_named("dense1").id, graph.node_named("tanh1").id]
    grouping = editing.group(graph, inner, definition="Block", name="block1")
    return graph, grouping.node_id


def shape_after(type_name: str, sample: tuple, **params):
    """(the node's output shape or None, its error or None) fed Input(sample)."""
    graph = Graph()
    node = add(graph, type_name, **params)
    chain(graph, add(graph, "Input", shape=sample), node, add(graph, "Output", loss="none"))
    report = infer_shapes(graph)
    return report.shape(node.id), report.errors.get(node.id)


def engine_shape(type_name: str, sample: tuple, **params) -> tuple:
    """The shape the compiled network really gives for a batch of 2 (in train mode, so
    channel dropout draws its mask too)."""
    graph = Graph()
    node = add(graph, type_name, **params)
    chain(graph, add(graph, "Input", shape=sample), node, add(graph, "Output", loss="none"))
    network = compile_project(Project(graph)).network
    network.set_train(True)
    return network(Tensor(np.random.default_rng(0).random((2, *sample), np.float32))).shape


# The sample shape (no batch axis) each node type is fed when tried on its own; others (3, 4).
FEEDS = {"Conv2d": (1, 6, 6), "MaxPool2d": (3, 6, 6), "AvgPool2d": (3, 6, 6),
         "BatchNorm2d": (8, 4, 4), "BatchNorm1d": (8,), "Dense": (1,), "Reshape": (2, 3),
         "MatMul": (3, 3), "Dropout2d": (3, 4, 4), "Dropout2dBprop": (3, 4, 4),
         "Dropout3d": (3, 2, 4, 4), "MaxPool3d": (2, 4, 4, 4), "AvgPool3d": (2, 4, 4, 4),
         "AdaptiveAvgPool2d": (3, 4, 4), "AdaptiveMaxPool2d": (3, 4, 4),
         "PixelShuffle": (8, 2, 2), "Conv3d": (2, 4, 4, 4), "Conv2dTranspose": (3, 4, 4),
         "GroupNorm": (8, 4, 4), "InstanceNorm2d": (8, 4, 4), "LRN": (8, 4, 4),
         **feeds_sequence.FEEDS, **feeds_recurrent.FEEDS, **feeds_attention.FEEDS}


# Types fed integer token ids, with their Input's dtype (floats for the others).
INT_INPUTS: dict[str, str] = {**feeds_sequence.INT_INPUTS}


def feed_for(type_name: str) -> tuple[int, ...]:
    return FEEDS.get(type_name, (3, 4))


def input_params(type_name: str) -> dict:
    """The Input node's params that feed a node of `type_name`: its sample shape and dtype."""
    return {"shape": feed_for(type_name), "dtype": INT_INPUTS.get(type_name, "float32")}


def feed_batch(type_name: str, batch: int, seed: int | None = None) -> np.ndarray:
    """A batch a node of `type_name` takes: ones (or, with `seed`, random values in (0.1,
    1.1)) as float32, or token ids as the Input's integer dtype (ones, or random ids)."""
    shape = (batch, *feed_for(type_name))
    dtype = INT_INPUTS.get(type_name)
    rng = None if seed is None else np.random.default_rng(seed)
    if dtype is not None:
        ids = np.ones(shape) if rng is None else rng.integers(0, feeds_sequence.TOKEN_IDS, shape)
        return ids.astype(dtype)
    values = np.ones(shape) if rng is None else rng.random(shape) + 0.1
    return values.astype(np.float32)
