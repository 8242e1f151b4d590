"""What Copy puts aside: the nodes' data and their Parameter values, for Paste and Duplicate."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from app.document import Graph, editing


@dataclass(frozen=True)
class Clipping:
    """Copied nodes (document copy data), their Parameter values by old id, and their corner."""

    data: dict
    values: dict[str, dict[str, np.ndarray]]
    corner: tuple[float, float]  # top-left of the copied nodes' positions

    @property
    def count(self) -> int:
        return len(self.data.get("nodes", ()))


def clip(graph: Graph, node_ids: Iterable[str], values: Mapping[str, Mapping]) -> Clipping | None:
    """Copy the nodes (and, for composites, everything inside) with private value copies."""
    data = editing.copy(graph, node_ids)
    if not data["nodes"]:
        return None
    ids = set()
    for node in data["nodes"]:
        ids |= _ids_in(node)
    kept = {
        nid: {name: np.array(a, copy=True) for name, a in values[nid].items()}
        for nid in ids
        if nid in values
    }
    xs = [n["position"][0] for n in data["nodes"]]
    ys = [n["position"][1] for n in data["nodes"]]
    return Clipping(data, kept, (min(xs), min(ys)))


def _ids_in(node: Mapping) -> set[str]:
    found = {node["id"]}
    for inner in node.get("subgraph", {}).get("nodes", ()):
        found |= _ids_in(inner)
    return found
