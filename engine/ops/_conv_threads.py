"""Two (or more) threads for the convolution kernels (1-, 2- and 3-D and transposed).

A convolution's batch is cut into blocks of samples (`Layout.parts`); the blocks are dealt
in runs to the workers, each with its own column buffer and its own weight-gradient sum,
so no two write the same memory. NumPy releases the GIL in its copies and products, so the
runs go on as many cores, as PyTorch's convolutions do. The first run is this thread's; a
run no worker has started by the time this thread is done (its core busy with something
else) is done here too, rather than waited for: a busy machine costs a hand-off, never a
wait. Small convolutions stay on the calling thread, where a hand-off (tens of
microseconds) would cost more than it saves.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

PARALLEL_FROM = 1 << 19  # column elements in all (the im2col of the whole batch)
MAX_WORKERS = 4

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(workers() - 1 or 1, thread_name_prefix="engine-conv")
        return _pool


def _forget_pool() -> None:
    # A forked child has none of the parent's threads: it makes its own pool when needed.
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def runs(parts: list[slice], size: int) -> list[list[slice]]:
    """`parts` dealt into one run of consecutive parts per worker when `size` (column
    elements in all) is large enough to pay for the hand-off; else one run."""
    count = min(workers() if size >= PARALLEL_FROM else 1, len(parts))
    bounds = [len(parts) * i // count for i in range(count + 1)]
    return [parts[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def run(fn: Callable[[list[slice]], object], groups: list[list[slice]]) -> list:
    """fn(run) for every run: the first on this thread, the others on the pool."""
    if len(groups) == 1:
        return [fn(groups[0])]
    futures = [_executor().submit(fn, group) for group in groups[1:]]
    results = [fn(groups[0])]
    for group, future in zip(groups[1:], futures, strict=True):
        results.append(fn(group) if future.cancel() else future.result())
    return results
