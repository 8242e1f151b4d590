"""The statistics row and histogram of captured tensors, computed by the reader, many at once.

`summarise_block(block)` takes the copies of several captured tensors of one size (one
per row, float32) and returns their STAT_COLUMNS values (without the step) and their
histograms in a few vectorised passes, so that summarising 64 steps costs about as many
NumPy calls as summarising one. Non-finite numbers are left out of a row's statistics.
"""

from __future__ import annotations

import numpy as np

HISTOGRAM_BINS = 32


def summarise_block(block: np.ndarray, bins: int = HISTOGRAM_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(stats, histograms) of each row of `block` (m × n, float32).

    stats: m × 5 (mean, std, min, max, norm), NaN for a row without a finite number;
    histograms: m × (2 + bins) (min, max, counts…): the row's finite numbers in `bins`
    equal bins over [min, max] (over [min - 0.5, min + 0.5] when all are equal).
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
        total = values.sum(axis=1, dtype=np.float64)
        mean = total / counts
        deviation = values - mean.astype(np.float32)[:, None]
        if not all_finite:
            deviation[~finite] = 0
        variance = np.einsum("ij,ij->i", deviation, deviation, dtype=np.float64) / counts
        norm = np.sqrt(np.einsum("ij,ij->i", values, values, dtype=np.float64))
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
    with np.errstate(invalid="ignore"):
        position = (values - lo.astype(np.float32)[:, None]) * scale[:, None]
    index = np.clip(position, 0, bins - 1).astype(np.int64)  # the top edge goes in the last bin
    index += (np.arange(m) * bins)[:, None]
    if not all_finite:
        index = index[finite]
    counted = np.bincount(index.reshape(-1), minlength=m * bins).reshape(m, bins)
    histograms[present, 0] = low[present]
    histograms[present, 1] = high[present]
    histograms[:, 2:] = counted
    return stats, histograms
