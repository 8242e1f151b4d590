"""Listing an image folder's files before decoding: classes, labels, and what can't be used.

Two layouts give the files and their classes:
- a folder with one subfolder per class (searched recursively; the class is the top-level
  subfolder's name);
- a CSV file of `path,label` rows (an optional `path,label` header; relative paths are
  read from the CSV's folder).

A file is listed as an image by its name's suffix (IMAGE_SUFFIXES). Hidden entries
(a leading dot) are passed over; other files are counted in `ignored`. Entries that can't
be images are `skipped` with the reason, before anything is decoded: a folder named like
an image, a link that leads nowhere or to itself, something that isn't a regular file, an
empty file, an image outside the class folders, a CSV row without a path and a label.
Folders reached through a link are not followed (a link loop can't make the walk endless).

Each listed file gets a stamp (name, class, size, modification time): the cache key
hashes the stamps, and the setting's digest hashes (name, class, size), which survive a
copy of the folder. Qt-free.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from app.datasets.dataset import DatasetError

IMAGE_SUFFIXES = frozenset(
    {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff", ".ppm", ".pgm", ".pbm"}
)
MAX_CSV_BYTES = 64 << 20  # a label list larger than this is not one
MAX_FILES = 2_000_000  # listed images, all folders together


@dataclass
class Listing:
    """The files to decode, in order, with their classes; and what was left out, why."""

    paths: list[Path] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # as the user knows them, e.g. 'cat/1.png'
    labels: list[str] = field(default_factory=list)  # each file's class name
    held: list[bool] = field(default_factory=list)  # from the separate validation folder
    stamps: list[tuple[str, str, int, int]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (name, reason)
    ignored: int = 0  # files not named as images
    folders: list[str] = field(default_factory=list)  # the class folders found (training)

    def digest(self) -> str:
        """The file list's digest: every file's name, class and size (not its time)."""
        rows = [[name, label, size] for name, label, size, _ in self.stamps]
        text = json.dumps(rows, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def list_images(source: Path, validation: Path | None = None) -> Listing:
    """The listing of `source` (a class folder or a CSV) and its validation folder, if any.

    DatasetError if `source` or `validation` is gone or is neither a folder nor a CSV file.
    """
    listing = Listing()
    _add(listing, source, prefix="", held=False)
    if validation is not None:
        _add(listing, validation, prefix=f"{validation.name}/", held=True)
    if len(listing.paths) > MAX_FILES:
        raise DatasetError(f"{len(listing.paths):,} images are too many; at most "
                           f"{MAX_FILES:,} can be read as one data set.")  # fmt: skip
    return listing


def gone_reason(path: Path, what: str) -> str | None:
    """Why `path` can't be an image folder or label CSV, or None if it can."""
    if path.is_dir():
        return None
    if path.is_file():
        return None if path.suffix.lower() == ".csv" else (
            f"The {what} {path.name} is a file, not a folder of images or a CSV of path,label "
            "rows.")  # fmt: skip
    return (f"The {what} {path.name} is gone (looked for {path}). Put it back, or import the "
            "images again from where they are now.")  # fmt: skip


def _add(listing: Listing, source: Path, prefix: str, held: bool) -> None:
    reason = gone_reason(source, "validation folder" if held else "image folder")
    if reason is not None:
        raise DatasetError(reason)
    if source.is_dir():
        _add_folder(listing, source, prefix, held)
    else:
        _add_csv(listing, source, prefix, held)


def _add_folder(listing: Listing, root: Path, prefix: str, held: bool) -> None:
    for entry in _entries(root):
        name = prefix + entry.name
        if entry.is_dir(follow_symlinks=False) and entry.name.lower().endswith(
                tuple(IMAGE_SUFFIXES)):  # fmt: skip
            listing.skipped.append((name, "a folder named like an image, not a file"))
        elif entry.is_dir(follow_symlinks=False):
            if not held:
                listing.folders.append(entry.name)
            _walk(listing, Path(entry.path), name + "/", entry.name, held)
        elif Path(entry.name).suffix.lower() in IMAGE_SUFFIXES:
            listing.skipped.append((name, "outside the class folders (put it in one)"))
        elif _is_dir_link(entry):
            listing.skipped.append((name, "a link to a folder (links are not followed)"))
        else:
            listing.ignored += 1


