"""NLLLoss, SmoothL1Loss, HuberLoss, KLDivLoss, BCELoss (MindSpore 2.x names and defaults).

Each is one fused op of `engine.ops` (see engine/ops/_loss_more.py). MindSpore's
defaults are kept where they differ from PyTorch's: SmoothL1Loss does not reduce
unless asked ('none').
"""

from __future__ import annotations

import numbers

import numpy as np

from engine.nn.loss import LossBase, _constant
from engine.ops import _loss_more

__all__ = ["NLLLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss"]


def _positive(value, who: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{who}: {name} must be a number, got {type(value).__name__}")
    if not value > 0:
        raise ValueError(f"{who}: {name} must be greater than 0, got {value}")
    return float(value)


class NLLLoss(LossBase):
    """Negative log-likelihood of log-probabilities (N, C) or (N, C, d1, ...) at class labels.

    The input is expected to be log-probabilities, e.g. from LogSoftmax. Labels are
    int32/int64 class indices of shape (N,) / (N, d1, ...). `weight` (C,) rescales
    classes ('mean' divides by the summed weights); `ignore_index` labels count for nothing.
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__(reduction)
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
            raise TypeError(f"ignore_index must be an int, got {type(ignore_index).__name__}")
        self.weight = _constant(weight, "NLLLoss weight")
        self.ignore_index = int(ignore_index)

    def construct(self, logits, labels):
        return _loss_more.nll_loss(logits, labels, self.weight, self.ignore_index,
                                   self.reduction)

    def extend_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction}"


class SmoothL1Loss(LossBase):
    """Squared error below `beta`, absolute error above it: `0.5 d**2 / beta` where
    |d| < beta, else `|d| - 0.5 beta`. Labels have the logits' shape.

    MindSpore 2.x's default reduction is 'none': one loss per element.
    """

    def __init__(self, beta: float = 1.0, reduction: str = "none"):
        super().__init__(reduction)
        self.beta = _positive(beta, "SmoothL1Loss", "beta")

    def construct(self, logits, labels):
        return _loss_more.smooth_l1_loss(logits, labels, self.beta, self.reduction)

    def extend_repr(self) -> str:
        return f"beta={self.beta}, reduction={self.reduction}"


class HuberLoss(LossBase):
    """Squared error below `delta`, linear above it: `0.5 d**2` where |d| < delta, else
    `delta (|d| - 0.5 delta)`. Shapes broadcast."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction)
        self.delta = _positive(delta, "HuberLoss", "delta")

    def construct(self, logits, labels):
        return _loss_more.huber_loss(logits, labels, self.reduction, self.delta)

    def extend_repr(self) -> str:
        return f"reduction={self.reduction}, delta={self.delta}"


class KLDivLoss(LossBase):
    """Kullback-Leibler divergence `labels * (log labels - logits)` of a distribution from
    log-probabilities `logits` of its shape (e.g. from LogSoftmax).

    `reduction` is 'mean' (over every element), 'batchmean' (sum over the batch size:
    the true divergence per sample), 'sum' or 'none'.
    """

    def __init__(self, reduction: str = "mean"):
        super().__init__()  # LossBase knows no 'batchmean'
        if reduction not in ("mean", "batchmean", "sum", "none"):
            raise ValueError(
                f"KLDivLoss: reduction must be 'mean', 'batchmean', 'sum' or 'none', "
                f"got {reduction!r}"
            )
        self.reduction = reduction

    def construct(self, logits, labels):
        return _loss_more.kl_div(logits, labels, self.reduction)


class BCELoss(LossBase):
    """Binary cross-entropy of probabilities in [0, 1] (e.g. after a Sigmoid) against labels
    of their shape. `weight` rescales each element (it broadcasts to the logits' shape)."""

    def __init__(self, weight=None, reduction: str = "mean"):
        super().__init__(reduction)
        self.weight = _constant(weight, "BCELoss weight")

    def construct(self, logits, labels):
        return _loss_more.binary_cross_entropy(logits, labels, self.weight, self.reduction)
