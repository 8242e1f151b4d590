"""Labels in the form each loss wants, and how many predictions were right.

Cross-entropy losses and NLLLoss take class indices as they are. KLDivLoss on a
classification compares with the one-hot distribution of the labels; BCE, MSE, L1,
SmoothL1 and Huber losses with one-hot targets (or 0/1 for a single output column). A
prediction is the highest-scoring class, or for a single output: above 0 for
BCEWithLogits (a logit), above 0.5 for the others.

`output_width_problem` says, before training, when the network's output can't mean
what the loss makes of it: a cross-entropy, NLLLoss or KLDivLoss needs one score per
class, exactly (a wider output trains scores for classes the data never has, and its
predictions can name them); one-hot targets (BCE, MSE, L1, ... on classes) need one
column per class, or a single column for two classes; a regression one value per target.
Losses of classes (cross-entropies, NLLLoss, KLDivLoss, BCELoss) refuse a regression.
"""

from __future__ import annotations

import numpy as np

import engine
from app.datasets import CLASSIFICATION, Dataset

INDEX_LOSSES = frozenset({"CrossEntropyLoss", "SoftmaxCrossEntropyWithLogits", "NLLLoss"})
# Losses comparing with a whole distribution over the classes: one column per class, exactly.
DISTRIBUTION_LOSSES = frozenset({"KLDivLoss"})
# Losses that only make sense with class labels (BCELoss: probabilities against 0/1 labels).
CLASS_LOSSES = INDEX_LOSSES | DISTRIBUTION_LOSSES | {"BCELoss"}
REGRESSION_LOSSES = "MSELoss, L1Loss, SmoothL1Loss or HuberLoss"


class Targets:
    """Adapts a data set's labels to one loss and counts correct predictions."""

    def __init__(self, loss_name: str, task: str) -> None:
        self.loss_name = loss_name
        self.classification = task == CLASSIFICATION
        if not self.classification and loss_name in CLASS_LOSSES:
            raise ValueError(
                f"{loss_name} needs class labels, but the data set is a regression; "
                f"use {REGRESSION_LOSSES}."
            )
        self._threshold = 0.0 if loss_name == "BCEWithLogitsLoss" else 0.5

    def for_loss(self, y: engine.Tensor | np.ndarray, output_shape: tuple[int, ...]):
        """The labels `y` shaped for this loss against an output of `output_shape`."""
        labels = y.asnumpy() if isinstance(y, engine.Tensor) else np.asarray(y)
        if self.classification:
            if self.loss_name in INDEX_LOSSES:
                return engine.Tensor(labels)
            if self.loss_name not in DISTRIBUTION_LOSSES and (
                    len(output_shape) == 1 or output_shape[-1] == 1):
                return engine.Tensor(labels.astype(np.float32).reshape(output_shape))
            one_hot = np.zeros(output_shape, dtype=np.float32)
            one_hot[np.arange(len(labels)), labels] = 1.0
            return engine.Tensor(one_hot)
        if labels.shape != tuple(output_shape) and labels.size == int(np.prod(output_shape)):
            labels = labels.reshape(output_shape)  # (N, 1) targets for an (N,) output
        return engine.Tensor(labels)

    def predicted(self, output: np.ndarray) -> np.ndarray:
        """The class each sample of `output` is given (a classification), as int64."""
        count = len(output)
        if output.ndim == 1 or output.shape[-1] == 1:
            return (output.reshape(count) > self._threshold).astype(np.int64)
        return output.reshape(count, -1).argmax(axis=1)

    def correct(self, output: np.ndarray, y: np.ndarray) -> int | None:
        """How many samples the output classifies right; None for a regression."""
        if not self.classification:
            return None
        return int(np.count_nonzero(self.predicted(output) == y))


def output_width_problem(shape: tuple | None, data: Dataset, targets: Targets) -> str | None:
    """Why an output of `shape` (batch, values) can't be trained on `data` with the loss of
    `targets`, or None if it can (or its width is not known: a trial batch will tell)."""
    per_class = targets.classification and targets.loss_name in INDEX_LOSSES | DISTRIBUTION_LOSSES
    if shape and len(shape) == 1 and per_class:  # (N,): one value per sample, no class axis
        return (f"The network's output has one value per sample, but {targets.loss_name} on "
                f"the data set {data.name} needs one per class: the last layer needs exactly "
                f"{data.output_size} values.")  # fmt: skip
    if not shape or len(shape) != 2 or not isinstance(shape[-1], int):
        return None
    width, wanted = shape[-1], data.output_size
    if per_class:
        fits, what = width == wanted, f"exactly {wanted} values (one per class)"
    elif targets.classification:
        fits = width == wanted or (width == 1 and wanted == 2)
        what = f"{wanted} values (one per class)" + (" or 1" if wanted == 2 else "")
    else:
        fits, what = width == wanted, f"{wanted} value{'s' if wanted != 1 else ''}"
    if fits:
        return None
    kind = (f"{data.num_classes} classes" if targets.classification
            else f"{wanted} regression target{'s' if wanted != 1 else ''}")  # fmt: skip
    return (f"The network's output has shape {tuple(shape[1:])} per sample, but the data set "
            f"{data.name} has {kind} ({targets.loss_name}): the last layer needs {what}.")
