"""The row kernels of layer normalisation, and the blocks, chunks and tiles that the layer
and group norm kernels (_norm_group_rows) share.

Every block normalises its own rows, in place on its slice of arrays allocated once for the
whole input, so blocks never share writes. NumPy releases the GIL inside its loops: blocks
of a large input run at the same time on different cores. That pays only while the passes
wait on main memory: on arrays that stay in cache two threads run NumPy's loops no faster
than one (measured on a 2-core machine), and small calls lose time passing the GIL back
and forth. So inputs under PARALLEL_FROM elements stay on the calling thread; callers whose
passes run nearer cache speed pass a smaller `size` to `blocks`.

The time goes in whole passes over arrays of many megabytes, so the kernels make as few
as they can and pick the cheapest form of each (measured on float32, 2 cores):
- a block walks its rows in chunks of about CHUNK elements, so the several passes over a
  chunk find it in cache instead of main memory;
- per-column factors (gamma, beta) are tiled to TILE elements and applied to rows viewed
  as long lines: NumPy's inner loop then runs thousands of elements per call, not one row;
- per-row factors go through einsum ("ij,i->ij") on short rows and through ufuncs with
  short buffers (`unbuffered`) on long ones, the faster of the two on each;
- row dot products use np.vecdot (NumPy >= 2), a BLAS dot per row that stays on the
  calling thread; einsum does the other sums. No pass wakes BLAS threads: once woken they
  spin on the other core long after, halving the speed of the blocks run there;
- temporaries live in one scratch buffer per thread, reused across calls.

Statistics use a two-pass variance: the row mean first, then the mean square of the
centred values, so a large offset shared by a row does not cancel its spread away. The
centred rows (not the normalised ones) are kept for the backward pass: the forward writes
the output straight from them, one pass fewer.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator

import numpy as np

from engine.ops._threads import run, workers

PARALLEL_FROM = 1 << 19  # elements
CHUNK = 1 << 19  # elements a block handles per step of its walk
TILE = 1 << 14  # elements of a tiled per-column factor
ROW_LONG = 1024  # rows from this length take per-row factors through ufuncs, unbuffered
DOT_MAX = 8192  # longest row for np.vecdot: OpenBLAS threads its dot from 10000 elements

_local = threading.local()
_vecdot = getattr(np, "vecdot", None)


def blocks(units: int, size: int) -> list[slice]:
    """Slices splitting range(units) into one block per worker for a large input (`size`
    elements in all), or a single block."""
    count = min(workers(), units) if size >= PARALLEL_FROM else 1
    if count <= 1:
        return [slice(0, units)]
    bounds = [units * i // count for i in range(count + 1)]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def chunks(part: slice, unit: int, size: int) -> Iterator[slice]:
    """The rows of block `part` (counted in units of `unit` rows, each unit `size`
    elements) in slices of about CHUNK elements, whole units each."""
    step = max(1, CHUNK // max(size, 1))
    for start in range(part.start, part.stop, step):
        yield slice(start * unit, min(start + step, part.stop) * unit)


def scratch(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """An uninitialised array from this thread's scratch buffer, valid until its next
    call on this thread. A request far over a chunk gets an array of its own."""
    size = math.prod(shape)
    if size > 4 * CHUNK:
        return np.empty(shape, dtype)
    buf = getattr(_local, "buf", None)
    if buf is None or buf.dtype != dtype or buf.size < size:
        buf = _local.buf = np.empty(max(size, CHUNK), dtype)
    return buf[:size].reshape(shape)


def unbuffered(length: int, size: int):
    """Context: ufunc buffers no longer than rows of `length`, for an input of `size`
    elements. A value broadcast along rows shorter than the buffer (8192 elements by
    default) goes through a copy buffer; with the buffer at most a row long, the loop
    runs straight over each row, twice as fast for rows of a few thousand elements.
    Short rows and small inputs gain nothing and keep the buffer. Per thread."""
    if length < ROW_LONG or size < 2 * TILE:
        return contextlib.nullcontext()
    return _BufSize(length // 16 * 16)


class _BufSize:
    __slots__ = ("size", "old")

    def __init__(self, size: int):
        self.size = max(16, min(8192, size))

    def __enter__(self) -> None:
        self.old = np.getbufsize()
        np.setbufsize(self.size)

    def __exit__(self, *exc) -> None:
        np.setbufsize(self.old)


def rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum over each row of a * b (2-D). np.vecdot (NumPy >= 2) runs a BLAS dot per row,
    1.5 to 2 times faster than einsum; rows long enough for OpenBLAS to thread its dot go
    to einsum instead (see the module's notes on BLAS threads)."""
    if _vecdot is not None and a.shape[-1] <= DOT_MAX:
        return _vecdot(a, b)
    return np.einsum("ij,ij->i", a, b)


