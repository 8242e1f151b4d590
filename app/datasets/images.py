"""Image folders as classification data sets, read with Pillow, decoded once and cached.

The `dataset` setting of an image folder (relative paths are read from the project's
folder, as a CSV's are):

    {"images": "photos",           # a folder with a subfolder per class, or a path,label CSV
     "size": [32, 32],             # (height, width) every image becomes
     "fit": "resize",              # "resize": scale to the size; "crop": scale, cut the centre
     "color": "rgb",               # "rgb": 3 channels; "gray": 1
     "validation": "photos-val",   # optional: a separate validation folder (or CSV)
     "cache": "...",               # optional: the cache folder, instead of the user's
     "digest": "3f0c…"}            # the file list the project was made with

The validation fraction stays the training setting `validation_fraction`; with a separate
validation folder its images are the validation set and the fraction isn't used.

Samples are float32 (N, C, H, W) with values from 0 to 1 (the 8-bit value / 255), labels
int64 class indices; classes are the class folders (or CSV labels) with a usable image,
sorted by name (numbers by value). Files that can't be used are skipped and listed in the
data set's `skipped` (name, reason), and `note` counts them. A source with no usable image,
or only one class, is refused with the reason; so is a gone folder.

The digest hashes the file list (names, classes, sizes). When it differs from the one in
the setting, the folder is read again as it is now and `note` says it changed; the data
set's `digest` is the new one, which `recorded` writes into the setting to be saved.
Decoded images are cached (app.datasets.image_cache): a second read decodes nothing.
Qt-free.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from app.datasets.dataset import CLASSIFICATION, Dataset, DatasetError
from app.datasets.image_cache import cache_dir, cache_key, load_decoded, save_decoded
from app.datasets.image_decode import Cancelled, Progress, decode_all
from app.datasets.image_files import Listing, gone_reason, list_images

IMAGES = "images"  # the setting's entry naming the folder or CSV
FITS = ("resize", "crop")
COLORS = ("rgb", "gray")
DEFAULT_SIZE = (32, 32)
MAX_SIDE = 1024
MAX_SAMPLE_BYTES = 4 << 30  # the float32 samples, all images together
_DEFAULT = object()


@dataclass(frozen=True, eq=False)
class ImageDataset(Dataset):
    """A Dataset read from image files, knowing each sample's file and what was skipped.

    `sources[i]` is sample i's file as the user knows it (e.g. 'cat/1.png'); `skipped`
    holds (file, reason) for every file left out; `digest` is the file list's digest;
    `held_out` marks the samples of a separate validation folder (None: there is none),
    and then `split` gives those as the validation set whatever the fraction.
    """

    sources: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()
    digest: str = ""
    held_out: np.ndarray | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        sources = tuple(str(s) for s in self.sources)
        if sources and len(sources) != len(self.x):
            raise DatasetError(f"{len(sources)} file names for {len(self.x)} images.")
        held = self.held_out
        if held is not None:
            held = np.asarray(held, dtype=bool).reshape(-1)
            if len(held) != len(self.x):
                raise DatasetError(f"{len(held)} validation marks for {len(self.x)} images.")
        skipped = tuple((str(name), str(reason)) for name, reason in self.skipped)
        for field, value in (("sources", sources), ("held_out", held), ("skipped", skipped)):
            object.__setattr__(self, field, value)

    def take(self, indices: Sequence[int] | np.ndarray, name: str | None = None) -> Dataset:
        idx = np.asarray(indices, dtype=np.int64)
        return replace(
            self, x=self.x[idx], y=self.y[idx], name=name or self.name,
            sources=tuple(self.sources[i] for i in idx) if self.sources else (),
            held_out=None if self.held_out is None else self.held_out[idx],
        )  # fmt: skip

    def split(self, validation_fraction: float, seed: int = 0) -> tuple[Dataset, Dataset]:
        if self.held_out is None:
            return super().split(validation_fraction, seed)
        train = replace(self.take(np.flatnonzero(~self.held_out)), held_out=None)
        val = self.take(np.flatnonzero(self.held_out), name=f"{self.name} (validation)")
        return train, replace(val, held_out=None)


@dataclass(frozen=True)
class ImageOptions:
    """How every image is made into a sample."""

    size: tuple[int, int] = DEFAULT_SIZE  # (height, width)
    fit: str = "resize"
    color: str = "rgb"

    @property
    def shape(self) -> tuple[int, int, int]:
        return (1 if self.color == "gray" else 3, *self.size)

    def key(self) -> dict[str, Any]:
        return {"size": list(self.size), "fit": self.fit, "color": self.color}


def image_options(size: Any = DEFAULT_SIZE, fit: Any = "resize",
                  color: Any = "rgb") -> ImageOptions:  # fmt: skip
    """The options checked; DatasetError saying what is allowed."""
    sides = [size, size] if _whole(size) else size
    if (not isinstance(sides, list | tuple) or len(sides) != 2
            or not all(_whole(s) and 1 <= s <= MAX_SIDE for s in sides)):  # fmt: skip
        raise DatasetError(f"The image size must be [height, width] (or one number for a "
                           f"square), each from 1 to {MAX_SIDE}, not {size!r}.")  # fmt: skip
    if fit not in FITS:
        raise DatasetError(f"The fit must be 'resize' or 'crop' (resize, then cut the centre), "
                           f"not {fit!r}.")  # fmt: skip
    if color not in COLORS:
        raise DatasetError(f"The colour must be 'rgb' or 'gray', not {color!r}.")
    return ImageOptions((int(sides[0]), int(sides[1])), fit, color)


def load_images(
    path: str | Path,
    size: Any = DEFAULT_SIZE,
    fit: str = "resize",
    color: str = "rgb",
    validation: str | Path | None = None,
    digest: str | None = None,
    cache: str | Path | None | object = _DEFAULT,
    name: str | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> ImageDataset:
    """An image folder (or path,label CSV) as a data set; see the module's text.

    `cache` is the cache folder (default: image_cache.cache_dir(); None: no cache).
    `progress(files done, files)` and `cancelled()` as for a data file.
    """
    options = image_options(size, fit, color)
    if validation is not None and not isinstance(validation, str | Path):
        raise DatasetError(
            f"'validation' names a separate validation folder, not {validation!r}; the share "
            "of images held back for validation is the training setting validation_fraction."
        )
    if digest is not None and not isinstance(digest, str):
        raise DatasetError(f"The saved file-list digest must be a text, not {digest!r}.")
    source = Path(path).expanduser()
    listing = list_images(source, Path(validation).expanduser() if validation else None)
    _check_memory(len(listing.paths), options)
    folder = cache_dir() if cache is _DEFAULT else (Path(cache).expanduser() if cache else None)
    key = cache_key(listing.stamps, options.key())
    decoded = load_decoded(folder, key, options.shape, len(listing.paths))
    if decoded is None:
        decoded = decode_all(listing.paths, options.size, options.fit, options.color == "gray",
                             name=source.name, progress=progress, cancelled=cancelled)  # fmt: skip
        save_decoded(folder, key, decoded)
    elif progress is not None:
        progress(len(listing.paths), len(listing.paths))
    return _assemble(listing, decoded.x, decoded.kept, decoded.failed, source,
                     name or f"Images: {source.name}", digest)  # fmt: skip


def _assemble(listing: Listing, pixels: np.ndarray, kept: np.ndarray,
              failed: Sequence[tuple[int, str]], source: Path, name: str,
              saved_digest: str | None) -> ImageDataset:  # fmt: skip
    skipped = list(listing.skipped) + [(listing.names[i], why) for i, why in failed]
    labels = [listing.labels[i] for i in kept]
    held = np.array([listing.held[i] for i in kept], dtype=bool)
    classes = _sorted_classes({label for label, h in zip(labels, held, strict=True) if not h})
    index = {c: i for i, c in enumerate(classes)}
    usable = np.array([label in index for label in labels], dtype=bool)
    for i in np.flatnonzero(~usable):  # validation images of a class with no training image
        skipped.append((listing.names[kept[i]], f"its class {labels[i]!r} has no training image"))
    where = _where(source)
    if not usable.any():
        raise DatasetError(f"{where} holds no image that can be read{_first(skipped)}")
    if len(classes) < 2:
        raise DatasetError(
            f"{where} has usable images of one class only ({classes[0]!r}); a classifier needs "
            "at least two classes: a subfolder per class, or two labels in the CSV."
        )
    if listing.held and any(listing.held) and not held[usable].any():
        raise DatasetError(f"The validation folder holds no usable image{_first(skipped)}")
    if not usable.all():
        pixels, kept, held = pixels[usable], kept[usable], held[usable]
        labels = [label for label, ok in zip(labels, usable, strict=True) if ok]
    x = _to_unit_float(pixels)
    del pixels
    y = np.array([index[label] for label in labels], dtype=np.int64)
    digest = listing.digest()
    note = _note(listing, skipped, classes, saved_digest, digest, where, len(y))
    return ImageDataset(
        x=x, y=y, task=CLASSIFICATION, num_classes=len(classes), name=name,
        class_names=tuple(classes), note=note, sources=tuple(listing.names[i] for i in kept),
        skipped=tuple(sorted(skipped)), digest=digest,
        held_out=held if any(listing.held) else None,
    )  # fmt: skip


def _to_unit_float(pixels: np.ndarray) -> np.ndarray:
    """uint8 → float32 / 255, a block at a time (no float64 or second float copy)."""
    x = np.empty(pixels.shape, dtype=np.float32)
    step = 4096
    for start in range(0, len(pixels), step):
        block = x[start:start + step]
        block[...] = pixels[start:start + step]
        block /= np.float32(255)
    return x


def _note(listing: Listing, skipped: list, classes: list[str], saved: str | None, digest: str,
          where: str, count: int) -> str:  # fmt: skip
    parts = []
    if saved and saved != digest:
        parts.append(f"{where} has changed since the project recorded it, so it was read "
                     f"again as it is now ({count:,} images in {len(classes)} classes); save "
                     "the project to record the new file list.")  # fmt: skip
    if skipped:
        many = len(skipped) != 1
        parts.append(f"{len(skipped):,} file{'s' if many else ''} could not be used and "
                     f"{'were' if many else 'was'} skipped (see the details).")  # fmt: skip
    if listing.ignored:
        many = listing.ignored != 1
        parts.append(f"{listing.ignored:,} other file{'s' if many else ''} (not named as "
                     f"images) {'were' if many else 'was'} left out.")  # fmt: skip
    unused = [f for f in listing.folders if f not in set(classes)]
    if unused:
        parts.append(f"Class folders with no usable image were left out: {', '.join(unused)}.")
    return " ".join(parts)


def _sorted_classes(names: set[str]) -> list[str]:
    """Class names in order: by number if every name is a whole number, else by text."""
    if names and all(re.fullmatch(r"-?\d+", n) for n in names):
        return sorted(names, key=int)
    return sorted(names)


def _first(skipped: list[tuple[str, str]], shown: int = 3) -> str:
    if not skipped:
        return "."
    listed = "; ".join(f"{n}: {why}" for n, why in skipped[:shown])
    more = f"; and {len(skipped) - shown:,} more" if len(skipped) > shown else ""
    return f" ({len(skipped):,} skipped: {listed}{more})."


def _where(source: Path) -> str:
    what = "label file" if source.is_file() else "image folder"
    return f"The {what} {source.name}"


def _check_memory(count: int, options: ImageOptions) -> None:
    needed = count * int(np.prod(options.shape)) * 4
    if needed > MAX_SAMPLE_BYTES:
        h, w = options.size
        raise DatasetError(
            f"{count:,} images of {options.shape[0]}×{h}×{w} take {needed / 2**30:.1f} GB as "
            f"samples; at most {MAX_SAMPLE_BYTES / 2**30:.0f} GB can be held: choose a smaller "
            "size, grey, or fewer images."
        )


def _whole(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


# ---- the setting ----------------------------------------------------------------------------


def image_setting(source: str | Path, dataset: ImageDataset | None = None, *,
                  folder: Path | None = None, validation: str | Path | None = None,
                  **options: Any) -> dict[str, Any]:  # fmt: skip
    """The `dataset` setting for an image folder: paths relative to the project `folder`
    when inside it, the options checked, and `dataset`'s digest when it was read."""
    checked = image_options(**options)
    spec: dict[str, Any] = {IMAGES: _relative(Path(source), folder), **checked.key()}
    if validation is not None:
        spec["validation"] = _relative(Path(validation), folder)
    if dataset is not None and dataset.digest:
        spec["digest"] = dataset.digest
    return spec


