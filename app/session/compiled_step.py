"""Which way the trainer takes each step: a compiled plan (engine.plan) when one fits, else eager.

`CompiledStep.pick(x, y)` gives the trainer a `Plan` and the loss's labels for a batch,
or None, and the step then runs eagerly (the trainer's `_checked_step`):

- while a hook is set on an edge or a HookBackward node (`compiled.edge_hooks`, also
  the captures' `hook_backward` kind): the graph calls those between its Cells, and a
  plan replays the Cells only;
- while a Parameter the optimizer holds is frozen and gradients are clipped by their
  global norm: the eager step counts the frozen Parameter's gradient in that norm, and
  a plan computes no gradient for it;
- for the first batch of each shape: its eager step tells the output's shape, which
  the labels are shaped to (`Targets.for_loss`);
- where the network does not compile in its present state (batch shape, which Cells
  have hooks); that state is not tried again.

Otherwise the newest kept plan that fits the batch and is not stale runs, or a new one
is built. A few are kept (`MAX_PLANS`): the full batch and a last, partial one, each
with the captures' hooks off and on (they go on for one step in `stride`, and a Cell
with hooks runs eagerly inside a plan, so its hooks fire as in the eager path).

Why Cells or steps run eagerly is logged once per session (INFO, this module's logger),
never per step. `ENABLED = False` (tests), CELLWRIGHT_EAGER=1 in the environment or
`Trainer(compiled=False)` makes every step eager.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

import numpy as np

import engine.plan
from app.compiler.cells import GraphCell, HookBackward
from engine.plan import Plan, compile_step, hook_state

log = logging.getLogger(__name__)

ENABLED = True  # False: every trainer made from now on trains eagerly
EAGER_VARIABLE = "CELLWRIGHT_EAGER"  # set to 1 (or yes, true): the same, for users
MAX_PLANS = 4


def wanted(compiled: bool | None = None) -> bool:
    """Whether a trainer replays compiled steps: `compiled` if given, else the switches."""
    if compiled is not None:
        return bool(compiled)
    return ENABLED and os.environ.get(EAGER_VARIABLE, "").strip().lower() in ("", "0", "no",
                                                                               "false")


def edge_hooks_of(network: engine.nn.Cell) -> list[Any]:
    """The `BackwardHooks` of a compiled network's graphs and HookBackward nodes."""
    found: dict[int, Any] = {}
    for _, cell in network.cells_and_names():
        if isinstance(cell, GraphCell | HookBackward):
            hooks = cell._hooks  # the builder's one BackwardHooks (compiled.edge_hooks)
            found.setdefault(id(hooks), hooks)
    return list(found.values())


def all_finite(array: np.ndarray) -> bool:
    """`np.isfinite(array).all()`, by its sum first: that is finite unless a number is NaN
    or infinite, or the sum overflows (which the full check then clears)."""
    return bool(np.isfinite(array.sum())) or bool(np.isfinite(array).all())


def first_not_finite(arrays: list) -> int | None:
    """The index of the first of `arrays` (None entries skipped) holding a NaN or infinity,
    or None. Views of one buffer (an optimizer's flat buffers) are summed at once first
    (call it under np.errstate(all="ignore"), as the trainer's checks run)."""
    buffers = {}
    for a in arrays:
        if a is not None:
            whole = a if a.base is None else a.base
            buffers[id(whole)] = whole
    if all(np.isfinite(whole.sum()) for whole in buffers.values()):
        return None
    return next((i for i, a in enumerate(arrays) if a is not None and not all_finite(a)), None)


class CompiledStep:
    """The plans of one trainer's network, loss and optimizer; see the module's docstring.

    `labels(y, output_shape)` gives the loss's labels for a batch as an array; `quiet()`
    is a context in which captures record nothing (a plan's trace runs a forward).
    """

    def __init__(self, network: engine.nn.Cell, loss_fn: engine.nn.Cell, optimizer,
                 labels: Callable[[np.ndarray, tuple], np.ndarray],
                 quiet: Callable[[], Any] | None = None, edge_hooks: list[Any] | None = None,
                 clip_by_norm: bool = False) -> None:  # fmt: skip
        self.network = network
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self._labels = labels
        self._quiet = quiet or contextlib.nullcontext
        self._edges = edge_hooks_of(network) if edge_hooks is None else edge_hooks
        self._clip_by_norm = clip_by_norm
        self._plans: list[Plan] = []  # the last used first
        self._failed: set[tuple] = set()  # states (shapes, hooked Cells) that don't compile
        self._outputs: dict[tuple, tuple] = {}  # batch shape -> output shape
        self._said: set[str] = set()
        self.notes: list[str] = []  # what was logged, in order
        self.plan_steps = self.eager_steps = self.builds = 0

    def pick(self, x: np.ndarray, y: np.ndarray) -> tuple[Plan, np.ndarray] | None:
        """(the plan for this batch, the loss's labels), or None: run it eagerly. `x` is
        already of the network's input type."""
        if any(len(hooks) for hooks in self._edges):
            self._say("Steps run eagerly while a hook is set on an edge or a HookBackward "
                      "node.")  # fmt: skip
            return None
        if self._clip_by_norm and not all(p.requires_grad for p in self.optimizer.parameters):
            self._say("Steps run eagerly while a Parameter is frozen and gradients are clipped "
                      "by their global norm.")  # fmt: skip
            return None
        shape = self._outputs.get(x.shape)
        if shape is None:
            return None
        labels = self._labels(y, shape)
        plans = self._plans
        for i, plan in enumerate(plans):
            if plan.valid_for(x, labels) and not plan.stale(any_hook_change=False):
                if i:
                    plans.insert(0, plans.pop(i))
                self.plan_steps += 1
                return plan, labels
        state = (x.shape, x.dtype.str, labels.shape, labels.dtype.str,
                 hook_state(self.network, self.loss_fn))  # fmt: skip
        if state in self._failed:
            return None
        plan = self._build(x, labels)
        if plan is None:
            self._failed.add(state)
            return None
        plans.insert(0, plan)
        del plans[MAX_PLANS:]
        self.plan_steps += 1
        return plan, labels

    def ran_eagerly(self, x: np.ndarray, output_shape: tuple) -> None:
        """An eager step ran on `x`; its output had `output_shape`."""
        self._outputs.setdefault(x.shape, tuple(output_shape))
        self.eager_steps += 1

    def _build(self, x: np.ndarray, labels: np.ndarray) -> Plan | None:
        self.builds += 1
        try:
            with self._quiet():
                plan = compile_step(self.network, self.loss_fn, self.optimizer, x, labels)
            reason = engine.plan.last_reason
        except Exception as exc:  # the eager step then says what is wrong, if anything
            plan, reason = None, f"compiling it failed ({type(exc).__name__}: {exc})"
        if plan is None:
            self._say(f"The compiled training step is not used ({reason}); steps run "
                      "eagerly.")  # fmt: skip
            return None
        cells = f"{plan.compiled} Cell{'s' if plan.compiled != 1 else ''}"
        eager = f"; {plan.describe()}" if plan.fallbacks else ""
        self._say(f"Training steps replay a compiled plan of {cells}{eager}.")
        return plan

    def _say(self, note: str) -> None:
        if note not in self._said:
            self._said.add(note)
            self.notes.append(note)
            log.info("%s", note)
