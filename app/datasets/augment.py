"""Per-batch augmentation of training samples: the `augmentation` training setting.

    "augmentation": {"flip": 0.5, "shift": 2, "rotate": 10, "brightness": 0.1,
                     "contrast": 0.1, "noise": 0.05, "seed": 0, "enabled": true}

Every amount may be left out (0: that operation is off); the setting itself may be
absent or null (no augmentation). What each amount means:

- flip: the chance (0 to 1) that a sample is mirrored left to right;
- shift: the most pixels (a whole number) a sample moves up/down and left/right, each
  drawn evenly from -shift..shift, the edge filled with zeros (a padded random crop);
- rotate: the largest angle in degrees (0 to 180), drawn evenly from -rotate..rotate,
  about the image centre, each pixel from its nearest source pixel (torchvision's
  RandomRotation default; bilinear sampling cost 40 % more), outside filled with zeros;
- brightness: every value times a factor drawn from [1 - b, 1 + b] (0 <= b < 1);
- contrast: the distance of every value from the sample's mean times a factor drawn
  from [1 - c, 1 + c] (0 <= c < 1) — both as torchvision's ColorJitter, without its
  clamping to [0, 1], since samples need not lie there;
- noise: Gaussian noise of this standard deviation (in the data's own units) added to
  every value.

Noise applies to any numeric samples (tabular too); the five image operations take
samples of shape (C, H, W) or (H, W), each side at least MIN_SIDE, and are refused with
the reason for others (flat features, sliding windows of a series, token ids).

Training batches are augmented a few at a time (`augment_chunk`: batches c K to c K + K
- 1 of an epoch together, K = 8 for the digits CNN's batches of 64): for small samples
the cost is mostly NumPy's per-call overhead, which this shares. The random numbers of
chunk c of epoch e come from a generator of its own, fixed by (the setting's seed, e, c):
not the engine's generator, not the batch order, so one seed gives the same augmented
batches again, also after a pause or a reopen. The operations draw their numbers in a
fixed order, so turning one on or off leaves the others' draws as they were. The code
that augments (KERNEL) is kept as source text and written as is into the exported
PyTorch script (app.export.torch_train): its --train augments exactly as the app does,
given the same samples, epoch and batch index.
"""

from __future__ import annotations

import linecache
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from app.datasets.dataset import Dataset

