"""A compiled training step: trace one step of a network once, then replay it over buffers.

Trace: `compile_step` runs the network's forward and the loss once (no tape, the random
generator and the Parameters put back afterwards) with a tracer in `Cell.__call__`. It
records which Cells run, in which order, and which Cell's output feeds which input
(by tensor identity). A Cell with a kernel rule (`engine.plan_rules.RULES`) is one step;
a container Cell is looked into; any other Cell is one eager step.

Replay: `Plan.step(x, y)` copies the batch into its input buffers, runs every kernel's
forward, then every backward in reverse (gradients of Parameters go straight into the
optimizer's flat gradient buffer), and calls the optimizer's update on it. No Tensor,
tape Node or temporary array of a compiled Cell is made; every array is allocated once.

Fallback: a Cell with no rule, with hooks or a custom `bprop`, runs eagerly on the tape
for its part of the step (`plan_rules.Segment`): its hooks fire and see the eager
values. A container whose `construct` computes between its Cells (Python ops, control
flow) is one eager step as a whole. `Plan.fallbacks` says which Cells and why; when no
Cell of the network compiles, `compile_step` returns None and `last_reason` says why.
The plan depends on shapes, modes, hooks, Parameters and the optimizer's packing:
`stale()` tells when it must be rebuilt. The learning rate is read at every step.
"""

from __future__ import annotations

import numpy as np

from engine import _random, plan_rules_conv, plan_rules_more  # noqa: F401 (register rules)
from engine.autograd import no_grad
from engine.nn import cell as cell_module
from engine.nn.cell import Cell
from engine.parameter import Parameter
from engine.plan_rules import RULES, Segment, rule_for
from engine.tensor import Tensor

__all__ = ["Plan", "compile_step", "hook_state", "last_reason"]

last_reason = ""  # why the last compile_step returned None


class _Untraceable(Exception):
    def __init__(self, cell: Cell):
        super().__init__()
        self.cell = cell


def _flat(obj, found: list):
    """The structure of `obj` with its Tensors taken out into `found` (in order)."""
    if isinstance(obj, Tensor):
        found.append(obj)
        return None
    if isinstance(obj, (tuple, list)):
        return (type(obj), [_flat(o, found) for o in obj])
    if isinstance(obj, dict):
        return (dict, [(k, _flat(v, found)) for k, v in obj.items()])
    return ("const", obj)


def _rebuild(spec, items):
    if spec is None:
        return next(items)
    kind, body = spec
    if kind == "const":
        return body
    if kind is dict:
        return {k: _rebuild(v, items) for k, v in body}
    return kind(_rebuild(s, items) for s in body)


class _Unit:
    __slots__ = ("cell", "ins", "spec", "outs", "out_spec")

    def __init__(self, cell, ins, spec, outs, out_spec):
        self.cell, self.ins, self.spec, self.outs, self.out_spec = cell, ins, spec, outs, out_spec

    def caller(self):
        cell, spec = self.cell, self.spec

        def call(tensors):
            args, kwargs = _rebuild(spec, iter(tensors))
            found: list = []
            _flat(cell(*args, **kwargs), found)
            return found

        return call


class _Tracer:
    """Called for every Cell call while tracing; records the units and their data flow."""

    def __init__(self, forced: set):
        self.forced = forced
        self.slot: dict = {}      # id(tensor) -> slot
        self.shapes: list = []    # slot -> (shape, dtype)
        self.keep: list = []      # the traced tensors, so their ids stay unique
        self.units: list = []
        self.stack: list = []

    def add(self, t: Tensor) -> int:
        self.slot[id(t)] = len(self.shapes)
        self.shapes.append((t._data.shape, t._data.dtype))
        self.keep.append(t)
        return len(self.shapes) - 1

    def is_unit(self, cell: Cell) -> bool:
        return (id(cell) in self.forced or cell._hooked or type(cell) in RULES
                or not any(c is not None for c in cell._cells.values()))

    def __call__(self, cell, args, kwargs):
        if not self.is_unit(cell):
            self.stack.append(cell)
            try:
                out = cell.construct(*args, **kwargs)
            finally:
                self.stack.pop()
            found: list = []
            _flat(out, found)
            if any(id(t) not in self.slot for t in found):  # computed after its last Cell
                raise _Untraceable(cell)
            return out
        found: list = []
        spec = _flat((args, kwargs), found)
        ins = []
        for t in found:
            s = self.slot.get(id(t))
            if s is None or isinstance(t, Parameter):
                raise _Untraceable(self.stack[-1] if self.stack else cell)
            ins.append(s)
        cell_module.tracing.tracer = None
        try:
            out = cell.construct(*args, **kwargs)
        finally:
            cell_module.tracing.tracer = self
        outs: list = []
        out_spec = _flat(out, outs)
        self.units.append(_Unit(cell, ins, spec, [self.add(t) for t in outs], out_spec))
        return out


