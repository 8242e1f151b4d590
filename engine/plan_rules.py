"""The kernels of a compiled step (`engine.plan`): one per traced Cell, over bound buffers.

A kernel is built once from its Cell, its input buffers and what wants a gradient; its
`forward()` writes its output buffers and its `backward()` reads `gout` (the gradients
of its outputs) and writes `gin` (of its inputs, None where none is wanted) and the
gradients of its Parameters (`pgrad`, views into the optimizer's flat gradient buffer).
Each rule repeats its eager op's NumPy calls in the same order, with `out=`, so its
results equal the eager path's. `Segment` runs any other Cell eagerly on the tape.
"""

from __future__ import annotations

import numpy as np

from engine.autograd import leaf_node, run_backward, state
from engine.nn import layers_basic as basic
from engine.nn.cell import Cell
from engine.nn.layers_linear import Dense
from engine.nn.loss import CrossEntropyLoss, MSELoss, SoftmaxCrossEntropyWithLogits
from engine.ops._loss import _index_labels
from engine.tensor import Tensor, wrap


class Kernel:
    """Base: `ins` input arrays, `needs[i]` whether input i wants a gradient,
    `target(param)` the array a Parameter's gradient goes to (None: not wanted)."""

    def __init__(self, cell: Cell, ins: list, needs: list, target, shapes: list):
        self.cell = cell
        self.ins = ins
        self.needs = needs
        self.gin: list = [None] * len(ins)   # set by the plan: where input gradients go
        self.gout: list = []                 # set by the plan: gradients of the outputs
        self.outs = self.make_outputs(shapes)
        self.pgrad: dict = {}

    def make_outputs(self, shapes):
        return [np.empty(s, d) for s, d in shapes]

    def params(self) -> list:
        """(Parameter, attribute) pairs whose gradients this kernel writes."""
        return []


# ----------------------------------------------------------------------------- layers


class DenseKernel(Kernel):
    """`out = x @ w.T (+ b)`; `gx = g @ w`, `gw = g.T @ x`, `gb = g.sum(0)` (as `ops.dense`)."""

    @staticmethod
    def accepts(cell, in_shapes) -> str | None:
        if cell.activation_flag:
            return "Dense with a fused activation"
        if len(in_shapes) != 1 or len(in_shapes[0]) != 2:
            return "Dense on a non-2-D input"
        return None

    def params(self):
        c = self.cell
        return [(c.weight, "w")] + ([(c.bias, "b")] if c.bias is not None else [])

    def forward(self):
        c = self.cell
        out = self.outs[0]
        # np.dot writes straight into `out` (np.matmul would make a temporary); both are
        # the same BLAS call, with the same result as the eager `x @ w.T`.
        np.dot(self.ins[0], c.weight._data.T, out=out)
        if c.bias is not None:
            out += c.bias._data

    def backward(self):
        g = self.gout[0]
        gx = self.gin[0]
        if gx is not None:
            np.dot(g, self.cell.weight._data, out=gx)
        gw = self.pgrad.get("w")
        if gw is not None:
            np.dot(g.T, self.ins[0], out=gw)
        gb = self.pgrad.get("b")
        if gb is not None:
            np.sum(g, axis=0, out=gb)


class ReLUKernel(Kernel):
    """`max(x, 0)`; gradient `g * (out > 0)`."""

    def make_outputs(self, shapes):
        outs = super().make_outputs(shapes)
        self.mask = np.empty(shapes[0][0], bool)
        return outs

    def forward(self):
        np.maximum(self.ins[0], 0, out=self.outs[0])

    def backward(self):
        gx = self.gin[0]
        if gx is not None:
            np.greater(self.outs[0], 0, out=self.mask)
            np.multiply(self.gout[0], self.mask, out=gx)


class TanhKernel(Kernel):
    """`tanh(x)`; gradient `g * (1 - t * t)`."""

    def make_outputs(self, shapes):
        outs = super().make_outputs(shapes)
        self.tmp = np.empty(*shapes[0])
        return outs

    def forward(self):
        np.tanh(self.ins[0], out=self.outs[0])

    def backward(self):
        gx = self.gin[0]
        if gx is not None:
            t, tmp = self.outs[0], self.tmp
            np.multiply(t, t, out=tmp)
            np.subtract(1, tmp, out=tmp)
            np.multiply(self.gout[0], tmp, out=gx)