KERNEL = '''\
AUGMENT_OPS = ("flip", "shift", "rotate", "brightness", "contrast", "noise")
IMAGE_OPS = ("flip", "shift", "rotate", "brightness", "contrast")
MIN_SIDE = 4  # the smallest image side the image operations take
CHUNK_VALUES = 1 << 15  # batches are augmented together up to about this many values


def augment_rng(seed, epoch, chunk):
    """The generator of one chunk of training batches, fixed by (seed, epoch, chunk) alone."""
    return np.random.Generator(np.random.PCG64([seed, epoch, chunk, 0x617567]))


def augment_chunk(batch_values):
    """How many batches of `batch_values` values each are augmented together, 1 to 16: the
    fewer NumPy calls per batch the better, while the arrays stay small enough for the
    processor's caches (8 digit batches of 64 at once: 7 % of a training step instead of
    16 % one batch at a time, benchmarks/augment_cost.py)."""
    return max(1, min(16, CHUNK_VALUES // max(batch_values, 1)))


def augment_refusal(sample_shape, amounts):
    """Why `amounts` can't augment samples of `sample_shape`, or None if they can."""
    used = [op for op in IMAGE_OPS if amounts.get(op)]
    if not used:
        return None
    shape = "×".join(str(s) for s in sample_shape)
    names, one = ", ".join(used), len(used) == 1
    if len(sample_shape) not in (2, 3):
        return (f"{names} {'works' if one else 'work'} on images, samples of shape (C, H, W) "
                f"or (H, W); these samples have shape ({shape}). Only noise works on any "
                "samples.")
    side = min(sample_shape[-2:])
    if side < MIN_SIDE:
        return (f"{names} {'needs' if one else 'need'} images of at least {MIN_SIDE}×"
                f"{MIN_SIDE} pixels; these samples have shape ({shape}).")
    if amounts.get("shift", 0) >= side:
        return (f"A shift of {amounts['shift']} pixels would move every image of "
                f"({shape}) out of sight; give at most {side - 1}.")
    return None


def augment_batch(x, amounts, rng):
    """A new array: the samples `x` (N, ...) augmented by `amounts` with `rng`'s numbers.

    Six uniform numbers a sample are always drawn (flip, shift y, shift x, angle,
    brightness, contrast), then the noise if any, so each operation's draws stay the same
    whichever others are on."""
    n = len(x)
    draws = rng.random((6, n))
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)
    out = x.astype(dtype, copy=True)
    if n == 0:
        return out
    image = out.reshape(n, -1, *out.shape[-2:]) if out.ndim in (3, 4) else None
    flip, shift, rotate = (amounts.get(k, 0) for k in ("flip", "shift", "rotate"))
    mirror = draws[0] < flip
    if image is not None and (shift or rotate):  # the mirroring in the same resampling
        image[...] = _resample(image, draws[1:4], mirror, shift, rotate)
    elif image is not None and flip:
        image[mirror] = image[mirror, :, :, ::-1]
    bright, contrast = amounts.get("brightness", 0), amounts.get("contrast", 0)
    if image is not None and (bright or contrast):
        # brightness b, then contrast c about the sample's mean m: x b c + b (1 - c) m
        b, c = 1 + (2 * draws[4:6] - 1) * np.array([[bright], [contrast]])
        if contrast:
            mean = np.add.reduce(image.reshape(n, -1), axis=1) / image[0].size
            offset = (b * (1 - c) * mean).astype(dtype)[:, None, None, None]
        image *= (b * c).astype(dtype)[:, None, None, None]
        if contrast:
            image += offset
    noise = amounts.get("noise", 0)
    if noise:
        kind = np.float64 if dtype == np.float64 else np.float32
        out += (_normal(rng, out.shape, kind) * kind(noise)).astype(dtype)
    return out


def _normal(rng, shape, kind):
    """Standard normal numbers (Box-Muller from uniform ones: twice as fast as NumPy's)."""
    size = 1
    for side in shape:
        size *= side
    half = (size + 1) // 2
    u = rng.random(2 * half, dtype=kind)
    radius = np.sqrt(-2 * np.log1p(-u[:half]))
    angle = u[half:] * kind(2 * np.pi)
    out = np.empty(2 * half, kind)
    np.multiply(radius, np.cos(angle), out=out[:half])
    np.multiply(radius, np.sin(angle), out=out[half:])
    return out[:size].reshape(shape)


_GRIDS = {}  # (h, w): the pixels' (row, column, 1), (3, h*w) float32


def _resample(image, draws, mirror, shift, rotate):
    """Each image (N, C, H, W) mirrored where `mirror` says, moved by a whole-pixel shift and
    turned by an angle about its centre (`draws`: (3, N) uniform numbers), each pixel taken
    from the nearest source pixel (as torchvision's RandomRotation by default: one gather
    for the whole batch); zeros where it comes from outside (a zero border around each
    image, source positions clipped onto it)."""
    n, channels, h, w = image.shape
    centre = np.array([[(h - 1) / 2], [(w - 1) / 2]])
    oy, ox = np.floor(draws[:2] * (2 * shift + 1)) + (centre - shift)  # shifted centres
    angle = (2 * draws[2] - 1) * (rotate * np.pi / 180)
    cos, sin, sign = np.cos(angle), np.sin(angle), np.where(mirror, -1.0, 1.0)
    # The source of pixel (i, j): row cos (i - oy) + sin (j - ox) + cy, column
    # cx ± (cos (j - ox) - sin (i - oy)), - where mirrored: an affine map per image.
    maps = np.empty((2, n, 3), np.float32)
    maps[0, :, 0], maps[0, :, 1], maps[0, :, 2] = cos, sin, (h - 1) / 2 - cos * oy - sin * ox
    maps[1, :, 0], maps[1, :, 1] = -sign * sin, sign * cos
    maps[1, :, 2] = (w - 1) / 2 + sign * (sin * oy - cos * ox)
    grid = _GRIDS.get((h, w))
    if grid is None:
        rows, cols = np.divmod(np.arange(h * w), w)
        grid = _GRIDS[h, w] = np.stack([rows, cols, np.ones(h * w)]).astype(np.float32)
    source = np.rint(np.matmul(maps, grid))  # (2, N, H*W): each pixel's source row, column
    if h == w:  # outside: onto the border
        np.clip(source, -1, h, out=source)
    else:
        np.clip(source[0], -1, h, out=source[0])
        np.clip(source[1], -1, w, out=source[1])
    padded = np.zeros((n, channels, h + 2, w + 2), image.dtype)
    padded[:, :, 1:-1, 1:-1] = image
    # the flat index of (row, col) of image n, channel c: (n C + c) P + (row + 1) W2 + col + 1
    base = (np.arange(n * channels) * ((h + 2) * (w + 2)) + w + 3).reshape(n, channels, 1)
    source[0] *= w + 2
    source[0] += source[1]
    pixels = source[0].astype(np.intp)[:, None] + base  # (N, C, H*W)
    return np.take(padded.reshape(-1), pixels).reshape(image.shape)
'''

