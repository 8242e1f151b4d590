"""Reading a data file in chunks: a checked open, progress and cancel, CSV rows to arrays.

A data file must be a regular file of at most MAX_FILE_BYTES. That is checked with os.stat
before the file is opened (a FIFO would block the open, /dev/zero never ends) and again on
the open handle, in case the path changed in between. Reading reports the bytes read so far
and the file's size to `progress`, and asks `cancelled` before every chunk, so a window can
show a bar and stop a long read from another thread; nothing here touches Qt.

A CSV file is parsed a batch of rows at a time (CsvRows) and the chosen columns become
float32 arrays batch by batch (CsvTable), so memory holds the arrays and one batch of text,
never the whole file.
"""

from __future__ import annotations

import csv
import io
import math
import os
import stat
from collections.abc import Callable, Iterator
from itertools import chain, islice
from operator import itemgetter
from pathlib import Path

import numpy as np

from app.datasets.dataset import CLASSIFICATION, REGRESSION, DatasetError
from app.datasets.missing import DROP, Gaps, check_missing, is_missing

MAX_FILE_BYTES = 1024**3  # 1 GB; its numbers could take twice that once converted
CHUNK_BYTES = 1 << 20  # read, report progress and check for a cancel this much at a time
MAX_LINE_CHARS = 1 << 24  # a longer line is not a table row (and is not held whole)
TEXT_CHUNK_CHARS = 1 << 18  # text split into lines at a time
BATCH_CELLS = 1 << 14  # CSV cells converted to numbers at a time
MAX_CLASSES = 1000  # more distinct labels than this is almost surely a regression target
MAX_LABEL_TEXTS = 10 * MAX_CLASSES  # distinct label texts kept ("1", "1.0", … are one class)
FLOAT32_MAX = float(np.finfo(np.float32).max)

Progress = Callable[[int, int], None]  # (bytes read, file size)
Cancelled = Callable[[], bool]  # True: stop reading


def cancelled_message(name: str) -> str:
    """The message of the DatasetError a cancelled read raises."""
    return f"Reading {name} was cancelled."


class WatchedFile(io.RawIOBase):
    """A data file open for binary reading that reports its progress and can be cancelled."""

    def __init__(
        self, raw: io.FileIO, path: Path, size: int,
        progress: Progress | None, cancelled: Cancelled | None,
    ) -> None:  # fmt: skip
        super().__init__()
        self._raw, self.path, self.size = raw, path, size
        self._progress, self._cancelled = progress, cancelled
        self._done, self._reported = 0, 0

    @property
    def name(self) -> str:  # zipfile keeps it as the archive's file name
        return str(self.path)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def readinto(self, buffer) -> int:
        if self._cancelled is not None and self._cancelled():
            raise DatasetError(cancelled_message(self.path.name))
        with memoryview(buffer) as view:  # at most a chunk, so a cancel is seen soon
            count = self._raw.readinto(view[:CHUNK_BYTES]) or 0
        self._done = min(self._done + count, self.size)
        if self._progress is not None and (
            self._done - self._reported >= CHUNK_BYTES or (count and self._done == self.size)
        ):
            self._reported = self._done
            self._progress(self._done, self.size)
        return count

    def read(self, size: int | None = -1) -> bytes:
        """`size` bytes (fewer only at the end), read a chunk at a time: zipfile counts on it."""
        if size is None or size < 0:
            return self.readall()
        out = bytearray()
        while len(out) < size:
            chunk = super().read(min(size - len(out), CHUNK_BYTES))
            if not chunk:
                break
            out += chunk
        return bytes(out)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def open_data_file(
    path: Path, progress: Progress | None = None, cancelled: Cancelled | None = None
) -> WatchedFile:
    """`path` open for reading, once it is known to be a regular file that is not too large."""
    for given, what in ((progress, "progress"), (cancelled, "cancelled")):
        if given is not None and not callable(given):
            raise DatasetError(f"The {what} option must be a function, not {type(given).__name__}.")
    try:
        _check_regular(os.stat(path), path)
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise DatasetError(f"There is no file {path}.") from None
    except OSError as exc:
        raise DatasetError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    except ValueError as exc:  # a NUL character in the name
        raise DatasetError(f"Cannot read {str(path)!r}: {exc}.") from None
    try:
        info = os.fstat(fd)  # the file opened, which may not be the one looked at
        _check_regular(info, path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        raw = io.FileIO(fd, "rb", closefd=True)
    except BaseException:
        os.close(fd)
        raise
    return WatchedFile(raw, path, info.st_size, progress, cancelled)


def _check_regular(info: os.stat_result, path: Path) -> None:
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        raise DatasetError(f"Cannot read {path}: it is a folder, not a file.")
    if not stat.S_ISREG(mode):
        kind = (
            "a named pipe (FIFO)" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode)
            else "a special file"
        )  # fmt: skip
        raise DatasetError(
            f"Cannot read {path}: it is {kind}, not a regular file. Data sets are read "
            "from ordinary files only."
        )
    if info.st_size > MAX_FILE_BYTES:
        raise DatasetError(
            f"{path.name} is larger than {size_text(MAX_FILE_BYTES)} ({info.st_size:,} bytes), "
            "the most a data file may be."
        )


