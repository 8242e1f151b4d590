"""Looking inside sequence layers while they learn: probe captures of attention and RNN layers.

RNN, LSTM, GRU and MultiheadAttention Cells have a `probe` attribute (None, or a callable
their forward and backward call with `(name, live_array)`: "weights" of an attention,
"l0.gates", "l0.hidden", "l0.grad_norms" of a recurrent layer). A `ProbeCapture` sets
it — through a `ProbeTap`, so that a pane and the health overlay can both listen to one
Cell — on the steps its hook is due (the session's capture stride, as `HookCapture`),
and on the training thread only copies the leading samples (at most `MAX_SAMPLES`, at
most `SAMPLE_LIMIT` numbers) of each array into a small preallocated ring: no
statistics, no lock, no Qt. The reader (a pane's GUI timer, the health overlay) calls
`summarise()`, which takes the newest intact copy of each name into `latest`, and polls
`version`.

An attention node may be a Transformer layer: its MultiheadAttention sub-Cells are
found by walking `cells_and_names()`, and each is probed under its dotted path
("self_attn/weights", "layers.1.multihead_attn/weights"). The tokens the sample is made
of come from a forward-pre hook on an Embedding Cell before the layer (`watch_tokens`),
copied at the same steps, so the panes can label the axes with the characters.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from app.document import Graph, Hook

PROBE_KINDS = ("attention", "recurrent")
ATTENTION_CLASSES = frozenset({"MultiheadAttention"})
RECURRENT_CLASSES = frozenset({"LSTM", "GRU", "RNN"})
# Node types that hold them (their catalogue names are the engine's class names).
ATTENTION_TYPES = ATTENTION_CLASSES | {
    "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
    "TransformerDecoder", "Transformer"}  # fmt: skip
RECURRENT_TYPES = RECURRENT_CLASSES
PROBE_TEXTS = {  # the context menu's entry and tip, per kind
    "attention": ("Look Inside: &Attention Weights",
                  "A pane with the attention map (query × key) of a layer, head and sample, "
                  "updating while training"),
    "recurrent": ("Look Inside: &Recurrent State",
                  "A pane with the hidden state over time (units × time) and the gate "
                  "activations of one sample, updating while training"),
}  # fmt: skip
MAX_SAMPLES = 8  # leading samples of the batch copied (the pane's sample choice)
SAMPLE_LIMIT = 1 << 16  # numbers copied per array and capture (one sample at least)
RING = 3  # copies per array waiting for the reader
TOKENS = "tokens"


def probe_kinds(node_type: str) -> tuple[str, ...]:
    """The probe panes a node of `node_type` has (none for most types)."""
    if node_type in ATTENTION_TYPES:
        return ("attention",)
    if node_type in RECURRENT_TYPES:
        return ("recurrent",)
    return ()


def probed_cells(cell: Any, kind: str) -> list[tuple[str, Any]]:
    """(dotted path, Cell) of each Cell under `cell` (itself included) that a probe of
    `kind` listens to: MultiheadAttention for 'attention', RNN/LSTM/GRU for 'recurrent'."""
    classes = ATTENTION_CLASSES if kind == "attention" else RECURRENT_CLASSES
    walk = getattr(cell, "cells_and_names", None)
    found = walk() if walk is not None else [("", cell)]
    return [(name, c) for name, c in found if hasattr(c, "probe")  # (a node's subclass too)
            and any(k.__name__ in classes for k in type(c).__mro__)]  # fmt: skip


def token_node(graph: Graph, node_id: str) -> str | None:
    """The id of the Embedding node whose token ids reach `node_id` (following the first
    input back, at any depth inside the graph `node_id` is in), or None."""
    found = graph.find(node_id)
    if found is None:
        return None
    level = found[0]
    seen: set[str] = set()
    current = node_id
    while current not in seen:
        seen.add(current)
        edges = [e for e in level.edges.values() if e.dst_node == current]
        if not edges:
            return None
        # An attention's query (its first port), else any input.
        edges.sort(key=lambda e: (e.dst_port not in ("query", "in", "input"), e.dst_port))
        current = edges[0].src_node
        node = level.nodes.get(current)
        if node is None:
            return None
        if node.type == "Embedding":
            return current
    return None


class ProbeTap:
    """What a Cell's `probe` is set to: hands each `(name, array)` to its listeners.

    Listeners are added and removed (any thread) under `TAP_LOCK` by replacing the tuple;
    the training thread reads it without a lock.
    """

    def __init__(self) -> None:
        self.listeners: tuple[Callable[[str, Any], None], ...] = ()

    def __call__(self, name: str, array: Any) -> None:
        for listener in self.listeners:
            listener(name, array)


TAP_LOCK = threading.Lock()


class Listening:
    """A listener on a Cell's tap; `remove()` takes it off (and the tap, once empty)."""

    def __init__(self, cell: Any, listener: Callable[[str, Any], None]) -> None:
        self.cell, self.listener = cell, listener
        with TAP_LOCK:
            tap = cell.probe
            if not isinstance(tap, ProbeTap):
                tap = ProbeTap()
                cell.probe = tap
            tap.listeners = (*tap.listeners, listener)
            self.tap: ProbeTap | None = tap

    def remove(self) -> None:
        with TAP_LOCK:
            tap, self.tap = self.tap, None
            if tap is None:
                return
            tap.listeners = tuple(x for x in tap.listeners if x is not self.listener)
            if not tap.listeners and self.cell.probe is tap:
                self.cell.probe = None  # the layer's plain path again