_FILE = "<cellwright augmentation>"
_kernel: dict[str, Any] = {"np": np, "__name__": "app.datasets.augment_kernel"}
exec(compile(KERNEL, _FILE, "exec"), _kernel)  # noqa: S102 - our own source, see above
linecache.cache[_FILE] = (len(KERNEL), None, KERNEL.splitlines(True), _FILE)  # tracebacks
AUGMENT_OPS: tuple[str, ...] = _kernel["AUGMENT_OPS"]
IMAGE_OPS: tuple[str, ...] = _kernel["IMAGE_OPS"]
MIN_SIDE: int = _kernel["MIN_SIDE"]
augment_rng = _kernel["augment_rng"]
augment_chunk = _kernel["augment_chunk"]
augment_batch = _kernel["augment_batch"]
augment_refusal = _kernel["augment_refusal"]

KEYS = (*AUGMENT_OPS, "seed", "enabled")
MAX_SHIFT = 256
DEFAULTS: dict[str, Any] = {"flip": 0.0, "shift": 0, "rotate": 0.0, "brightness": 0.0,
                            "contrast": 0.0, "noise": 0.0, "seed": 0, "enabled": True}
# (lowest, highest, highest allowed, what the amount is) of each fractional amount
_RANGES = {
    "flip": (0.0, 1.0, True, "a chance from 0 to 1"),
    "rotate": (0.0, 180.0, True, "an angle in degrees from 0 to 180"),
    "brightness": (0.0, 1.0, False, "a number from 0 up to (not including) 1"),
    "contrast": (0.0, 1.0, False, "a number from 0 up to (not including) 1"),
    "noise": (0.0, math.inf, False, "a standard deviation of 0 or more"),
}


class AugmentationRefused(ValueError):
    """An augmentation setting or its use on a data set refused; the message says why."""


