"""What op patterns read while matching: each tensor's producer and readers, constants, and
whether a group of nodes keeps its intermediate tensors to itself.

Shared by app.onnx_import.patterns and the sequence/attention pattern modules (which must
import it from here, not from patterns, so the package's imports form no circle).
"""

from __future__ import annotations

import numpy as np

from app.onnx_import.fold import Folded
from app.onnx_import.ir import OnnxNode

DOMAIN = "cellwright"


class Matcher:
    """What a pattern reads: producers, readers and constants of the node list."""

    def __init__(self, folded: Folded, nodes: list[OnnxNode]) -> None:
        self.folded, self.nodes = folded, nodes
        self.producer: dict[str, OnnxNode] = {}
        self.users: dict[str, list[OnnxNode]] = {}
        for node in nodes:
            for name in node.outputs:
                if name:
                    self.producer[name] = node
            for name in node.inputs:
                if name:
                    self.users.setdefault(name, []).append(node)
        self.outputs = set(folded.outputs)

    def const(self, name: str) -> np.ndarray | None:
        return self.folded.consts.get(name) if name else None

    def scalar(self, name: str) -> float | None:
        value = self.const(name)
        if value is None or value.size != 1 or not np.issubdtype(value.dtype, np.number):
            return None
        return float(value.reshape(-1)[0])

    def made_by(self, name: str, op: str) -> OnnxNode | None:
        node = self.producer.get(name)
        return node if node is not None and node.op == op and standard(node) else None

    def only_user(self, name: str, op: str | None = None) -> OnnxNode | None:
        """The one node reading `name` (of type `op`), when nothing else needs it."""
        readers = self.users.get(name, [])
        if len(readers) != 1 or name in self.outputs:
            return None
        node = readers[0]
        if op is not None and (node.op != op or not standard(node)):
            return None
        return node

    def private(self, group: list[OnnxNode]) -> bool:
        """Whether every tensor the group makes, but its last output, stays in the group."""
        inside = {id(n) for n in group}
        last = group[-1].outputs[0]
        for node in group:
            for name in node.outputs:
                if not name or name == last:
                    continue
                if name in self.outputs or any(id(u) not in inside
                                               for u in self.users.get(name, [])):
                    return False
        return True

    def rank(self, name: str) -> int | None:
        shape = self.folded.shapes.get(name)
        return None if shape is None else len(shape)

    def ordered(self, group: list[OnnxNode]) -> list[OnnxNode]:
        """`group` in graph order."""
        ids = {id(n) for n in group}
        return [n for n in self.nodes if id(n) in ids]


def standard(node: OnnxNode) -> bool:
    return node.domain in ("", "ai.onnx")


def other_input(node: OnnxNode, name: str) -> str | None:
    """The input of binary `node` that is not `name` (None when `name` is not an input)."""
    a, b = (node.inputs + ["", ""])[:2]
    if a == name:
        return b
    if b == name:
        return a
    return None


def fused(op: str, group: list[OnnxNode], inputs: list[str], **attrs) -> OnnxNode:
    last = group[-1]
    name = next((n.name for n in group if n.name and n.name.isidentifier()), last.name)
    return OnnxNode(op, name, inputs, [last.outputs[0]], attrs, DOMAIN)


def replace(nodes: list[OnnxNode], found: list[tuple[list[OnnxNode], OnnxNode]]
            ) -> list[OnnxNode]:  # fmt: skip
    """`nodes` with each (group, fused node) applied: the fused node takes the place of the
    group's last node in `nodes`, the rest of the group goes."""
    taken: set[int] = set()
    placed: dict[int, OnnxNode] = {}
    position = {id(n): i for i, n in enumerate(nodes)}
    for group, new in found:
        taken.update(id(n) for n in group)
        placed[id(max(group, key=lambda n: position[id(n)]))] = new
    return [placed.get(id(n), n) for n in nodes if id(n) not in taken or id(n) in placed]
