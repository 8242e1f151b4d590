"""Fused loss ops: each loss is one tape Node, its forward beside its gradient rule.

A training step records every op, so a loss built from small ops (log_softmax,
gather, mean, ...) would cost several nodes per step; these compute the loss in
one NumPy pass, keep what the rule needs, and record one node. Softmax-based
losses are computed with log-sum-exp, BCE with a softplus that never
exponentiates a positive number.
"""

from __future__ import annotations

import numpy as np

from engine.autograd import unbroadcast
from engine.ops._args import renamed
from engine.ops._functional import _finish2, _tensor

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction, who: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{who}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _float_input(x, who: str, what: str):
    x = _tensor(x, f"{who} {what}")
    if x._data.dtype.kind != "f":
        raise TypeError(f"{who}: {what} must be a floating-point Tensor, got {x.dtype}")
    return x


def _const(value, dtype, who: str, what: str):
    """A loss weight as a plain array of the logits' dtype (weights are not differentiated)."""
    if value is None:
        return None
    arr = value._data if hasattr(value, "_data") else np.asarray(value)
    if arr.dtype.kind not in "fiub":
        raise TypeError(f"{who}: {what} must be numeric, got dtype {arr.dtype}")
    return arr.astype(dtype, copy=False)


# ----------------------------------------------------------------------------- cross-entropy


def _class_rows(d: np.ndarray) -> np.ndarray:
    """Logits of shape (C,), (N, C) or (N, C, d1, ...) as a (rows, C) array."""
    if d.ndim == 1:
        return d[None, :]
    if d.ndim == 2:
        return d
    return np.moveaxis(d, 1, -1).reshape(-1, d.shape[1])


def _unrows(rows: np.ndarray, shape: tuple) -> np.ndarray:
    """Inverse of `_class_rows` for an array of the logits' layout."""
    if len(shape) == 1:
        return rows[0]
    if len(shape) == 2:
        return rows
    moved = rows.reshape((shape[0],) + shape[2:] + (shape[1],))
    return np.moveaxis(moved, -1, 1)


def _unrows_loss(per_row: np.ndarray, shape: tuple) -> np.ndarray:
    """Per-row losses back to the label layout: () for (C,) logits, (N, d1, ...) otherwise."""
    if len(shape) == 1:
        return per_row.reshape(())
    return per_row.reshape((shape[0],) + shape[2:])


def _index_labels(t: np.ndarray, shape: tuple, n_classes: int, ignore_index, who: str):
    """Validate class-index labels; returns (flat labels safe to index with, kept mask or None)."""
    if t.dtype.kind not in "iu":
        raise TypeError(
            f"{who}: class-index labels must be int32 or int64, got {t.dtype}; "
            f"class-probability labels must have the logits' shape {shape}"
        )
    flat = t.reshape(-1)
    # One reduction checks both ends: as unsigned, negative labels become huge.
    unsigned = flat.view(flat.dtype.str.replace("i", "u")) if flat.dtype.kind == "i" else flat
    if not flat.size or unsigned.max() < n_classes:
        if ignore_index is None or not 0 <= ignore_index < n_classes:
            return flat, None  # the common case: no label is ignored
        keep = flat != ignore_index
        return np.where(keep, flat, 0), keep
    keep = flat != ignore_index if ignore_index is not None else np.ones(flat.shape, bool)
    bad = keep & ((flat < 0) | (flat >= n_classes))
    if bad.any():
        first = int(flat[np.argmax(bad)])
        extra = "" if ignore_index is None else f" (or the ignore_index {ignore_index})"
        raise ValueError(
            f"{who}: class label {first} is out of range for {n_classes} classes; labels must "
            f"be in [0, {n_classes - 1}]{extra}"
        )
    return np.where(keep, flat, 0), keep


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",  # noqa: A002
                  label_smoothing=0.0):
    """Cross-entropy of logits `input` against class indices or class probabilities.

    `input` is (C,), (N, C) or (N, C, d1, ...); `target` is int32/int64 class
    indices of shape (), (N,) or (N, d1, ...), or floating class probabilities
    of `input`'s shape. `weight` (C,) rescales classes; labels equal to
    `ignore_index` count for nothing; `label_smoothing` mixes the target with
    the uniform distribution. MindSpore 2.x `ops.cross_entropy` semantics.
    """
    return _cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing,
                          "cross_entropy")