def recorded(spec: Any, dataset: Dataset) -> dict[str, Any] | None:
    """An image setting with the digest of the file list `dataset` was read from, to save
    with the project; None when the setting is no image folder's or already holds it."""
    if not isinstance(spec, Mapping) or IMAGES not in spec:
        return None
    digest = getattr(dataset, "digest", "")
    if not digest or spec.get("digest") == digest:
        return None
    return {**spec, "digest": digest}


def folder_status(spec: Mapping[str, Any], folder: Path | None = None) -> str:
    """What opening a project should say about its image folder, without decoding: '' when
    it is there as recorded, else why it is gone, or that it has changed."""
    source = _resolve(str(spec[IMAGES]), folder)
    validation = spec.get("validation")
    try:
        for path, what in ((source, "image folder"), (validation, "validation folder")):
            if path is not None:
                reason = gone_reason(_resolve(str(path), folder), what)
                if reason is not None:
                    return reason
        listing = list_images(source, _resolve(str(validation), folder) if validation else None)
    except DatasetError as exc:
        return str(exc)
    saved = spec.get("digest")
    if saved and saved != listing.digest():
        return (f"{_where(source)} has changed since the project recorded it; it will be read "
                "again as it is now.")  # fmt: skip
    return ""


def quick_stamp(spec: Mapping[str, Any], folder: Path | None) -> list[Any]:
    """A cheap stamp of an image setting's folders (each top folder's and class folder's
    modification time; a CSV's size and time): a file added, removed or renamed changes it."""
    stamps: list[Any] = []
    for entry in (spec.get(IMAGES), spec.get("validation")):
        if entry is None:
            continue
        path = _resolve(str(entry), folder)
        try:
            info = path.stat()
            stamps.append([str(path), info.st_mtime_ns, info.st_size])
            if path.is_dir():
                stamps.extend([str(sub), sub.stat().st_mtime_ns] for sub in sorted(path.iterdir())
                              if sub.is_dir())  # fmt: skip
        except OSError:
            stamps.append([str(path), "missing"])
    return stamps


def _resolve(path: str | Path, folder: Path | None) -> Path:
    """As app.datasets.loading.resolve: `~` expanded, a relative path read from `folder`."""
    path = Path(path).expanduser()
    return folder / path if not path.is_absolute() and folder is not None else path


def _relative(path: Path, folder: Path | None) -> str:
    path = path.expanduser()
    if folder is not None and path.is_absolute():
        try:
            return path.relative_to(folder).as_posix()
        except ValueError:
            pass
    return path.as_posix() if not path.is_absolute() else str(path)
