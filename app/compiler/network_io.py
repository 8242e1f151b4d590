"""The network's Input and Output nodes in the order the compiled network takes and gives them.

`compile_project` feeds the network one batch per Input node and returns what reaches the
Output nodes, both in the graph's insertion order; `cellwright info` lists them in that
order and `cellwright predict` pairs its --input and --output files with them by it.
Training fits one of them, `trained_output`: the first with a loss, else the first.
"""

from __future__ import annotations

from app.catalogue import CATALOGUE, NO_LOSS
from app.document import Graph, Node


def input_nodes(graph: Graph) -> list[Node]:
    """The top level's Input nodes, in the order the network takes its arguments."""
    return [node for node in graph.nodes.values() if node.type == "Input"]


def output_nodes(graph: Graph) -> list[Node]:
    """The top level's connected Output nodes, in the order the network returns them."""
    return [node for node in graph.nodes.values()
            if node.type == "Output" and graph.edge_into(node.id, "in") is not None]


def trained_output(graph: Graph) -> Node | None:
    """The Output node training fits (and the Run dock's loss reads): the first, in graph
    order, whose loss is not 'none'; else the first. None when there is no Output node."""
    outputs = [node for node in graph.nodes.values() if node.type == "Output"]
    for node in outputs:
        try:
            loss = CATALOGUE.get("Output").values(node.params)["loss"]
        except Exception:  # a bad value is the compiler's to report, on that node
            continue
        if loss != NO_LOSS:
            return node
    return outputs[0] if outputs else None
