"""The shared op-test base: one table of cases, each giving inputs and the forward.

Every case gets, for free: the forward compared with a NumPy reference, a
float64 gradcheck (including broadcasting shapes), and a float32 dtype check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class OpCase:
    name: str  # the engine.ops name (used to check every differentiable op has a case)
    fn: Callable  # engine forward, taking Tensors
    ref: Callable | None  # NumPy reference taking arrays
    shapes: list[tuple]  # one shape per input
    positive: bool = False  # inputs must be > 0 (log, sqrt, pow base)
    away_from_zero: bool = False  # keep |x| > 0.1 (kinks: relu, abs, max)
    int_inputs: dict = field(default_factory=dict)  # position -> fixed integer array
    check: dict = field(default_factory=dict)  # gradcheck overrides (eps, rtol) for lossy ops

    @property
    def id(self) -> str:
        return f"{self.name}-" + "x".join("_".join(map(str, s)) or "scalar" for s in self.shapes)

    def make_inputs(self, dtype, seed=0):
        rs = np.random.RandomState(seed)
        arrays = []
        for i, shape in enumerate(self.shapes):
            if i in self.int_inputs:
                arrays.append(self.int_inputs[i])
                continue
            a = rs.standard_normal(shape)
            if self.positive:
                a = np.abs(a) + 0.5
            if self.away_from_zero:
                a = np.where(np.abs(a) < 0.1, np.sign(a + 1e-12) * 0.1 + a, a)
                # distinct values, so max/min ties do not occur
                a = a + np.arange(a.size).reshape(a.shape) * 1e-3
            arrays.append(np.asarray(a, dtype=dtype))
        return arrays
