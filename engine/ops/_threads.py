"""The engine's small thread pool, shared by the kernels that split big inputs into blocks
(convolutions by samples, layer and group normalisation by rows).

NumPy releases the GIL inside its copies, loops and products, so blocks run on as many
cores as there are workers, as PyTorch's kernels do. The first block is the calling
thread's; a block no worker has started by the time this thread is done with its own (its
core busy with something else) runs here too, rather than being waited for: a busy machine
costs a hand-off, never a wait. Callers keep small inputs on one thread, where a hand-off
(tens of microseconds) costs more than it saves.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

MAX_WORKERS = 4

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def workers() -> int:
    """Threads a block split may use: the cores this process may run on, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(workers() - 1 or 1, thread_name_prefix="engine-worker")
        return _pool


def _forget_pool() -> None:
    # A forked child has none of the parent's threads: it makes its own pool when needed.
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def run(fn: Callable[[Any], object], blocks: Sequence[Any]) -> list:
    """fn(block) for every block, in order: the first on this thread, the others on the
    pool (or here, when no worker has started them yet)."""
    if len(blocks) == 1:
        return [fn(blocks[0])]
    futures = [_executor().submit(fn, block) for block in blocks[1:]]
    results = [fn(blocks[0])]
    for block, future in zip(blocks[1:], futures, strict=True):
        results.append(fn(block) if future.cancel() else future.result())
    return results
