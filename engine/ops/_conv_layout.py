"""The phase-plane layout every N-d convolution kernel works in (1-, 2- and 3-D alike).

A convolution with stride s reads padded position `o*s + k*d` for output o and tap k.
Splitting the padded input into s phase planes per axis (position p goes to plane p % s
at index p // s) turns every tap into one constant shift inside one plane. A sample's
channels lie end to end in its plane, (phases, N, C, *planes), so each tap's window over
a sample's channels and outputs is ONE contiguous run: im2col (`gather`) and col2im
(`scatter`) are one NumPy copy or add per tap over N long runs, never a loop over
pixels, for any stride and dilation. Outputs use the same grid ("pitched": (N, C, block),
the outputs in each block's corner); the junk around them meets zeros in every gradient.
A shift never moves a real value out of its channel's block, so a run may spill into
the next channel: only junk goes there.

The matmuls stay one small GEMM per sample (NumPy's stacked matmul), never one big GEMM
that must wake BLAS's second thread every time (measured: erratic). Instead the batch is
cut into a few blocks of samples (`parts`) that run on the conv pool's threads
(`_conv_threads`), each block's im2col, products and col2im together.

A transposed convolution is the same geometry read backwards: its forward pass is this
convolution's input gradient (`scatter` then `merge`), its input gradient this
convolution's forward (`split` then `gather`).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

CHUNK = 1 << 19  # bytes of columns: a batch with more is cut into blocks
MAX_PARTS = 2  # blocks at most: one per worker; smaller ones cost more in NumPy calls
# (taps of them per block) than their staying in cache saves (measured on both workloads)


@functools.lru_cache(maxsize=128)
def layout(batch, channels, groups, kernel, stride, dilation, padded, out) -> Layout:
    """The (immutable) Layout for these sizes, made once: a training loop asks again and
    again for the same few."""
    return Layout(batch, channels, groups, kernel, stride, dilation, padded, out)


class Layout:
    """Where everything sits for one convolution of (N, C, *padded) to (N, O, *out).

    `kernel`, `stride`, `dilation` are per axis; `groups` split C and O alike. Planes are
    (phases, N, C, block); columns (N, groups, taps * C/groups, block), taps outer; pitched
    outputs (N, O, block).
    """

    __slots__ = ("batch", "channels", "groups", "kernel", "stride", "dilation", "out",
                 "planes", "phases", "taps", "block", "junk", "length", "tail")

    def __init__(self, batch, channels, groups, kernel, stride, dilation, padded, out):
        self.batch, self.channels, self.groups = batch, channels, groups
        self.kernel, self.stride, self.dilation, self.out = kernel, stride, dilation, out
        self.planes = tuple(-(-p // s) for p, s in zip(padded, stride, strict=True))
        self.phases = math.prod(stride)
        pitches = [math.prod(self.planes[i + 1:]) for i in range(len(out))]
        self.taps = []  # per tap, row-major: (its phase plane, its shift in a block)
        for tap in itertools.product(*(range(k) for k in kernel)):
            reach = [k * d for k, d in zip(tap, dilation, strict=True)]
            phase = int(np.ravel_multi_index([r % s for r, s in zip(reach, stride, strict=True)],
                                             stride))
            shift = sum(r // s * p for r, s, p in zip(reach, stride, pitches, strict=True))
            self.taps.append((phase, shift))
        self.block = math.prod(self.planes)
        self.junk = tuple(out) != self.planes
        # When the outputs fill each block but its end (always in 1-D), the matmuls work on
        # the first `length` columns only and outputs need no pitching at all.
        self.length = out[0] * pitches[0]
        self.tail = tuple(out[1:]) == self.planes[1:]

    # ---------------------------------------------------------------- outputs, pitched

    def outputs(self, a: np.ndarray) -> tuple[np.ndarray, int]:
        """(N, O, *out) as matmul operands (N, groups, O/groups, columns) and how many
        columns of a block they cover: all of them pitched, or just `length` (`tail`)."""
        n, c = a.shape[:2]
        if self.tail:
            rows = np.ascontiguousarray(a).reshape(n, self.groups, c // self.groups,
                                                   self.length)
            return rows, self.length
        return self.pitch(a).reshape(n, self.groups, c // self.groups, self.block), self.block

    def columns(self, w: np.ndarray, a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """w @ a into full blocks (n, groups, rows, block), zeros past `a`'s columns (as
        `outputs` gives them), ready for `scatter`; in `out` when given."""
        n, g = a.shape[:2]
        if out is None:
            if a.shape[-1] == self.block:
                return np.matmul(w, a)
            out = np.empty((n, g, w.shape[-2], self.block), dtype=np.result_type(w, a))
        np.matmul(w, a, out=out[..., : a.shape[-1]])
        out[..., a.shape[-1]:] = 0
        return out

    def parts(self, per_sample: int) -> list[slice]:
        """The batch in blocks of samples: one while its columns (`per_sample` elements a
        sample) fit in CHUNK bytes, else MAX_PARTS, one per worker of the pool; each block
        is gathered into one buffer, multiplied and scattered while that buffer is warm."""
        step = max(1, min(self.batch, CHUNK // (4 * per_sample)))
        step = max(step, -(-self.batch // MAX_PARTS))  # each block costs taps+ NumPy calls
        return [slice(i, min(i + step, self.batch)) for i in range(0, self.batch, step)]

    def pitch(self, a: np.ndarray) -> np.ndarray:
        """(N, O, *out) -> (N, O, block), zeros around the outputs."""
        n, c = a.shape[:2]
        if not self.junk:
            return np.ascontiguousarray(a).reshape(n, c, self.block)
        buf = np.empty((n, c, *self.planes), dtype=a.dtype)
        box = [slice(0, o) for o in self.out]
        _zero_around(buf, box)
        buf[(slice(None), slice(None), *box)] = a
        return buf.reshape(n, c, self.block)

    def unpitch(self, a: np.ndarray) -> np.ndarray:
        """(N, O, block) -> (N, O, *out), a contiguous array."""
        n, c = a.shape[:2]
        a = a.reshape(n, c, *self.planes)
        if self.junk:
            a = a[(Ellipsis, *(slice(0, o) for o in self.out))]
        return np.ascontiguousarray(a)

    # ---------------------------------------------------------------- padded space <-> planes

    def split(self, a: np.ndarray, begin) -> np.ndarray:
        """Planes (phases, N, C, block) holding `a` (N, C, *S) at padded offset `begin`;
        zeros elsewhere (the padding), and what lies past the planes is dropped."""
        n, c = a.shape[:2]
        planes = np.empty((self.phases, n, c, *self.planes), dtype=a.dtype)
        for index, phase in enumerate(itertools.product(*(range(s) for s in self.stride))):
            src, dst = [], []
            for q, s, b, size, m in zip(phase, self.stride, begin, a.shape[2:], self.planes,
                                        strict=True):
                lo = max(-(-(b - q) // s), 0)
                hi = min(m, -(-(b + size - q) // s))
                if hi <= lo:
                    planes[index] = 0  # this phase holds padding only
                    break
                start = q + s * lo - b
                src.append(slice(start, start + s * (hi - lo - 1) + 1, s))
                dst.append(slice(lo, hi))
            else:
                _zero_around(planes[index], dst)
                planes[(index, slice(None), slice(None), *dst)] = \
                    a[(slice(None), slice(None), *src)]
        return planes.reshape(self.phases, n, c, self.block)

    def merge(self, planes: np.ndarray, begin, size, extra=None) -> np.ndarray:
        """(N, C, *size) read from the planes at padded offset `begin`; positions past the
        planes are zero, and so are `extra` more at the end of each axis."""
        n, c = planes.shape[1:3]
        grid = planes.reshape(self.phases, n, c, *self.planes)
        full = tuple(z + e for z, e in zip(size, extra or (0,) * len(size), strict=True))
        copies, short = [], full != tuple(size)
        for residue in itertools.product(*(range(s) for s in self.stride)):
            phase, src, dst = [], [], []
            for r, s, b, z, m in zip(residue, self.stride, begin, size, self.planes,
                                     strict=True):
                want = -(-(z - r) // s) if r < z else 0
                first = (r + b) // s
                count = min(want, max(m - first, 0))
                short = short or count < want
                phase.append((r + b) % s)
                src.append(slice(first, first + count))
                dst.append(slice(r, r + s * (count - 1) + 1, s) if count else slice(0, 0))
            if all(sl.stop > sl.start for sl in src):
                index = int(np.ravel_multi_index(phase, self.stride))
                copies.append((dst, (index, slice(None), slice(None), *src)))
        out = (np.zeros if short else np.empty)((n, c, *full), dtype=planes.dtype)
        for dst, src in copies:
            out[(slice(None), slice(None), *dst)] = grid[src]
        return out

    # ---------------------------------------------------------------- im2col and col2im

    def gather(self, planes: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """im2col of the samples in `planes` (phases, n, C, block): (n, groups,
        taps * C/groups, block), taps outer, channels inner; in `out` (as many elements)
        when given."""
        n, g, taps = planes.shape[1], self.groups, len(self.taps)
        run = self.channels // g * self.block
        cols = _apart((n, g, taps, run), planes) if out is None else _shaped(out, (n, g, taps,
                                                                                  run))
        for k, (phase, shift) in enumerate(self.taps):
            src = _shaped(planes[phase], (n, g, run))
            cols[:, :, k, : run - shift] = src[:, :, shift:]
            cols[:, :, k, run - shift:] = 0
        return cols.reshape(n, g, taps * (self.channels // g), self.block)

    def scatter(self, cols: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """col2im: planes (phases, n, C, block) summing every tap's columns (n, groups,
        taps * C/groups, block) at its place; the columns' junk must be zero. Into `out`
        (phases, n, C, block, each phase contiguous) when given."""
        n, g, taps = cols.shape[0], self.groups, len(self.taps)
        run = self.channels // g * self.block
        cols = cols.reshape(n, g, taps, run)
        if out is None:
            out = _apart((self.phases, n, self.channels, self.block), cols)
        planes = [_shaped(out[p], (n, g, run)) for p in range(self.phases)]
        filled = set()
        for k, (phase, shift) in enumerate(self.taps):
            window = planes[phase][:, :, shift:]
            if phase in filled:
                window += cols[:, :, k, : run - shift]
            else:  # the first tap on a plane writes it: no zero-fill, no add
                planes[phase][:, :, :shift] = 0
                window[...] = cols[:, :, k, : run - shift]
                filled.add(phase)
        for phase in set(range(self.phases)) - filled:
            planes[phase][...] = 0  # no tap reads this phase (stride beyond the kernel's reach)
        return out


def _shaped(a: np.ndarray, shape: tuple) -> np.ndarray:
    """`a` seen as `shape` without a copy (a copy would lose the writes into it)."""
    view = a.view()
    view.shape = shape
    return view


def _zero_around(a: np.ndarray, box) -> None:
    """Zero `a` (N, C, *spatial) outside `box` (one slice per spatial axis, step 1)."""
    lead = (slice(None), slice(None))
    for axis, sl in enumerate(box):
        before = [slice(None)] * len(box)
        after = [slice(None)] * len(box)
        before[axis], after[axis] = slice(0, sl.start), slice(sl.stop, None)
        a[(*lead, *before)] = 0
        a[(*lead, *after)] = 0


def _apart(shape: tuple, other: np.ndarray) -> np.ndarray:
    """An empty array for copies out of (or into) `other` shifted by a few elements, placed
    half a page away from it modulo 4 KiB: when source and destination share their low
    address bits, every load waits on the store before it ("4K aliasing"), which made
    some taps' copies three times slower."""
    item = other.dtype.itemsize
    spare = 4096 // item
    buf = np.empty(math.prod(shape) + spare, dtype=other.dtype)
    gap = (buf.ctypes.data - other.ctypes.data - 2048) % 4096
    start = (-gap // item) % spare
    return buf[start : start + math.prod(shape)].reshape(shape)
