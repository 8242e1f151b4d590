"""The statistics row and histogram of captured tensors, computed by the reader, many at once.

`summarise_block(block)` takes the copies of several captured tensors of one size (one
per row, float32) and returns their STAT_COLUMNS values (without the step) and their
histograms in a few vectorised passes, so that summarising 64 steps costs about as many
NumPy calls as summarising one. Non-finite numbers are left out of a row's statistics.
"""

from __future__ import annotations

import functools

import numpy as np

HISTOGRAM_BINS = 32
# Numbers of a row its histogram is counted from (more are sampled): 4,096 put about 128
# in an average bin of 32, which draws the same picture as all 16,384 of a full capture at
# a quarter of the cost. The statistics (min and max too) always use every number.
HISTOGRAM_SAMPLE = 4096
SAMPLE_RUN = 64  # neighbouring numbers sampled together


def summarise_block(block: np.ndarray, bins: int = HISTOGRAM_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(stats, histograms) of each row of `block` (m × n, float32).

    stats: m × 5 (mean, std, min, max, norm), NaN for a row without a finite number;
    histograms: m × (2 + bins) (min, max, counts…): the row's finite numbers in `bins`
    equal bins over [min, max] (over [min - 0.5, min + 0.5] when all are equal). Rows of
    more than `HISTOGRAM_SAMPLE` numbers are binned from a fixed random sample of that many
    positions, the counts scaled to the row's count of finite numbers.
    """
    block = np.asarray(block, dtype=np.float32)
    m, n = block.shape
    stats = np.full((m, 5), np.nan)
    histograms = np.zeros((m, 2 + bins))
    histograms[:, :2] = np.nan
    if m == 0 or n == 0:
        return stats, histograms
    finite = np.isfinite(block)
    all_finite = bool(finite.all())
    if all_finite:
        values, counts = block, np.full(m, n)
        low, high = block.min(axis=1), block.max(axis=1)
    else:  # rare: non-finite numbers count as nothing (0 in sums, out of min/max)
        counts = finite.sum(axis=1)
        values = np.where(finite, block, np.float32(0))
        low = np.where(finite, block, np.float32(np.inf)).min(axis=1)
        high = np.where(finite, block, np.float32(-np.inf)).max(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = values.sum(axis=1).astype(np.float64)  # float32, pairwise: ~1e-7 relative
        mean = total / counts
        # Sums of squares in float32 (a third of float64's time, SIMD-wide accumulators:
        # a relative error near 1e-6 on 16k numbers), from one scratch block reused below.
        scratch = np.subtract(values, mean.astype(np.float32)[:, None])
        if not all_finite:
            scratch[~finite] = 0
        variance = np.einsum("ij,ij->i", scratch, scratch).astype(np.float64) / counts
        norm = np.sqrt(np.einsum("ij,ij->i", values, values).astype(np.float64))
    present = counts > 0
    stats[present, 0] = mean[present]
    stats[present, 1] = np.sqrt(variance[present])
    stats[present, 2] = low[present]
    stats[present, 3] = high[present]
    stats[present, 4] = norm[present]
    # Histograms: each row's numbers into `bins` equal bins over [low, high], all at once.
    lo = np.where(present, low, 0).astype(np.float64)
    hi = np.where(present, high, 1).astype(np.float64)
    flat = hi <= lo
    lo[flat], hi[flat] = lo[flat] - 0.5, hi[flat] + 0.5
    scale = (bins / (hi - lo)).astype(np.float32)
    if n > HISTOGRAM_SAMPLE:  # a fixed random sample of the positions, the same each row
        values, position = _sample(values), np.empty((m, HISTOGRAM_SAMPLE), np.float32)
        if not all_finite:
            finite = _sample(finite)
    else:
        position = scratch  # in place: each temporary block costs as much as the arithmetic
    with np.errstate(invalid="ignore"):
        np.subtract(values, lo.astype(np.float32)[:, None], out=position)
        position *= scale[:, None]
    np.clip(position, 0, bins - 1, out=position)  # the top edge goes in the last bin
    index = position.astype(np.intp)
    index += (np.arange(m, dtype=np.intp) * bins)[:, None]
    if not all_finite:
        index = index[finite]
    counted = np.bincount(index.reshape(-1), minlength=m * bins).reshape(m, bins)
    if n > HISTOGRAM_SAMPLE:  # scaled up to the row's count of finite numbers
        sampled = counted.sum(axis=1)
        counted = counted * np.divide(counts, sampled, out=np.zeros(m), where=sampled > 0)[:, None]
    histograms[present, 0] = low[present]
    histograms[present, 1] = high[present]
    histograms[:, 2:] = counted
    return stats, histograms


def _sample(rows: np.ndarray) -> np.ndarray:
    """`HISTOGRAM_SAMPLE` numbers of each row: runs of `SAMPLE_RUN` neighbours at places
    drawn at random once per row length (the same each time; no stride that could fall in
    step with a tensor's layout), copied run by run rather than number by number."""
    m, n = rows.shape
    runs = n // SAMPLE_RUN
    picked = _runs(runs, HISTOGRAM_SAMPLE // SAMPLE_RUN)
    return rows[:, : runs * SAMPLE_RUN].reshape(m, runs, SAMPLE_RUN)[:, picked].reshape(m, -1)


@functools.lru_cache(maxsize=8)
def _runs(runs: int, size: int) -> np.ndarray:
    return np.sort(np.random.default_rng(runs).choice(runs, size, replace=False))