class _Ring:
    """`RING` preallocated copies of one array, each tagged with its capture number."""

    def __init__(self, size: int, dtype: np.dtype) -> None:
        self.data = np.empty((RING, size), dtype=dtype)
        self.tags = [-1] * RING
        self.steps = [0] * RING
        self.shapes: list[tuple[int, ...]] = [()] * RING
        self.written = 0

    def write(self, step: int, kept: np.ndarray) -> None:
        number = self.written
        i = number % RING
        self.tags[i] = -1  # a reader copying this slot now drops its copy
        self.data[i, : kept.size].reshape(kept.shape)[...] = kept
        self.steps[i], self.shapes[i] = step, kept.shape
        self.tags[i] = number
        self.written = number + 1

    def newest(self) -> tuple[int, np.ndarray] | None:
        """(step, copy) of the newest intact copy, or None."""
        for number in range(self.written - 1, max(self.written - RING, 0) - 1, -1):
            i = number % RING
            if self.tags[i] != number:
                continue
            shape = self.shapes[i]
            copy = self.data[i, : math.prod(shape)].reshape(shape).copy()
            if self.tags[i] == number:  # not overwritten while copied
                return self.steps[i], copy
        return None


def leading(array: np.ndarray, samples: int = MAX_SAMPLES, limit: int = SAMPLE_LIMIT) -> np.ndarray:
    """The leading samples of `array` (axis 0) that are copied: at most `samples`, at most
    `limit` numbers, one sample at least."""
    if array.ndim == 0:
        return array.reshape(1)
    per_sample = max(array.size // max(array.shape[0], 1), 1)
    return array[: max(min(samples, limit // per_sample), 1)]


class ProbeCapture:
    """What one probe hook sees inside its node's layers: the newest copy of each array.

    The same interface as `HookCapture` where the session and the window use it
    (`wants`, `version`, `captured`, `summarise`, `clear`, `paused`, `every_step`, `spent`,
    `error`, `stride`); `latest` maps 'path/name' to (step, array) after `summarise()`.
    `layers` lists the probed Cells' paths, set when attached.
    """

    def __init__(self, hook: Hook, pace: Any) -> None:
        self.hook = hook
        self.pace = pace
        self.layers: list[str] = []
        self.latest: dict[str, tuple[int, np.ndarray]] = {}
        self.paused = bool(hook.settings.get("paused", False))
        self.every_step = bool(hook.settings.get("every_step", False))
        self.error: str | None = None
        self.spent = 0.0
        self.dropped = 0
        self._rings: dict[str, _Ring] = {}  # new names only on the training thread
        self._written = 0  # copies made (the training thread's version)
        self._seen: dict[str, int] = {}  # ring copies already in `latest`
        self._version = 0
        self._reading = threading.Lock()
        self._tokens: Any = None  # the handle of the token cell's pre-hook
        self.tokens_watched = False  # `watch_tokens` was called (whether or not a cell was found)

    @property
    def version(self) -> int:
        return self._version

    @property
    def captured(self) -> int:
        return self._written

    @property
    def stride(self) -> int:
        return 1 if self.every_step else self.pace.stride

    def wants(self, step: int) -> bool:
        return not self.paused and (self.every_step or not step % self.pace.stride)

    def saved_state(self) -> dict[str, np.ndarray]:
        return {}  # a look at the newest step: nothing worth keeping in the project

    def restore(self, state: Any) -> None:
        """Nothing to go on from (see `saved_state`)."""

    # ---- the training thread -------------------------------------------------------------

    def record(self, step: int, name: str, array: Any) -> None:
        """Copy the leading samples of `array` (a live internal array) as `name`'s newest."""
        clock = self.pace.clock
        start = clock()
        array = np.asarray(array.asnumpy() if hasattr(array, "asnumpy") else array)
        kept = array if name.endswith("grad_norms") else leading(array)
        dtype = np.int64 if name == TOKENS else np.float32
        ring = self._rings.get(name)
        if ring is None or ring.data.shape[1] < kept.size:
            ring = _Ring(kept.size, dtype)  # once per larger shape
            self._rings = {**self._rings, name: ring}  # replaced whole: the reader iterates
        ring.write(step, kept)
        self._written += 1
        spent = clock() - start
        self.spent += spent
        self.pace.spend(spent)

    # ---- the reader ------------------------------------------------------------------------

    def summarise(self) -> int:
        """Take the newest copy of each array into `latest`; how many arrays changed."""
        with self._reading:
            changed = 0
            for name, ring in self._rings.items():
                if self._seen.get(name) == ring.written:
                    continue
                written = ring.written
                newest = ring.newest()
                if newest is None:
                    continue
                self._seen[name] = written
                self.latest[name] = newest
                changed += 1
            if changed:
                self._version += 1
            return changed

    def newest(self, name: str) -> tuple[int, np.ndarray] | None:
        """(step, copy) of `name`'s newest copy straight from its ring (no summary), or None."""
        ring = self._rings.get(name)
        return ring.newest() if ring is not None else None

    def names(self) -> list[str]:
        return list(self._rings)

    def clear(self) -> None:
        with self._reading:
            self.latest = {}
            self._seen = {name: ring.written for name, ring in self._rings.items()}
            self._version += 1

    # ---- wiring --------------------------------------------------------------------------------

    def install(self, cell: Any, step: Callable[[], int],
                enabled: Callable[[], bool]) -> Callable[[], Any] | str:  # fmt: skip
        """A function putting this capture's listeners on the probed Cells under `cell` (it
        returns a handle with `remove()`), or why there can be none."""
        kind = self.hook.kind
        cells = probed_cells(cell, kind)
        if not cells:
            what = "MultiheadAttention" if kind == "attention" else "RNN, LSTM or GRU"
            return f"the node has no {what} layer to look inside"
        self.layers = [name for name, _ in cells]

        def listener_for(path: str) -> Callable[[str, Any], None]:
            prefix = f"{path}/" if path else ""

            def listen(name: str, array: Any) -> None:
                if not enabled():  # (evaluation runs between two steps)
                    return
                try:
                    self.record(step(), prefix + name, array)
                except Exception as exc:  # never fail a training step for a view
                    self.error = f"Capturing stopped: {type(exc).__name__}: {exc}"
                    self.paused = True

            return listen

        def put_on() -> _Handles:
            return _Handles([Listening(c, listener_for(path)) for path, c in cells])

        return put_on

    def watch_tokens(self, cell: Any, step: Callable[[], int],
                     wanted: Callable[[], bool]) -> None:  # fmt: skip
        """Copy the token ids `cell` (an Embedding) receives, on the steps this is due."""
        self.unwatch_tokens()
        self.tokens_watched = True
        if cell is None:
            return

        def take(_cell: Any, inputs: Any) -> None:
            if not wanted():
                return
            ids = inputs[0] if isinstance(inputs, tuple) and inputs else inputs
            array = np.asarray(ids.asnumpy() if hasattr(ids, "asnumpy") else ids)
            if array.ndim == 2 and array.dtype.kind in "iu":
                with contextlib.suppress(Exception):
                    self.record(step(), TOKENS, array)

        self._tokens = cell.register_forward_pre_hook(take)

    def unwatch_tokens(self) -> None:
        handle, self._tokens = self._tokens, None
        if handle is not None:
            handle.remove()

    def close(self) -> None:
        """Detached: nothing of it stays on the network."""
        self.unwatch_tokens()

    # ---- reading helpers -------------------------------------------------------------------------

    def arrays(self, layer: str) -> Iterator[tuple[str, int, np.ndarray]]:
        """(name, step, array) of each array of the probed layer `layer` in `latest`."""
        prefix = f"{layer}/" if layer else ""
        for key, (step, array) in list(self.latest.items()):
            if key != TOKENS and key.startswith(prefix) and "/" not in key[len(prefix):]:
                yield key[len(prefix):], step, array


class _Handles:
    def __init__(self, handles: list[Listening]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
