"""The cache of decoded image folders: uint8 arrays on disk, so a second read decodes nothing.

One file per (file list, options): `<key>.npz` in the cache folder, holding the decoded
images as uint8 (M, C, H, W), which of the listed files they are, and the files that could
not be decoded with the reason. The key (`cache_key`) hashes every listed file's name,
class, size and modification time with the options, so a file added, removed, replaced or
relabelled, or other options, make another key; the old file is simply no longer used.

The folder is `cache_dir()`: $CELLWRIGHT_CACHE if set, else $XDG_CACHE_HOME/cellwright,
else ~/.cache/cellwright; image sets go in its `images` subfolder. Writing is atomic (a
temporary file renamed into place). A cache file that can't be read or doesn't match what
it should hold is ignored (and replaced by the next write); a cache folder that can't be
written only costs the next read its speed. Qt-free.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CACHE_ENV = "CELLWRIGHT_CACHE"
CACHE_VERSION = 1  # bump when what a cache file holds or how images are decoded changes
SUBFOLDER = "images"


def cache_dir() -> Path:
    """The user's Cellwright cache folder (not created here)."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen:
        return Path(chosen).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "cellwright"


def cache_key(stamps: Iterable[Any], options: dict[str, Any]) -> str:
    """A hex key for a file list (each file's name, class, size, mtime) and the options."""
    text = json.dumps([CACHE_VERSION, list(stamps), options], sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, eq=False)
class Decoded:
    """What decoding a file list gave: `x` uint8 (M, C, H, W) for the files at `kept`
    (indices into the list, increasing), and (index, reason) for those that failed."""

    x: np.ndarray
    kept: np.ndarray
    failed: tuple[tuple[int, str], ...]


def cache_file(folder: Path, key: str) -> Path:
    return folder / SUBFOLDER / f"{key}.npz"


def load_decoded(folder: Path | None, key: str, shape: tuple[int, int, int],
                 listed: int) -> Decoded | None:  # fmt: skip
    """The cached decoding for `key`, or None if there is none or it is unusable.

    `shape` is one image's (C, H, W) and `listed` how many files were listed: a file that
    disagrees with them (or can't be read at all) is treated as missing.
    """
    if folder is None:
        return None
    path = cache_file(folder, key)
    try:
        with np.load(path, allow_pickle=False) as data:
            x, kept = data["x"], data["kept"]
            meta = json.loads(str(data["meta"]))
        failed = tuple((int(i), str(reason)) for i, reason in meta["failed"])
    except Exception:  # missing, truncated, not a zip, wrong arrays: decode again
        return None
    ok = (
        meta.get("version") == CACHE_VERSION
        and x.dtype == np.uint8 and x.ndim == 4 and tuple(x.shape[1:]) == tuple(shape)
        and kept.ndim == 1 and np.issubdtype(kept.dtype, np.integer) and len(kept) == len(x)
        and (len(kept) == 0 or (kept.min() >= 0 and kept.max() < listed))
        and bool(np.all(np.diff(kept) > 0))
        and len(kept) + len(failed) == listed
    )  # fmt: skip
    return Decoded(x, kept.astype(np.int64), failed) if ok else None


def save_decoded(folder: Path | None, key: str, decoded: Decoded) -> bool:
    """Write the decoding to the cache; False (and nothing left behind) if it can't be."""
    if folder is None:
        return False
    path = cache_file(folder, key)
    meta = json.dumps({"version": CACHE_VERSION, "failed": [list(f) for f in decoded.failed]})
    partial = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(prefix=f".{key}-", suffix=".part", dir=path.parent)
        with os.fdopen(handle, "wb") as file:
            np.savez(file, x=decoded.x, kept=decoded.kept, meta=np.array(meta))
        os.replace(partial, path)
        return True
    except OSError:
        if partial is not None:
            with contextlib.suppress(OSError):
                os.unlink(partial)
        return False
