"""Data sets read from the user's CSV and NPZ files, refused with a clear message when bad.

Class labels, in both formats: if every label is a number, each must be a whole number of
0 or more and is used as the class index (num_classes = largest + 1). Otherwise the labels
are class names: the distinct names, sorted, become classes 0, 1, 2, … and are kept as the
data set's `class_names` (so "1", "2", "cat" are three names, not two numbers and a name).
A file either loads completely or raises DatasetError; nothing is ever half read.
"""

from __future__ import annotations

import csv
import io
import math
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from app.datasets.dataset import CLASSIFICATION, REGRESSION, TASKS, Dataset, DatasetError

MAX_CLASSES = 1000  # more distinct labels than this is almost surely a regression target
FLOAT32_MAX = float(np.finfo(np.float32).max)

Column = int | str


def load_csv(
    path: str | Path,
    label_column: Column | Sequence[Column] = -1,
    feature_columns: Sequence[Column] | None = None,
    task: str = CLASSIFICATION,
    delimiter: str = ",",
    has_header: bool = True,
    name: str | None = None,
) -> Dataset:
    """A data set from a CSV file: one sample per line, one value per column.

    Columns are chosen by header name or by 0-based index (negative counts from the end;
    without a header the names are "column 1", "column 2", …). The label column defaults
    to the last; features default to every other column. A regression may name several
    label columns (targets). Blank lines are skipped; the other lines must all have as
    many cells as the first, and the chosen cells must hold finite numbers.
    """
    path = Path(path)
    _check_task(task)
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
        raise DatasetError(f"The delimiter must be a single character, not {delimiter!r}.")
    rows = _read_rows(path, delimiter)
    if not rows:
        raise DatasetError(f"The file {path.name} is empty.")
    width = len(rows[0][1])
    if has_header:
        header_line, header = rows.pop(0)
        names = [cell.strip() or f"column {i + 1}" for i, cell in enumerate(header)]
        first = "the header"
    else:
        header_line, names = rows[0][0], [f"column {i + 1}" for i in range(width)]
        first = f"line {header_line}"
    if not rows:
        raise DatasetError(f"The file {path.name} has a header but no data rows.")
    for line, cells in rows:
        if len(cells) != width:
            raise DatasetError(
                f"Line {line} has {len(cells)} values, but {first} has {width}. "
                "Every line needs the same number of values."
            )

    many = not isinstance(label_column, int | str)
    label_specs = list(label_column) if many else [label_column]
    if not label_specs:
        raise DatasetError("Choose a label column.")
    if len(label_specs) > 1 and task == CLASSIFICATION:
        raise DatasetError("A classification has one label column; choose just one.")
    labels = [_column(spec, names) for spec in label_specs]
    if feature_columns is None:
        features = [i for i in range(width) if i not in labels]
    else:
        features = [_column(spec, names) for spec in feature_columns]
    _check_columns(features, labels, names)

    x = _numbers(rows, features, names)
    if task == REGRESSION:
        return Dataset(
            x, _numbers(rows, labels, names), REGRESSION,
            feature_names=tuple(names[i] for i in features), name=name or path.name,
            target_names=tuple(names[i] for i in labels),
        )  # fmt: skip
    column = labels[0]
    cells = [(line, cells[column].strip()) for line, cells in rows]
    for line, cell in cells:
        if not cell:
            raise DatasetError(f"Line {line}, {_where(column, names)} has no label.")
    y, class_names = _class_labels(
        [cell for _, cell in cells], lambda k: f"Line {cells[k][0]}, {_where(column, names)}"
    )
    return Dataset(
        x, y, CLASSIFICATION, len(class_names), tuple(names[i] for i in features),
        name or path.name, class_names=class_names,
    )  # fmt: skip