class SigmoidKernel(Kernel):
    """The stable sigmoid of `ops.sigmoid`; gradient `g * s * (1 - s)`."""

    def make_outputs(self, shapes):
        outs = super().make_outputs(shapes)
        shape, dtype = shapes[0]
        self.e, self.den, self.a = (np.empty(shape, dtype) for _ in range(3))
        self.mask = np.empty(shape, bool)
        return outs

    def forward(self):
        x, e, den, a, out = self.ins[0], self.e, self.den, self.a, self.outs[0]
        np.abs(x, out=e)
        np.negative(e, out=e)
        np.exp(e, out=e)
        np.add(1, e, out=den)
        np.divide(1, den, out=a)
        np.divide(e, den, out=out)
        np.greater_equal(x, 0, out=self.mask)
        np.copyto(out, a, where=self.mask)

    def backward(self):
        gx = self.gin[0]
        if gx is not None:
            s = self.outs[0]
            np.multiply(self.gout[0], s, out=gx)
            np.subtract(1, s, out=self.a)
            gx *= self.a


class FlattenKernel(Kernel):
    """A reshape: the output is a view of the input; the gradient a reshaped copy."""

    def make_outputs(self, shapes):
        return [self.ins[0].reshape(shapes[0][0])]

    def forward(self):
        pass

    def backward(self):
        gx = self.gin[0]
        if gx is not None:
            np.copyto(gx, self.gout[0].reshape(gx.shape))


class AddKernel(Kernel):
    """`x + y` of equal shapes (the editor's Add node); both get the gradient."""

    @staticmethod
    def accepts(cell, in_shapes) -> str | None:
        if len(in_shapes) != 2 or in_shapes[0] != in_shapes[1]:
            return "Add of inputs of different shapes"
        return None

    def forward(self):
        np.add(self.ins[0], self.ins[1], out=self.outs[0])

    def backward(self):
        for gx in self.gin:
            if gx is not None:
                np.copyto(gx, self.gout[0])


# ----------------------------------------------------------------------------- losses


class CrossEntropyKernel(Kernel):
    """Softmax cross-entropy, mean over rows, of (N, C) logits against class indices or
    class probabilities, as `ops._loss._cross_entropy` computes it (no weight, no smoothing).
    """

    @staticmethod
    def accepts(cell, in_shapes) -> str | None:
        if cell.reduction != "mean" or len(in_shapes[0]) != 2:
            return "a loss other than the mean over (N, C) logits"
        if isinstance(cell, CrossEntropyLoss):
            if cell.weight is not None or cell.label_smoothing:
                return "CrossEntropyLoss with class weights or label smoothing"
            if 0 <= cell.ignore_index < in_shapes[0][1]:
                return "CrossEntropyLoss with an ignore_index that is a class"
        return None

    def make_outputs(self, shapes):
        shape, dtype = self.ins[0].shape, self.ins[0].dtype
        n, c = shape
        self.probs = self.ins[1].shape == shape and self.ins[1].dtype.kind == "f"
        self.who = type(self.cell).__name__
        self.m = np.empty((n, 1), dtype)
        self.s = np.empty((n, 1), dtype)
        self.lse = np.empty((n, 1), dtype)
        self.shifted = np.empty(shape, dtype)
        self.e = np.empty(shape, dtype)
        self.per_row = np.empty(n, dtype)
        self.rows = np.arange(n)
        self.coef = np.ones((), dtype) / n  # the seed gradient (1) over the mean's count
        if self.probs:
            self.logp = np.empty(shape, dtype)
            self.total = np.empty((n, 1), dtype)
        return [np.empty((), dtype)]

    def forward(self):
        x, t = self.ins
        sh, e, lse = self.shifted, self.e, self.lse
        np.max(x, axis=1, keepdims=True, out=self.m)
        np.subtract(x, self.m, out=sh)
        np.exp(sh, out=e)
        np.sum(e, axis=1, keepdims=True, out=self.s)
        np.log(self.s, out=lse)
        pr = self.per_row
        if self.probs:
            logp = self.logp
            np.subtract(sh, lse, out=logp)
            np.multiply(t, logp, out=logp)  # q * logp (logp itself is not needed again)
            np.sum(logp, axis=1, out=pr)
            np.negative(pr, out=pr)
        else:
            y, _ = _index_labels(t, t.shape, x.shape[1], self.ignore(), self.who)
            np.subtract(sh[self.rows, y], lse[:, 0], out=pr)
            np.negative(pr, out=pr)
            self.y = y
        self.outs[0][...] = pr.sum() / len(pr)

    def ignore(self):
        return getattr(self.cell, "ignore_index", None)

    def backward(self):
        gx = self.gin[0]
        if gx is None:
            return
        np.divide(self.e, self.s, out=gx)
        if self.probs:
            t = self.ins[1]
            np.sum(t, axis=1, keepdims=True, out=self.total)
            gx *= self.total
            gx -= t
            gx *= self.coef
        else:
            gx *= self.coef
            gx[self.rows, self.y] -= self.coef


