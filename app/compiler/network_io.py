"""The network's Input and Output nodes in the order the compiled network takes and gives them.

`compile_project` feeds the network one batch per Input node and returns what reaches the
Output nodes, both in the graph's insertion order; `cellwright info` lists them in that
order and `cellwright predict` pairs its --input and --output files with them by it.
"""

from __future__ import annotations

from app.document import Graph, Node


def input_nodes(graph: Graph) -> list[Node]:
    """The top level's Input nodes, in the order the network takes its arguments."""
    return [node for node in graph.nodes.values() if node.type == "Input"]


def output_nodes(graph: Graph) -> list[Node]:
    """The top level's connected Output nodes, in the order the network returns them."""
    return [node for node in graph.nodes.values()
            if node.type == "Output" and graph.edge_into(node.id, "in") is not None]
