"""Training wrappers: `WithLossCell` (network + loss), `TrainOneStepCell` (one optimizer step)."""

from __future__ import annotations

import numbers

from engine.grad import value_and_grad
from engine.nn.cell import Cell
from engine.tensor import wrap

__all__ = ["WithLossCell", "TrainOneStepCell"]


class WithLossCell(Cell):
    """`loss_fn(backbone(data), label)`: a network and its loss as one Cell."""

    def __init__(self, backbone, loss_fn):
        # No prefix: the backbone's Parameters keep their names (checkpoints stay compatible).
        super().__init__(auto_prefix=False)
        if not callable(backbone) or not callable(loss_fn):
            raise TypeError("WithLossCell needs a backbone Cell and a loss function or Cell")
        self._backbone = backbone
        self._loss_fn = loss_fn

    def construct(self, data, label):
        return self._loss_fn(self._backbone(data), label)

    @property
    def backbone_network(self):
        return self._backbone


class TrainOneStepCell(Cell):
    """Calling it runs `network(*inputs)`, backpropagates, updates the weights and returns the loss.

    `network` returns the loss (e.g. a `WithLossCell`); `optimizer` updates
    `optimizer.parameters`. `sens` scales the gradients (the backward seed;
    None means 1.0), as MindSpore's. With `return_grad=True` a call returns
    `(loss, {parameter name: gradient})`.
    """

    def __init__(self, network, optimizer, sens=None, return_grad=False):
        super().__init__(auto_prefix=False)
        from engine.nn.optimizer import Optimizer

        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"TrainOneStepCell needs an Optimizer, got {type(optimizer).__name__}")
        self.network = network
        self.network.set_grad()
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        if sens is not None and (isinstance(sens, bool) or not isinstance(sens, numbers.Number)):
            raise TypeError(f"TrainOneStepCell: sens must be a number, got {type(sens).__name__}")
        self.sens = 1.0 if sens is None else float(sens)
        self.return_grad = bool(return_grad)
        self.__dict__["_grad_fn"] = value_and_grad(network, None, self.weights)

    def construct(self, *inputs):
        loss, grads = self._grad_fn(*inputs)
        if self.sens != 1.0:
            grads = tuple(wrap(g._data * self.sens) for g in grads)
        self.optimizer(grads)
        if self.return_grad:
            return loss, {p.name: g for p, g in zip(self.weights, grads, strict=True)}
        return loss
