"""What changed between two runs: the network (nodes added or removed, hyper-parameters,
connections) and the training settings.

    network = summarise(project.graph)      # JSON: what a run record keeps of its network
    changes = diff(old_network, new_network, old_settings, new_settings)
    [change_text(c) for c in changes]       # "dense2.out_channels 32 → 64", ...

A change is a JSON dict {"kind", "what", "old", "new"}: kind "added" / "removed" (a
node: what is its path name, new/old its type), "param" (what is
"<node path>.<hyper-parameter>"), "connection" (what is "a.out → b.x"; old/new
None or the connection), "setting" (what is a training setting's key, e.g.
"optimizer", "learning_rate", "optimizer_options.momentum"). Node path names join the
names of enclosing composites with "/" ("block1/conv2"). Nodes are matched by id, so a
renamed node is one "renamed" change ("what" the old path, "new" the new name), not a
removal and an addition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.document.graph import Graph

__all__ = ["change_text", "diff", "summarise"]


def summarise(graph: Graph) -> dict[str, Any]:
    """What a run keeps of its network, as JSON."""
    raise NotImplementedError


def diff(old: Mapping[str, Any], new: Mapping[str, Any], old_settings: Mapping[str, Any],
         new_settings: Mapping[str, Any]) -> list[dict[str, Any]]:  # fmt: skip
    """The changes from `old` to `new` (networks from `summarise`) and their settings."""
    raise NotImplementedError


def change_text(change: Mapping[str, Any]) -> str:
    """One change in a line: "dense2.out_channels 32 → 64", "optimizer Adam → Momentum",
    "+ dropout1 (Dropout)", "− relu2 (ReLU)"."""
    raise NotImplementedError