class Tiled:
    """A per-column factor `v` (p,) repeated along rows viewed as lines of whole copies,
    so that `apply` runs NumPy's inner loop over long lines, not single rows. An input of
    `size` elements too small to gain from it keeps `v` as it is."""

    __slots__ = ("v", "p", "copies", "tile")

    def __init__(self, v: np.ndarray, p: int, size: int):
        self.v, self.p = v, p
        self.copies = max(1, TILE // max(p, 1)) if size >= 4 * TILE else 1
        self.tile = v
        if self.copies > 1:
            self.tile = np.empty(self.copies * p, v.dtype)
            self.tile.reshape(self.copies, p)[...] = v

    def apply(self, ufunc: np.ufunc, a: np.ndarray) -> None:
        """a = ufunc(a, v) in place, a C-contiguous with a multiple of p elements."""
        flat = a.reshape(-1, self.p)
        if self.copies == 1:
            ufunc(flat, self.v, out=flat)
            return
        whole = flat.shape[0] // self.copies * self.copies
        if whole:
            lines = flat[:whole].reshape(-1, self.tile.size)
            ufunc(lines, self.tile, out=lines)
        if whole < flat.shape[0]:
            rest = flat[whole:]
            ufunc(rest, self.v, out=rest)


def scale_rows(a: np.ndarray, r: np.ndarray, out: np.ndarray) -> None:
    """out = a times r (one value per row): einsum for short rows, whose loop beats the
    ufunc's there; the ufunc for rows of ROW_LONG and more (run it `unbuffered`)."""
    if a.shape[1] >= ROW_LONG:
        np.multiply(a, r[:, None], out=out)
    else:
        np.einsum("ij,i->ij", a, r, out=out)


def total(arrays: list[np.ndarray]) -> np.ndarray:
    """The sum of the partial sums of blocks and chunks (the only one as it is)."""
    return arrays[0] if len(arrays) == 1 else np.sum(arrays, axis=0)


def centre(x: np.ndarray, xc: np.ndarray, rstd: np.ndarray, eps: float) -> None:
    """xc = x minus its row means; rstd = 1 / sqrt(row variance + eps)."""
    dt = x.dtype.type
    inv = dt(1.0 / x.shape[1]) if x.shape[1] else dt(0.0)
    mean = np.einsum("ij->i", x)
    mean *= inv
    np.subtract(x, mean[:, None], out=xc)
    var = rowdot(xc, xc)
    var *= inv
    var += dt(eps)
    np.sqrt(var, out=rstd)
    np.divide(dt(1.0), rstd, out=rstd)


# ----------------------------------------------------------------------------- layer norm


def layer_norm_forward(x: np.ndarray, g: np.ndarray | None, b: np.ndarray | None, p: int,
                       eps: float, keep: bool = True):
    """(out, xc, rstd) for rows `x` (R, M) normalised, then `* g + b` with g and b (p,)
    repeating along the flattened rows (p divides M, or M divides p). xc holds x minus its
    row means when `keep` (for the backward pass); otherwise it is `out`, overwritten."""
    rows, m = x.shape
    out = np.empty_like(x)
    xc = np.empty_like(x) if keep else out
    rstd = np.empty(rows, x.dtype)
    if x.size == 0:
        return out, xc, rstd
    unit = p // m if p > m else 1  # rows per block must hold whole copies of g
    gt = Tiled(g, p, x.size) if g is not None else None
    bt = Tiled(b, p, x.size) if b is not None else None

    def block(part: slice) -> None:
        with unbuffered(m, x.size):
            for s in chunks(part, unit, unit * m):
                _rows(s)

    def _rows(s: slice) -> None:
        c, o, r = xc[s], out[s], rstd[s]
        centre(x[s], c, r, eps)
        if keep:
            scale_rows(c, r, o)
        else:
            np.multiply(o, r[:, None], out=o)
        if gt is not None:
            gt.apply(np.multiply, o)
        if bt is not None:
            bt.apply(np.add, o)

    run(block, blocks(rows // unit, x.size))
    return out, xc, rstd


def layer_norm_backward(gout: np.ndarray, xc: np.ndarray, rstd: np.ndarray,
                        g: np.ndarray | None, p: int, needs: tuple[bool, bool, bool]):
    """(dx, dg, db) of layer_norm_forward for the output gradient `gout` (R, M); None for
    what is not needed.

    With o = rstd · g · gout per row: dx = o - mean(o) - xc · rstd² · mean(o · xc), the
    means over each row; dg sums gout · rstd · xc and db sums gout over the rows."""
    rows, m = xc.shape
    dt = xc.dtype.type
    inv = dt(1.0 / m) if m else dt(0.0)
    unit = p // m if p > m else 1
    gx = np.empty_like(xc) if needs[0] else None
    if xc.size == 0:
        zeros = np.zeros(p, xc.dtype)
        return gx, zeros if needs[1] else None, zeros if needs[2] else None
    gt = Tiled(g, p, xc.size) if g is not None else None

    def block(part: slice):
        with unbuffered(m, xc.size):
            return _block(part)

    def _block(part: slice):
        dgs, dbs = [], []
        for s in chunks(part, unit, unit * m):
            gs, c, r = gout[s], xc[s], rstd[s]
            if needs[2]:
                dbs.append(np.einsum("ij->j", gs.reshape(-1, p)))
            if gx is None and not needs[1]:
                continue
            o = gx[s] if gx is not None else scratch(gs.shape, xc.dtype)
            scale_rows(gs, r, o)
            if needs[1]:
                dgs.append(np.einsum("ij,ij->j", o.reshape(-1, p), c.reshape(-1, p)))
            if gx is None:
                continue
            if gt is not None:
                gt.apply(np.multiply, o)
            shift = np.einsum("ij->i", o)
            shift *= inv
            slope = rowdot(o, c)
            slope *= r
            slope *= r
            slope *= inv
            tmp = scratch(c.shape, xc.dtype)
            scale_rows(c, slope, tmp)
            np.subtract(o, tmp, out=o)
            np.subtract(o, shift[:, None], out=o)
        return dgs, dbs

    parts = run(block, blocks(rows // unit, xc.size))
    dg = total([d for part in parts for d in part[0]]) if needs[1] else None
    db = total([d for part in parts for d in part[1]]) if needs[2] else None
    return gx, dg, db
