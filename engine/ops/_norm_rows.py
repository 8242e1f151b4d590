"""The row kernels of layer and group normalisation, in blocks of rows that run on several
threads when the input is large.

Every block normalises its own rows, in place on its slice of arrays allocated once for the
whole input, so blocks never share writes. NumPy releases the GIL inside its loops: blocks
of a large input run at the same time on different cores, as PyTorch's kernels do. Inputs
under PARALLEL_FROM elements stay on the calling thread, where a hand-off to another thread
(tens of microseconds) would cost more than it saves.

Statistics use a two-pass variance: the row mean first, then the mean square of the
centred values, so a large offset shared by a row does not cancel its spread away.
einsum does the row and column sums and scalings: its loops beat NumPy's reductions and
broadcasting here, and unlike a product with ones it needs no BLAS threads, which cost
milliseconds to wake between small calls.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

PARALLEL_FROM = 1 << 18  # elements
MAX_WORKERS = 4

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_workers() - 1 or 1, thread_name_prefix="engine-norm")
        return _pool


def _forget_pool() -> None:
    # A forked child has none of the parent's threads: it makes its own pool when needed.
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def blocks(units: int, size: int) -> list[slice]:
    """Slices splitting range(units) into one block per worker for a large input (`size`
    elements in all), or a single block."""
    count = min(_workers() if size >= PARALLEL_FROM else 1, units)
    if count <= 1:
        return [slice(0, units)]
    bounds = [units * i // count for i in range(count + 1)]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def run(fn: Callable[[slice], object], parts: list[slice]) -> list:
    """fn(part) for every part: the first on this thread, the others on the pool. A part
    no worker has started by the time this thread is done with its own (its core busy
    with other work) runs here too, rather than waiting for one."""
    if len(parts) == 1:
        return [fn(parts[0])]
    futures = [_executor().submit(fn, part) for part in parts[1:]]
    results = [fn(parts[0])]
    for part, future in zip(parts[1:], futures, strict=True):
        results.append(fn(part) if future.cancel() else future.result())
    return results


def _scaled(unit: slice, step: int) -> slice:
    return slice(unit.start * step, unit.stop * step)


def _centre_into(x: np.ndarray, xc: np.ndarray, rstd: np.ndarray, eps: float) -> None:
    """xc = x minus its row means; rstd = 1 / sqrt(row variance + eps)."""
    dt = x.dtype.type
    inv = dt(1.0 / x.shape[1]) if x.shape[1] else dt(0.0)
    mean = np.einsum("ij->i", x)
    mean *= inv
    np.subtract(x, mean[:, None], out=xc)
    var = np.einsum("ij,ij->i", xc, xc)
    var *= inv
    var += dt(eps)
    np.sqrt(var, out=rstd)
    np.divide(dt(1.0), rstd, out=rstd)


# ----------------------------------------------------------------------------- layer norm


def layer_norm_forward(x: np.ndarray, g: np.ndarray | None, b: np.ndarray | None, p: int,
                       eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, xhat, rstd) for rows `x` (R, M) normalised, then `* g + b` with g and b (p,)
    repeating along the flattened rows (p divides M, or M divides p)."""
    rows, m = x.shape
    xhat, out = np.empty_like(x), np.empty_like(x)
    rstd = np.empty(rows, x.dtype)
    if x.size == 0:
        return out, xhat, rstd
    unit = p // m if p > m else 1  # rows per block must hold whole copies of g

    def block(part: slice) -> None:
        s = _scaled(part, unit)
        xh, o = xhat[s], out[s]
        _centre_into(x[s], xh, rstd[s], eps)
        xh *= rstd[s, None]
        flat, o_flat = xh.reshape(-1, p), o.reshape(-1, p)
        if g is not None:
            np.einsum("ij,j->ij", flat, g, out=o_flat)
        else:
            o_flat[...] = flat
        if b is not None:
            o_flat += b

    run(block, blocks(rows // unit, x.size))
    return out, xhat, rstd


def layer_norm_backward(gout: np.ndarray, xhat: np.ndarray, rstd: np.ndarray,
                        g: np.ndarray | None, p: int, needs: tuple[bool, bool, bool]):
    """(dx, dg, db) of layer_norm_forward for the output gradient `gout` (R, M); None for
    what is not needed."""
    rows, m = xhat.shape
    dt = xhat.dtype.type
    inv = dt(1.0 / m) if m else dt(0.0)
    unit = p // m if p > m else 1
    gx = np.empty_like(xhat) if needs[0] else None
    if xhat.size == 0:
        zeros = np.zeros(p, xhat.dtype)
        return gx, zeros if needs[1] else None, zeros if needs[2] else None

    def block(part: slice):
        s = _scaled(part, unit)
        gs, xh = gout[s], xhat[s]
        g_flat, x_flat = gs.reshape(-1, p), xh.reshape(-1, p)
        dg = np.einsum("ij,ij->j", g_flat, x_flat) if needs[1] else None
        db = np.einsum("ij->j", g_flat) if needs[2] else None
        if gx is not None:
            # rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)), gxhat = gout * g
            gxh = np.einsum("ij,j->ij", g_flat, g).reshape(xh.shape) if g is not None else gs
            mean = np.einsum("ij->i", gxh)
            mean *= inv
            along = np.einsum("ij,ij->i", gxh, xh)
            along *= inv
            out = gx[s]
            np.einsum("ij,i->ij", xh, along, out=out)
            np.subtract(gxh, out, out=out)
            out -= mean[:, None]
            out *= rstd[s, None]
        return dg, db

    parts = run(block, blocks(rows // unit, xhat.size))
    dg = sum(part[0] for part in parts) if needs[1] else None
    db = sum(part[1] for part in parts) if needs[2] else None
    return gx, dg, db


# ----------------------------------------------------------------------------- group norm


def group_norm_forward(x: np.ndarray, groups: int, w: np.ndarray | None, b: np.ndarray | None,
                       eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, xc, rstd) for `x` (N, C, S): each sample's group of C / groups channels
    normalised, then each channel scaled by w and shifted by b (C,). xc holds x minus its
    group means, rstd (N, groups) the groups' 1 / std: the normalised values are never
    stored, each (sample, channel) row is scaled by rstd · w in one pass."""
    n, c, s = x.shape
    cg = c // groups
    xc, out = np.empty_like(x), np.empty_like(x)
    rstd = np.empty((n, groups), x.dtype)
    if x.size == 0:
        return out, xc, rstd
    by_group, xc_group = x.reshape(n * groups, cg * s), xc.reshape(n * groups, cg * s)
    flat_rstd = rstd.reshape(-1)

    def block(part: slice) -> None:
        rows = _scaled(part, groups)
        _centre_into(by_group[rows], xc_group[rows], flat_rstd[rows], eps)
        scale = np.repeat(rstd[part], cg, axis=1)
        if w is not None:
            scale *= w
        o = out[part]
        np.einsum("ij,i->ij", xc[part].reshape(-1, s), scale.reshape(-1),
                  out=o.reshape(-1, s))
        if b is not None:
            o += b[:, None]

    run(block, blocks(n, x.size))
    return out, xc, rstd


def group_norm_backward(gout: np.ndarray, xc: np.ndarray, rstd: np.ndarray,
                        w: np.ndarray | None, needs: tuple[bool, bool, bool]):
    """(dx, dw, db) of group_norm_forward for the output gradient `gout` (N, C, S)."""
    n, c, s = xc.shape
    groups = rstd.shape[1]
    cg = c // groups
    dt = xc.dtype.type
    inv = dt(1.0 / (cg * s)) if s else dt(0.0)
    gx = np.empty_like(xc) if needs[0] else None
    if xc.size == 0:
        zeros = np.zeros(c, xc.dtype)
        return gx, zeros if needs[1] else None, zeros if needs[2] else None

    def block(part: slice):
        g2, x2 = gout[part].reshape(-1, s), xc[part].reshape(-1, s)
        count = part.stop - part.start
        gsum = np.einsum("ij->i", g2).reshape(count, c)  # sum of g per (sample, channel)
        gxc = np.einsum("ij,ij->i", g2, x2).reshape(count, c)  # sum of g · (x - mean)
        r = rstd[part]
        if gx is not None:
            # dx = r·w·g - r·mean(w·g) - r³·(x - mean)·mean(w·g·(x - mean)), means per group
            wg, wgx = (gsum * w, gxc * w) if w is not None else (gsum, gxc)
            shift = wg.reshape(count, groups, cg).sum(2) * inv * r
            slope = wgx.reshape(count, groups, cg).sum(2) * inv * r * r * r
            scale = np.repeat(r, cg, axis=1)
            if w is not None:
                scale *= w
            out = gx[part].reshape(-1, s)
            np.einsum("ij,i->ij", g2, scale.reshape(-1), out=out)
            out -= np.einsum("ij,i->ij", x2, np.repeat(slope, cg, axis=1).reshape(-1))
            out -= np.repeat(shift, cg, axis=1).reshape(-1, 1)
        return gsum, gxc

    parts = run(block, blocks(n, xc.size))
    gsum = np.concatenate([part[0] for part in parts])
    gxc = np.concatenate([part[1] for part in parts])
    dw = (gxc * np.repeat(rstd, cg, axis=1)).sum(0) if needs[1] else None
    db = gsum.sum(0) if needs[2] else None
    return gx, dw, db