def size_text(count: int) -> str:
    """A byte count for people: '820 bytes', '12.5 KB', '208 MB', '2 GB'."""
    if count < 1024:
        return f"{count} bytes"
    for unit in ("KB", "MB", "GB", "TB"):
        count /= 1024
        if count < 1024 or unit == "TB":
            break
    return f"{count:.3g} {unit}"


# --- CSV ----------------------------------------------------------------------------------


def text_of(file: WatchedFile) -> io.TextIOWrapper:
    """The file as UTF-8 text (a byte order mark is skipped), every line break as "\\n"."""
    return io.TextIOWrapper(io.BufferedReader(file, CHUNK_BYTES), encoding="utf-8-sig")


class CsvRows:
    """A CSV text's rows, parsed a batch at a time; a malformed file raises DatasetError.

    Rows are parsed by the csv module straight from chunks of text, with no Python code
    per row (a 200 MB file has millions of them). Where a row began is worked out only
    when it is needed for a message: see `lines`.
    """

    def __init__(self, text: io.TextIOBase, delimiter: str, name: str) -> None:
        self.name = name
        lines = chain.from_iterable(_line_lists(text, name))
        self._reader = csv.reader(lines, delimiter=delimiter, strict=True)

    @property
    def line(self) -> int:
        """The lines read so far."""
        return self._reader.line_num

    def first(self) -> tuple[int, list[str]] | None:
        """The first row that is not blank and the line it began on; None if there is none."""
        while True:
            start, rows = self.batch(1)
            if not rows:
                return None
            if not is_blank(rows[0]):
                return start, rows[0]

    def batch(self, count: int) -> tuple[int, list[list[str]]]:
        """The line the next row begins on, and up to `count` rows (blank ones too)."""
        start = self._reader.line_num + 1
        rows: list[list[str]] = []
        try:
            rows.extend(islice(self._reader, count))  # keeps the rows read before an error
        except UnicodeDecodeError:
            raise DatasetError(f"{self.name} is not a UTF-8 text file.") from None
        except csv.Error as exc:
            line = lines(start, rows)[-1] + _span(rows[-1]) if rows else start
            if "unexpected end of data" in str(exc):
                raise DatasetError(
                    f'Line {line} of {self.name} opens a quote (") that is never closed.'
                ) from None
            if "field larger than field limit" in str(exc):
                raise DatasetError(
                    f"Line {line} of {self.name} has a value longer than "
                    f"{csv.field_size_limit():,} characters; is it a CSV file?"
                ) from None
            raise DatasetError(f"Line {line} of {self.name} is malformed: {exc}.") from None
        return start, rows


def lines(start: int, rows: list[list[str]]) -> list[int]:
    """The line each row began on, the first on line `start`.

    A row spans one line plus one for each line break inside its (quoted) cells.
    """
    if not any("\n" in "".join(cells) for cells in rows):  # the usual case: a line each
        return list(range(start, start + len(rows)))
    out = []
    for cells in rows:
        out.append(start)
        start += _span(cells)
    return out


