"""What shape inference finds: a shape, a number type and perhaps a time axis per tensor,
and a reason per bad node."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.compiler.rules import Shape, text
from app.compiler.time_axes import label
from app.document import Node

# Kinds of error: something wrong, something missing (a proposed edge never causes that),
# and a composite marked for a bad node inside it (the inner node has the real reason).
WRONG = "wrong"
MISSING = "missing"
INSIDE = "inside"


@dataclass
class ShapeReport:
    """What `infer_shapes` found, at every level of the graph (ids are unique across levels).

    `edge_shapes` and `output_shapes` hold only the shapes that could be worked out (an
    edge after a bad node has none); `errors` holds one readable reason per bad node.
    A composite with a bad node inside gets an error too, naming that node.
    `error_kinds[node_id]` is WRONG, MISSING (an unconnected input) or INSIDE.
    `output_dtypes[node_id][port]` is the number type leaving it ('float32', 'int64', see
    app.compiler.dtypes); `time_axes[edge_id]` the axis of its tensor that is time, for
    the edges carrying a sequence (see app.compiler.time_axes).
    """

    edge_shapes: dict[str, Shape] = field(default_factory=dict)
    output_shapes: dict[str, dict[str, Shape]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    error_kinds: dict[str, str] = field(default_factory=dict)
    output_dtypes: dict[str, dict[str, str]] = field(default_factory=dict)
    time_axes: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def describe(self, edge_id: str) -> str:
        """The edge's shape as text, '(N, 256)', or '?' when it is unknown; a sequence
        names its time axis and features, '(N, T 20, F 8)' or '(T 20, N, F 8)'."""
        shape = self.edge_shapes.get(edge_id)
        if shape is None:
            return "?"
        time = self.time_axes.get(edge_id)
        return text(shape) if time is None else label(shape, time)

    def shape(self, node_id: str, port: str = "out") -> Shape | None:
        return self.output_shapes.get(node_id, {}).get(port)

    def dtype(self, node_id: str, port: str = "out") -> str | None:
        return self.output_dtypes.get(node_id, {}).get(port)

    def _fail(self, node: Node, message: str, kind: str = WRONG) -> None:
        self.errors.setdefault(node.id, message)
        self.error_kinds.setdefault(node.id, kind)
