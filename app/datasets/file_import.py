"""Data sets read from the user's CSV and NPZ files, refused with a clear message when bad.

Class labels, in both formats: if every label is a number, each must be a whole number of
0 or more and is used as the class index (num_classes = largest + 1). Otherwise the labels
are class names: the distinct names, sorted, become classes 0, 1, 2, … and are kept as the
data set's `class_names` (so "1", "2", "cat" are three names, not two numbers and a name).
A file either loads completely or raises DatasetError; nothing is ever half read. A
classification needs at least two classes.

Missing values (app.datasets.missing): a row with an empty, NaN or infinite value in a
chosen column (an NPZ sample with a NaN or infinite value) refuses the file, saying how
many and where, unless `missing="drop"`: then those rows are left out and the data set's
`note` says how many. A label that is empty, NaN or infinite counts as missing too.

Files are read a chunk at a time (app.datasets.csv_stream): a CSV is never held whole as
text, `progress(bytes read, file size)` is called as the file is read, and a `cancelled()`
that returns True stops the read with a DatasetError saying so.
"""

from __future__ import annotations

import math
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from pathlib import Path

import numpy as np

from app.datasets.csv_stream import (
    MAX_CLASSES,
    Cancelled,
    CsvRows,
    CsvTable,
    Progress,
    cut,
    open_data_file,
    shown,
    size_text,
    text_of,
    where,
)
from app.datasets.dataset import CLASSIFICATION, REGRESSION, TASKS, Dataset, DatasetError
from app.datasets.missing import REFUSE, check_classes, check_missing, npz_gaps

MAX_ARRAY_BYTES = 2 * 1024**3  # an NPZ's arrays, as stored and as float32 samples
# An NPZ's two arrays may unpack to at most INFLATE_RATIO times the bytes they take in the
# archive, once past INFLATE_FLOOR: real data (even MNIST's mostly-zero pixels, ~8:1)
# stays far below that, while a zip bomb (a megabyte of deflated zeros declaring a
# gigabyte) is refused from the headers, before any of it is unpacked.
INFLATE_FLOOR = 64 * 1024**2
INFLATE_RATIO = 100
NPY_MAGIC = b"\x93NUMPY"
# What zipfile and NumPy's .npy reader raise for a damaged archive or header: a zip version
# or compression it doesn't know, a password, bad numbers, an unparsable header...
_DAMAGED = (
    OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error, NotImplementedError,
    RuntimeError, OverflowError, SyntaxError, TypeError, struct.error,
)  # fmt: skip

Column = int | str


def load_csv(
    path: str | Path,
    label_column: Column | Sequence[Column] = -1,
    feature_columns: Sequence[Column] | None = None,
    task: str = CLASSIFICATION,
    delimiter: str = ",",
    has_header: bool = True,
    name: str | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
    missing: str = REFUSE,
) -> Dataset:
    """A data set from a CSV file: one sample per line, one value per column.

    Columns are chosen by header name or by 0-based index (negative counts from the end;
    without a header the names are "column 1", "column 2", …). The label column defaults
    to the last; features default to every other column. A regression may name several
    label columns (targets). Blank lines are skipped; the other lines must all have as
    many cells as the first, and the chosen cells must hold finite numbers, or be missing
    (empty, NaN, infinite) and be dropped with `missing="drop"`.
    """
    path = _path(path)
    _check_task(task)
    check_missing(missing)
    _check_delimiter(delimiter)
    if not isinstance(has_header, bool):
        raise DatasetError(f"has_header must be true or false, not {shown(has_header)}.")
    _check_name(name)
    many = isinstance(label_column, list | tuple)
    label_specs = list(label_column) if many else [label_column]
    if not label_specs:
        raise DatasetError("Choose a label column.")
    if len(label_specs) > 1 and task == CLASSIFICATION:
        raise DatasetError("A classification has one label column; choose just one.")
    if feature_columns is not None and not isinstance(feature_columns, list | tuple):
        raise DatasetError(
            f"The feature columns are a list of names or numbers, not {shown(feature_columns)}."
        )
    with open_data_file(path, progress, cancelled) as file, text_of(file) as text:
        rows = CsvRows(text, delimiter, path.name)
        line, cells, names, index = first_line(rows, has_header, path.name)
        labels = [_column(spec, names, index) for spec in label_specs]
        if feature_columns is None:
            chosen = set(labels)
            features = [i for i in range(len(names)) if i not in chosen]
        else:
            features = [_column(spec, names, index) for spec in feature_columns]
        if len(names) == 1:
            _check_one_column(cells, delimiter, path.name)
        _check_columns(features, labels, names)
        table = CsvTable(
            features, labels, names, task, "the header" if has_header else f"line {line}",
            missing,
        )  # fmt: skip
        if not has_header:
            table.add(line, [cells])
        table.read(rows)
    gaps = table.gaps
    if not table.count:
        if gaps:
            raise DatasetError(gaps.nothing_left())
        raise DatasetError(f"The file {path.name} has a header but no data rows.")
    x, name = table.samples(), name or path.name
    note = gaps.note(table.count + gaps.rows) if gaps else ""
    feature_names = tuple(names[i] for i in features)
    if task == REGRESSION:
        return Dataset(
            x, table.targets(), REGRESSION, feature_names=feature_names, name=name,
            target_names=tuple(names[i] for i in labels), note=note,
        )  # fmt: skip
    y, class_names = _class_labels(
        table.label_texts, table.label_indices(),
        lambda j: f"Line {table.label_lines[j]}, {where(labels[0], names)}",
    )  # fmt: skip
    check_classes(y, class_names, f"label {where(labels[0], names)} of {path.name}")
    return Dataset(
        x, y, CLASSIFICATION, len(class_names), feature_names, name, class_names=class_names,
        note=note,
    )  # fmt: skip