def _trace(network, loss_fn, x: Tensor, y: Tensor, params: list):
    """Trace until every container that computes between its Cells is itself a unit."""
    forced: set = set()
    saved = [np.array(p._data) for p in params]
    while True:
        tracer = _Tracer(forced)
        tracer.add(x)
        tracer.add(y)
        try:
            with no_grad(), _random.fork_rng(), np.errstate(all="ignore"):
                cell_module.tracing.tracer = tracer
                try:
                    out = network(x)
                    if not isinstance(out, Tensor) or id(out) not in tracer.slot:
                        raise _Untraceable(network)
                    loss = loss_fn(out, y)
                finally:
                    cell_module.tracing.tracer = None
        except _Untraceable as exc:
            if id(exc.cell) in forced:
                raise
            forced.add(id(exc.cell))
            continue
        finally:
            for p, a in zip(params, saved, strict=True):
                np.copyto(p._data, a)
        return tracer, out, loss


def hook_state(network: Cell, loss_fn: Cell) -> tuple:
    """Which Cells of `network` and `loss_fn` have hooks or a `bprop` now, in order: what a
    plan depends on of their hooks (`Plan.stale(any_hook_change=False)`)."""
    return tuple(c._hooked for top in (network, loss_fn) for _, c in top.cells_and_names())


def _all_params(*cells) -> list:
    seen, found = set(), []
    for c in cells:
        for p in c.get_parameters():
            if id(p) not in seen:
                seen.add(id(p))
                found.append(p)
    return found


def compile_step(network: Cell, loss_fn: Cell, optimizer, x, y):
    """A `Plan` of one training step of `network` + `loss_fn` + `optimizer` on batches shaped
    like `x` (the network's input) and `y` (the loss's labels), in the network's current
    mode; None (reason in `last_reason`) when nothing of the network can be compiled."""
    global last_reason
    x = x if isinstance(x, Tensor) else Tensor(x)
    y = y if isinstance(y, Tensor) else Tensor(y)
    params = _all_params(network, loss_fn)
    optimizer._check_packing()
    try:
        tracer, out, loss = _trace(network, loss_fn, x, y, params)
    except _Untraceable:
        last_reason = "the network's forward could not be traced"
        return None
    if loss._data.shape != () or loss._data.dtype.kind != "f":
        last_reason = "the loss is not a single number"
        return None
    plan = Plan(network, loss_fn, optimizer, tracer, tracer.slot[id(out)], params)
    if not plan.compiled:
        last_reason = "no Cell of the network has a compiled rule: " + plan.describe()
        return None
    last_reason = ""
    return plan


