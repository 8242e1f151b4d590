"""The engine's random source: one NumPy Generator, reseeded by `engine.set_seed`.

`using_generator(gen)` and `fork_rng(seed)` lend the calling thread another generator
for the length of a `with` block (making a preview network, filling a Parameter anew),
so the engine's own generator — the one a training run draws Dropout masks from — is
neither moved nor swapped under a run going on in another thread: the loan is
thread-local, and put back however the block ends.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

_generator = np.random.default_rng()
_seed: int | None = None
_lent = threading.local()  # .generator: this thread's loan, while a `with` block lasts


def set_seed(seed: int) -> None:
    """Make initializers, Dropout and data shuffles repeatable (also seeds NumPy's global RNG)."""
    global _generator, _seed
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    _seed = seed
    _generator = np.random.default_rng(seed)
    np.random.seed(seed % 2**32)


def get_seed() -> int | None:
    return _seed


def rng() -> np.random.Generator:
    """The generator to draw from: this thread's loan inside a `with` block, else the engine's."""
    lent = getattr(_lent, "generator", None)
    return _generator if lent is None else lent


@contextmanager
def using_generator(generator: np.random.Generator) -> Iterator[np.random.Generator]:
    """Draw from `generator` on this thread inside the block; other threads, and this one
    afterwards, draw from the generator they had. Blocks nest."""
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"expected a numpy.random.Generator, got {type(generator).__name__}")
    before = getattr(_lent, "generator", None)
    _lent.generator = generator
    try:
        yield generator
    finally:
        _lent.generator = before


def fork_rng(seed: int | None = None):
    """A `with` block drawing from a generator of its own, leaving the engine's untouched.

    With `seed`: a new generator seeded with it, so the block draws what it would draw
    right after `engine.set_seed(seed)`. Without: a copy of the generator this thread
    draws from now, so the block draws what it would have drawn there, and the engine's
    generator is still where it was afterwards.
    """
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {seed!r}")
        return using_generator(np.random.default_rng(int(seed)))
    current = rng().bit_generator
    copy = type(current)()
    copy.state = current.state
    return using_generator(np.random.Generator(copy))
