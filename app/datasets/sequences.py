"""Generated data with a time axis: forecasting a multi-sine, the adding problem, and the
sign of a running sum. Samples are batch first, float32 (N, T, features).

Each maker takes `n_samples`, `seed` and its own options (app.datasets.options names and
bounds them); the same options and seed always make the same set.
"""

from __future__ import annotations

import numpy as np

from app.datasets.dataset import CLASSIFICATION, REGRESSION, Dataset, DatasetError
from app.datasets.options import check_number, check_whole

# The multi-sine: periods (in time steps) and amplitudes of its three components. Each
# sample has its own random phases, so a window of about one long period tells the future.
SINE_PERIODS = (24.0, 10.0, 5.5)
SINE_AMPLITUDES = (0.6, 0.3, 0.15)
# Running-sum sign: a sequence's sum is at least this many standard deviations of it
# (0.25 × sqrt(length)) away from 0, so the answer never hangs on a hair. A GRU of 32
# units learns it to ≥ 95 % validation accuracy within a few epochs of 1000 samples.
SIGN_MARGIN = 0.25
SIGN_CLASSES = ("negative", "positive")


def make_multisine(
    n_samples: int = 1000, noise: float = 0.05, seed: int = 0, window: int = 32,
    horizon: int = 1,
) -> Dataset:  # fmt: skip
    """Forecasting: `window` values of a noisy sum of three sines → the next `horizon`.

    x is (N, window, 1), y (N, horizon), regression. Every sample is its own series (the
    same three periods, random phases), with Gaussian noise of std `noise` on every value,
    the targets too: a perfect forecaster's mean squared error is about noise².
    """
    n, rng = _start(n_samples, seed)
    noise = check_number(noise, "noise")
    window, horizon = check_whole(window, "window"), check_whole(horizon, "horizon")
    _check_size(n, window + horizon)
    t = np.arange(window + horizon, dtype=np.float64)
    phases = rng.uniform(0.0, 2 * np.pi, (n, len(SINE_PERIODS)))
    series = np.zeros((n, len(t)))
    for k, (period, amplitude) in enumerate(zip(SINE_PERIODS, SINE_AMPLITUDES, strict=True)):
        series += amplitude * np.sin(2 * np.pi * t / period + phases[:, k : k + 1])
    series += noise * rng.standard_normal(series.shape)
    targets = ("y (t+1)",) if horizon == 1 else tuple(f"y (t+{h + 1})" for h in range(horizon))
    return Dataset(
        series[:, :window, None], series[:, window:], REGRESSION, name="Multi-sine",
        target_names=targets,
    )  # fmt: skip


def make_adding(n_samples: int = 1000, seed: int = 0, length: int = 50) -> Dataset:
    """The adding problem (Hochreiter & Schmidhuber, 1997): the sum of two marked values.

    x is (N, length, 2): channel 0 holds values uniform in [0, 1], channel 1 marks two of
    the steps with 1 (one in the first half, one in the second) and the rest with 0.
    y (N, 1), regression, is the sum of the two marked values (0 to 2). Always answering
    1 gives a mean squared error of about 0.167: a network must beat that.
    """
    n, rng = _start(n_samples, seed)
    length = check_whole(length, "length")
    _check_size(n, 2 * length)
    values = rng.uniform(0.0, 1.0, (n, length))
    half = length // 2
    first = rng.integers(0, half, n)
    second = rng.integers(half, length, n)
    markers = np.zeros((n, length))
    rows = np.arange(n)
    markers[rows, first] = 1.0
    markers[rows, second] = 1.0
    y = values[rows, first] + values[rows, second]
    x = np.stack([values, markers], axis=2)
    return Dataset(x, y[:, None], REGRESSION, name="Adding problem", target_names=("sum",))


def make_running_sign(n_samples: int = 1000, seed: int = 0, length: int = 20) -> Dataset:
    """Sequence classification: is the running sum of the sequence positive at its end?

    x is (N, length, 1) standard normal values; y is 1 ("positive") when their sum is above
    0, else 0 ("negative"), half the samples each. The sum of every sequence is at least
    SIGN_MARGIN × sqrt(length) away from 0 (sequences nearer are drawn again).
    """
    n, rng = _start(n_samples, seed)
    length = check_whole(length, "length")
    _check_size(n, length)
    kept: list[np.ndarray] = []
    count = 0
    while count < n:  # about 80 % are kept each round
        draw = rng.standard_normal((n, length))
        draw = draw[np.abs(draw.sum(axis=1)) >= SIGN_MARGIN * np.sqrt(length)]
        kept.append(draw)
        count += len(draw)
    x = np.concatenate(kept)[:n]
    y = rng.permutation(np.arange(n) >= n - n // 2).astype(np.int64)
    x[(x.sum(axis=1) > 0) != (y == 1)] *= -1.0  # a sequence turned over has the other sign
    return Dataset(x[:, :, None], y, CLASSIFICATION, 2, name="Running-sum sign",
                   class_names=SIGN_CLASSES)  # fmt: skip


def _start(n_samples: int, seed: int) -> tuple[int, np.random.Generator]:
    n = check_whole(n_samples, "n_samples")
    return n, np.random.default_rng(check_whole(seed, "seed"))


MAX_VALUES = 50_000_000  # float64 values a generated sequence set may take while made


def _check_size(n: int, steps: int) -> None:
    if n * steps > MAX_VALUES:
        raise DatasetError(
            f"{n:,} samples of {steps:,} time steps are too many values ({n * steps:,}; "
            f"the most is {MAX_VALUES:,}): use fewer samples or shorter sequences."
        )
