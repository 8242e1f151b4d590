"""How a convolution's blocks of samples (1-, 2- and 3-D and transposed) go to threads.

A convolution's batch is cut into blocks of samples (`Layout.parts`); the blocks are dealt
in runs to the workers of the engine's pool (engine/ops/_threads.py), each run with its own
column buffer and its own weight-gradient sum, so no two write the same memory. Small
convolutions stay on the calling thread.
"""

from __future__ import annotations

from engine.ops._threads import workers

PARALLEL_FROM = 1 << 19  # column elements in all (the im2col of the whole batch)


def runs(parts: list[slice], size: int) -> list[list[slice]]:
    """`parts` dealt into one run of consecutive parts per worker when `size` (column
    elements in all) is large enough to pay for the hand-off; else one run."""
    count = min(workers() if size >= PARALLEL_FROM else 1, len(parts))
    bounds = [len(parts) * i // count for i in range(count + 1)]
    return [parts[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
