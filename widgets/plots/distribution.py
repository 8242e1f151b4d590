"""Arrays behind a hook pane's views, computed from a capture's summaries (no Qt).

`distribution_image` turns per-step histograms into TensorBoard's histogram mode (steps
across, values up); `band_edges` thins a mean ± std band for painting; `by_step` and
`colour_levels` order rows and choose a heatmap's colour range.
"""

from __future__ import annotations

import numpy as np

from app.session import STAT_COLUMNS

MAX_COLUMNS = 400  # of the distribution image: about one per pixel of a wide pane
VALUE_ROWS = 64  # of the distribution image: the value grid every step is rebinned onto
STEP = STAT_COLUMNS.index("step")


def distribution_image(steps: np.ndarray, histograms: np.ndarray, columns: int = MAX_COLUMNS,
                       rows: int = VALUE_ROWS) -> tuple[np.ndarray, tuple] | None:  # fmt: skip
    """The distribution over steps as an image: (image, (x, width, y, height)), or None.

    `histograms` rows are (min, max, counts…) with counts in equal bins over [min, max],
    one row per entry of `steps` (any spacing, ascending). Columns are evenly spaced in
    step from the first to the last (at most `columns`, fewer when the steps are fewer
    and evenly spaced), each showing the newest row at or before it. Every row's counts
    are spread onto one grid of `rows` values over the overall [min, max] — as the share
    of each bin overlapping each grid cell, so mass is kept and no cell is skipped —
    then each column is scaled to its own peak and square-rooted to show the tails.
    image[value row, column] lies in [0, 1]; (x, width, y, height) places it on the axes.
    """
    steps = np.asarray(steps, dtype=np.float64).reshape(-1)
    histograms = np.asarray(histograms, dtype=np.float64)
    keep = np.isfinite(steps) & np.isfinite(histograms[:, :2]).all(axis=1)
    steps, histograms = steps[keep], histograms[keep]
    if not len(steps) or histograms.shape[1] < 3:
        return None
    if np.any(steps[1:] < steps[:-1]):
        order = np.argsort(steps, kind="stable")
        steps, histograms = steps[order], histograms[order]
    first, last = steps[0], steps[-1]
    gaps = np.diff(steps)
    gaps = gaps[gaps > 0]
    if len(gaps):
        count = min(columns, int(round((last - first) / gaps.min())) + 1)
        spacing = (last - first) / (count - 1) if count > 1 else 1.0
    else:
        count, spacing = 1, 1.0
    centres = first + spacing * np.arange(count)
    # The newest row at or before each column (a hair of slack for rounding).
    pick = np.searchsorted(steps, centres + spacing * 1e-6, side="right") - 1
    chosen = histograms[np.maximum(pick, 0)]
    low, high, counts = chosen[:, 0], chosen[:, 1], chosen[:, 2:]
    bottom, top = float(low.min()), float(high.max())
    if top <= bottom:
        bottom, top = bottom - 0.5, top + 0.5
    bins = counts.shape[1]
    # A row with one value (min == max) gets a sliver of width: all of it falls in one cell.
    width = np.maximum(high - low, (top - bottom) * 1e-9) / bins
    edges = bottom + (top - bottom) * np.arange(rows + 1) / rows
    position = np.clip((edges[None, :] - low[:, None]) / width[:, None], 0, bins)
    position[:, 0], position[:, -1] = 0, bins  # every count inside the grid
    whole = np.minimum(position.astype(np.int64), bins - 1)
    cumulative = np.zeros((count, bins + 1))
    np.cumsum(counts, axis=1, out=cumulative[:, 1:])
    column = np.arange(count)[:, None]
    # Counts below each grid edge, taking a bin's counts as spread evenly over the bin.
    below = cumulative[column, whole] + (position - whole) * counts[column, whole]
    mass = np.diff(below, axis=1)
    peak = mass.max(axis=1, keepdims=True)
    share = np.divide(mass, peak, out=np.zeros_like(mass), where=peak > 0)
    image = np.sqrt(np.clip(share, 0, 1)).T  # row-major: [value row, step column]
    return np.ascontiguousarray(image), (first - spacing / 2, count * spacing, bottom, top - bottom)


def band_edges(step: np.ndarray, low: np.ndarray, high: np.ndarray, points: int = 400
          ) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """The band's edges, thinned to about `points` by keeping each stretch's outer edge: a
    filled polygon is painted whole, without pyqtgraph's downsampling."""
    n = len(step)
    if n <= points:
        return (step, low), (step, high)
    starts = np.linspace(0, n, points, endpoint=False).astype(np.int64)
    return ((step[starts], np.minimum.reduceat(low, starts)),
            (step[starts], np.maximum.reduceat(high, starts)))  # fmt: skip


def by_step(rows: np.ndarray) -> np.ndarray:
    """Stats rows in step order (they come so; lines and their downsampling need it)."""
    step = rows[:, STEP]
    if np.any(step[1:] < step[:-1]):
        return rows[np.argsort(step, kind="stable")]
    return rows


def colour_levels(image: np.ndarray, *, symmetric: bool) -> tuple[float, float]:
    """Colour levels: (-m, m) around 0 for gradients, else the values' (min, max)."""
    finite = image[np.isfinite(image)]
    if not len(finite):
        return (-1.0, 1.0) if symmetric else (0.0, 1.0)
    if symmetric:
        m = float(np.abs(finite).max())
        return (-m, m) if m > 0 else (-1.0, 1.0)
    low, high = float(finite.min()), float(finite.max())
    return (low, high) if high > low else (low - 0.5, high + 0.5)