class MSEKernel(Kernel):
    """Mean of `(x - t)**2` over equal shapes; gradient `diff * (2 * g / count)`."""

    @staticmethod
    def accepts(cell, in_shapes) -> str | None:
        if cell.reduction != "mean" or in_shapes[0] != in_shapes[1]:
            return "MSELoss other than the mean over equal shapes"
        return None

    def make_outputs(self, shapes):
        x = self.ins[0]
        self.diff = np.empty(x.shape, x.dtype)
        self.sq = np.empty(x.shape, x.dtype)
        self.two_spread = 2 * (np.ones((), x.dtype) / max(x.size, 1))
        return [np.empty((), x.dtype)]

    def forward(self):
        x, t = self.ins
        if t.dtype != x.dtype:
            t = t.astype(x.dtype)
        np.subtract(x, t, out=self.diff)
        np.multiply(self.diff, self.diff, out=self.sq)
        self.outs[0][...] = self.sq.mean()

    def backward(self):
        gx = self.gin[0]
        if gx is not None:
            np.multiply(self.diff, self.two_spread, out=gx)


RULES: dict = {
    Dense: DenseKernel,
    basic.ReLU: ReLUKernel,
    basic.Tanh: TanhKernel,
    basic.Sigmoid: SigmoidKernel,
    basic.Flatten: FlattenKernel,
    CrossEntropyLoss: CrossEntropyKernel,
    SoftmaxCrossEntropyWithLogits: CrossEntropyKernel,
    MSELoss: MSEKernel,
}


def register_rule(cell_type: type, kernel: type) -> None:
    """Compile Cells of exactly `cell_type` with `kernel` (e.g. the editor's op Cells)."""
    RULES[cell_type] = kernel


def rule_for(cell: Cell, in_shapes: list) -> tuple[type | None, str]:
    """(the kernel class for `cell`, '') or (None, why it runs eagerly)."""
    if cell._hooked:
        kind = "a custom bprop" if type(cell).bprop is not None else "hooks"
        return None, f"it has {kind}"
    kernel = RULES.get(type(cell))
    if kernel is None:
        return None, "no compiled rule for its type"
    why = kernel.accepts(cell, in_shapes) if hasattr(kernel, "accepts") else None
    if why:
        return None, why
    return kernel, ""


# ----------------------------------------------------------------------------- fallback


class Segment(Kernel):
    """A Cell run eagerly each step: its inputs and Parameters become tape leaves, its
    forward records, and its backward runs the tape from its outputs. Hooks and `bprop`
    fire as in the eager path. Its outputs are copied into the plan's buffers."""

    def __init__(self, cell, ins, needs, target, shapes, call):
        self.call = call  # (rebuild args/kwargs from the input arrays), see plan._Unit
        self.trained = [p for p in cell.get_parameters() if target(p) is not None]
        super().__init__(cell, ins, needs, target, shapes)

    def params(self):
        return [(p, p) for p in self.trained]

    def forward(self):
        ins = self.ins
        tensors = []
        for a, need in zip(ins, self.needs, strict=True):
            tensors.append(wrap(a, leaf_node("plan input")) if need else wrap(a))
        self.tensors = tensors
        saved = [p._node for p in self.trained]
        for p in self.trained:
            p._node = leaf_node(p.name)
        self.leaves = [p._node for p in self.trained]
        prev = state.recording
        state.recording = True
        try:
            outs = self.call(tensors)
        finally:
            state.recording = prev
            for p, node in zip(self.trained, saved, strict=True):
                p._node = node
        self.results = outs
        for buf, t in zip(self.outs, outs, strict=True):
            np.copyto(buf, t._data)

    def backward(self):
        roots = [(t._node, t._oi, g) for t, g in zip(self.results, self.gout, strict=True)
                 if isinstance(t, Tensor) and t._node is not None and g is not None]
        found = run_backward(roots) if roots else {}
        for t, gx in zip(self.tensors, self.gin, strict=True):
            if gx is not None:
                _put(gx, found.get(t._node))
        for p, leaf in zip(self.trained, self.leaves, strict=True):
            gp = self.pgrad.get(p)
            if gp is not None:
                _put(gp, found.get(leaf))
        self.results = self.tensors = None


def _put(dest: np.ndarray, g) -> None:
    if g is None:
        dest.fill(0)
    else:
        np.copyto(dest, np.broadcast_to(g, dest.shape), casting="unsafe")
