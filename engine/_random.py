"""The engine's random source: one NumPy Generator, reseeded by `engine.set_seed`."""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng()
_seed: int | None = None


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
    return _generator
