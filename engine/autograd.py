"""Define-by-run tape: graph nodes, recording state, `unbroadcast` and the backward pass.

Every differentiable op that runs while recording creates one `Node` holding its
gradient rule (a vjp function defined beside the forward, never inside it), the
arrays the rule needs, and one `(node, output_index)` link per input.  The
backward pass sorts the reachable nodes iteratively (Kahn's algorithm, no
recursion) and calls each rule once, accumulating gradients of tensors used
more than once.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable

import numpy as np

_counter = itertools.count()


class _State(threading.local):
    # Recording is per thread: a GUI thread running a prediction never records
    # the training thread's graph, and the other way round.
    recording = False


state = _State()


class HookError(RuntimeError):
    """An exception raised inside a hook or `bprop`; the original is chained as `__cause__`."""


class Node:
    """One recorded op (or a leaf: `vjp is None`).

    `vjp(grad, saved, needs)` returns one gradient (or None) per input; `grad`
    is an array for single-output nodes and a list (None for "no gradient") for
    nodes with several outputs.  `needs[i]` says whether input i wants a
    gradient, so rules can skip work nobody uses.
    """

    __slots__ = ("vjp", "saved", "parents", "n_out", "seq", "name", "shapes", "__weakref__")

    def __init__(self, vjp, saved, parents, name="", n_out=1, shapes=None):
        self.vjp = vjp
        self.saved = saved
        self.parents = parents
        self.n_out = n_out
        self.seq = next(_counter)
        self.name = name
        self.shapes = shapes  # output shapes/dtypes, needed to make zero grads for multi-output

    def __repr__(self) -> str:
        kind = "leaf" if self.vjp is None else self.name or "op"
        return f"<Node {kind} #{self.seq}>"


def leaf_node(name: str = "leaf") -> Node:
    return Node(None, None, (), name=name)


def is_recording() -> bool:
    return state.recording


class no_grad:
    """Context manager / decorator: ops inside record nothing."""

    def __enter__(self):
        self._prev = state.recording
        state.recording = False
        return self

    def __exit__(self, *exc):
        state.recording = self._prev
        return False

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        wrapper.__name__ = getattr(fn, "__name__", "wrapper")
        wrapper.__doc__ = fn.__doc__
        return wrapper


class enable_grad(no_grad):
    """Context manager: ops inside record (used by `grad` for its forward pass)."""

    def __enter__(self):
        self._prev = state.recording
        state.recording = True
        return self


def unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum `grad` back to `shape`, undoing NumPy broadcasting."""
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad.reshape(shape)


def _accumulate(grads: dict, node: Node, index: int, g) -> None:
    if node.n_out == 1:
        old = grads.get(node)
        grads[node] = g if old is None else old + g
    else:
        slots = grads.get(node)
        if slots is None:
            slots = grads[node] = [None] * node.n_out
        old = slots[index]
        slots[index] = g if old is None else old + g


def run_backward(
    roots: Iterable[tuple[Node, int, np.ndarray]],
    boundary: int = -1,
) -> dict:
    """Propagate gradients from `roots` down the graph.

    Returns a dict mapping every leaf node, and every node older than
    `boundary` (seq < boundary: outside the region being differentiated, used
    by Cells with backward hooks or `bprop`), to its gradient (an array, or a
    list for multi-output nodes).  Nodes are visited in a topological order
    computed iteratively, so a chain of any depth works.
    """
    grads: dict = {}
    root_nodes = []
    for node, index, g in roots:
        _accumulate(grads, node, index, g)
        root_nodes.append(node)

    # Discover the reachable region and count, for each node, how many
    # consumers will send it a gradient.
    pending: dict = {}
    seen = set(root_nodes)
    stack = list(seen)
    while stack:
        node = stack.pop()
        if node.vjp is None or node.seq < boundary:
            continue
        for link in node.parents:
            if link is None:
                continue
            parent = link[0]
            pending[parent] = pending.get(parent, 0) + 1
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)

    ready = [n for n in dict.fromkeys(root_nodes) if pending.get(n, 0) == 0]
    result: dict = {}
    while ready:
        node = ready.pop()
        g = grads.pop(node, None)
        if node.vjp is None or node.seq < boundary:
            if g is not None:
                result[node] = g
            continue
        parents = node.parents
        if g is not None and node.n_out > 1 and all(x is None for x in g):
            g = None
        if g is not None:
            needs = tuple(link is not None for link in parents)
            in_grads = node.vjp(g, node.saved, needs)
        else:
            in_grads = None
        for i, link in enumerate(parents):
            if link is None:
                continue
            parent, index = link
            if in_grads is not None:
                gi = in_grads[i]
                if gi is not None:
                    _accumulate(grads, parent, index, gi)
            left = pending[parent] - 1
            pending[parent] = left
            if left == 0:
                ready.append(parent)
    return result


def walk_region(outputs: Iterable[Node], boundary: int) -> list[tuple[Node, int]]:
    """Links `(node, output_index)` older than `boundary` that the graph below `outputs` uses.

    Used when a Cell is recorded as one node (backward hooks, `bprop`): these
    are the outside tensors its inside depends on (Parameters, captured
    values), which must become parents of that node so the outer backward
    orders them correctly.
    """
    external: dict = {}
    seen = set()
    stack = [n for n in outputs if n is not None]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for link in node.parents:
            if link is None:
                continue
            if link[0].seq < boundary:
                external[link] = None
            elif link[0] not in seen:
                stack.append(link[0])
    return sorted(external, key=lambda link: (link[0].seq, link[1]))


def grad_rule(fn: Callable) -> Callable:
    """Mark a function as a gradient rule (documentation aid; rules are plain functions)."""
    fn.__grad_rule__ = True
    return fn