def _cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing, who):  # noqa: A002
    _check_reduction(reduction, who)
    x = _float_input(input, who, "logits")
    t = _tensor(target, f"{who} labels")
    d = x._data
    if d.ndim == 0:
        raise ValueError(f"{who}: logits must have a class axis, got a 0-d Tensor")
    shape = d.shape
    n_classes = shape[0] if d.ndim == 1 else shape[1]
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{who}: label_smoothing must be in [0, 1], got {label_smoothing}")
    w = _const(weight, d.dtype, who, "weight")
    if w is not None and w.shape != (n_classes,):
        raise ValueError(
            f"{who}: weight must have shape ({n_classes},) for {n_classes} classes, "
            f"got {tuple(w.shape)}"
        )
    td = t._data
    index_shape = () if d.ndim == 1 else (shape[0],) + shape[2:]
    if td.shape == shape and td.dtype.kind == "f":
        probs = True
    elif td.shape == index_shape:
        probs = False
    else:
        raise ValueError(
            f"{who}: logits of shape {shape} need class-index labels of shape {index_shape} "
            f"or class-probability labels of shape {shape}; got labels of shape {td.shape}"
        )

    rows = _class_rows(d)
    m = rows.max(axis=1, keepdims=True)
    shifted = rows - m
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    lse = np.log(s)
    eps = float(label_smoothing)
    n_rows = rows.shape[0]

    if probs:
        q = _class_rows(td).astype(d.dtype, copy=False)
        if eps:
            q = q * (1.0 - eps) + eps / n_classes
        if w is not None:
            q = q * w
        logp = shifted - lse
        per_row = -(q * logp).sum(axis=1)
        denom = n_rows
        saved_labels = (q, logp, w, eps)
    else:
        y, keep = _index_labels(td, index_shape, n_classes, ignore_index, who)
        picked = shifted[np.arange(n_rows), y] - lse[:, 0]  # log-probability of the label
        wy = w[y] if w is not None else None
        if keep is not None:
            wy = (wy if wy is not None else np.ones(n_rows, d.dtype)) * keep
        per_row = -picked if wy is None else -picked * wy
        if eps:
            # Smoothing term: -(eps/C) * sum_c w_c log p_c, zero for ignored labels.
            wsum = float(w.sum()) if w is not None else float(n_classes)
            wlog = (shifted * w).sum(axis=1) if w is not None else shifted.sum(axis=1)
            smooth = -(wlog - lse[:, 0] * wsum) * (eps / n_classes)
            if keep is not None:
                smooth = smooth * keep
            per_row = per_row * (1.0 - eps) + smooth
        denom = float(wy.sum()) if wy is not None else n_rows
        saved_labels = (y, wy, w, eps, keep)

    if reduction == "none":
        out = _unrows_loss(per_row, shape)
    elif reduction == "sum":
        out = per_row.sum()
    else:
        with np.errstate(invalid="ignore", divide="ignore"):  # every label ignored: nan, as torch
            out = per_row.sum() / denom if denom else np.asarray(np.nan, dtype=d.dtype)
    if type(out) is not np.ndarray or out.dtype != d.dtype:
        out = np.asarray(out, dtype=d.dtype)
    saved = (probs, e, s, saved_labels, reduction, denom, shape, n_classes)
    return _finish2(out, x, t, _cross_entropy_vjp, saved, who)


def _row_coef(g, reduction, denom, n_rows):
    """The incoming gradient per row: a (rows, 1) array, or a scalar for reduced losses."""
    if reduction == "none":
        return np.reshape(g, (n_rows, 1))
    if reduction == "sum":
        return g
    return g / denom if denom else g * 0


def _cross_entropy_vjp(g, saved, needs):
    probs, e, s, labels, reduction, denom, shape, n_classes = saved
    n_rows = e.shape[0]
    coef = _row_coef(g, reduction, denom, n_rows)  # scalar or (rows, 1)
    softmax = e / s
    gx = gt = None
    if probs:
        q, logp, w, eps = labels
        if needs[0]:
            total = q.sum(axis=1, keepdims=True)
            gx = _unrows((softmax * total - q) * coef, shape)
        if needs[1]:
            gt = -logp * (1.0 - eps) * coef
            if w is not None:
                gt = gt * w
            gt = _unrows(gt, shape)
        return gx, gt
    if not needs[0]:
        return None, None
    y, wy, w, eps, keep = labels
    ar = np.arange(n_rows)
    if wy is None and not eps:
        # Plain case (the training benchmark's): softmax minus one-hot, times the coefficient.
        gx = softmax * coef
        gx[ar, y] -= coef[:, 0] if np.ndim(coef) else coef
        return _unrows(gx, shape), None
    ones = wy if wy is not None else np.ones(n_rows, e.dtype)
    c = coef[:, 0] if np.ndim(coef) else np.full(n_rows, coef, dtype=e.dtype)
    wsum = float(w.sum()) if w is not None else float(n_classes)
    active = keep if keep is not None else 1.0  # ignored labels get no smoothing either
    if eps:
        total = (1.0 - eps) * ones + (eps / n_classes) * wsum * active
    else:
        total = ones
    gx = softmax * (c * total)[:, None]
    if eps:
        spread = (c * active * (eps / n_classes))[:, None]
        gx -= spread * (w if w is not None else 1.0)
    gx[ar, y] -= c * (1.0 - eps) * ones
    return _unrows(gx, shape), None


# ----------------------------------------------------------------------------- binary cross-entropy


