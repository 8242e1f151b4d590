"""How many numbers a network's Parameters hold, worked out from hyper-parameters alone.

Compiling allocates every Parameter, so a tiny file naming forty Dense 10000→10000
layers would ask for gigabytes; the total is checked against MAX_TOTAL_PARAMETERS
before anything is built (shape inference marks the largest node when it is over).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue import Catalogue, CatalogueError
from app.compiler import kinds
from app.document import BOUNDARY_TYPES, Graph, Node

# 200 MB of float32 weights; building them (initializers work in float64) peaks near 600 MB,
# so no file makes `cellwright info` need a gigabyte. Also below one layer's own cap
# (rules.MAX_WEIGHTS): a network is one layer at least.
MAX_TOTAL_PARAMETERS = 50_000_000


def parameter_count(node_type: str, values: Mapping[str, Any]) -> int:
    """Numbers in the Parameters of one node of a built-in type with these (parsed)
    hyper-parameter values; 0 for types without Parameters or unknown to this module."""
    if node_type == "Dense":
        c_in, c_out = values["in_channels"], values["out_channels"]
        return c_in * c_out + (c_out if values.get("has_bias", True) else 0)
    if node_type == "Conv2d":
        c_in, c_out, group = values["in_channels"], values["out_channels"], values["group"]
        kh, kw = _pair(values["kernel_size"])
        bias = c_out if values.get("has_bias", False) else 0
        return c_out * (c_in // max(group, 1)) * kh * kw + bias
    if node_type in ("BatchNorm1d", "BatchNorm2d"):
        return 4 * values["num_features"]  # gamma, beta, moving mean and variance
    return kinds.parameter_count(node_type, values)


def graph_parameters(graph: Graph, catalogue: Catalogue) -> tuple[int, Node | None, int]:
    """(Numbers in all Parameters at every level of `graph`, the node holding the most,
    how many it holds). Nodes whose hyper-parameters don't parse count 0 (they are
    refused on their own)."""
    total, largest, most = 0, None, 0
    for _, node in graph.walk():
        count = _node_parameters(node, catalogue)
        total += count
        if count > most or largest is None:
            largest, most = node, count
    return total, largest, most


def too_many(total: int, largest: Node, count: int, cap: int = MAX_TOTAL_PARAMETERS) -> str:
    """The refusal for a network over the cap, said on its largest node."""
    return (f"The network would hold {total:,} parameters in all, more than the {cap:,} "
            f"allowed ('{largest.name}' alone holds {count:,}); make the layers smaller.")


def _node_parameters(node: Node, catalogue: Catalogue) -> int:
    if node.is_composite or node.type in BOUNDARY_TYPES or node.type not in catalogue:
        return 0
    try:
        count = parameter_count(node.type, catalogue.get(node.type).values(node.params))
    except (CatalogueError, KeyError, TypeError, ValueError, ZeroDivisionError):
        return 0
    return count if isinstance(count, int) and count > 0 else 0


def _pair(value: Any) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    value = tuple(value)
    return value[0], value[-1]