class Plan:
    """One compiled training step; build it with `compile_step`."""

    def __init__(self, network, loss_fn, optimizer, tracer: _Tracer, out_slot: int, params):
        self.network, self.loss_fn, self.optimizer = network, loss_fn, optimizer
        self.params = params
        shapes = tracer.shapes
        self.x_buf = np.empty(*shapes[0])
        self.y_buf = np.empty(*shapes[1])
        names = {id(c): n or type(c).__name__ for n, c in network.cells_and_names()}
        names[id(loss_fn)] = type(loss_fn).__name__
        targets = self._grad_targets()
        target = targets.get
        vals = [self.x_buf, self.y_buf] + [None] * (len(shapes) - 2)
        needs = [False] * len(shapes)
        kernels, self.fallbacks, self.compiled = [], [], 0
        for unit in tracer.units:
            ins = [vals[s] for s in unit.ins]
            in_needs = [needs[s] for s in unit.ins]
            kind, why = rule_for(unit.cell, [a.shape for a in ins])
            out_shapes = [shapes[s] for s in unit.outs]
            if kind is None:
                k = Segment(unit.cell, ins, in_needs, lambda p: target(id(p)), out_shapes,
                            unit.caller())
                self.fallbacks.append((names.get(id(unit.cell), type(unit.cell).__name__), why))
            else:
                k = kind(unit.cell, ins, in_needs, lambda p: target(id(p)), out_shapes)
                self.compiled += unit.cell is not loss_fn
            trains = any(target(id(p)) is not None for p, _ in k.params())
            for s, a in zip(unit.outs, k.outs, strict=True):
                vals[s] = a
                needs[s] = trains or any(in_needs)
            kernels.append(k)
        self.forward_kernels = kernels
        self.logits = vals[out_slot]
        self.loss_buf = kernels[-1].outs[0]
        self._bind_backward(tracer.units, kernels, vals, needs, targets)
        self._signature = self._current_signature()
        self._hook_count = cell_module.hook_changes[0]

    def _grad_targets(self) -> dict:
        """id(Parameter) -> its view of the optimizer's flat gradient buffer."""
        targets = {}
        self._buckets = self.optimizer._buckets
        for bucket in self._buckets:
            for k, p in enumerate(bucket.params):
                lo, hi = bucket.offsets[k], bucket.offsets[k + 1]
                targets[id(p)] = bucket.grad[lo:hi].reshape(p._data.shape)
        return targets

    def _bind_backward(self, units, kernels, vals, needs, targets) -> None:
        live = [False] * len(vals)
        live[units[-1].outs[0]] = True
        gbuf: dict = {}
        written_params: set = set()
        order = []
        for unit, k in zip(reversed(units), reversed(kernels), strict=True):
            if not any(live[s] for s in unit.outs):
                continue
            k.gout = [gbuf.get(s) if live[s] else None for s in unit.outs]
            adds = []
            for i, s in enumerate(unit.ins):
                if not needs[s]:
                    continue
                if s not in gbuf:
                    gbuf[s] = k.gin[i] = np.empty_like(vals[s])
                    live[s] = True
                else:
                    k.gin[i] = np.empty_like(vals[s])
                    adds.append((gbuf[s], k.gin[i]))
            for p, key in k.params():
                view = targets.get(id(p))
                if view is None:
                    continue
                if id(p) in written_params:
                    k.pgrad[key] = np.empty_like(view)
                    adds.append((view, k.pgrad[key]))
                else:
                    k.pgrad[key] = view
                    written_params.add(id(p))
            order.append((k, adds))
        kernels[-1].gout = [np.ones((), vals[units[-1].outs[0]].dtype)]
        self.backward_kernels = order
        self.zero_views = [v for i, v in targets.items() if i not in written_params]
        self.grads = [targets.get(id(p)) for p in self.optimizer.parameters]

    # -- validity ----------------------------------------------------------------
    def _current_signature(self):
        # Which Cells have hooks, not which hooks: a hooked Cell runs eagerly and calls its
        # hooks as they are at each step (see `stale`).
        cells = tuple((id(c), c.training, c._hooked) for _, c in self.network.cells_and_names())
        params = tuple((id(p), id(p._data), p.requires_grad) for p in self.params)
        loss = tuple((c.training, c._hooked) for _, c in self.loss_fn.cells_and_names())
        return cells, params, loss

    def valid_for(self, x, y) -> bool:
        """True when batches shaped and typed like `x`, `y` can use this plan."""
        return (x.shape == self.x_buf.shape and y.shape == self.y_buf.shape
                and x.dtype == self.x_buf.dtype and y.dtype == self.y_buf.dtype)

    def stale(self, any_hook_change: bool = True) -> bool:
        """True when the network, its modes, hooks, Parameters (replaced, frozen or thawed)
        or the optimizer's packing changed since the plan was built: rebuild it.

        With `any_hook_change=False` hooks count only when they change which Cells have
        hooks: a hook put on for one step and taken off again (a capture on its stride)
        leaves the plan usable, so the caller can keep one plan per such state."""
        self.optimizer._check_packing()
        if (self.optimizer._buckets is not self._buckets
                or self._current_signature() != self._signature):
            return True
        return any_hook_change and cell_module.hook_changes[0] != self._hook_count

    def describe(self) -> str:
        """Which Cells run eagerly and why, for the log ('' when all compiled)."""
        return "; ".join(f"{name} runs eagerly: {why}" for name, why in self.fallbacks)

    # -- the step ----------------------------------------------------------------
    def forward(self, x, y) -> float:
        """Forward and loss only (the batch is copied in); returns the loss."""
        np.copyto(self.x_buf, x)
        np.copyto(self.y_buf, y)
        for k in self.forward_kernels:
            k.forward()
        return float(self.loss_buf)

    def backward(self) -> None:
        """Gradients of the loss into the optimizer's gradient buffer (`self.grads`)."""
        for z in self.zero_views:
            z.fill(0)
        for k, adds in self.backward_kernels:
            k.backward()
            for dest, part in adds:
                dest += part

    def update(self) -> None:
        """The optimizer's update from `self.grads`, at its current learning rate."""
        opt = self.optimizer
        lr = opt._lr_at(opt._step)
        step = opt._step + 1
        for bucket in self._buckets:
            opt._update(bucket, bucket.grad, lr, step)
        opt.__dict__["_step"] = step

    def step(self, x, y) -> float:
        """One training step on the batch `x`, `y`; returns the loss (`self.logits` holds
        the network's output until the next step)."""
        loss = self.forward(x, y)
        self.backward()
        self.update()
        return loss
