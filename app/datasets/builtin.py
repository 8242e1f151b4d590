"""The data sets Cellwright ships with: 2-D toy sets, a 1-D regression, 8×8 digits, real
tabular sets (iris, wine, breast cancer: app.datasets.tabular), and sets with a time axis
(app.datasets.sequences, app.datasets.text)."""

from __future__ import annotations

import inspect
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.datasets.dataset import CLASSIFICATION, REGRESSION, Dataset, DatasetError
from app.datasets.sequences import make_adding, make_multisine, make_running_sign
from app.datasets.tabular import make_breast_cancer, make_iris, make_wine
from app.datasets.text import make_text
from app.resources_path import resource_path

TWO_CLASSES = ("0", "1")
POINT_FEATURES = ("x1", "x2")
MAX_SAMPLES = 1_000_000  # a generated set: more is a typo, and would only fill the memory


def make_spirals(
    n_samples: int = 400, noise: float = 0.05, seed: int = 0, turns: float = 1.5
) -> Dataset:
    """Two interleaved spiral arms, one per class, within about [-1, 1]²."""
    rng = _rng(n_samples, noise, seed, minimum=2)
    y = _two_class_labels(n_samples, rng)
    u = rng.uniform(0.0, 1.0, n_samples)
    # sqrt spreads points evenly along the arm instead of crowding them at the centre.
    angle = (0.05 + 0.95 * np.sqrt(u)) * turns * 2 * np.pi
    radius = angle / (turns * 2 * np.pi)
    angle = angle + np.pi * y  # class 1 is class 0 turned half a circle
    x = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return _points(x, y, noise, rng, "Spirals")


def make_moons(n_samples: int = 200, noise: float = 0.1, seed: int = 0) -> Dataset:
    """Two interlocking half circles, centred on the origin."""
    rng = _rng(n_samples, noise, seed, minimum=2)
    y = _two_class_labels(n_samples, rng)
    t = rng.uniform(0.0, np.pi, n_samples)
    upper = np.stack([np.cos(t), np.sin(t)], axis=1)
    lower = np.stack([1.0 - np.cos(t), 0.5 - np.sin(t)], axis=1)
    x = np.where(y[:, None] == 0, upper, lower) - np.array([0.5, 0.25])
    return _points(x, y, noise, rng, "Moons")


def make_circles(
    n_samples: int = 200, noise: float = 0.05, seed: int = 0, factor: float = 0.5
) -> Dataset:
    """An outer ring (class 0) around an inner ring of radius `factor` (class 1)."""
    if not 0.0 < factor < 1.0:
        raise DatasetError(f"The inner ring's size must be between 0 and 1, not {factor:g}.")
    rng = _rng(n_samples, noise, seed, minimum=2)
    y = _two_class_labels(n_samples, rng)
    t = rng.uniform(0.0, 2 * np.pi, n_samples)
    radius = np.where(y == 0, 1.0, factor)
    x = np.stack([radius * np.cos(t), radius * np.sin(t)], axis=1)
    return _points(x, y, noise, rng, "Circles")


def make_xor(n_samples: int = 200, noise: float = 0.05, seed: int = 0) -> Dataset:
    """Points in the four quadrants of [-1, 1]²; class 1 where the two signs differ."""
    rng = _rng(n_samples, noise, seed, minimum=2)
    y = _two_class_labels(n_samples, rng)
    # Distance from each axis, kept off the axes so the quadrants are clear without noise.
    size = rng.uniform(0.1, 1.0, (n_samples, 2))
    first = rng.choice([-1.0, 1.0], n_samples)
    second = np.where(y == 1, -first, first)
    x = size * np.stack([first, second], axis=1)
    return _points(x, y, noise, rng, "XOR")


def make_sine(n_samples: int = 200, noise: float = 0.1, seed: int = 0) -> Dataset:
    """Regression: y = sin(x) + noise for x uniform in [-3, 3]; shapes (N, 1) and (N, 1)."""
    rng = _rng(n_samples, noise, seed, minimum=1)
    x = rng.uniform(-3.0, 3.0, (n_samples, 1))
    y = np.sin(x) + noise * rng.standard_normal((n_samples, 1))
    return Dataset(x, y, task=REGRESSION, feature_names=("x",), name="Sine", target_names=("y",))


