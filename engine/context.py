"""`set_context`, execution modes and `jit`: the engine always runs eagerly (PyNative)."""

from __future__ import annotations

GRAPH_MODE = 0
PYNATIVE_MODE = 1

_context: dict = {"mode": PYNATIVE_MODE, "device_target": "CPU"}


def set_context(**kwargs) -> None:
    """Accepts MindSpore's context keys; `mode` is recorded but execution is always eager."""
    mode = kwargs.get("mode", PYNATIVE_MODE)
    if mode not in (GRAPH_MODE, PYNATIVE_MODE):
        raise ValueError(f"mode must be GRAPH_MODE or PYNATIVE_MODE, got {mode!r}")
    _context.update(kwargs)


def get_context(key: str):
    return _context.get(key)


def jit(function=None, **options):
    """Decorator kept for source compatibility: the function runs eagerly, unchanged."""
    if function is None:
        return lambda fn: fn
    return function