def _walk(listing: Listing, folder: Path, prefix: str, label: str, held: bool) -> None:
    for entry in _entries(folder):
        name = prefix + entry.name
        is_image = Path(entry.name).suffix.lower() in IMAGE_SUFFIXES
        if entry.is_dir(follow_symlinks=False):
            if is_image:
                listing.skipped.append((name, "a folder named like an image, not a file"))
                listing.stamps.append((name, label, -1, 0))
            else:
                _walk(listing, Path(entry.path), name + "/", label, held)
        elif is_image:
            _add_file(listing, Path(entry.path), name, label, held)
        elif _is_dir_link(entry):
            listing.skipped.append((name, "a link to a folder (links are not followed)"))
        else:
            listing.ignored += 1


def _add_file(listing: Listing, path: Path, name: str, label: str, held: bool) -> None:
    """List one image file, or skip it saying why (its stamp is kept either way)."""
    try:
        info = path.stat()
    except OSError as exc:
        listing.stamps.append((name, label, -1, 0))
        listing.skipped.append((name, _stat_reason(path, exc)))
        return
    listing.stamps.append((name, label, int(info.st_size), int(info.st_mtime_ns)))
    if not stat.S_ISREG(info.st_mode):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        listing.skipped.append((name, f"{what}, not an image file"))
    elif info.st_size == 0:
        listing.skipped.append((name, "an empty file (0 bytes)"))
    else:
        listing.paths.append(path)
        listing.names.append(name)
        listing.labels.append(label)
        listing.held.append(held)


def _add_csv(listing: Listing, path: Path, prefix: str, held: bool) -> None:
    try:
        info = path.stat()
        if info.st_size > MAX_CSV_BYTES:
            raise DatasetError(f"The label file {path.name} is {info.st_size:,} bytes; a "
                               f"path,label list can be at most {MAX_CSV_BYTES:,}.")  # fmt: skip
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DatasetError(f"The label file {path.name} is not UTF-8 text.") from None
    except OSError as exc:
        raise DatasetError(f"The label file {path.name} can't be read: {exc.strerror}.") from None
    listing.stamps.append((prefix + path.name, "", int(info.st_size), int(info.st_mtime_ns)))
    rows = csv.reader(text.splitlines())
    first = True
    for line, row in enumerate(rows, start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if first and [c.lower() for c in cells] == ["path", "label"]:
            first = False
            continue
        first = False
        where = f"{prefix}{path.name} line {line}"
        if len(cells) != 2 or not cells[0] or not cells[1]:
            listing.skipped.append((where, f"needs a path and a label, found {row!r}"))
            continue
        file = Path(cells[0]).expanduser()
        file = file if file.is_absolute() else path.parent / file
        if file.suffix.lower() not in IMAGE_SUFFIXES and not file.is_dir():
            listing.skipped.append((prefix + cells[0], "not named as an image file "
                                    f"({', '.join(sorted(IMAGE_SUFFIXES))})"))  # fmt: skip
            continue
        _add_file(listing, file, prefix + cells[0], cells[1], held)


def _entries(folder: Path) -> list[os.DirEntry]:
    """The folder's entries in name order, hidden ones left out; [] if it can't be read."""
    try:
        with os.scandir(folder) as scan:
            found = [e for e in scan if not e.name.startswith(".")]
    except OSError:
        return []
    return sorted(found, key=lambda e: e.name)


def _is_dir_link(entry: os.DirEntry) -> bool:
    try:
        return entry.is_symlink() and entry.is_dir()
    except OSError:
        return False


def _stat_reason(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a link that leads back to itself (a link loop)"
    if exc.errno == errno.ENOENT:
        return "not found" if not path.is_symlink() else "a link to a file that is gone"
    return f"can't be opened: {exc.strerror or exc}"