def make_digits(
    n_samples: int | None = None,
    noise: float = 0.0,
    seed: int = 0,
    flat: bool = False,
    path: str | Path | None = None,
) -> Dataset:
    """8×8 hand-written digits 0–9 from the bundled `digits.npz`, pixels scaled to [0, 1].

    x is (N, 1, 8, 8), or (N, 64) with `flat`. `n_samples=None` takes all 1797 images in
    file order; a smaller number takes a seeded random choice of them. `noise` adds
    Gaussian pixel noise (then clips to [0, 1]). `path` reads another file of the same
    layout: `images` (N, 8, 8) integers 0–16 and `labels` (N,) integers 0–9.
    """
    images, labels = _read_digits(Path(path) if path is not None else _digits_file())
    total = len(labels)
    rng = _rng(total if n_samples is None else n_samples, noise, seed, minimum=1)
    if n_samples is not None and n_samples > total:
        raise DatasetError(f"The digits set has {total} images; {n_samples} were asked for.")
    keep = np.arange(total) if n_samples is None else np.sort(rng.permutation(total)[:n_samples])
    x = images[keep].astype(np.float32)[:, None, :, :] / 16.0
    if noise:
        x = np.clip(x + noise * rng.standard_normal(x.shape), 0.0, 1.0)
    features: tuple[str, ...] = ()
    if flat:
        x = x.reshape(len(keep), 64)
        features = tuple(f"pixel {r + 1},{c + 1}" for r in range(8) for c in range(8))
    names = tuple(str(d) for d in range(10))
    return Dataset(x, labels[keep], CLASSIFICATION, 10, features, "Digits", class_names=names)


def make_digit_images(
    n_samples: int | None = None,
    noise: float = 0.0,
    seed: int = 0,
    path: str | Path | None = None,
) -> Dataset:
    """The 8×8 digits as a reconstruction task: x is each image (N, 1, 8, 8), the target
    its 64 clean pixels (N, 64), for autoencoders. With `noise`, x is the noisy image and
    the target stays clean: a denoising autoencoder."""
    clean = make_digits(n_samples, 0.0, seed, path=path)
    x = clean.x
    if noise:
        rng = _rng(len(x), noise, seed, minimum=1)
        x = np.clip(x + noise * rng.standard_normal(x.shape), 0.0, 1.0).astype(np.float32)
    pixels = tuple(f"pixel {r + 1},{c + 1}" for r in range(8) for c in range(8))
    return Dataset(x, clean.x.reshape(len(x), 64), REGRESSION, None, (), "Digit images",
                   target_names=pixels)


def _digits_file() -> Path:
    return resource_path("data", "digits.npz")


def _read_digits(path: Path) -> tuple[np.ndarray, np.ndarray]:
    if not path.is_file():
        raise DatasetError(f"The digits file is missing ({path}); reinstall Cellwright.")
    try:
        with np.load(path, allow_pickle=False) as archive:
            missing = {"images", "labels"} - set(archive.files)
            if missing:
                raise DatasetError(f"The digits file {path} lacks {', '.join(sorted(missing))}.")
            images, labels = archive["images"], archive["labels"]
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        if isinstance(exc, DatasetError):
            raise
        raise DatasetError(f"The digits file {path} is damaged: {exc}") from None
    ok = (
        images.ndim == 3
        and images.shape[1:] == (8, 8)
        and labels.shape == (len(images),)
        and np.issubdtype(images.dtype, np.integer)
        and np.issubdtype(labels.dtype, np.integer)
        and len(labels) > 0
        and images.min() >= 0
        and images.max() <= 16
        and labels.min() >= 0
        and labels.max() <= 9
    )
    if not ok:
        raise DatasetError(
            f"The digits file {path} does not hold 8×8 images of 0–16 with labels 0–9."
        )
    return images, labels.astype(np.int64)