def load_npz(
    path: str | Path,
    x_key: str = "x",
    y_key: str = "y",
    task: str | None = None,
    name: str | None = None,
) -> Dataset:
    """A data set from a NumPy .npz archive holding samples `x_key` and labels `y_key`.

    The task follows `y` unless given: integer, boolean or text labels mean classification,
    floating-point ones regression. A 1-D `x` is one feature per sample. Pickled
    (object) arrays are never loaded.
    """
    path = Path(path)
    if task is not None:
        _check_task(task)
    if x_key == y_key:
        raise DatasetError("Choose different arrays for the samples and the labels.")
    x, y = _read_arrays(path, x_key, y_key)
    x = _npz_samples(x, x_key)
    if y.ndim == 0:
        raise DatasetError(f"Array '{y_key}' is a single value, not one label per sample.")
    if len(y) != len(x):
        raise DatasetError(f"Array '{x_key}' has {len(x)} samples but '{y_key}' has {len(y)}.")
    if task is None:
        task = REGRESSION if np.issubdtype(y.dtype, np.floating) else CLASSIFICATION
    name = name or path.name
    if task == REGRESSION:
        if not (np.issubdtype(y.dtype, np.number) or y.dtype == np.bool_) or y.ndim > 2:
            raise DatasetError(f"Array '{y_key}' must hold numbers, one row per sample.")
        y = _finite_float32(y.reshape(len(y), -1), y_key)
        return Dataset(x, y, REGRESSION, name=name)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise DatasetError(
            f"Array '{y_key}' must hold one class label per sample, not shape {y.shape}."
        )
    if y.dtype.kind in "US":
        values = [str(v) for v in y.astype(str)]
    elif np.issubdtype(y.dtype, np.number) or y.dtype == np.bool_:
        if np.issubdtype(y.dtype, np.complexfloating):
            raise DatasetError(f"Array '{y_key}' holds complex numbers, not class labels.")
        values = y.astype(np.float64)
        _check_finite(values, y_key)
    else:
        raise DatasetError(f"Array '{y_key}' holds {y.dtype} values, not class labels.")
    labels, class_names = _class_labels(values, lambda k: f"Array '{y_key}' at index {k}")
    return Dataset(x, labels, CLASSIFICATION, len(class_names), name=name, class_names=class_names)


# --- CSV ------------------------------------------------------------------------------


