"""Loss Cells (MindSpore 2.x names and defaults), each one fused op of `engine.ops`."""

from __future__ import annotations

import numpy as np

from engine.nn.cell import Cell
from engine.ops import _loss
from engine.ops._functional import _tensor
from engine.ops._functional import mul as _mul
from engine.ops._reduce import mean as _mean
from engine.ops._reduce import sum as _sum
from engine.tensor import Tensor, wrap


def _constant(value, what: str):
    """A loss's weight as a plain Tensor: never on the tape, never registered as a Parameter."""
    return None if value is None else wrap(np.array(_tensor(value, what)._data))

__all__ = [
    "LossBase", "MSELoss", "L1Loss", "CrossEntropyLoss", "SoftmaxCrossEntropyWithLogits",
    "BCEWithLogitsLoss",
]


class LossBase(Cell):
    """Base of the losses: holds and checks `reduction` ('mean', 'sum' or 'none')."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        _loss._check_reduction(reduction, type(self).__name__)
        self.reduction = reduction

    def get_loss(self, x, weights=1.0):
        """Weight an unreduced loss and reduce it with this loss's `reduction`."""
        if not (isinstance(weights, (int, float)) and weights == 1.0):
            if isinstance(weights, Tensor) and weights.dtype != x.dtype:
                weights = weights.astype(x.dtype)  # the loss keeps its own dtype, as MindSpore
            x = _mul(x, weights)
        if self.reduction == "mean":
            return _mean(x)
        if self.reduction == "sum":
            return _sum(x)
        return x

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}"


class MSELoss(LossBase):
    """`(logits - labels)**2`, reduced; shapes broadcast."""

    def construct(self, logits, labels):
        return _loss.mse_loss(logits, labels, self.reduction)


class L1Loss(LossBase):
    """`|logits - labels|`, reduced; shapes broadcast."""

    def construct(self, logits, labels):
        return _loss.l1_loss(logits, labels, self.reduction)


class CrossEntropyLoss(LossBase):
    """Softmax cross-entropy of logits (N, C) or (N, C, d1, ...) against classes or probabilities.

    Labels are int32/int64 class indices of shape (N,) / (N, d1, ...), or
    floating class probabilities of the logits' shape. `weight` (C,) rescales
    classes; `ignore_index` labels count for nothing (indices only);
    `label_smoothing` mixes the target with the uniform distribution.
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__(reduction)
        if not 0.0 <= label_smoothing <= 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1], got {label_smoothing}")
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
            raise TypeError(f"ignore_index must be an int, got {type(ignore_index).__name__}")
        self.weight = _constant(weight, "CrossEntropyLoss weight")
        self.ignore_index = int(ignore_index)
        self.label_smoothing = float(label_smoothing)

    def construct(self, logits, labels):
        return _loss._cross_entropy(logits, labels, self.weight, self.ignore_index,
                                    self.reduction, self.label_smoothing, "CrossEntropyLoss")


class SoftmaxCrossEntropyWithLogits(LossBase):
    """Softmax cross-entropy per sample of logits (N, C).

    With `sparse=False` the labels are class probabilities (usually one-hot) of
    the logits' shape; with `sparse=True` they are int32/int64 class indices of
    shape (N,). The default `reduction='none'` returns one loss per sample.
    """

    def __init__(self, sparse: bool = False, reduction: str = "none"):
        super().__init__(reduction)
        self.sparse = bool(sparse)

    def construct(self, logits, labels):
        who = "SoftmaxCrossEntropyWithLogits"
        lshape = _tensor(labels, f"{who} labels").shape
        xshape = _tensor(logits, f"{who} logits").shape
        if self.sparse and lshape != xshape[:1] + xshape[2:]:
            raise ValueError(
                f"{who}(sparse=True): logits of shape {xshape} need int class labels of shape "
                f"{xshape[:1] + xshape[2:]}, got labels of shape {lshape}"
            )
        if not self.sparse and lshape != xshape:
            raise ValueError(
                f"{who}(sparse=False): labels must be class probabilities (e.g. one-hot) of the "
                f"logits' shape {xshape}, got shape {lshape}; pass sparse=True for class indices"
            )
        return _loss._cross_entropy(logits, labels, None, None, self.reduction, 0.0, who)

    def extend_repr(self) -> str:
        return f"sparse={self.sparse}, reduction={self.reduction}"


class BCEWithLogitsLoss(LossBase):
    """Binary cross-entropy of sigmoid(logits) against labels in [0, 1], from the logits stably.

    `weight` rescales each element, `pos_weight` the positive term; both
    broadcast to the logits' shape.
    """

    def __init__(self, reduction: str = "mean", weight=None, pos_weight=None):
        super().__init__(reduction)
        self.weight = _constant(weight, "BCEWithLogitsLoss weight")
        self.pos_weight = _constant(pos_weight, "BCEWithLogitsLoss pos_weight")

    def construct(self, logits, labels):
        return _loss.binary_cross_entropy_with_logits(
            logits, labels, self.weight, self.pos_weight, self.reduction
        )