def csv_columns(path: str | Path, delimiter: str = ",", has_header: bool = True) -> list[str]:
    """The column names load_csv would use, read from the file's first row only."""
    path = _path(path)
    _check_delimiter(delimiter)
    with open_data_file(path) as file, text_of(file) as text:
        first = CsvRows(text, delimiter, path.name).first()
    if first is None:
        return []
    if has_header:
        return [cell.strip() or f"column {i + 1}" for i, cell in enumerate(first[1])]
    return [f"column {i + 1}" for i in range(len(first[1]))]


def load_npz(
    path: str | Path,
    x_key: str = "x",
    y_key: str = "y",
    task: str | None = None,
    name: str | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
    missing: str = REFUSE,
) -> Dataset:
    """A data set from a NumPy .npz archive holding samples `x_key` and labels `y_key`.

    The task follows `y` unless given: integer, boolean or text labels mean classification,
    floating-point ones regression. A 1-D `x` is one feature per sample. Pickled
    (object) arrays are never loaded, and each array's header is checked against the
    bytes the archive holds and against MAX_ARRAY_BYTES before any memory is taken.
    Samples with a NaN or infinite value are refused, or dropped with `missing="drop"`.
    """
    path = _path(path)
    if task is not None:
        _check_task(task)
    check_missing(missing)
    for key in (x_key, y_key):
        if not isinstance(key, str) or not key:
            raise DatasetError(f"Arrays are chosen by name, not {shown(key)}.")
    if x_key == y_key:
        raise DatasetError("Choose different arrays for the samples and the labels.")
    _check_name(name)
    x, y = _read_arrays(path, x_key, y_key, progress, cancelled)
    x = _npz_samples(x, x_key)
    if y.ndim == 0:
        raise DatasetError(f"Array '{y_key}' is a single value, not one label per sample.")
    if len(y) != len(x):
        raise DatasetError(f"Array '{x_key}' has {len(x)} samples but '{y_key}' has {len(y)}.")
    if task is None:
        task = REGRESSION if y.dtype.kind == "f" else CLASSIFICATION
    name = name or path.name
    if task == REGRESSION and (y.dtype.kind not in "biuf" or y.ndim > 2):
        raise DatasetError(f"Array '{y_key}' must hold numbers, one row per sample.")
    x, y, note = npz_gaps(x, y, x_key, y_key, missing)
    x = _finite_float32(x, x_key)
    if task == REGRESSION:
        y = _finite_float32(y.reshape(len(y), -1), y_key)
        return Dataset(x, y, REGRESSION, name=name, note=note)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise DatasetError(
            f"Array '{y_key}' must hold one class label per sample, not shape {y.shape}."
        )
    labels, class_names = _npz_labels(y, y_key)
    check_classes(labels, class_names, f"array '{y_key}' of {path.name}")
    return Dataset(x, labels, CLASSIFICATION, len(class_names), name=name,
                   class_names=class_names, note=note)  # fmt: skip


