"""More kernels of a compiled step (`engine.plan`): ops whose eager kernels allocate.

`OpKernel` runs its Cell's own eager op each step on Tensors built once over the plan's
buffers (its inputs' and trained Parameters' tape leaves fixed too), so it calls the very
NumPy kernels, random draws and in-place updates of the eager path, whatever they become:
BatchNorm updates its moving statistics in place, Dropout draws its mask from
`engine._random.rng()` in the same order. The op's result is copied into the plan's
output buffer; the backward calls the op's recorded gradient rule (`Node.vjp`) directly
when the Cell made one tape Node, else runs the Cell's few Nodes with `run_backward`.
One Tensor and one Node per op and step remain, and the kernels' own arrays: these ops
take no `out=`. Registered here: BatchNorm1d/2d, Dropout (any mode), Dense with a fused
activation or on an N-D input, the common activations, LayerNorm/GroupNorm, Embedding.
The editor's op Cells (`app.compiler.cells` Add, Mul, Concat) are registered by the app
(the engine does not import it) with `OP_CELL_RULES`.
"""

from __future__ import annotations

import numpy as np

from engine.autograd import leaf_node, run_backward, state
from engine.nn import layers_activation as act
from engine.nn import layers_basic as basic
from engine.nn import layers_dropout_nd as drop_nd
from engine.nn import layers_embedding as embedding
from engine.nn import layers_norm_group as norm_group
from engine.nn.layers_linear import Dense
from engine.nn.layers_norm import BatchNorm1d, BatchNorm2d
from engine.plan_rules import AddKernel, DenseKernel, Kernel, _put, register_rule
from engine.tensor import Tensor, wrap


class OpKernel(Kernel):
    """A Cell of one Tensor output run through its own `construct` on fixed Tensors."""

    @staticmethod
    def accepts(cell, in_shapes) -> str | None:
        return None

    def __init__(self, cell, ins, needs, target, shapes):
        self.leaves = [leaf_node("plan input") if need else None for need in needs]
        self.tensors = [wrap(a, leaf) for a, leaf in zip(ins, self.leaves, strict=True)]
        self.trained = [(p, leaf_node(p.name)) for p in cell.get_parameters()
                        if target(p) is not None]
        self.mine = {leaf for leaf in self.leaves if leaf is not None}
        self.mine.update(leaf for _, leaf in self.trained)
        self.node, self.oi = None, 0
        super().__init__(cell, ins, needs, target, shapes)

    def params(self):
        return [(p, p) for p, _ in self.trained]

    def op(self, *tensors) -> Tensor:
        """The eager computation of the Cell (a Cell without hooks is its `construct`)."""
        return self.cell.construct(*tensors)

    def forward(self):
        trained = self.trained
        kept = [p._node for p, _ in trained]
        for p, leaf in trained:
            p._node = leaf
        prev = state.recording
        state.recording = True
        try:
            out = self.op(*self.tensors)
        finally:
            state.recording = prev
            for (p, _), node in zip(trained, kept, strict=True):
                p._node = node
        np.copyto(self.outs[0], out._data)
        self.node, self.oi = out._node, out._oi

    def backward(self):
        found = self._grads(self.node, self.gout[0])
        self.node = None
        for gx, leaf in zip(self.gin, self.leaves, strict=True):
            if gx is not None:
                _put(gx, found.get(leaf))
        for p, leaf in self.trained:
            gp = self.pgrad.get(p)
            if gp is not None:
                _put(gp, found.get(leaf))

    def _grads(self, node, g) -> dict:
        """Leaf node -> its gradient, from the gradient `g` of the op's output."""
        if node is None:
            return {}
        if node.vjp is None:  # the output is an input (Dropout in predict mode)
            return {node: g}
        if node.n_out == 1 and all(link is None or link[0] in self.mine
                                   for link in node.parents):
            # The eager backward's call of this rule: same `needs`, same arrays.
            needs = tuple(link is not None for link in node.parents)
            found: dict = {}
            for link, gi in zip(node.parents, node.vjp(g, node.saved, needs), strict=True):
                if link is not None and gi is not None:
                    old = found.get(link[0])
                    found[link[0]] = gi if old is None else old + gi
            return found
        return run_backward([(node, self.oi, g)])


class DenseAnyKernel(OpKernel):
    """Dense: `DenseKernel` over 2-D inputs without an activation, else the eager op."""

    def __new__(cls, cell, ins, needs, target, shapes):
        if DenseKernel.accepts(cell, [a.shape for a in ins]) is None:
            return DenseKernel(cell, ins, needs, target, shapes)
        return super().__new__(cls)


class MulKernel(Kernel):
    """`x * y` of equal shapes; gradients `g * y` and `g * x` (as `ops.mul`)."""

    @staticmethod
    def accepts(cell, in_shapes) -> str | None:
        if len(in_shapes) != 2 or in_shapes[0] != in_shapes[1]:
            return "Mul of inputs of different shapes"
        return None

    def forward(self):
        np.multiply(self.ins[0], self.ins[1], out=self.outs[0])

    def backward(self):
        g = self.gout[0]
        for gx, other in zip(self.gin, reversed(self.ins), strict=True):
            if gx is not None:
                np.multiply(g, other, out=gx)


# The editor's op Cells (app.compiler.cells) by name, for the app to register with
# `register_rule(cells.Add, OP_CELL_RULES["Add"])` (Concat: the eager `ops.concat`).
OP_CELL_RULES = {"Add": AddKernel, "Mul": MulKernel, "Concat": OpKernel}

EAGER_OP_CELLS = (
    BatchNorm1d, BatchNorm2d, basic.Dropout, drop_nd.Dropout1d, drop_nd.Dropout2d,
    drop_nd.Dropout3d, norm_group.LayerNorm, norm_group.GroupNorm,
    basic.LeakyReLU, basic.GELU, basic.Softmax, basic.LogSoftmax, basic.Identity,
    act.ELU, act.SeLU, act.CELU, act.PReLU, act.Softsign, act.SiLU, act.Mish, act.HSwish,
    act.HSigmoid, act.ReLU6, act.LogSigmoid, act.Hardtanh, act.Softmin, embedding.Embedding,
)

for _cell_type in EAGER_OP_CELLS:
    register_rule(_cell_type, OpKernel)
register_rule(Dense, DenseAnyKernel)
