"""The row kernels of group normalisation (instance norm is its one-channel-per-group case),
on the blocks, chunks, tiles and scratch buffers of _norm_rows.

An (N, C, S) input is seen two ways: (N · groups, C / groups · S) rows for the group
statistics, and (N · C, S) rows for the per-channel scale. Blocks and chunks hold whole
samples. The centred values are kept for the backward pass, whose per-channel sums are
the only passes it makes besides the four that write dx. Per-group values run along rows
of C / groups · S elements, fast with `unbuffered`; these kernels gain from threads only at
twice the size layer norm's do (measured), hence the halved size given to `blocks`.
"""

from __future__ import annotations

import numpy as np

from engine.ops._norm_rows import (
    ROW_LONG,
    TILE,
    Tiled,
    blocks,
    centre,
    chunks,
    rowdot,
    run,
    scale_rows,
    scratch,
    total,
    unbuffered,
)

BIAS_TILE = 1 << 16  # elements of beta repeated over a sample; larger samples broadcast it


def group_norm_forward(x: np.ndarray, groups: int, w: np.ndarray | None, b: np.ndarray | None,
                       eps: float, keep: bool = True):
    """(out, xc, rstd) for `x` (N, C, S): each sample's group of C / groups channels
    normalised, then each channel scaled by w and shifted by b (C,). xc holds x minus its
    group means when `keep` (otherwise it is `out`, overwritten), rstd (N, groups) the
    groups' 1 / std: the normalised values are never stored, each (sample, channel) row
    is scaled by rstd · w in one pass."""
    n, c, s = x.shape
    cg = c // groups
    out = np.empty_like(x)
    xc = np.empty_like(x) if keep else out
    rstd = np.empty((n, groups), x.dtype)
    if x.size == 0:
        return out, xc, rstd
    bias = _bias(b, c, s, x.size)

    def block(part: slice) -> None:
        with unbuffered(_row(cg, s), x.size):
            for rows in chunks(part, 1, c * s):
                _rows(rows)

    def _rows(rows: slice) -> None:
        count = rows.stop - rows.start
        r = rstd[rows]
        centre(x[rows].reshape(-1, cg * s), xc[rows].reshape(-1, cg * s), r.reshape(-1), eps)
        scale = _per_channel(r, w, cg)
        o = out[rows].reshape(-1, s)
        if keep:
            scale_rows(xc[rows].reshape(-1, s), scale, o)
        else:
            np.multiply(o, scale[:, None], out=o)
        if bias is not None:
            bias(out[rows].reshape(count, c, s))

    run(block, blocks(n, x.size // 2))
    return out, xc, rstd


def _row(cg: int, s: int) -> int:
    """The row length for `unbuffered`: the per-channel rows (S) when they are long enough
    for it, else the group rows (C / groups · S)."""
    return s if s >= ROW_LONG else cg * s


def _per_channel(r: np.ndarray, w: np.ndarray | None, cg: int) -> np.ndarray:
    """rstd (count, groups) as one factor per (sample, channel) row, times w."""
    scale = np.repeat(r, cg, axis=1)
    if w is not None:
        scale *= w
    return scale.reshape(-1)


def _bias(b: np.ndarray | None, c: int, s: int, size: int):
    """A function adding b (C,) to a (count, C, S) block in place: over lines of whole
    samples (beta repeated S times) while that tile stays small, else broadcast."""
    if b is None:
        return None
    if size >= 4 * TILE and s > 1 and c * s <= BIAS_TILE:
        tiled = Tiled(np.repeat(b, s), c * s, size)
        return lambda o: tiled.apply(np.add, o)
    column = b[:, None]
    return lambda o: np.add(o, column, out=o)


def group_norm_backward(gout: np.ndarray, xc: np.ndarray, rstd: np.ndarray,
                        w: np.ndarray | None, needs: tuple[bool, bool, bool]):
    """(dx, dw, db) of group_norm_forward for the output gradient `gout` (N, C, S).

    Per (sample, channel): sg = Σ gout and sx = Σ gout · xc over S; then per group, with
    r its rstd and means over its C / groups · S values,
    dx = r·w·gout - r·mean(w·gout) - r³·xc·mean(w·gout·xc); dw = Σ_N r·sx; db = Σ_N sg."""
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
        with unbuffered(_row(cg, s), xc.size):
            return _block(part)

    def _block(part: slice):
        dws, dbs = [], []
        for rows in chunks(part, 1, c * s):
            count = rows.stop - rows.start
            g2, x2 = gout[rows].reshape(-1, s), xc[rows].reshape(-1, s)
            r = rstd[rows]
            sg = np.einsum("ij->i", g2).reshape(count, c)
            sx = rowdot(g2, x2).reshape(count, c)
            if needs[2]:
                dbs.append(sg.sum(0))
            if needs[1]:
                dws.append(np.einsum("ij,ij->j", sx, np.repeat(r, cg, axis=1)))
            if gx is None:
                continue
            if w is not None:
                sg, sx = sg * w, sx * w
            shift = sg.reshape(count, groups, cg).sum(2)
            shift *= r
            shift *= inv
            slope = sx.reshape(count, groups, cg).sum(2)
            slope *= r * r * r
            slope *= inv
            o = gx[rows].reshape(-1, s)
            scale_rows(g2, _per_channel(r, w, cg), o)
            xg = xc[rows].reshape(-1, cg * s)
            tmp = scratch(xg.shape, xc.dtype)
            scale_rows(xg, slope.reshape(-1), tmp)
            og = o.reshape(-1, cg * s)
            np.subtract(og, tmp, out=og)
            np.subtract(og, shift.reshape(-1, 1), out=og)
        return dws, dbs

    parts = run(block, blocks(n, xc.size // 2))
    dw = total([d for part in parts for d in part[0]]) if needs[1] else None
    db = total([d for part in parts for d in part[1]]) if needs[2] else None
    return gx, dw, db
