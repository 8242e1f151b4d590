"""Reading the data set a `dataset` setting names: the reasons in words, kept, progress, Cancel.

`read_dataset(spec, folder)` reads any setting (a built-in set, a CSV or an NPZ file, a
CSV time series cut into windows, a text file, an image folder: app.datasets.images;
relative paths from `folder`) or raises `DatasetRefused` with the whole reason, as the user
reads it. A `DatasetLoader` keeps its last answer, so a form and the training session that
follows it read a file once; a file changed on disk is read again.

A data file of PROGRESS_BYTES or more, and any image folder, is read on a worker thread as
a `Reading`; the loader hands it to the caller's `wait`, which may show
`reading.permille()` and call `reading.cancel()` until `reading.finished` is set. The
worker only writes plain attributes and sets events, and the caller polls them from its
own thread (a window keeps handling events meanwhile). A cancelled reading keeps the
answer kept before. Qt-free.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from app.datasets.builtin import make_builtin
from app.datasets.csv_stream import cancelled_message
from app.datasets.csv_windows import load_csv_windows
from app.datasets.dataset import Dataset, DatasetError
from app.datasets.file_import import csv_columns, load_csv, load_npz
from app.datasets.images import IMAGES, load_images, quick_stamp
from app.datasets.text import load_text

PROGRESS_BYTES = 4 << 20  # a data file this large is read on a worker thread, with progress
CANT_USE = "The data set can't be used: "  # before a loader's own reason
STILL_READING = "A data file is still being read."
FILE_KINDS = ("csv", "npz", "text", IMAGES)  # a setting's entry naming its data file
KINDS = ("builtin", *FILE_KINDS)  # a setting has exactly one of these
WINDOWS = "windows"  # a CSV setting's entry that makes it a time series cut into windows


class DatasetRefused(DatasetError):
    """A setting that gives no data set; the message is the whole reason, for the user."""


class ReadingCancelled(DatasetRefused):
    """The user cancelled reading a data file; the answer kept before still holds."""


# ---- a setting ------------------------------------------------------------------------------


def builtin_of(spec: Any) -> tuple[str, dict[str, Any]] | None:
    """(key, options) of a built-in set's setting ("moons" or {"builtin": ...}), else None."""
    if isinstance(spec, str):
        return spec, {}
    if isinstance(spec, Mapping) and "builtin" in spec:
        options = spec.get("options")
        return spec["builtin"], dict(options) if isinstance(options, Mapping) else {}
    return None


def file_kind(spec: Any) -> str | None:
    """'csv', 'npz', 'text' or 'images' for a data file's setting, else None."""
    if isinstance(spec, Mapping) and "builtin" not in spec:
        for kind in FILE_KINDS:
            if kind in spec:
                return kind
    return None


def resolve(path: str | Path, folder: Path | None) -> Path:
    """A setting's file path: `~` expanded, a relative one read from `folder`."""
    path = Path(path).expanduser()
    return folder / path if not path.is_absolute() and folder is not None else path


def read_dataset(spec: Any, folder: Path | None = None, **reading: Any) -> Dataset:
    """The data set `spec` names; DatasetRefused with the reason if it can't be had.

    `reading` (progress, cancelled) goes to a file's loader, see app.datasets.file_import.
    """
    try:
        if isinstance(spec, str):
            return make_builtin(spec)
        if not isinstance(spec, Mapping):
            raise DatasetRefused(f"The data set setting must be a name or a mapping, not {spec!r}.")
        kinds = [k for k in KINDS if k in spec]
        if len(kinds) != 1:
            raise DatasetRefused(
                "The data set setting needs exactly one of 'builtin', 'csv', 'npz', 'text' or "
                "'images'."
            )
        kind = kinds[0]
        options = {k: v for k, v in spec.items() if k != kind}
        if kind == "builtin":
            extra = sorted(set(options) - {"options"})
            if extra:
                raise DatasetRefused(f"Unknown built-in data set entries: {', '.join(extra)}.")
            return make_builtin(spec[kind], **dict(options.get("options", {})))
        path = resolve(spec[kind], folder)
        if kind == IMAGES:
            for entry in ("validation", "cache"):  # folders, read from the project's too
                if isinstance(options.get(entry), str):
                    options[entry] = resolve(options[entry], folder)
            return load_images(path, **options, **reading)
        if kind == "csv" and WINDOWS in options:
            windows = options.pop(WINDOWS)
            if not isinstance(windows, Mapping):
                raise DatasetRefused(
                    f"The 'windows' entry must be a mapping (window, horizon, stride, targets, "
                    f"features), not {windows!r}."
                )
            return load_csv_windows(path, **options, **windows, **reading)
        loader = {"csv": load_csv, "npz": load_npz, "text": load_text}[kind]
        return loader(path, **options, **reading)
    except DatasetRefused:
        raise
    except DatasetError as exc:
        raise DatasetRefused(f"{CANT_USE}{exc}") from None
    except TypeError as exc:  # an option the loader does not take
        raise DatasetRefused(f"The data set setting has a bad option: {exc}.") from None


def _answer(spec: Any, folder: Path | None, **reading: Any) -> Dataset | str:
    """The data set, or why not in words: a loader's bug is said too, never raised."""
    try:
        return read_dataset(spec, folder, **reading)
    except DatasetRefused as exc:
        return str(exc)
    except Exception as exc:  # a loader bug must not take the caller down
        return f"{CANT_USE}{type(exc).__name__}: {exc}"


# ---- a data file's columns -------------------------------------------------------------------


