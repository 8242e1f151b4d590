"""What the project's hooks capture while training: copies by the trainer, summaries by the reader.

Each `Hook` in the project gets a `HookCapture`. On the training thread a capture is
only a copy of the tensor (its leading samples, at most `SLOT_LIMIT` numbers) into the
next of `RING_SLOTS` preallocated float32 slots, tagged with its step, and a counter
bump: no statistics, no lock, no Qt. The reader — a plot pane's GUI timer at display
rate — calls `summarise()`, which turns the slots written since it last looked into one
row of statistics and one histogram each and refreshes `latest` (the newest tensor, for
heatmaps); panes then poll `version`.

The rows go into one `History` (the first `history` captures exactly, a uniform sample
of the middle, the last `history`), which `stats` and `histograms` show column by
column, so their rows stay aligned by step. So that a slow reader never loses the
start, a capture among the first `history` is not overwritten before it is summarised:
the newer capture is dropped instead. Hidden health captures (ids starting with
`health.PREFIX`) only read `newest()` and are never held like that.

The copies cost the training thread time, so `CapturePace` watches them: when they
take more than `budget` (1 %) of the step time, the capture stride doubles (and halves
again once they are well under), but never so far that fewer than `MIN_CAPTURE_RATE`
captures a second arrive; `HookCaptures.stride` says where it stands. Captures are
skipped while the session evaluates.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from app.document import Hook
from app.session.capture_summary import HISTOGRAM_BINS, summarise_block
from app.session.health import PREFIX as HEALTH_PREFIX
from app.session.history import HISTORY_STEPS, History, HistoryColumns, thin_state
from app.session.probes import PROBE_KINDS, ProbeCapture
from engine import Tensor, ops

STAT_COLUMNS = ("step", "mean", "std", "min", "max", "norm")
HISTORY_WIDTH = len(STAT_COLUMNS) + 2 + HISTOGRAM_BINS  # stats, then min, max, counts…
LATEST_LIMIT = 1 << 16  # numbers kept of the newest tensor (leading samples of a big batch)
RING_SLOTS = 64  # captured copies waiting for the reader
SLOT_LIMIT = 1 << 13  # numbers copied per capture (leading samples of a big batch)
CAPTURE_BUDGET = 0.01  # share of the step time the copies may take before the stride grows
MAX_STRIDE = 1 << 12
MIN_CAPTURE_RATE = 2.0  # captures a second the stride never goes below: a pane redraws each
# second or two (within its budget), and each redraw has captures it has not shown
READ_INTERVAL = 0.2  # seconds between two summaries by the GUI (app.gui.hooks.TICK_MS)
# Captures a reader summarises at each read (at most): a few evenly spaced rows per read
# show a run as well as many, and cheap reads come often within the same budget.
CAPTURES_PER_READ = 8
SAVED_ROWS = 30_000  # most rows of one capture history in a project (~10 MB)
PACE_WINDOW = 16  # steps (at least; 4 strides) between two looks at the copies' cost

__all__ = ["HISTOGRAM_BINS", "STAT_COLUMNS", "CapturePace", "HookCapture", "HookCaptures",
           "LatestArray"]  # fmt: skip


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

    def clear(self) -> None:
        with self._lock:
            self._buffer, self._shape = None, ()
            self._version += 1

    def snapshot(self) -> np.ndarray | None:
        """A copy of the newest tensor (float32), or None before the first capture."""
        with self._lock:
            if self._buffer is None:
                return None
            size = int(np.prod(self._shape, dtype=np.int64))
            return self._buffer[:size].reshape(self._shape).copy()


class CapturePace:
    """The capture stride of a session's hooks: doubles while copying costs over `budget`.

    The training thread calls `step_started()` at each step and `spend(seconds)` after
    each copy. Every `PACE_WINDOW` steps (at least 4 strides) the share of time spent
    copying decides: over `budget`, the stride doubles; under a quarter of it (so still
    under half after halving), it halves. With `read_interval` set (the GUI reads that
    often), it is at least what keeps the captures between two reads to
    `CAPTURES_PER_READ`. Whatever the share, the stride stays at most
    the measured steps per second over `MIN_CAPTURE_RATE` (a power of two), so every
    displayed frame still gets fresh data. `budget=None` keeps the stride at 1. `clock`
    can be injected (tests).
    """

    def __init__(self, budget: float | None = CAPTURE_BUDGET,
                 clock: Callable[[], float] = time.perf_counter) -> None:  # fmt: skip
        self.budget = budget
        self.clock = clock
        self.stride = 1
        self.share = 0.0  # of the step time spent copying, in the last window
        self.rate = 0.0  # steps a second, in the last window
        self.read_interval: float | None = None  # seconds between reads, if a reader says
        self._spent = 0.0
        self._steps = 0
        self._since: float | None = None

    def spend(self, seconds: float) -> None:
        self._spent += seconds

    def step_started(self) -> None:
        now = self.clock()
        if self._since is None:
            self._since, self._spent = now, 0.0
            return
        self._steps += 1
        if self._steps < max(PACE_WINDOW, 4 * self.stride):
            return
        elapsed = now - self._since
        self.share = self._spent / elapsed if elapsed > 0 else 0.0
        self.rate = self._steps / elapsed if elapsed > 0 else math.inf
        budget, most = self.budget, _stride_limit(self.rate)
        if budget is None:
            self.stride = 1
        elif self.share > budget and self.stride < most:
            self.stride *= 2
        elif self.share < budget / 4 and self.stride > 1:
            self.stride //= 2
        if self.read_interval is not None:  # a reader looks this often (the GUI's tick):
            # no more than CAPTURES_PER_READ captures between two reads, so the rows
            # are evenly spaced rather than bursts of consecutive steps and gaps.
            floor = _stride_floor(self.rate, self.read_interval, CAPTURES_PER_READ)
            self.stride = max(self.stride, floor)
        self.stride = min(self.stride, most)  # the steps slowed down: capture more often
        self._since, self._spent, self._steps = now, 0.0, 0


def _stride_floor(rate: float, interval: float, per_read: int) -> int:
    """The smallest power-of-two stride that captures at most `per_read` times between two
    reads `interval` seconds apart."""
    if not rate < math.inf:
        return 1
    need = rate * interval / per_read
    return min(MAX_STRIDE, 1 << max(math.ceil(math.log2(need)), 0)) if need > 1 else 1


def _stride_limit(rate: float) -> int:
    """The largest power-of-two stride that still captures `MIN_CAPTURE_RATE` times a second."""
    if not rate < math.inf:
        return MAX_STRIDE
    most = int(rate / MIN_CAPTURE_RATE)
    return min(MAX_STRIDE, 1 << (most.bit_length() - 1)) if most > 1 else 1


class _Slots:
    """`slots` float32 rows of `width` numbers, each tagged with the capture number it holds."""

    def __init__(self, slots: int, width: int) -> None:
        self.data = np.empty((slots, width), dtype=np.float32)
        self.tags = [-1] * slots  # capture number held; -1 while empty or being written
        self.steps = [0] * slots
        self.shapes: list[tuple[int, ...]] = [()] * slots

    @property
    def slots(self) -> int:
        return self.data.shape[0]


class HookCapture:
    """The buffers of one hook: `record(step, array)` on the training thread, `summarise()`
    by the reader.

    Only the last `slots` captures wait for the reader: if it falls further behind, the
    older captures are overwritten and never summarised (their steps have no rows: the
    stride is then effectively larger) — except the first `history` captures, which wait
    for it (newer captures are dropped meanwhile, counted in `dropped`), so the history
    always begins at the first captured step.
    """

    def __init__(self, hook: Hook, history: int = HISTORY_STEPS, *,
                 slots: int = RING_SLOTS, limit: int = SLOT_LIMIT,
                 pace: CapturePace | None = None) -> None:  # fmt: skip
        self.hook = hook
        every = hook.settings.get("every", 1)
        self.every = every if isinstance(every, int) and every >= 1 else 1
        # One row per summarised capture: STAT_COLUMNS, then the histogram (min, max, counts…).
        self.history = History(history, HISTORY_WIDTH)
        self.stats = HistoryColumns(self.history, 0, len(STAT_COLUMNS))
        self.histograms = HistoryColumns(self.history, len(STAT_COLUMNS), HISTORY_WIDTH)
        self.latest = LatestArray()
        self.pace = pace if pace is not None else CapturePace()
        self._slot_count = slots
        self._limit = limit
        self._slots: _Slots | None = None
        self._written = 0  # captures copied so far (the training thread's version)
        self._summarised = 0  # captures the reader has looked at
        # Captures numbered below this are kept until summarised: the history's head.
        self._protected = 0 if hook.id.startswith(HEALTH_PREFIX) else history
        self.dropped = 0  # captures not copied: the slot held a capture of the head
        self._reading = threading.Lock()  # one reader at a time; the writer never waits
        self.paused = bool(hook.settings.get("paused", False))  # a paused pane: no copies
        self.error: str | None = None  # why capturing stopped (a tensor it could not copy)
        # A pane that asked for every step: the adaptive stride does not apply, and
        # `spent` (seconds of copying, training-thread time) says what that costs.
        self.every_step = bool(hook.settings.get("every_step", False))
        self.spent = 0.0

    @property
    def version(self) -> int:
        """Changes whenever the summaries (stats, histograms, latest) changed."""
        return self.history.version

    @property
    def captured(self) -> int:
        """Captures copied so far by the training thread."""
        return self._written

    @property
    def pending(self) -> int:
        """Captures copied and not yet summarised (at most the ring's slots are kept)."""
        return self._written - self._summarised

    @property
    def stride(self) -> int:
        """Capture every this many steps: the hook's `every` and the session's pace together."""
        return self.every if self.every_step else math.lcm(self.every, self.pace.stride)

    # ---- the training thread ---------------------------------------------------------

    def wants(self, step: int) -> bool:
        """Whether a capture is due at `step` (not paused, on the stride); the engine hooks
        ask this before converting anything."""
        if self.paused or step % self.every:
            return False
        return self.every_step or not step % self.pace.stride

    def record(self, step: int, array: np.ndarray) -> None:
        pace = self.pace
        if not self.wants(step):
            return
        number, slots = self._written, self._slots
        if slots is not None and self._summarised < self._protected:
            held = slots.tags[number % slots.slots]
            if self._summarised <= held < self._protected:  # the head waits for the reader
                self.dropped += 1
                return
        start = pace.clock()
        kept = _leading_samples(array, self._limit)
        size = kept.size
        if slots is None or slots.data.shape[1] < size:
            slots = self._slots = _Slots(self._slot_count, size)  # once per larger shape
        i = number % slots.slots
        slots.tags[i] = -1  # a reader copying this slot now will drop what it copied
        slots.data[i, :size].reshape(kept.shape)[...] = kept
        slots.steps[i] = step
        slots.shapes[i] = kept.shape
        slots.tags[i] = number
        self._written = number + 1
        spent = pace.clock() - start
        self.spent += spent
        pace.spend(spent)

    # ---- the reader ------------------------------------------------------------------

    def newest(self) -> np.ndarray | None:
        """A copy of the newest captured tensor, straight from its slot (no summary), or None."""
        slots, written = self._slots, self._written
        if slots is None or not written:
            return None
        number = written - 1
        i = number % slots.slots
        shape = slots.shapes[i]
        copy = slots.data[i, : math.prod(shape)].reshape(shape).copy()
        return copy if slots.tags[i] == number else None  # overwritten while copied

    def clear(self) -> None:
        """Forget the summaries and what waits to be summarised (a pane's Clear); the
        history starts again, its head kept from the next capture on."""
        with self._reading:
            self._summarised = written = self._written
            if self._protected:
                self._protected = written + self.history.head
            self.latest.clear()
            self.history.clear()  # last: version says "all"

    def saved_state(self) -> dict[str, np.ndarray]:
        """The history's state as a project keeps it (at most `SAVED_ROWS` rows)."""
        return thin_state(self.history.state(), SAVED_ROWS)

    def restore(self, state: Mapping[str, np.ndarray]) -> None:
        """Go on from a saved history (`History.state()`); ValueError if it is damaged."""
        with self._reading:
            self.history.restore(state)
            if self._protected:  # what the head still lacks, from the next capture on
                self._protected = self._written + max(self.history.head - self.history.total, 0)

    def summarise(self) -> int:
        """Summarise the captures copied since the last call; returns how many rows it added.

        Call at display rate (a pane's timer), not per step. Of the captures waiting, the
        `slots` newest are summarised; older ones were overwritten and are lost (never
        one of the history's head: those wait, see `record`).
        """
        with self._reading:
            slots, written = self._slots, self._written
            if slots is None or written == self._summarised:
                return 0
            # A slot being rewritten meanwhile fails the tag check and is left out.
            first = max(self._summarised, written - slots.slots)
            added = 0
            group: list[tuple[int, int]] = []  # (capture number, slot) of one size
            for number in range(first, written):
                i = number % slots.slots
                if slots.tags[i] != number:
                    continue
                if group and slots.shapes[group[0][1]] != slots.shapes[i]:
                    added += self._summarise_group(slots, group)
                    group = []
                group.append((number, i))
            if group:
                added += self._summarise_group(slots, group)
            self._summarised = written  # only now: until copied, the head's slots are kept
            return added

    def _summarise_group(self, slots: _Slots, group: list[tuple[int, int]]) -> int:
        shape = slots.shapes[group[0][1]]
        size = math.prod(shape)
        index = [i for _, i in group]
        steps = [slots.steps[i] for i in index]
        block = slots.data[index, :size]  # a copy: the writer may now reuse the slots
        intact = [slots.tags[i] == number for number, i in group]
        if not all(intact):  # overwritten while copied: those steps are lost
            block, steps = block[intact], [s for s, ok in zip(steps, intact, strict=True) if ok]
            if not steps:
                return 0
        stats, histograms = summarise_block(block)
        rows = np.empty((len(steps), HISTORY_WIDTH))
        rows[:, 0], rows[:, 1 : len(STAT_COLUMNS)] = steps, stats
        rows[:, len(STAT_COLUMNS) :] = histograms
        self.latest.write(block[-1].reshape(shape))
        self.history.extend(rows)  # last: version says "all"
        return len(steps)


class HookCaptures:
    """Every capture of one session, attached to the compiled network's Cells.

    `cell_for(node_id)` finds the Cell a node compiled to (None if it has none);
    `edge_hook(edge_id, fn)` places a HookBackward on an edge and returns a handle with
    `remove()`. Hooks can be attached and detached at any time, also while training:
    the engine copies its hook lists before calling them. The captures share one
    `pace` (see `CapturePace`; `budget` and `clock` are passed to it). Each capture
    keeps `history` steps exactly at its start and end; `saved` maps hook ids to
    histories saved with the project (`History.state()`), which a capture attached for
    that hook goes on from (a damaged one is dropped: the capture starts afresh).
    """

    def __init__(self, hooks: list[Hook], cell_for: Callable[[str], Any],
                 edge_hook: Callable[[str, Callable], Any] | None = None, *,
                 budget: float | None = CAPTURE_BUDGET,
                 clock: Callable[[], float] = time.perf_counter,
                 history: int = HISTORY_STEPS,
                 saved: Mapping[str, Mapping[str, np.ndarray]] | None = None) -> None:  # fmt: skip
        self.captures: dict[str, HookCapture] = {}  # hook id -> its buffers
        self.skipped: dict[str, str] = {}  # hook id -> why it captures nothing
        self.pace = CapturePace(budget, clock)
        self.history_steps = history
        self._saved = dict(saved or {})  # each used once, by the first capture of its hook
        self._step = 0
        self.enabled = True  # off while the session evaluates
        self._cell_for = cell_for
        self._edge_hook = edge_hook
        self._handles: dict[str, Any] = {}
        # Engine hooks on after the last step (at least): while none is, a step off the
        # stride asks no capture (a capture for every step keeps its hook on). Each count
        # has one writer: `_on` and `_seen` the training thread (the step setter),
        # `_attachments` the thread that attaches and detaches (the GUI's). A step that
        # finds `_attachments` moved since `_seen` looks at every hook again.
        self._on = 0
        self._attachments = 0
        self._seen = 0
        for hook in hooks:
            self.attach(hook)

    @property
    def step(self) -> int:
        """The step being trained, written by the training thread at the start of each."""
        return self._step

    @step.setter
    def step(self, value: int) -> None:
        self._step = value
        if self._handles:
            pace = self.pace
            pace.step_started()
            attachments = self._attachments
            if not self._on and value % pace.stride and attachments == self._seen:
                return  # every hook off, and off the stride: none is due (the common case)
            self._seen = attachments
            enabled, on = self.enabled, 0
            for attachment in list(self._handles.values()):
                attachment.follow(enabled and attachment.capture.wants(value))
                on += attachment.on
            self._on = on

    @property
    def stride(self) -> int:
        """The session's capture stride (1 until copying costs more than the budget)."""
        return self.pace.stride

    def summarise(self) -> int:
        """Summarise every attached capture (see `HookCapture.summarise`); rows added."""
        return sum(capture.summarise() for capture in list(self.captures.values()))

    def attach(self, hook: Hook) -> HookCapture | None:
        """Start capturing for `hook`; None (and the reason in `skipped`) if it can't."""
        self.detach(hook.id)
        capture: Any = (ProbeCapture(hook, self.pace) if hook.kind in PROBE_KINDS
                        else HookCapture(hook, self.history_steps, pace=self.pace))  # fmt: skip
        saved = self._saved.pop(hook.id, None)
        if saved is not None:  # damaged: nice to have, not worth refusing to capture for
            with contextlib.suppress(ValueError):
                capture.restore(saved)
        install = self._register(capture)
        if isinstance(install, str):
            self.skipped[hook.id] = install
            return None
        self._handles[hook.id] = _Attachment(capture, install)
        self._attachments += 1  # on from the start: the next step looks at it
        self.captures[hook.id] = capture
        return capture

    def detach(self, hook_id: str) -> None:
        """Stop capturing for the hook (its buffers stay readable if you hold them)."""
        attachment = self._handles.pop(hook_id, None)
        if attachment is not None:
            attachment.remove()
        capture = self.captures.pop(hook_id, None)
        if isinstance(capture, ProbeCapture):
            capture.close()
        self.skipped.pop(hook_id, None)

    def watch_tokens(self, hook_id: str, node_id: str | None) -> None:
        """Let a probe capture copy the token ids node `node_id` (an Embedding) receives."""
        capture = self.captures.get(hook_id)
        if not isinstance(capture, ProbeCapture):
            return
        probe = capture
        probe.watch_tokens(self._cell_for(node_id) if node_id else None, lambda: self._step,
                           lambda: self.enabled and probe.wants(self._step))  # fmt: skip

    def attached(self, hook_id: str) -> bool:
        """Whether the hook is attached: its engine hook is on now or at its next due step."""
        return hook_id in self._handles

    def remove(self) -> None:
        """Detach every hook from the network."""
        for hook_id in list(self._handles):
            self.detach(hook_id)

    def _register(self, capture: HookCapture) -> Callable[[], Any] | str:
        """A function putting on the engine hook feeding `capture` (it returns the engine's
        handle), or why there can be none."""
        kind, target = capture.hook.kind, capture.hook.target

        def wanted() -> bool:  # asked first, so a step not captured costs only this
            return self.enabled and capture.wants(self._step)

        def take(array: Any) -> None:
            try:
                capture.record(self._step, _as_array(array))
            except Exception as exc:  # never fail a training step for a view
                capture.error = f"Capturing stopped: {type(exc).__name__}: {exc}"
                capture.paused = True

        if kind in PROBE_KINDS:  # the layers' own probes (app.session.probes)
            cell = self._cell_for(target)
            if cell is None:
                return "the node has no Cell to look inside"
            return capture.install(cell, lambda: self._step, wanted)
        if kind == "hook_backward":
            if self._edge_hook is None:
                return "hooks on edges are not supported by this network"
            edge_hook = self._edge_hook
            return lambda: edge_hook(target, lambda grads: take(grads) if wanted() else None)
        cell = self._cell_for(target)
        if cell is None:
            return "the node has no Cell to hook"
        if kind == "forward_pre":
            return lambda: cell.register_forward_pre_hook(
                lambda _cell, inputs: take(inputs) if wanted() else None)
        if kind == "forward":
            return lambda: cell.register_forward_hook(
                lambda _cell, _inputs, outputs: take(outputs) if wanted() else None)
        # backward: the gradient arriving at the Cell's output. The engine's own backward
        # hook records the whole Cell as one tape node (a third more time per step on a
        # small MLP); an identity HookBackward on the output sees the same gradient, and
        # is put there only on the steps that are captured.
        probe = ops.HookBackward(lambda grads: take(grads))

        def watch_output(_cell: Any, _inputs: Any, outputs: Any) -> Any:
            if not wanted():
                return None
            if isinstance(outputs, Tensor):
                return probe(outputs)
            if isinstance(outputs, tuple) and outputs and isinstance(outputs[0], Tensor):
                return (probe(outputs[0]), *outputs[1:])
            return None

        return lambda: cell.register_forward_hook(watch_output)


class _Attachment:
    """A capture's engine hook, on only for the steps the capture is due.

    A Cell with no hooks takes the engine's plain path, so between captures (every 16th
    step on a fast network) hooking costs nothing but this check at the step's start.
    The training thread calls `follow(due)` at each step; `remove()` (any thread) takes
    the hook away for good. It is on from the start, so a single Step captures.
    """

    def __init__(self, capture: HookCapture, install: Callable[[], Any]) -> None:
        self.capture = capture
        self._install = install
        self._lock = threading.Lock()  # taken only to put the hook on or off
        self._removed = False
        self._handle: Any = install()

    @property
    def on(self) -> bool:
        return self._handle is not None

    def follow(self, due: bool) -> None:
        if due == (self._handle is not None):
            return
        with self._lock:
            if self._removed:
                return
            if due:
                self._handle = self._install()
            else:
                self._handle.remove()
                self._handle = None

    def remove(self) -> None:
        with self._lock:
            self._removed = True
            if self._handle is not None:
                self._handle.remove()
                self._handle = None


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