def _read_rows(path: Path, delimiter: str) -> list[tuple[int, list[str]]]:
    """(line number, cells) of every non-blank line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DatasetError(f"There is no file {path}.") from None
    except UnicodeDecodeError:
        raise DatasetError(f"{path.name} is not a UTF-8 text file.") from None
    except OSError as exc:
        raise DatasetError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows, start = [], 1
    try:
        for cells in reader:
            if any(cell.strip() for cell in cells):
                rows.append((start, cells))  # where the row began (a quoted cell may span lines)
            start = reader.line_num + 1
    except csv.Error as exc:
        if "unexpected end of data" in str(exc):
            raise DatasetError(
                f'Line {start} of {path.name} opens a quote (") that is never closed.'
            ) from None
        raise DatasetError(f"Line {start} of {path.name} is malformed: {exc}.") from None
    return rows


def _column(spec: Column, names: list[str]) -> int:
    if isinstance(spec, bool) or not isinstance(spec, int | str):
        raise DatasetError(f"Columns are chosen by name or number, not {spec!r}.")
    if isinstance(spec, str):
        if spec not in names:
            raise DatasetError(f"There is no column '{spec}'; the columns are {', '.join(names)}.")
        return names.index(spec)
    if not -len(names) <= spec < len(names):
        raise DatasetError(f"There is no column {spec}: the file has {len(names)} columns.")
    return spec % len(names)


def _check_columns(features: list[int], labels: list[int], names: list[str]) -> None:
    if not features:
        raise DatasetError("Choose at least one feature column besides the label.")
    for group in (features, labels):
        for i in group:
            if group.count(i) > 1:
                raise DatasetError(f"Column '{names[i]}' is chosen twice.")
    for i in features:
        if i in labels:
            raise DatasetError(f"Column '{names[i]}' cannot be both a feature and a label.")


def _numbers(rows: list[tuple[int, list[str]]], columns: list[int], names: list[str]):
    out = np.empty((len(rows), len(columns)), dtype=np.float32)
    for r, (line, cells) in enumerate(rows):
        for c, column in enumerate(columns):
            out[r, c] = _number(cells[column].strip(), line, column, names)
    return out


def _number(cell: str, line: int, column: int, names: list[str]) -> float:
    def where() -> str:
        return f"Line {line}, {_where(column, names)}"

    if not cell:
        raise DatasetError(f"{where()} is empty; every chosen cell needs a number.")
    try:
        value = float(cell)
    except ValueError:
        raise DatasetError(f"{where()}: '{cell}' is not a number.") from None
    if math.isnan(value) or math.isinf(value):
        raise DatasetError(f"{where()} is '{cell}'; NaN and infinite values are not allowed.")
    if abs(value) > FLOAT32_MAX:
        raise DatasetError(f"{where()}: {cell} is too large for 32-bit numbers.")
    return value


def _where(column: int, names: list[str]) -> str:
    label = f"column {column + 1}"
    return label if names[column] == label else f"{label} ('{names[column]}')"


# --- shared ------------------------------------------------------------------------------


def _class_labels(values, where) -> tuple[np.ndarray, tuple[str, ...]]:
    """Class indices and names from numbers (indices as given) or text (sorted names)."""
    numbers = _as_numbers(values)
    if numbers is None:
        names = sorted(set(values))
        if len(names) > MAX_CLASSES:
            raise DatasetError(
                f"There are {len(names)} different class labels; the most is "
                f"{MAX_CLASSES}. Is this a regression target?"
            )
        index = {n: i for i, n in enumerate(names)}
        return np.array([index[v] for v in values], dtype=np.int64), tuple(names)
    for k, value in enumerate(numbers):
        if not math.isfinite(value):
            raise DatasetError(f"{where(k)}: the label is NaN or infinite.")
        if value != int(value):
            raise DatasetError(
                f"{where(k)}: the class label {value:g} is not a whole number. Class labels "
                "must be whole numbers 0, 1, 2, … or class names (use regression for others)."
            )
        if value < 0:
            raise DatasetError(f"{where(k)}: the class label {value:g} is negative.")
        if value >= MAX_CLASSES:
            raise DatasetError(
                f"{where(k)}: the class label {value:g} is above the most "
                f"({MAX_CLASSES - 1}). Is this a regression target?"
            )
    y = np.asarray(numbers, dtype=np.int64)
    return y, tuple(str(i) for i in range(int(y.max()) + 1))


def _as_numbers(values) -> list[float] | None:
    if isinstance(values, np.ndarray):
        return values.tolist()
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise DatasetError(f"Unknown task {task!r}: use 'classification' or 'regression'.")


# --- NPZ ----------------------------------------------------------------------------------


def _read_arrays(path: Path, x_key: str, y_key: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        loaded = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise DatasetError(f"There is no file {path}.") from None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise DatasetError(f"{path.name} is not a NumPy .npz file ({exc}).") from None
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise DatasetError(
            f"{path.name} holds a single array; an .npz file with "
            f"'{x_key}' and '{y_key}' arrays is needed."
        )
    with loaded:
        arrays = []
        for key in (x_key, y_key):
            if key not in loaded.files:
                held = ", ".join(f"'{k}'" for k in loaded.files) or "no arrays"
                raise DatasetError(f"{path.name} has no array '{key}'; it holds {held}.")
            try:
                arrays.append(loaded[key])
            except ValueError as exc:
                if "allow_pickle" in str(exc):
                    raise DatasetError(
                        f"Array '{key}' in {path.name} holds Python objects, which are never "
                        "loaded (they could run code); save plain numeric arrays."
                    ) from None
                raise DatasetError(f"Array '{key}' in {path.name} is damaged ({exc}).") from None
            except (OSError, EOFError, zipfile.BadZipFile) as exc:
                raise DatasetError(f"Array '{key}' in {path.name} is damaged ({exc}).") from None
    return arrays[0], arrays[1]


def _npz_samples(x: np.ndarray, key: str) -> np.ndarray:
    if not (
        np.issubdtype(x.dtype, np.integer)
        or np.issubdtype(x.dtype, np.floating)
        or x.dtype == np.bool_
    ):
        raise DatasetError(f"Array '{key}' holds {x.dtype} values; the samples must be numbers.")
    if x.ndim == 0:
        raise DatasetError(f"Array '{key}' is a single number, not one sample per row.")
    if len(x) == 0:
        raise DatasetError(f"Array '{key}' holds no samples.")
    return _finite_float32(x.reshape(len(x), 1) if x.ndim == 1 else x, key)


def _finite_float32(a: np.ndarray, key: str) -> np.ndarray:
    _check_finite(a.astype(np.float64), key)
    with np.errstate(over="ignore"):  # overflow is reported just below, in the user's words
        a = a.astype(np.float32)
    _check_finite(a, key, "too large for 32-bit numbers")
    return a


def _check_finite(a: np.ndarray, key: str, problem: str = "NaN or infinite") -> None:
    bad = ~np.isfinite(a.reshape(len(a), -1)).all(axis=1) if len(a) else np.zeros(0, bool)
    if bad.any():
        raise DatasetError(
            f"Array '{key}' has values that are {problem} (first at index {np.argmax(bad)})."
        )
