"""Primitive operator objects of the seeds: `HookBackward`, `Dropout2D`, plus `assign`."""

from __future__ import annotations

import numpy as np

from engine._random import rng
from engine.autograd import HookError, Node, state
from engine.ops._functional import _tensor
from engine.parameter import Parameter
from engine.tensor import Tensor, wrap


class HookBackward:
    """Identity in the forward pass; in backward, calls `hook_fn(grad)` with the gradient here.

    `grad` is a 1-tuple of Tensors; returning a Tensor or a 1-tuple replaces
    the gradient that continues upstream, returning None keeps it.
    """

    def __init__(self, hook_fn, cell_id: str = ""):
        if not callable(hook_fn):
            raise TypeError(f"HookBackward needs a Python function, got {type(hook_fn).__name__}")
        self.hook_fn = hook_fn
        self.cell_id = cell_id

    def __call__(self, *inputs):
        if not inputs:
            raise TypeError("HookBackward needs a Tensor input")
        outs = []
        for x in inputs:
            if not isinstance(x, Tensor):
                raise TypeError(f"HookBackward input must be a Tensor, got {type(x).__name__}")
            if state.recording and x._node is not None:
                node = Node(_hook_vjp, self, ((x._node, x._oi),), "HookBackward")
                outs.append(wrap(x._data, node))
            else:
                outs.append(wrap(x._data))
        return outs[0] if len(outs) == 1 else tuple(outs)


def _hook_vjp(g, hook: HookBackward, needs):
    try:
        result = hook.hook_fn((wrap(g),))
    except Exception as exc:
        name = getattr(hook.hook_fn, "__qualname__", repr(hook.hook_fn))
        raise HookError(f"HookBackward hook {name} raised {type(exc).__name__}: {exc}") from exc
    if result is None:
        return (g,)
    if isinstance(result, (tuple, list)):
        if len(result) != 1:
            raise ValueError(
                f"HookBackward hook must return one gradient (a 1-tuple), got {len(result)}"
            )
        result = result[0]
    new = result._data if isinstance(result, Tensor) else np.asarray(result, dtype=g.dtype)
    if new.shape != g.shape:
        raise ValueError(f"HookBackward hook returned shape {new.shape}, expected {g.shape}")
    return (new.astype(g.dtype, copy=False),)


class Dropout2D:
    """Zero whole channels of an (N, C, H, W) input with probability `1 - keep_prob`.

    Returns `(output, mask)`; the mask is boolean with the input's shape.  A
    primitive: it drops channels whatever the calling Cell's mode.
    """

    def __init__(self, keep_prob: float = 0.5):
        if not 0.0 <= float(keep_prob) <= 1.0:
            raise ValueError(f"keep_prob must be in [0, 1], got {keep_prob}")
        self.keep_prob = float(keep_prob)

    def __call__(self, x):
        x = _tensor(x)
        d = x._data
        if d.ndim != 4:
            raise ValueError(f"Dropout2D expects a 4-D (N, C, H, W) input, got shape {d.shape}")
        keep = rng().random(d.shape[:2] + (1, 1)) < self.keep_prob
        mask = np.broadcast_to(keep, d.shape).copy()
        scale = 0.0 if self.keep_prob == 0 else 1.0 / self.keep_prob
        factor = (mask * scale).astype(d.dtype)
        from engine.ops._functional import mul

        return mul(x, factor), wrap(mask)


def assign(variable: Parameter, value) -> Parameter:
    """Write `value` into `variable` in place (dtype kept, shapes must broadcast)."""
    if not isinstance(variable, Tensor):
        raise TypeError(f"assign needs a Parameter to write into, got {type(variable).__name__}")
    v = value._data if isinstance(value, Tensor) else np.asarray(value)
    try:
        np.copyto(variable._data, np.broadcast_to(v, variable._data.shape), casting="unsafe")
    except ValueError as exc:
        raise ValueError(
            f"assign: value of shape {np.shape(v)} does not fit variable of shape "
            f"{variable._data.shape}"
        ) from exc
    return variable