@renamed(input="logits", target="label")
def binary_cross_entropy_with_logits(logits, label, weight=None, pos_weight=None,
                                     reduction="mean"):
    """BCE of sigmoid(logits) against `label` in [0, 1], computed from the logits stably.

    `weight` rescales each element and `pos_weight` the positive term; both
    broadcast to the logits' shape (MindSpore 2.x semantics).
    """
    who = "binary_cross_entropy_with_logits"
    _check_reduction(reduction, who)
    x = _float_input(logits, who, "logits")
    t = _tensor(label, f"{who} labels")
    d, y = x._data, t._data
    if y.shape != d.shape:
        raise ValueError(
            f"{who}: labels must have the logits' shape {d.shape}, got {y.shape}"
        )
    y = y.astype(d.dtype, copy=False)
    w = _const(weight, d.dtype, who, "weight")
    pw = _const(pos_weight, d.dtype, who, "pos_weight")
    for name, arr in (("weight", w), ("pos_weight", pw)):
        if arr is not None:
            try:
                fits = np.broadcast_shapes(arr.shape, d.shape) == d.shape
            except ValueError:
                fits = False
            if not fits:
                raise ValueError(
                    f"{who}: {name} of shape {arr.shape} does not broadcast to the logits' "
                    f"shape {d.shape}"
                )
    # softplus(-x) = log(1 + exp(-x)), with exp of a non-positive number only.
    sp_neg = np.log1p(np.exp(-np.abs(d))) + np.maximum(-d, 0)
    scale = 1 + (pw - 1) * y if pw is not None else None
    loss = (1 - y) * d + (scale * sp_neg if scale is not None else sp_neg)
    if w is not None:
        loss = loss * w
    out = _reduce(loss, reduction, d.shape)
    saved = (d, y, sp_neg, w, pw, reduction)
    return _finish2(out, x, t, _bce_vjp, saved, who)


def _bce_vjp(g, saved, needs):
    d, y, sp_neg, w, pw, reduction = saved
    g = _spread(g, reduction, d.shape)
    if w is not None:
        g = g * w
    gx = gy = None
    if needs[0]:
        # (1 - y) sigmoid(x) - pos_weight y sigmoid(-x): two products, no cancellation in
        # either tail. sigmoid(x) = exp(-softplus(-x)), sigmoid(-x) = exp(-softplus(-x) - x).
        pos = np.exp(-sp_neg)
        neg = np.exp(-sp_neg - d)
        gx = ((1 - y) * pos - (y * pw if pw is not None else y) * neg) * g
    if needs[1]:
        gy = (-d + ((pw - 1) * sp_neg if pw is not None else 0)) * g
    return gx, gy


# ----------------------------------------------------------------------------- regression losses


def _reduce(loss: np.ndarray, reduction: str, shape: tuple):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.asarray(loss.sum(), dtype=loss.dtype)
    return np.asarray(loss.mean(), dtype=loss.dtype)


def _spread(g, reduction: str, shape: tuple):
    """The incoming gradient as an array broadcastable to the unreduced loss's shape."""
    if reduction == "mean":
        count = 1
        for n in shape:
            count *= n
        return g / max(count, 1)
    return g


def _pair(input, target, who):  # noqa: A002
    x = _float_input(input, who, "logits")
    t = _tensor(target, f"{who} labels")
    a, b = x._data, t._data
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(
            f"{who}: logits of shape {a.shape} and labels of shape {b.shape} do not broadcast"
        ) from None
    if b.dtype != a.dtype:
        b = b.astype(a.dtype)
    return x, t, a, b, shape


def mse_loss(input, target, reduction="mean"):  # noqa: A002
    """Mean squared error `(input - target)**2`, reduced; shapes broadcast."""
    who = "mse_loss"
    _check_reduction(reduction, who)
    x, t, a, b, shape = _pair(input, target, who)
    diff = a - b
    out = _reduce(diff * diff, reduction, shape)
    return _finish2(out, x, t, _mse_vjp, (diff, a.shape, b.shape, reduction), who)


def _mse_vjp(g, saved, needs):
    diff, sa, sb, reduction = saved
    gd = diff * (2 * _spread(g, reduction, diff.shape))
    return (
        unbroadcast(gd, sa) if needs[0] else None,
        unbroadcast(-gd, sb) if needs[1] else None,
    )


def l1_loss(input, target, reduction="mean"):  # noqa: A002
    """Mean absolute error `|input - target|`, reduced; shapes broadcast."""
    who = "l1_loss"
    _check_reduction(reduction, who)
    x, t, a, b, shape = _pair(input, target, who)
    diff = a - b
    out = _reduce(np.abs(diff), reduction, shape)
    return _finish2(out, x, t, _l1_vjp, (diff, a.shape, b.shape, reduction), who)


def _l1_vjp(g, saved, needs):
    diff, sa, sb, reduction = saved
    gd = np.sign(diff) * _spread(g, reduction, diff.shape)
    return (
        unbroadcast(gd, sa) if needs[0] else None,
        unbroadcast(-gd, sb) if needs[1] else None,
    )