# --- CSV ------------------------------------------------------------------------------


def first_line(rows: CsvRows, has_header: bool, file_name: str):
    """(line number, cells, column names, {name: first column of that name}) from a CSV's
    first line: the header, or the first data row when there is none."""
    first_row = rows.first()
    if first_row is None:
        raise DatasetError(f"The file {file_name} is empty.")
    line, cells = first_row
    if has_header:
        names = [cell.strip() or f"column {i + 1}" for i, cell in enumerate(cells)]
    else:
        names = [f"column {i + 1}" for i in range(len(cells))]
    return line, cells, names, _name_index(names)


def _name_index(names: list[str]) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, name in enumerate(names):
        index.setdefault(name, i)  # the first of equal names, like list.index
    return index


def _column(spec: Column, names: list[str], index: dict[str, int]) -> int:
    if isinstance(spec, bool) or not isinstance(spec, int | str):
        raise DatasetError(f"Columns are chosen by name or number, not {shown(spec)}.")
    if isinstance(spec, str):
        if spec not in index:
            raise DatasetError(
                f"There is no column {shown(spec)}; the columns are {_listed(names)}."
            )
        return index[spec]
    if not -len(names) <= spec < len(names):
        raise DatasetError(f"There is no column {spec}: the file has {len(names)} columns.")
    return spec % len(names)


def _check_one_column(cells: list[str], delimiter: str, name: str) -> None:
    """A file read as one column is most likely split by another character: say which."""
    for other in ";\t|,":
        if other != delimiter and other in cells[0]:
            shown = "a tab" if other == "\t" else f"'{other}'"
            raise DatasetError(
                f"{name} reads as a single column with delimiter {delimiter!r}; its values "
                f"seem to be separated by {shown}. Choose that as the delimiter."
            )


def _check_columns(features: list[int], labels: list[int], names: list[str]) -> None:
    if not features:
        raise DatasetError("Choose at least one feature column besides the label.")
    for group in (features, labels):
        seen: set[int] = set()
        for i in group:
            if i in seen:
                raise DatasetError(f"Column '{names[i]}' is chosen twice.")
            seen.add(i)
    chosen = set(labels)
    for i in features:
        if i in chosen:
            raise DatasetError(f"Column '{names[i]}' cannot be both a feature and a label.")


# --- shared ------------------------------------------------------------------------------


