"""Small graphs and comparisons shared by the document and project-file tests."""

from __future__ import annotations

import json

import numpy as np

from app.document import Graph, Node, Project
from app.document.data import graph_to_data


def dense(name: str = "", **params) -> Node:
    return Node("Dense", name, inputs=("in",), outputs=("out",), params=params)


def source(name: str = "") -> Node:
    return Node("Input", name, outputs=("out",), params={"shape": (2,), "dtype": "float32"})


def sink(name: str = "") -> Node:
    return Node("Output", name, inputs=("in",), params={"loss": "MSELoss"})


def add_node(name: str = "") -> Node:
    return Node("Add", name, inputs=("x", "y"), outputs=("out",))


def chain(graph: Graph, *nodes: Node) -> list[Node]:
    """Add the nodes and connect each one's `out` to the next one's first input."""
    added = [graph.add_node(n) for n in nodes]
    for a, b in zip(added, added[1:], strict=False):
        graph.connect(a.id, "out", b.id, b.inputs[0])
    return added


def mlp() -> tuple[Graph, list[Node]]:
    """input1 → dense1 → dense2 → output1."""
    graph = Graph()
    return graph, chain(graph, source(), dense(in_channels=2, out_channels=3), dense(), sink())


def canonical(graph: Graph) -> str:
    """Exact content, telling 1, 1.0 and true apart."""
    return json.dumps(graph_to_data(graph), sort_keys=True)


def connections(graph: Graph) -> set[tuple[str, str, str, str, str]]:
    """Edges by id and endpoints, order ignored."""
    return {(e.id, e.src_node, e.src_port, e.dst_node, e.dst_port) for e in graph.edges.values()}


def assert_same_values(a: dict, b: dict) -> None:
    """Parameter values equal bit for bit, with the same dtype and shape."""
    assert a.keys() == b.keys()
    for node_id in a:
        assert a[node_id].keys() == b[node_id].keys()
        for name, array in a[node_id].items():
            other = b[node_id][name]
            assert array.dtype == other.dtype and array.shape == other.shape
            assert np.ascontiguousarray(array).tobytes() == np.ascontiguousarray(other).tobytes()


def assert_same_project(a: Project, b: Project) -> None:
    assert canonical(a.graph) == canonical(b.graph)
    settings = [
        json.dumps([p.name, p.training, p.view, p.metadata], sort_keys=True) for p in (a, b)
    ]
    assert settings[0] == settings[1]
    assert a.live_hooks() == b.live_hooks()
    assert_same_values(a.live_param_values(), b.live_param_values())
