"""The Cells a compiled graph is made of: op Cells, HookBackward with settable hooks, GraphCell."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from engine import nn, ops

BackwardHook = Callable[[tuple], object]


class BackwardHooks:
    """Settable gradient hooks for a compiled network, keyed by edge id or HookBackward node id.

    `set(target, fn)` makes the gradient flowing back along that edge (or through that
    HookBackward node) pass through `fn(grad_tuple)`, with HookBackward's contract:
    return None to keep the gradient, or a Tensor / 1-tuple to replace it. Hooks can be
    set and removed at any time, also between steps; no recompile is needed. An edge
    with no hook costs one dict lookup per forward.
    """

    def __init__(self) -> None:
        self._hooks: dict[str, BackwardHook] = {}
        self._primitives: dict[str, ops.HookBackward] = {}

    def set(self, target: str, fn: BackwardHook) -> HookRemoval:
        if not callable(fn):
            raise TypeError(f"A backward hook must be callable, not {type(fn).__name__}.")
        self._hooks[target] = fn
        return HookRemoval(self, target, fn)

    def remove(self, target: str) -> None:
        self._hooks.pop(target, None)

    def get(self, target: str) -> BackwardHook | None:
        return self._hooks.get(target)

    def __contains__(self, target: object) -> bool:
        return target in self._hooks

    def __len__(self) -> int:
        return len(self._hooks)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._hooks))

    def clear(self) -> None:
        self._hooks.clear()

    def apply(self, target: str, x):
        """`x` wrapped in a HookBackward calling the hook now set for `target` (if any)."""
        if target not in self._hooks:
            return x
        primitive = self._primitives.get(target)
        if primitive is None:
            primitive = ops.HookBackward(lambda grad, t=target: self._relay(t, grad), target)
            self._primitives[target] = primitive
        return primitive(x)

    def _relay(self, target: str, grad: tuple):
        fn = self._hooks.get(target)
        return None if fn is None else fn(grad)


@dataclass(frozen=True)
class HookRemoval:
    """Handle returned by `BackwardHooks.set`; `.remove()` takes that hook away again."""

    hooks: BackwardHooks
    target: str
    fn: BackwardHook

    def remove(self) -> None:
        if self.hooks.get(self.target) is self.fn:
            self.hooks.remove(self.target)

    def __enter__(self) -> HookRemoval:
        return self

    def __exit__(self, *exc) -> bool:
        self.remove()
        return False


class Add(nn.Cell):
    def construct(self, x, y):
        return ops.add(x, y)


class Mul(nn.Cell):
    def construct(self, x, y):
        return ops.mul(x, y)


class MatMul(nn.Cell):
    def construct(self, x, y):
        return ops.matmul(x, y)


class Concat(nn.Cell):
    """Joins its inputs along `axis` (inputs in port order)."""

    def __init__(self, axis: int = 1):
        super().__init__()
        self.axis = axis

    def construct(self, *xs):
        return ops.concat(xs, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class Reshape(nn.Cell):
    """Gives each sample `shape` (the batch axis is kept)."""

    def __init__(self, shape: tuple = (-1,)):
        super().__init__()
        self.shape = tuple(shape)

    def construct(self, x):
        return ops.reshape(x, (x.shape[0], *self.shape))

    def extend_repr(self) -> str:
        return f"shape={self.shape}"


class HookBackward(nn.Cell):
    """Identity; in backward, the hook set for this node in `hooks` sees the gradient."""

    def __init__(self, hooks: BackwardHooks, node_id: str):
        super().__init__()
        self._hooks = hooks
        self._node_id = node_id

    def construct(self, x):
        return self._hooks.apply(self._node_id, x)


@dataclass(frozen=True)
class Step:
    """One node run by a GraphCell: its Cell's attribute name, where its inputs come from
    (value key and edge id, per connected input port), the value keys its outputs go to,
    and `keywords`: input ports passed by name (those after an unconnected optional port)."""

    attr: str
    inputs: tuple[tuple[tuple[str, str], str], ...]
    outputs: tuple[tuple[str, str], ...]
    keywords: tuple[str, ...] = ()


class GraphCell(nn.Cell):
    """A compiled graph: sub-Cells named after the nodes, run in topological order.

    `inputs` are the value keys its arguments fill (node id, port), `outputs` the
    (value key, edge id) pairs it returns (one value, or a tuple for several). Values
    crossing an edge pass through `hooks.apply(edge_id, ...)`, so a backward hook can be
    set on any edge later. A network with several Output nodes gives only output `pick`
    (the one training fits) unless `pick` is None: then all of them, as a tuple.
    """

    def __init__(self, hooks: BackwardHooks, steps: Sequence[Step],
                 inputs: Sequence[tuple[str, str]],
                 outputs: Sequence[tuple[tuple[str, str], str]],
                 definition: str = "GraphCell"):
        super().__init__()
        self._hooks = hooks
        self._steps = tuple(steps)
        self._inputs = tuple(inputs)
        self._outputs = tuple(outputs)
        self._definition = definition
        self.pick: int | None = None

    def construct(self, *args):
        if len(args) != len(self._inputs):
            raise TypeError(f"{self._definition} takes {len(self._inputs)} input(s), "
                            f"got {len(args)}")
        values = dict(zip(self._inputs, args, strict=True))
        hooks = self._hooks if len(self._hooks) else None
        for step in self._steps:
            args = self._along(step.inputs, values, hooks)
            if step.keywords:
                split = len(args) - len(step.keywords)
                out = getattr(self, step.attr)(*args[:split],
                                               **dict(zip(step.keywords, args[split:],
                                                          strict=True)))
            else:
                out = getattr(self, step.attr)(*args)
            if len(step.outputs) == 1:
                values[step.outputs[0]] = out
            else:
                values.update(zip(step.outputs, out, strict=True))
        result = self._along(self._outputs, values, hooks)
        if self.pick is not None and len(result) > 1:
            return result[self.pick]
        return result[0] if len(result) == 1 else tuple(result)

    @staticmethod
    def _along(sources, values: dict, hooks: BackwardHooks | None) -> list:
        """The values crossing these (value key, edge id) edges, through any edge hook."""
        if hooks is None:
            return [values[key] for key, _ in sources]
        return [hooks.apply(edge, values[key]) for key, edge in sources]

    def extend_repr(self) -> str:
        return self._definition


def _reserved() -> frozenset[str]:
    """Names a node can't have: its Cell would overwrite something the engine uses."""
    cell = GraphCell(BackwardHooks(), (), (), ())
    return frozenset(dir(cell)) | frozenset(cell.__dict__)


RESERVED_NAMES = _reserved()