def _class_labels(
    texts: list[str], codes: np.ndarray, where: Callable[[int], str]
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Class indices and names from label texts: numbers used as given, or sorted names.

    `texts` are the distinct labels in the order first met, `codes` each sample's index
    into them, and `where(j)` says where texts[j] was first met.
    """
    numbers = _as_numbers(texts)
    if numbers is None:
        if len(texts) > MAX_CLASSES:
            raise DatasetError(
                f"There are {len(texts)} different class labels; the most is "
                f"{MAX_CLASSES}. Is this a regression target?"
            )
        order = sorted(range(len(texts)), key=texts.__getitem__)
        rank = np.empty(len(texts), dtype=np.int64)
        rank[order] = np.arange(len(texts))
        return rank[codes], tuple(texts[j] for j in order)
    for j, value in enumerate(numbers):  # in the order met, so the first problem is told
        problem = _label_problem(value)
        if problem:
            raise DatasetError(f"{where(j)}: {problem}")
    values = np.array(numbers, dtype=np.int64)
    y = values[codes]
    return y, tuple(str(i) for i in range(int(values.max()) + 1))


def _label_problem(value: float) -> str | None:
    """Why a number cannot be a class index, or None."""
    if not math.isfinite(value):
        return "the label is NaN or infinite."
    if value != int(value):
        return (
            f"the class label {value:g} is not a whole number. Class labels must be whole "
            "numbers 0, 1, 2, … or class names (use regression for others)."
        )
    if value < 0:
        return f"the class label {value:g} is negative."
    if value >= MAX_CLASSES:
        return (
            f"the class label {value:g} is above the most ({MAX_CLASSES - 1}). "
            "Is this a regression target?"
        )
    return None


def _as_numbers(texts: list[str]) -> list[float] | None:
    try:
        return [float(t) for t in texts]
    except ValueError:
        return None


def _path(path) -> Path:
    if not isinstance(path, str | PathLike):
        raise DatasetError(f"A data file is named by its path, not {shown(path)}.")
    return Path(path)


def _check_delimiter(delimiter: str) -> None:
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise DatasetError(f"The delimiter must be a single character, not {shown(delimiter)}.")


def _check_task(task: str) -> None:
    if not isinstance(task, str) or task not in TASKS:
        raise DatasetError(f"Unknown task {shown(task)}: use 'classification' or 'regression'.")


def _check_name(name) -> None:
    if name is not None and not isinstance(name, str):
        raise DatasetError(f"The data set's name must be text, not {shown(name)}.")


def _listed(texts: list[str], most: int = 10) -> str:
    more = f", … ({len(texts)} in all)" if len(texts) > most else ""
    return ", ".join(texts[:most]) + more


# --- NPZ ----------------------------------------------------------------------------------


def _read_arrays(
    path: Path, x_key: str, y_key: str, progress: Progress | None, cancelled: Cancelled | None
) -> tuple[np.ndarray, np.ndarray]:
    with open_data_file(path, progress, cancelled) as file:
        start = file.read(len(NPY_MAGIC))
        file.seek(0)
        if start == NPY_MAGIC:
            raise DatasetError(
                f"{path.name} holds a single array; an .npz file with "
                f"'{x_key}' and '{y_key}' arrays is needed."
            )
        try:
            archive = zipfile.ZipFile(file)
        except DatasetError:
            raise
        except _DAMAGED as exc:
            raise DatasetError(
                f"{path.name} is not a NumPy .npz file ({cut(str(exc), 200)})."
            ) from None
        with archive:
            members = {key: _member(archive, key, path) for key in (x_key, y_key)}
            budget = MAX_ARRAY_BYTES  # both arrays are checked before either is read
            shapes = {}
            for key, info in members.items():
                needed, shapes[key] = _checked_header(archive, info, key, path, budget)
                budget -= needed
            _check_unpacked(members, shapes, x_key, y_key, path)
            x, y = (_read_array(archive, info, key, path) for key, info in members.items())
    return x, y


def _check_unpacked(members: dict[str, zipfile.ZipInfo], shapes: dict[str, tuple],
                    x_key: str, y_key: str, path: Path) -> None:  # fmt: skip
    """Refuse, from the headers alone, arrays that unpack to far more than the archive
    holds for them (a zip bomb), or whose sample counts disagree."""
    unpacked = sum(info.file_size for info in members.values())
    packed = sum(info.compress_size for info in members.values())
    if unpacked > max(INFLATE_FLOOR, INFLATE_RATIO * packed):
        raise DatasetError(
            f"{path.name} is refused: its arrays '{x_key}' and '{y_key}' would unpack to "
            f"{size_text(unpacked)} from {size_text(packed)} in the file "
            f"({unpacked // max(packed, 1):,} times as much; at most {INFLATE_RATIO} times "
            f"is read past {size_text(INFLATE_FLOOR)}). Real data does not compress that "
            "well: it may be a zip bomb. Save the arrays again with NumPy's np.savez."
        )
    x_shape, y_shape = shapes[x_key], shapes[y_key]
    if x_shape and y_shape and x_shape[0] != y_shape[0]:
        raise DatasetError(
            f"Array '{x_key}' has {x_shape[0]} samples but '{y_key}' has {y_shape[0]}."
        )


def _member(archive: zipfile.ZipFile, key: str, path: Path) -> zipfile.ZipInfo:
    """The archive member holding array `key` ("key.npy", or "key" as np.load also takes)."""
    names = archive.namelist()
    for candidate in (key, f"{key}.npy"):
        if candidate in names:
            return archive.getinfo(candidate)
    held = [shown(n[:-4] if n.endswith(".npy") else n) for n in names]
    raise DatasetError(
        f"{path.name} has no array '{key}'; it holds {_listed(held) or 'no arrays'}."
    )


def _checked_header(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, path: Path, budget: int
) -> tuple[int, tuple[int, ...]]:
    """The bytes array `key` will take in memory and its shape, after checking its header
    can be believed (only the header is unpacked)."""
    with _reading(key, path), archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise DatasetError(
                f"Array '{key}' in {path.name} is in .npy format {version}, which is not "
                "read; save it again with NumPy's np.savez."
            )
        header_end = member.tell()
    if dtype.hasobject:
        raise DatasetError(_objects_refused(key, path))
    if dtype.itemsize == 0 or dtype.kind not in "biufcUS":
        raise DatasetError(f"Array '{key}' in {path.name} holds {dtype} values, not numbers.")
    count = math.prod(shape)
    stored = count * dtype.itemsize
    if stored > info.file_size - header_end:
        raise DatasetError(
            f"Array '{key}' in {path.name} is damaged: its header says shape {shape}, "
            f"{size_text(stored)}, but the archive holds {size_text(info.file_size)} for it."
        )
    needed = max(stored, count * 4)  # what it takes once converted to 32-bit numbers
    if needed > budget:
        raise DatasetError(
            f"Array '{key}' in {path.name} (shape {shape}) would take {size_text(needed)} "
            f"of memory; the most for a data set is {size_text(MAX_ARRAY_BYTES)}."
        )
    return needed, tuple(shape)


def _read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, path: Path):
    with _reading(key, path), archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


@contextmanager
def _reading(key: str, path: Path) -> Iterator[None]:
    """Turns what a damaged archive member raises into the user's DatasetError."""
    try:
        yield
    except DatasetError:
        raise
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise DatasetError(_objects_refused(key, path)) from None
        raise DatasetError(_damaged(key, path, exc)) from None
    except _DAMAGED as exc:
        raise DatasetError(_damaged(key, path, exc)) from None


def _damaged(key: str, path: Path, exc: BaseException) -> str:
    return f"Array '{key}' in {path.name} is damaged ({cut(str(exc), 200)})."


def _objects_refused(key: str, path: Path) -> str:
    return (
        f"Array '{key}' in {path.name} holds Python objects, which are never "
        "loaded (they could run code); save plain numeric arrays."
    )


def _npz_samples(x: np.ndarray, key: str) -> np.ndarray:
    if x.dtype.kind not in "biuf":
        raise DatasetError(f"Array '{key}' holds {x.dtype} values; the samples must be numbers.")
    if x.ndim == 0:
        raise DatasetError(f"Array '{key}' is a single number, not one sample per row.")
    if len(x) == 0:
        raise DatasetError(f"Array '{key}' holds no samples.")
    if x.size == 0:
        raise DatasetError(f"Array '{key}' has shape {x.shape}: its samples hold no values.")
    return x.reshape(len(x), 1) if x.ndim == 1 else x


def _npz_labels(y: np.ndarray, key: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Class indices and names from a 1-D array of numbers or texts."""
    if y.dtype.kind in "US":
        distinct, first, codes = np.unique(y, return_index=True, return_inverse=True)
        texts = []
        for j, text in enumerate(distinct.tolist()):
            try:
                text = text.decode("utf-8") if isinstance(text, bytes) else text
                text.encode("utf-8")  # a lone surrogate cannot be shown or saved
            except UnicodeError:
                raise DatasetError(
                    f"Array '{key}' at index {first[j]}: the class label is not valid text."
                ) from None
            texts.append(text)
        order = np.argsort(first, kind="stable")  # tell the first problem met, as in a CSV
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        y, names = _class_labels(
            [texts[j] for j in order], rank[codes.reshape(-1)],
            lambda j: f"Array '{key}' at index {first[order[j]]}",
        )  # fmt: skip
        return y, names
    if y.dtype.kind not in "biuf":
        raise DatasetError(f"Array '{key}' holds {y.dtype} values, not class labels.")
    values = y.astype(np.float64, copy=False)
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(values) | (values != np.floor(values)) | (values < 0)
        bad |= values >= MAX_CLASSES
    if bad.any():
        k = int(np.argmax(bad))
        raise DatasetError(f"Array '{key}' at index {k}: {_label_problem(float(values[k]))}")
    labels = values.astype(np.int64)
    return labels, tuple(str(i) for i in range(int(labels.max()) + 1 if len(labels) else 1))


def _finite_float32(a: np.ndarray, key: str) -> np.ndarray:
    if a.dtype.kind == "f":
        _check_finite(np.isfinite(a), key)
    with np.errstate(over="ignore"):  # overflow is reported just below, in the user's words
        a = a.astype(np.float32)
    _check_finite(np.isfinite(a), key, "too large for 32-bit numbers")
    return a


def _check_finite(finite: np.ndarray, key: str, problem: str = "NaN or infinite") -> None:
    if len(finite) and not finite.all():
        first = int(np.argmin(finite.reshape(len(finite), -1).all(axis=1)))
        raise DatasetError(f"Array '{key}' has values that are {problem} (first at index {first}).")