def is_blank(cells: list[str]) -> bool:
    """No cells, or only spaces (the first cell is looked at first: it is usually enough)."""
    return not cells or not (cells[0].strip() or any(cell.strip() for cell in cells))


def _span(cells: list[str]) -> int:
    return 1 + sum(cell.count("\n") for cell in cells)


def _line_lists(text: io.TextIOBase, name: str) -> Iterator[list[str]]:
    """The text's lines, each ending in "\\n" (but perhaps the last), a list per chunk read.

    A line is never held longer than MAX_LINE_CHARS: longer is refused, as no table has
    such rows and a file with no line breaks would otherwise be read whole.
    """
    carry, count = "", 0
    while chunk := text.read(TEXT_CHUNK_CHARS):
        pieces = (carry + chunk).split("\n")
        carry = pieces.pop()
        count += len(pieces)
        if len(carry) > MAX_LINE_CHARS:  # the pieces before it are shorter than a chunk
            raise DatasetError(
                f"Line {count + 1} of {name} is longer than {MAX_LINE_CHARS:,} characters; "
                "is it a CSV file?"
            )
        yield [piece + "\n" for piece in pieces]
    if carry:
        yield [carry]


# --- the chosen columns as numbers -----------------------------------------------------


class CsvTable:
    """The chosen columns of a CSV file, converted and checked a batch of rows at a time.

    A batch of well-formed rows is converted by NumPy from C-level iteration (no Python
    loop over its cells); any other batch is looked at row by row, to skip blank rows and
    to tell the first problem in the file with its line. A row with a missing value (an
    empty, NaN or infinite chosen cell, app.datasets.missing) is left out and counted in
    `gaps`; unless `missing` is "drop", `read` then refuses the file once it has counted them
    (offering to drop them only if `missing` is given).
    """

    def __init__(
        self, features: list[int], labels: list[int], names: list[str], task: str, first: str,
        missing: str | None = None,
    ) -> None:  # fmt: skip
        self.features, self.labels, self.names, self.task = features, labels, names, task
        self.first = first  # the row that sets the width, for messages
        # None: refuse, and offer no dropping (a time series' rows can't be left out).
        self.missing = None if missing is None else check_missing(missing)
        self.gaps = Gaps("line")  # the rows left out for a missing value
        self.numeric = features + labels if task == REGRESSION else features
        self._get = itemgetter(*self.numeric)
        self.count = 0
        self.x_parts: list[np.ndarray] = []
        self.y_parts: list[np.ndarray] = []
        self.label_codes: dict[str, int] = {}  # class label text -> its order of first meeting
        self.label_lines: list[int] = []  # the line each label text was first met on

    def add(self, start: int, rows: list[list[str]]) -> None:
        """Rows (blank ones too) read from line `start` on."""
        width = len(self.names)
        same = len(rows[0]) == width and (len(rows) == 1 or len(set(map(len, rows))) == 1)
        if same and self._add_batch(start, rows):
            return
        kept, kept_lines = self._checked(lines(start, rows), rows)
        if kept and not self._add(kept, lambda: kept_lines):
            raise DatasetError(f"Lines from {start} on could not be read.")  # not expected

    def _add_batch(self, start: int, rows: list[list[str]]) -> bool:
        """Add a batch of rows of the right width: in one go, but for the rows with a gap
        (or a number too large), which are looked at one by one. False if a cell is not a
        number at all (then every row is looked at, to tell the first problem)."""
        values = self._values(rows, float)
        if values is None:
            values = self._values(rows, _gap_float)  # empty cells: NaN
            if values is None:
                return False
        bad = ~(np.abs(values) <= FLOAT32_MAX).all(axis=1)  # NaN fails the comparison too
        texts = None
        if self.task == CLASSIFICATION:
            column = self.labels[0]
            texts = [row[column].strip() for row in rows]
            gaps = {text for text in set(texts) if is_missing(text)}
            if gaps:
                bad |= np.fromiter((t in gaps for t in texts), bool, count=len(texts))
        if not bad.any():
            self._append(values, texts, lambda: lines(start, rows))
            return True
        row_lines = lines(start, rows)
        good = np.flatnonzero(~bad).tolist()
        if good:
            kept_texts = None if texts is None else [texts[i] for i in good]
            self._append(values[good], kept_texts, lambda: [row_lines[i] for i in good])
        worse = np.flatnonzero(bad).tolist()
        kept, _ = self._checked([row_lines[i] for i in worse], [rows[i] for i in worse])
        if kept:  # not expected: each of those rows has a gap, or a problem just raised
            raise DatasetError(f"Lines from {start} on could not be read.")
        return True

    def _values(self, rows: list[list[str]], number: Callable[[str], float]) -> np.ndarray | None:
        """The chosen numeric cells of rows of the right width, (rows, columns) float64;
        None if a cell is not a number."""
        n, k = len(rows), len(self.numeric)
        cells = map(self._get, rows) if k == 1 else chain.from_iterable(map(self._get, rows))
        try:
            return np.fromiter(map(number, cells), np.float64, count=n * k).reshape(n, k)
        except ValueError:
            return None

    def _add(self, rows: list[list[str]], row_lines: Callable[[], list[int]]) -> bool:
        """Add rows of the right width; False if a cell is not a number or a label is missing."""
        values = self._values(rows, float)
        if values is None or not (np.abs(values) <= FLOAT32_MAX).all():
            return False
        texts = None
        if self.task == CLASSIFICATION:
            column = self.labels[0]
            texts = [row[column].strip() for row in rows]
            if any(map(is_missing, set(texts))):
                return False
        self._append(values, texts, row_lines)
        return True

    def _append(
        self, values: np.ndarray, texts: list[str] | None, row_lines: Callable[[], list[int]]
    ) -> None:
        f = len(self.features)
        self.x_parts.append(values[:, :f].astype(np.float32))
        if texts is None:
            self.y_parts.append(values[:, f:].astype(np.float32))
        else:
            self.y_parts.append(self._codes(texts, row_lines))
        self.count += len(values)

    def _checked(
        self, row_lines: list[int], rows: list[list[str]]
    ) -> tuple[list[list[str]], list[int]]:
        """The rows that are not blank and have no gap, and their lines; a row with a gap
        is counted in `gaps`; DatasetError for the first other problem."""
        width, label = len(self.names), self.labels[0] if self.task == CLASSIFICATION else None
        kept, kept_lines = [], []
        for line, cells in zip(row_lines, rows, strict=True):
            if is_blank(cells):
                continue
            if len(cells) != width:
                raise DatasetError(
                    f"Line {line} has {_counted(len(cells), 'value')}, but {self.first} has "
                    f"{width}. Every line needs the same number of values."
                )
            gaps: list[int] = []
            for column in self.numeric:
                cell = cells[column].strip()
                if is_missing(cell):
                    gaps.append(column)
                else:
                    _cell_number(cell, line, column, self.names)
            if label is not None and is_missing(cells[label].strip()):
                gaps.append(label)
            if gaps:
                first = gaps[0]
                self.gaps.add(line, [where(c, self.names) for c in gaps],
                              _gap_text(cells[first].strip(), line, first, self.names,
                                        first == label))  # fmt: skip
                continue
            kept.append(cells)
            kept_lines.append(line)
        return kept, kept_lines

    def _codes(self, texts: list[str], row_lines: Callable[[], list[int]]) -> np.ndarray:
        codes = self.label_codes
        new = set(texts).difference(codes)
        if new:  # numbered in the order first met
            met = row_lines()
            for i, text in enumerate(texts):
                if text in new:
                    new.discard(text)
                    codes[text] = len(codes)
                    self.label_lines.append(met[i])
                    if not new:
                        break
            if len(codes) > MAX_LABEL_TEXTS:
                raise DatasetError(
                    f"There are more than {MAX_LABEL_TEXTS:,} different class labels; the most "
                    f"is {MAX_CLASSES}. Is this a regression target?"
                )
        return np.fromiter(map(codes.__getitem__, texts), np.int32, count=len(texts))

    def read(self, rows: CsvRows) -> None:
        """Add the rest of the rows, a batch at a time; with `missing` "refuse", refuse the
        file (after reading it all, to count them) if a row had a missing value."""
        count = max(1, BATCH_CELLS // len(self.names))
        while True:
            start, batch = rows.batch(count)
            if not batch:
                break
            self.add(start, batch)
        if self.gaps and self.missing != DROP:
            total = self.count + self.gaps.rows
            raise DatasetError(self.gaps.refusal(total, offer_drop=self.missing is not None))

    def samples(self) -> np.ndarray:
        """The features of every row, float32 (N, features); the parts are let go."""
        return _stack(self.x_parts, len(self.features), np.float32)

    def targets(self) -> np.ndarray:
        """A regression's label columns, float32 (N, targets)."""
        return _stack(self.y_parts, len(self.labels), np.float32)

    def label_indices(self) -> np.ndarray:
        """A classification's labels as indices into `label_texts`."""
        return _stack(self.y_parts, None, np.int32)

    @property
    def label_texts(self) -> list[str]:
        """The distinct class labels, in the order first met."""
        return list(self.label_codes)


def _stack(parts: list[np.ndarray], width: int | None, dtype) -> np.ndarray:
    """The parts one after another, each freed once copied (so memory holds one extra part)."""
    count = sum(len(p) for p in parts)
    out = np.empty((count,) if width is None else (count, width), dtype=dtype)
    parts.reverse()
    start = 0
    while parts:
        part = parts.pop()
        out[start : start + len(part)] = part
        start += len(part)
    return out


def _cell_number(cell: str, line: int, column: int, names: list[str]) -> float:
    """The number in a (stripped) cell; DatasetError saying where and why if there is none."""
    place = f"Line {line}, {where(column, names)}"
    if not cell:
        raise DatasetError(f"{place} is empty; every chosen cell needs a number.")
    try:
        value = float(cell)
    except ValueError:
        raise DatasetError(f"{place}: {shown(cell)} is not a number.") from None
    if math.isnan(value) or (math.isinf(value) and _spells_infinity(cell)):
        raise DatasetError(f"{place} is {shown(cell)}; NaN and infinite values are not allowed.")
    if abs(value) > FLOAT32_MAX:
        raise DatasetError(f"{place}: {cut(cell)} is too large for 32-bit numbers.")
    return value


def _gap_float(cell: str) -> float:
    """The number in a cell, NaN for an empty one; ValueError for text."""
    try:
        return float(cell)
    except ValueError:
        if cell.strip():
            raise
        return math.nan


def _gap_text(cell: str, line: int, column: int, names: list[str], label: bool) -> str:
    """A missing value told as the first problem in the file."""
    place = f"Line {line}, {where(column, names)}"
    if not cell and label:
        return f"{place} has no label."
    if not cell:
        return f"{place} is empty; every chosen cell needs a number."
    return f"{place} is {shown(cell)}; NaN and infinite values are not allowed."


def _spells_infinity(cell: str) -> bool:
    """'inf' or 'Infinity' (not a number too large to hold, like 1e400)."""
    return cell.lstrip("+-").lower() in ("inf", "infinity")


def where(column: int, names: list[str]) -> str:
    """'column 3', or 'column 3 ('size')' when the header names it."""
    label = f"column {column + 1}"
    return label if names[column] == label else f"{label} ('{cut(names[column])}')"


def shown(value) -> str:
    """`value` for a message: a text in quotes, anything else as Python writes it; cut short."""
    if isinstance(value, str) and value.replace("\n", "").replace("\t", "").isprintable():
        return f"'{cut(value)}'"
    return cut(repr(value))  # control characters and such written out, as Python does


def cut(text: str, most: int = 60) -> str:
    """`text`, or its start and '…' if longer than `most` characters."""
    return text if len(text) <= most else text[: most - 1] + "…"


def _counted(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"