def column_names(path: Path, spec: Mapping) -> list[str]:
    """The column names load_csv would use, from the file's first row ([] if unreadable)."""
    try:
        return csv_columns(path, spec.get("delimiter", ","), spec.get("has_header", True))
    except DatasetError:
        return []


def guess_delimiter(path: Path) -> str:
    """',' unless the first row is one column with ',' but several with ';', a tab or '|'."""
    for delimiter in ",;\t|":
        try:
            if len(csv_columns(path, delimiter)) > 1:
                return delimiter
        except DatasetError:
            break
    return ","


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# ---- reading on a worker thread ---------------------------------------------------------------


class Reading:
    """A data set setting read on a worker thread, with progress and Cancel.

    The worker only writes plain attributes and sets events; the caller polls them.
    """

    def __init__(self, spec: Mapping, folder: Path | None, path: Path) -> None:
        self.path = path
        self.finished = threading.Event()
        self._cancel = threading.Event()
        self._done, self._total = 0, 0
        self._answer: Dataset | str = ""
        self._thread = threading.Thread(
            target=self._run, args=(spec, folder), name="data-import", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def permille(self) -> int:
        """How much of the file was read, 0 to 1000."""
        return min(1000, 1000 * self._done // self._total) if self._total else 0

    def answer(self) -> tuple[Dataset | str, bool]:
        """(the data set or why not, whether it was cancelled), once finished."""
        if self._cancel.is_set():  # even if it ended first: the user said no
            return cancelled_message(self.path.name), True
        return self._answer, False

    def _on_progress(self, done: int, total: int) -> None:
        self._done, self._total = done, total

    def _run(self, spec: Mapping, folder: Path | None) -> None:
        try:
            self._answer = _answer(
                spec, folder, progress=self._on_progress, cancelled=self._cancel.is_set
            )
        finally:
            self.finished.set()


Wait = Callable[[Reading], None]


class DatasetLoader:
    """Reads data set settings and keeps the last answer (the data set, or why not).

    `wait(reading)`, if given, is how a large data file is read: on a worker thread while
    `wait` shows its progress; it returns once `reading.finished` is set (or cancels it).
    Without `wait` every file is read at once, on the calling thread.
    """

    def __init__(self, wait: Wait | None = None) -> None:
        self.wait = wait
        self.reading: Reading | None = None  # a data file being read on a worker thread
        # (cache key, the data set or why not, whether the reading was cancelled)
        self._kept: tuple[str, Dataset | str, bool] | None = None

    def load(self, spec: Any, folder: Path | None, *, retry: bool = False) -> Dataset:
        """The data set `spec` names (relative paths from `folder`), or DatasetRefused.

        The last answer is kept and given again while the setting and its file are the
        same. `retry` reads again a file whose last reading was cancelled; a reading the
        user cancels now raises ReadingCancelled and keeps the answer kept before.
        """
        key = cache_key(spec, folder)
        kept = self._kept
        if kept is None or kept[0] != key or (retry and kept[2]):
            if self.reading is not None:  # asked again while a file is being read
                raise DatasetRefused(STILL_READING)
            found, cancelled = self._read(spec, folder)
            if cancelled and retry:
                raise ReadingCancelled(found)
            if cancelled:
                found = f"{found} Import it again to use it."
            self._kept = (key, found, cancelled)
        if isinstance(self._kept[1], str):
            raise DatasetRefused(self._kept[1])
        return self._kept[1]

    def keep_as(self, spec: Any, folder: Path | None) -> None:
        """Keep the last data set read as the answer to `spec` too (a setting that reads
        the same, e.g. with the vocabulary it was read with written in), not read again."""
        kept = self._kept
        if kept is not None and not isinstance(kept[1], str):
            self._kept = (cache_key(spec, folder), kept[1], False)

    def already_read(self, spec: Any, folder: Path | None) -> Dataset | None:
        """The data set `spec` names if this loader has read it and its file is unchanged
        on disk since, else None. Never reads anything."""
        kept = self._kept
        if kept is None or isinstance(kept[1], str) or kept[0] != cache_key(spec, folder):
            return None
        return kept[1]

    def _read(self, spec: Any, folder: Path | None) -> tuple[Dataset | str, bool]:
        """(the data set or why not, whether the user cancelled reading it)."""
        kind = file_kind(spec)
        if kind is not None and sum(k in spec for k in FILE_KINDS) > 1:
            kind = None  # read_dataset says why that can't be
        path = resolve(str(spec[kind]), folder) if kind is not None else None
        small = kind != IMAGES and (path is None or _size(path) < PROGRESS_BYTES)
        if self.wait is None or path is None or small:
            return _answer(spec, folder), False
        reading = Reading(spec, folder, path)
        self.reading = reading
        try:
            reading.start()
            self.wait(reading)
        finally:
            if not reading.finished.is_set():  # the wait ended some other way
                reading.cancel()
            reading.finished.wait()  # quick: a cancelled reading stops at its next chunk
            self.reading = None
        return reading.answer()


def cache_key(spec: Any, folder: Path | None) -> str:
    """The setting, its folder and its file's time and size: a file edited on disk differs.

    An image folder's stamp is its folders' times (images.quick_stamp): a file added,
    removed or renamed differs; one rewritten in place is noticed by the next read.
    """
    stamp: Any = None
    kind = file_kind(spec)
    if kind == IMAGES:
        stamp = quick_stamp(spec, folder)
    elif kind is not None:
        try:
            info = resolve(str(spec[kind]), folder).stat()
            stamp = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = "missing"
    return json.dumps([spec, str(folder), stamp], sort_keys=True, default=str)
