"""nll_loss, smooth_l1_loss, huber_loss, kl_div, binary_cross_entropy (MindSpore 2.x).

Like the losses of `_loss`, each is one tape Node: the loss in one NumPy pass beside
its gradient rule. Labels are never required to be differentiable, but the
floating ones (targets, distributions, probabilities) get their gradient when asked.
"""

from __future__ import annotations

import numbers

import numpy as np

from engine.autograd import unbroadcast
from engine.ops._args import renamed
from engine.ops._functional import _finish2, _tensor
from engine.ops._loss import (
    _check_reduction,
    _class_rows,
    _const,
    _float_input,
    _index_labels,
    _reduce,
    _row_coef,
    _spread,
    _unrows,
    _unrows_loss,
)

__all__ = ["nll_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy"]

# The log-probability BCE never goes below, as PyTorch: a certain wrong answer costs 100.
_LOG_FLOOR = -100.0
# The smallest x(1 - x) BCE's gradient divides by (PyTorch's EPSILON).
_BCE_EPS = 1e-12


def _threshold(value, who: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{who}: {name} must be a number, got {type(value).__name__}")
    if not value > 0:
        raise ValueError(f"{who}: {name} must be greater than 0, got {value}")
    return float(value)


def _same_shape(input, target, who: str, what: str):  # noqa: A002
    """A floating input and labels of its exact shape (cast to its dtype)."""
    x = _float_input(input, who, what)
    t = _tensor(target, f"{who} labels")
    a, b = x._data, t._data
    if b.shape != a.shape:
        raise ValueError(
            f"{who}: labels must have the {what}' shape {a.shape}, got labels of shape {b.shape}"
        )
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    return x, t, a, b


# ----------------------------------------------------------------------------- nll_loss


def nll_loss(inputs, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """Negative log-likelihood of log-probabilities `inputs` at the class indices `target`.

    `inputs` is (C,), (N, C) or (N, C, d1, ...), usually from log_softmax; `target`
    int32/int64 class indices of shape (), (N,) or (N, d1, ...). `weight` (C,) rescales
    classes and 'mean' divides by the summed weights of the counted labels; labels
    equal to `ignore_index` count for nothing. `label_smoothing` eps adds, as MindSpore,
    eps/C times the unweighted sum of -inputs over the classes (zero for ignored labels,
    averaged over every label for 'mean') to (1 - eps) times the loss.
    """
    who = "nll_loss"
    _check_reduction(reduction, who)
    if isinstance(ignore_index, bool) or not isinstance(ignore_index, (int, np.integer)):
        raise TypeError(f"{who}: ignore_index must be an int, got {type(ignore_index).__name__}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{who}: label_smoothing must be in [0, 1], got {label_smoothing}")
    x = _float_input(inputs, who, "log-probabilities")
    t = _tensor(target, f"{who} labels")
    d, shape = x._data, x._data.shape
    if d.ndim == 0:
        raise ValueError(f"{who}: log-probabilities must have a class axis, got a 0-d Tensor")
    n_classes = shape[0] if d.ndim == 1 else shape[1]
    index_shape = () if d.ndim == 1 else (shape[0],) + shape[2:]
    if t._data.shape != index_shape:
        raise ValueError(
            f"{who}: log-probabilities of shape {shape} need class-index labels of shape "
            f"{index_shape}, got labels of shape {t._data.shape}"
        )
    w = _const(weight, d.dtype, who, "weight")
    if w is not None and w.shape != (n_classes,):
        raise ValueError(
            f"{who}: weight must have shape ({n_classes},) for {n_classes} classes, "
            f"got {tuple(w.shape)}"
        )
    y, keep = _index_labels(t._data, index_shape, n_classes, int(ignore_index), who)
    rows = _class_rows(d)
    n_rows = rows.shape[0]
    wy = w[y] if w is not None else np.ones(n_rows, d.dtype)
    if keep is not None:
        wy = wy * keep
    per_row = -rows[np.arange(n_rows), y] * wy
    eps = float(label_smoothing)
    smooth = None
    if eps:
        smooth = -rows.sum(axis=1)
        if keep is not None:
            smooth = smooth * keep
    denom = float(wy.sum())
    if reduction == "none":
        out = per_row if smooth is None else (1.0 - eps) * per_row + (eps / n_classes) * smooth
        out = _unrows_loss(out, shape)
    else:
        total = per_row.sum()
        if reduction == "mean":
            total = total / denom if denom else np.nan  # every label ignored: nan, as torch
        if smooth is not None:
            spread = smooth.sum() if reduction == "sum" else smooth.mean()
            total = (1.0 - eps) * total + (eps / n_classes) * spread
        out = total
    out = np.asarray(out, dtype=d.dtype)
    saved = (y, wy, keep, eps, reduction, denom, shape, n_rows, n_classes)
    return _finish2(out, x, t, _nll_vjp, saved, who)


def _nll_vjp(g, saved, needs):
    y, wy, keep, eps, reduction, denom, shape, n_rows, n_classes = saved
    if not needs[0]:
        return None, None
    coef = _row_coef(g, reduction, denom, n_rows)  # scalar or (rows, 1)
    c = coef[:, 0] if np.ndim(coef) else np.full(n_rows, coef, dtype=wy.dtype)
    gx = np.zeros((n_rows, n_classes), dtype=wy.dtype)
    gx[np.arange(n_rows), y] = -(1.0 - eps) * c * wy
    if eps:
        # The smoothing term is averaged over every label for 'mean', not by the weights.
        if reduction == "none":
            s = np.reshape(g, n_rows)
        elif reduction == "sum":
            s = np.full(n_rows, g, dtype=wy.dtype)
        else:
            s = np.full(n_rows, g / n_rows, dtype=wy.dtype)
        if keep is not None:
            s = s * keep
        gx -= (s * (eps / n_classes))[:, None]
    return _unrows(gx, shape), None


# ----------------------------------------------------------------------------- regression


@renamed(logits="input", labels="target")
def smooth_l1_loss(input, target, beta=1.0, reduction="none"):  # noqa: A002
    """`0.5 d**2 / beta` where |d| < beta, else `|d| - 0.5 beta`, with d = input - target.

    `target` has `input`'s shape; `beta` > 0. MindSpore 2.x's default reduction is 'none'
    (MindSpore 2.0 spelled the tensors `logits` and `labels`; both spellings work).
    """
    who = "smooth_l1_loss"
    beta = _threshold(beta, who, "beta")
    _check_reduction(reduction, who)
    x, t, a, b = _same_shape(input, target, who, "input")
    diff = a - b
    size = np.abs(diff)
    small = size < beta
    loss = np.where(small, 0.5 * diff * diff / beta, size - 0.5 * beta)
    out = _reduce(loss, reduction, diff.shape)
    return _finish2(out, x, t, _smooth_l1_vjp, (diff, small, beta, reduction), who)


def _smooth_l1_vjp(g, saved, needs):
    diff, small, beta, reduction = saved
    gd = np.where(small, diff / beta, np.sign(diff)) * _spread(g, reduction, diff.shape)
    return gd if needs[0] else None, -gd if needs[1] else None


def huber_loss(input, target, reduction="mean", delta=1.0):  # noqa: A002
    """`0.5 d**2` where |d| < delta, else `delta (|d| - 0.5 delta)`, with d = input - target.

    Shapes broadcast; `delta` > 0.
    """
    who = "huber_loss"
    _check_reduction(reduction, who)
    delta = _threshold(delta, who, "delta")
    x = _float_input(input, who, "input")
    t = _tensor(target, f"{who} labels")
    a, b = x._data, t._data
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(
            f"{who}: input of shape {a.shape} and labels of shape {b.shape} do not broadcast"
        ) from None
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    diff = a - b
    size = np.abs(diff)
    small = size < delta
    loss = np.where(small, 0.5 * diff * diff, delta * (size - 0.5 * delta))
    out = _reduce(loss, reduction, diff.shape)
    saved = (diff, small, delta, a.shape, b.shape, reduction)
    return _finish2(out, x, t, _huber_vjp, saved, who)


def _huber_vjp(g, saved, needs):
    diff, small, delta, sa, sb, reduction = saved
    gd = np.where(small, diff, delta * np.sign(diff)) * _spread(g, reduction, diff.shape)
    return (
        unbroadcast(gd, sa) if needs[0] else None,
        unbroadcast(-gd, sb) if needs[1] else None,
    )


# ----------------------------------------------------------------------------- distributions


_KL_REDUCTIONS = ("mean", "batchmean", "sum", "none")


def kl_div(logits, labels, reduction="mean"):
    """Kullback-Leibler divergence `labels * (log labels - logits)` of a distribution `labels`
    from log-probabilities `logits` of its shape; a zero label adds nothing.

    'mean' averages over every element, 'batchmean' sums and divides by the batch size
    (the true divergence per sample), 'sum' and 'none' as usual.
    """
    who = "kl_div"
    if reduction not in _KL_REDUCTIONS:
        raise ValueError(
            f"{who}: reduction must be 'mean', 'batchmean', 'sum' or 'none', got {reduction!r}"
        )
    x, t, a, b = _same_shape(logits, labels, who, "logits")
    if reduction == "batchmean" and a.ndim == 0:
        raise ValueError(f"{who}: reduction 'batchmean' needs a batch axis, got a 0-d Tensor")
    # xlogy: a zero label gives 0 (not 0 * log 0), a negative one NaN.
    ylogy = b * np.log(np.where(b > 0, b, 1))
    ylogy[b < 0] = np.nan
    loss = ylogy - b * a
    if reduction == "batchmean":
        out = np.asarray(loss.sum() / a.shape[0], dtype=a.dtype)
    else:
        out = _reduce(loss, reduction, a.shape)
    return _finish2(out, x, t, _kl_div_vjp, (a, b, reduction), who)


def _kl_scale(g, reduction, shape):
    if reduction == "batchmean":
        return g / shape[0]
    return _spread(g, reduction, shape)


def _kl_div_vjp(g, saved, needs):
    a, b, reduction = saved
    g = _kl_scale(g, reduction, a.shape)
    gx = -b * g if needs[0] else None
    gy = None
    if needs[1]:
        with np.errstate(divide="ignore", invalid="ignore"):
            gy = (np.log(b) + 1.0 - a) * g
    return gx, gy


def binary_cross_entropy(logits, labels, weight=None, reduction="mean"):
    """Binary cross-entropy of probabilities `logits` (in [0, 1], e.g. from a sigmoid)
    against `labels` of their shape: `-w (y log x + (1 - y) log(1 - x))`.

    `weight` broadcasts to the logits' shape. Each log is floored at -100, as PyTorch,
    so a prediction of exactly 0 or 1 costs at most 100. A value outside [0, 1] is refused.
    """
    who = "binary_cross_entropy"
    _check_reduction(reduction, who)
    x, t, d, y = _same_shape(logits, labels, who, "logits")
    outside = (d < 0) | (d > 1)  # NaN passes: a diverged network reports a NaN loss
    if outside.any():
        bad = d[outside]
        raise ValueError(
            f"{who}: the predictions must be probabilities in [0, 1] (e.g. after a Sigmoid), "
            f"got values from {bad.min():.4g} to {bad.max():.4g}"
        )
    w = _const(weight, d.dtype, who, "weight")
    if w is not None:
        try:
            fits = np.broadcast_shapes(w.shape, d.shape) == d.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(
                f"{who}: weight of shape {w.shape} does not broadcast to the logits' shape "
                f"{d.shape}"
            )
    with np.errstate(divide="ignore"):
        log_x = np.maximum(np.log(d), _LOG_FLOOR)
        log_1mx = np.maximum(np.log1p(-d), _LOG_FLOOR)
    loss = -(y * log_x + (1 - y) * log_1mx)
    if w is not None:
        loss = loss * w
    out = _reduce(loss, reduction, d.shape)
    return _finish2(out, x, t, _binary_ce_vjp, (d, y, w, reduction), who)


def _binary_ce_vjp(g, saved, needs):
    d, y, w, reduction = saved
    g = _spread(g, reduction, d.shape)
    if w is not None:
        g = g * w
    gx = gy = None
    if needs[0]:
        gx = (d - y) / np.maximum((1 - d) * d, _BCE_EPS) * g
    if needs[1]:
        with np.errstate(divide="ignore"):
            gy = (np.log1p(-d) - np.log(d)) * g
    return gx, gy