def check_augmentation(value: Any) -> dict[str, Any] | None:
    """The `augmentation` setting with its defaults filled in; None for no setting (None);
    AugmentationRefused naming the amount and what it may be."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise AugmentationRefused(
            f"The augmentation setting must be a mapping of amounts such as "
            f"{{'flip': 0.5, 'noise': 0.05}}, not {value!r}."[:200])
    unknown = [str(k) for k in value if k not in KEYS]
    if unknown:
        raise AugmentationRefused(
            f"Unknown augmentation {', '.join(map(repr, unknown))}; the setting takes "
            f"{', '.join(KEYS)}.")
    spec = {**DEFAULTS, **value}
    for key, (low, high, closed, what) in _RANGES.items():
        amount = spec[key]
        inside = _number(amount) and low <= amount and (amount <= high if closed
                                                         else amount < high)
        if not inside or not math.isfinite(amount):
            raise AugmentationRefused(f"The {key} augmentation must be {what}, not {amount!r}.")
        spec[key] = float(amount)
    for key, high in (("shift", MAX_SHIFT), ("seed", 2**63 - 1)):
        amount = spec[key]
        if not _whole(amount) or not 0 <= amount <= high:
            what = "pixels" if key == "shift" else "seed"
            raise AugmentationRefused(
                f"The augmentation {key} must be a whole number of {what} from 0 to {high}, "
                f"not {amount!r}.")
    if not isinstance(spec["enabled"], bool):
        raise AugmentationRefused(
            f"The augmentation's 'enabled' must be true or false, not {spec['enabled']!r}.")
    return spec


def is_active(spec: Mapping[str, Any] | None) -> bool:
    """Whether a checked setting changes any sample: enabled, with an amount above 0."""
    return bool(spec) and spec["enabled"] and any(spec[op] for op in AUGMENT_OPS)


def describe(spec: Mapping[str, Any] | None) -> str:
    """'flip 50 %, shift ±2 px, rotate ±10°, brightness ±10 %, noise σ 0.05' or 'none'."""
    if not is_active(spec):
        return "none"
    parts = [f"flip {spec['flip']:.0%}" if spec["flip"] else "",
             f"shift ±{spec['shift']} px" if spec["shift"] else "",
             f"rotate ±{spec['rotate']:g}°" if spec["rotate"] else "",
             f"brightness ±{spec['brightness']:.0%}" if spec["brightness"] else "",
             f"contrast ±{spec['contrast']:.0%}" if spec["contrast"] else "",
             f"noise σ {spec['noise']:g}" if spec["noise"] else ""]  # fmt: skip
    return ", ".join(p for p in parts if p)


def data_refusal(spec: Mapping[str, Any], dataset: Dataset) -> str | None:
    """Why a checked, active setting can't augment `dataset`'s samples, or None."""
    if dataset.is_tokens:
        return ("Token ids (a text data set) can't be augmented: a changed id is another "
                "token. Turn the augmentation off for this data set.")
    amounts = {op: spec[op] for op in AUGMENT_OPS}
    if dataset.chronological and any(amounts[op] for op in IMAGE_OPS):
        return ("Sliding windows of a series are not images: of the augmentations only "
                "noise works on them.")
    return augment_refusal(dataset.sample_shape, amounts)


class Augmenter:
    """Augments the training batches of one data set: `augmenter.batches(...)` an epoch's,
    `augmenter(x, epoch, chunk)` one array of samples."""

    def __init__(self, spec: Mapping[str, Any], dataset: Dataset, batch_size: int = 1) -> None:
        why = data_refusal(spec, dataset)
        if why is not None:
            raise AugmentationRefused(why)
        self.seed = int(spec["seed"])
        self.amounts = {op: spec[op] for op in AUGMENT_OPS if spec[op]}
        self.per_chunk = augment_chunk(batch_size * math.prod(dataset.sample_shape))

    def __call__(self, x: np.ndarray, epoch: int, chunk: int) -> np.ndarray:
        return augment_batch(x, self.amounts, augment_rng(self.seed, epoch, chunk))

    def batches(self, order: Iterator[tuple[np.ndarray, np.ndarray]], epoch: int,
                start: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
        """The (x, y) batches of epoch `epoch` (`order`: all of them, from its first) from
        batch `start` on, x augmented: batches c K to c K + K - 1 (K = `per_chunk`) together,
        with the generator of (seed, epoch, c), so a run that goes on from `start` gets
        the batches an uninterrupted one gets."""
        chunk, skip = divmod(start, self.per_chunk)
        order = islice(order, chunk * self.per_chunk, None)
        while group := list(islice(order, self.per_chunk)):
            x = group[0][0] if len(group) == 1 else np.concatenate([g[0] for g in group])
            pieces = np.split(self(x, epoch, chunk), np.cumsum([len(g[0]) for g in group[:-1]]))
            for piece, (_, y) in islice(zip(pieces, group, strict=True), skip, None):
                yield piece, y
            chunk, skip = chunk + 1, 0


def augmenter_for(setting: Any, dataset: Dataset, batch_size: int = 1) -> Augmenter | None:
    """The augmenter the `augmentation` setting asks for on `dataset` in batches of
    `batch_size`, None when it changes nothing; AugmentationRefused for a bad setting or
    one the samples can't take."""
    spec = check_augmentation(setting)
    return Augmenter(spec, dataset, batch_size) if is_active(spec) else None


@dataclass(frozen=True, eq=False)
class AugmentPreview:
    """One batch of samples as the data set holds them and as training would see them."""

    before: np.ndarray  # (count, ...) as in the data set
    after: np.ndarray  # the same samples augmented
    indices: np.ndarray  # their indices in the data set
    labels: np.ndarray  # their labels or targets
    text: str  # what was applied, e.g. 'flip 50 %, noise σ 0.05'


def preview(dataset: Dataset, setting: Any, count: int = 16, *, batch: int = 0) -> AugmentPreview:
    """`count` samples of `dataset` before and after the augmentation `setting`.

    The samples are a seeded pick (the setting's seed and `batch`: another `batch` shows
    other samples and other draws), augmented as a training batch of them would be.
    AugmentationRefused as training would refuse the setting; a setting that changes
    nothing gives `after` equal to `before`."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise AugmentationRefused(f"A preview shows 1 sample or more, not {count!r}.")
    spec = check_augmentation(setting) or {**DEFAULTS, "enabled": False}
    augmenter = Augmenter(spec, dataset) if is_active(spec) else None
    pick = np.random.default_rng([spec["seed"], batch, 0x70726576]).permutation(len(dataset))
    indices = np.sort(pick[:count])
    before = dataset.x[indices]
    after = before.copy() if augmenter is None else augmenter(before, 0, batch)
    return AugmentPreview(before, after, indices, dataset.y[indices], describe(spec))


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
