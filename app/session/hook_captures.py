"""What the project's hooks capture while training: summary rows, histograms and the latest tensor.

Each `Hook` in the project gets a `HookCapture`: the training thread fills its ring
buffers (one row of statistics and one histogram per captured step) and its
`LatestArray` (a copy of the newest tensor for heatmaps); its plot pane polls their
`version` on a GUI timer. Captures are skipped while the session evaluates.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from app.document import Hook
from app.session.ring_buffer import RingBuffer

STAT_COLUMNS = ("step", "mean", "std", "min", "max", "norm")
HISTOGRAM_BINS = 32
HISTORY_CAPACITY = 5_000
LATEST_LIMIT = 1 << 16  # numbers kept of the newest tensor (leading samples of a big batch)


class LatestArray:
    """The newest captured tensor (or its leading samples), overwritten in place."""

    def __init__(self, limit: int = LATEST_LIMIT) -> None:
        self._limit = limit
        self._buffer: np.ndarray | None = None
        self._shape: tuple[int, ...] = ()
        self._version = 0
        self._lock = threading.Lock()

    @property
    def version(self) -> int:
        return self._version

    def write(self, array: np.ndarray) -> None:
        array = _leading_samples(array, self._limit)
        with self._lock:
            if self._buffer is None or self._buffer.size < array.size:
                self._buffer = np.empty(array.size, dtype=np.float32)  # once per larger size
            self._buffer[: array.size] = array.reshape(-1)
            self._shape = array.shape
            self._version += 1

    def snapshot(self) -> np.ndarray | None:
        """A copy of the newest tensor (float32), or None before the first capture."""
        with self._lock:
            if self._buffer is None:
                return None
            size = int(np.prod(self._shape, dtype=np.int64))
            return self._buffer[:size].reshape(self._shape).copy()


class HookCapture:
    """The buffers of one hook; `record(step, array)` is called on the training thread."""

    def __init__(self, hook: Hook, capacity: int = HISTORY_CAPACITY) -> None:
        self.hook = hook
        every = hook.settings.get("every", 1)
        self.every = every if isinstance(every, int) and every >= 1 else 1
        self.stats = RingBuffer(capacity, len(STAT_COLUMNS))
        self.histograms = RingBuffer(capacity, 2 + HISTOGRAM_BINS)  # low, high, counts…
        self.latest = LatestArray()

    @property
    def version(self) -> int:
        """Changes whenever anything in this capture changed."""
        return self.stats.version

    def record(self, step: int, array: np.ndarray) -> None:
        if step % self.every:
            return
        values = np.asarray(array, dtype=np.float64).reshape(-1)
        finite = values[np.isfinite(values)] if values.size else values
        if finite.size:
            low, high = float(finite.min()), float(finite.max())
            mean, std = float(finite.mean()), float(finite.std())
            norm = float(np.sqrt(np.dot(finite, finite)))
            counts, _ = np.histogram(finite, bins=HISTOGRAM_BINS,
                                     range=(low, high) if high > low else (low - 0.5, low + 0.5))
        else:
            low = high = mean = std = norm = np.nan
            counts = np.zeros(HISTOGRAM_BINS)
        row = np.empty(2 + HISTOGRAM_BINS)
        row[0], row[1], row[2:] = low, high, counts
        self.latest.write(np.asarray(array))
        self.histograms.append(row)
        self.stats.append_values(step, mean, std, low, high, norm)  # last: version says "all"


class HookCaptures:
    """Every capture of one session, attached to the compiled network's Cells.

    `cell_for(node_id)` finds the Cell a node compiled to (None if it has none);
    `edge_hook(edge_id, fn)` places a HookBackward on an edge and returns a handle with
    `remove()`. Hooks can be attached and detached at any time, also while training:
    the engine copies its hook lists before calling them.
    """

    def __init__(self, hooks: list[Hook], cell_for: Callable[[str], Any],
                 edge_hook: Callable[[str, Callable], Any] | None = None) -> None:  # fmt: skip
        self.captures: dict[str, HookCapture] = {}  # hook id -> its buffers
        self.skipped: dict[str, str] = {}  # hook id -> why it captures nothing
        self.step = 0  # the step being trained, written by the training thread
        self.enabled = True  # off while the session evaluates
        self._cell_for = cell_for
        self._edge_hook = edge_hook
        self._handles: dict[str, Any] = {}
        for hook in hooks:
            self.attach(hook)

    def attach(self, hook: Hook) -> HookCapture | None:
        """Start capturing for `hook`; None (and the reason in `skipped`) if it can't."""
        self.detach(hook.id)
        capture = HookCapture(hook)
        handle = self._register(capture)
        if isinstance(handle, str):
            self.skipped[hook.id] = handle
            return None
        self._handles[hook.id] = handle
        self.captures[hook.id] = capture
        return capture

    def detach(self, hook_id: str) -> None:
        """Stop capturing for the hook (its buffers stay readable if you hold them)."""
        handle = self._handles.pop(hook_id, None)
        if handle is not None and hasattr(handle, "remove"):
            handle.remove()
        self.captures.pop(hook_id, None)
        self.skipped.pop(hook_id, None)

    def remove(self) -> None:
        """Detach every hook from the network."""
        for hook_id in list(self._handles):
            self.detach(hook_id)

    def _register(self, capture: HookCapture) -> Any:
        """The engine's handle for a new hook feeding `capture`, or why there is none."""
        kind, target = capture.hook.kind, capture.hook.target

        def take(array: Any) -> None:
            if self.enabled:
                capture.record(self.step, _as_array(array))

        if kind == "hook_backward":
            if self._edge_hook is None:
                return "hooks on edges are not supported by this network"
            return self._edge_hook(target, lambda grads: take(grads))
        cell = self._cell_for(target)
        if cell is None:
            return "the node has no Cell to hook"
        if kind == "forward_pre":
            return cell.register_forward_pre_hook(lambda _cell, inputs: take(inputs))
        if kind == "forward":
            return cell.register_forward_hook(lambda _cell, _inputs, outputs: take(outputs))
        # backward: the gradient arriving at the Cell's output
        return cell.register_backward_hook(lambda _cell, grad_in, _grad_out: take(grad_in))


def _as_array(value: Any) -> np.ndarray:
    """The first tensor of a hook's argument (a Tensor, or a tuple of them) as an array."""
    while isinstance(value, tuple | list) and value:
        value = value[0]
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return np.asarray(value if value is not None else np.nan, dtype=np.float64)


def _leading_samples(array: np.ndarray, limit: int) -> np.ndarray:
    array = np.asarray(array)
    if array.size <= limit or array.ndim == 0:
        return array if array.size <= limit else array.reshape(-1)[:limit]
    per_sample = max(array.size // max(array.shape[0], 1), 1)
    keep = max(limit // per_sample, 1)
    return array[:keep] if keep * per_sample <= limit else array.reshape(-1)[:limit]
