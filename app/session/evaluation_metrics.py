"""The figures of an evaluation, from predictions and answers alone: plain NumPy, no network.

Classification: a confusion matrix (rows the true class, columns the predicted one),
per-class precision, recall, F1 and support, their macro averages and the accuracy; for
two classes, ROC and precision–recall curves with their areas (trapezoids). Regression:
R², MAE, RMSE and a histogram of the residuals (true − predicted).

A ratio with nothing to divide by (the precision of a class never predicted, the recall of
a class with no sample) is 0, as scikit-learn's `zero_division=0` does; the macro averages
are over the classes that occur, as a true label or a prediction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

RESIDUAL_BINS = 30  # residual histogram: at most this many bins


@dataclass(frozen=True, eq=False)
class ClassScores:
    """Per-class precision, recall, F1 and support (arrays of length C), macro averages and
    the accuracy."""

    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    support: np.ndarray  # true samples per class (int64)
    macro_precision: float
    macro_recall: float
    macro_f1: float
    accuracy: float  # NaN for no samples


@dataclass(frozen=True, eq=False)
class Curve:
    """A curve through points (x[i], y[i]) with the score thresholds that give them and the
    area under it (trapezoids). ROC: x = false positive rate, y = true positive rate, first
    point (0, 0) at threshold +inf. Precision–recall: x = recall, y = precision, first point
    (0, 1) at threshold +inf."""

    x: np.ndarray
    y: np.ndarray
    thresholds: np.ndarray
    area: float


def confusion_matrix(true: np.ndarray, predicted: np.ndarray, num_classes: int) -> np.ndarray:
    """Counts (C, C), int64: [i, j] samples of class i predicted as class j."""
    true = np.asarray(true, dtype=np.int64).reshape(-1)
    predicted = np.asarray(predicted, dtype=np.int64).reshape(-1)
    size = max(int(num_classes), int(true.max(initial=-1)) + 1, int(predicted.max(initial=-1)) + 1)
    counts = np.bincount(true * size + predicted, minlength=size * size)
    return counts.reshape(size, size)


def row_normalised(matrix: np.ndarray) -> np.ndarray:
    """Each row divided by its sum (the share of the true class given each prediction);
    a row with no sample stays all 0."""
    matrix = np.asarray(matrix, dtype=np.float64)
    totals = matrix.sum(axis=1, keepdims=True)
    return np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)


def class_scores(matrix: np.ndarray) -> ClassScores:
    """Precision, recall, F1 and support per class from a confusion matrix of counts."""
    matrix = np.asarray(matrix, dtype=np.int64)
    hits = np.diag(matrix).astype(np.float64)
    support = matrix.sum(axis=1)
    predicted = matrix.sum(axis=0)
    precision = _ratio(hits, predicted)
    recall = _ratio(hits, support)
    f1 = _ratio(2 * precision * recall, precision + recall)
    present = (support > 0) | (predicted > 0)
    total = int(support.sum())

    def macro(values: np.ndarray) -> float:
        return float(values[present].mean()) if present.any() else math.nan

    return ClassScores(precision, recall, f1, support, macro(precision), macro(recall),
                       macro(f1), float(hits.sum() / total) if total else math.nan)  # fmt: skip


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    top = np.asarray(top, dtype=np.float64)
    bottom = np.asarray(bottom, dtype=np.float64)
    return np.divide(top, bottom, out=np.zeros_like(top), where=bottom > 0)


def _ranked_counts(positive: np.ndarray, scores: np.ndarray):
    """Cumulative true and false positives taking every score ≥ each distinct threshold,
    thresholds from the highest score down (tied scores count together)."""
    positive = np.asarray(positive, dtype=bool).reshape(-1)
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    order = np.argsort(-scores, kind="stable")
    scores, positive = scores[order], positive[order]
    last = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]  # last of each tie
    tp = np.cumsum(positive)[last]
    fp = (last + 1) - tp
    return tp.astype(np.float64), fp.astype(np.float64), scores[last]


def roc_curve(positive: np.ndarray, scores: np.ndarray) -> Curve | None:
    """ROC of `scores` (higher: more likely positive) against the 0/1 truth `positive`;
    None unless both kinds of sample are there (a rate would divide by zero)."""
    positive = np.asarray(positive, dtype=bool).reshape(-1)
    p, n = int(positive.sum()), int((~positive).sum())
    if p == 0 or n == 0:
        return None
    tp, fp, thresholds = _ranked_counts(positive, scores)
    x, y = np.r_[0.0, fp / n], np.r_[0.0, tp / p]
    return Curve(x, y, np.r_[np.inf, thresholds], trapezoid(x, y))


def precision_recall_curve(positive: np.ndarray, scores: np.ndarray) -> Curve | None:
    """Precision against recall as the threshold falls through the scores, starting at
    (recall 0, precision 1); None without a positive sample."""
    positive = np.asarray(positive, dtype=bool).reshape(-1)
    p = int(positive.sum())
    if p == 0:
        return None
    tp, fp, thresholds = _ranked_counts(positive, scores)
    x, y = np.r_[0.0, tp / p], np.r_[1.0, tp / (tp + fp)]
    return Curve(x, y, np.r_[np.inf, thresholds], trapezoid(x, y))


def trapezoid(x: np.ndarray, y: np.ndarray) -> float:
    """The area under the polyline through (x, y), x not decreasing."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0)) if len(x) > 1 else 0.0


@dataclass(frozen=True, eq=False)
class RegressionScores:
    """R² (uniform mean over the targets; `r2_per_target` each), MAE and RMSE over every
    value, and the residuals' histogram (`counts` per bin between consecutive `edges`)."""

    r2: float
    r2_per_target: np.ndarray
    mae: float
    rmse: float
    counts: np.ndarray
    edges: np.ndarray


def regression_scores(true: np.ndarray, predicted: np.ndarray,
                      bins: int | None = None) -> RegressionScores:  # fmt: skip
    """Scores of `predicted` against `true`, both (N, k). A target that never varies gives
    R² 1 when predicted exactly, else 0 (as scikit-learn)."""
    true = np.asarray(true, dtype=np.float64)
    predicted = np.asarray(predicted, dtype=np.float64)
    residuals = true - predicted
    if not residuals.size:
        empty = np.zeros(0)
        return RegressionScores(math.nan, empty, math.nan, math.nan, np.zeros(0, np.int64),
                                empty)  # fmt: skip
    squares = (residuals**2).sum(axis=0)
    spread = ((true - true.mean(axis=0)) ** 2).sum(axis=0)
    r2 = np.where(spread > 0, 1.0 - np.divide(squares, spread, out=np.zeros_like(squares),
                                              where=spread > 0),  # fmt: skip
                  np.where(squares == 0, 1.0, 0.0))
    counts, edges = residual_histogram(residuals, bins)
    return RegressionScores(float(r2.mean()), r2, float(np.abs(residuals).mean()),
                            float(np.sqrt((residuals**2).mean())), counts, edges)  # fmt: skip


def residual_histogram(residuals: np.ndarray, bins: int | None = None):
    """(counts, edges) of every residual value: `bins` bins, or about √n up to
    RESIDUAL_BINS; equal-width bins spanning the residuals."""
    values = np.asarray(residuals, dtype=np.float64).reshape(-1)
    if bins is None:
        bins = min(RESIDUAL_BINS, max(1, math.ceil(math.sqrt(values.size))))
    counts, edges = np.histogram(values, bins=int(bins))
    return counts.astype(np.int64), edges