def _rng(n_samples: int, noise: float, seed: int, minimum: int) -> np.random.Generator:
    if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer):
        raise DatasetError(f"The number of samples must be a whole number, not {n_samples!r}.")
    if n_samples < minimum:
        raise DatasetError(f"The number of samples must be at least {minimum}, not {n_samples}.")
    if n_samples > MAX_SAMPLES:
        raise DatasetError(
            f"The number of samples must be at most {MAX_SAMPLES:,}, not {n_samples:,}."
        )
    if not (isinstance(noise, int | float | np.floating) and 0.0 <= noise < np.inf):
        raise DatasetError(f"The noise must be a number of 0 or more, not {noise!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise DatasetError(f"The seed must be a whole number of 0 or more, not {seed!r}.")
    return np.random.default_rng(int(seed))


def _two_class_labels(n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Half the samples of each class (class 0 gets the odd one), in a seeded random order."""
    return rng.permutation(np.arange(n_samples) >= n_samples - n_samples // 2).astype(np.int64)


def _points(
    x: np.ndarray, y: np.ndarray, noise: float, rng: np.random.Generator, name: str
) -> Dataset:
    x = x + noise * rng.standard_normal(x.shape)
    return Dataset(x, y, CLASSIFICATION, 2, POINT_FEATURES, name, class_names=TWO_CLASSES)


@dataclass(frozen=True)
class BuiltinDataset:
    """One entry of the GUI's list of built-in data sets."""

    key: str
    title: str
    description: str
    make: Callable[..., Dataset]
    task: str

    @property
    def default_samples(self) -> int | None:
        return inspect.signature(self.make).parameters["n_samples"].default

    @property
    def options(self) -> dict[str, object]:
        """Each keyword option `make` takes, with its default (`path` is no option)."""
        return {
            name: parameter.default
            for name, parameter in inspect.signature(self.make).parameters.items()
            if name != "path" and parameter.default is not inspect.Parameter.empty
        }

    @property
    def default_noise(self) -> float:
        return inspect.signature(self.make).parameters["noise"].default

    def __call__(self, **options) -> Dataset:
        return self.make(**options)


BUILTIN: dict[str, BuiltinDataset] = {
    entry.key: entry
    for entry in (
        BuiltinDataset(
            "spirals", "Spirals",
            "Two interleaved spiral arms: needs a non-linear network.",
            make_spirals, CLASSIFICATION,
        ),
        BuiltinDataset(
            "moons", "Moons",
            "Two interlocking half circles: a gently curved boundary.",
            make_moons, CLASSIFICATION,
        ),
        BuiltinDataset(
            "circles", "Circles",
            "A ring around a smaller ring: a closed, round boundary.",
            make_circles, CLASSIFICATION,
        ),
        BuiltinDataset(
            "xor", "XOR",
            "Four quadrants, opposite corners alike: the classic non-linear problem.",
            make_xor, CLASSIFICATION,
        ),
        BuiltinDataset(
            "sine", "Sine wave",
            "Regression: fit y = sin(x) plus noise for x in [-3, 3].",
            make_sine, REGRESSION,
        ),
        BuiltinDataset(
            "digits", "Digits 8×8",
            "1797 small images of hand-written digits 0–9 (UCI optdigits).",
            make_digits, CLASSIFICATION,
        ),
        BuiltinDataset(
            "digit_images", "Digit images (reconstruct)",
            "The 8×8 digits with each image as its own target: for autoencoders.",
            make_digit_images, REGRESSION,
        ),
        BuiltinDataset(
            "iris", "Iris (tabular)",
            "150 flowers, 4 measurements, 3 species (Fisher 1936; UCI, CC BY 4.0).",
            make_iris, CLASSIFICATION,
        ),
        BuiltinDataset(
            "wine", "Wine (tabular)",
            "178 wines, 13 chemical measurements, 3 cultivars (UCI, CC BY 4.0).",
            make_wine, CLASSIFICATION,
        ),
        BuiltinDataset(
            "breast_cancer", "Breast cancer (tabular)",
            "569 biopsies, 30 cell-nucleus features: benign or malignant (UCI, CC BY 4.0).",
            make_breast_cancer, CLASSIFICATION,
        ),
        BuiltinDataset(
            "multisine", "Multi-sine series (forecast)",
            "Sequences: a noisy sum of three sines; predict the next values from a window.",
            make_multisine, REGRESSION,
        ),
        BuiltinDataset(
            "adding", "Adding problem",
            "Sequences: add the two values marked in a long sequence (a memory test).",
            make_adding, REGRESSION,
        ),
        BuiltinDataset(
            "running_sign", "Running-sum sign",
            "Sequences: is the sum of the sequence positive? Two classes.",
            make_running_sign, CLASSIFICATION,
        ),
        BuiltinDataset(
            "text", "Text: Genesis (characters)",
            "Text: predict each next character of Genesis (KJV, public domain).",
            make_text, CLASSIFICATION,
        ),
    )
}  # fmt: skip


def make_builtin(key: str, **options) -> Dataset:
    """Make the built-in data set called `key` (see BUILTIN) with its make_<key> options."""
    try:
        entry = BUILTIN[key]
    except KeyError:
        known = ", ".join(BUILTIN)
        raise DatasetError(
            f"There is no built-in data set {key!r}; choose one of {known}."
        ) from None
    return entry(**options)
