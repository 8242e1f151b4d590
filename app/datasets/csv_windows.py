"""A CSV time series (one row per time step, one column per feature) as sliding windows.

Sample i is rows [i × stride, i × stride + window) of the feature columns, (window, F);
its targets are the target columns over the `horizon` rows after the window, flattened
step by step: (horizon × targets,) named "temp (t+1)", "rain (t+1)", "temp (t+2)", …
The file is read as load_csv reads it (app.datasets.csv_stream: chunks, progress, cancel,
the same refusals with the line and column of the first problem). The samples are
`chronological`: validation holds back the last windows, never ones overlapping training.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from app.datasets.csv_stream import (
    Cancelled,
    CsvRows,
    CsvTable,
    Progress,
    open_data_file,
    shown,
    size_text,
    text_of,
)
from app.datasets.dataset import REGRESSION, Dataset, DatasetError
from app.datasets.file_import import (
    MAX_ARRAY_BYTES,
    Column,
    _check_delimiter,
    _check_name,
    _check_one_column,
    _column,
    _path,
    first_line,
)
from app.datasets.options import check_whole

WINDOW_DEFAULTS = {"window": 24, "horizon": 1, "stride": 1}


def load_csv_windows(
    path: str | Path,
    window: int = WINDOW_DEFAULTS["window"],
    horizon: int = WINDOW_DEFAULTS["horizon"],
    stride: int = WINDOW_DEFAULTS["stride"],
    targets: Column | Sequence[Column] = -1,
    features: Sequence[Column] | None = None,
    delimiter: str = ",",
    has_header: bool = True,
    name: str | None = None,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> Dataset:
    """Sliding windows over a CSV time series (see the module's text), regression.

    Columns are chosen by header name or 0-based index, as in load_csv. `targets` defaults
    to the last column; `features` to every column, the targets too (a series forecasts
    itself from its past).
    """
    path = _path(path)
    window, horizon = check_whole(window, "window"), check_whole(horizon, "horizon")
    stride = check_whole(stride, "stride")
    _check_delimiter(delimiter)
    if not isinstance(has_header, bool):
        raise DatasetError(f"has_header must be true or false, not {shown(has_header)}.")
    _check_name(name)
    target_specs = list(targets) if isinstance(targets, list | tuple) else [targets]
    if not target_specs:
        raise DatasetError("Choose at least one target column.")
    if features is not None and not isinstance(features, list | tuple):
        raise DatasetError(
            f"The feature columns are a list of names or numbers, not {shown(features)}."
        )
    with open_data_file(path, progress, cancelled) as file, text_of(file) as text:
        rows = CsvRows(text, delimiter, path.name)
        line, cells, names, index = first_line(rows, has_header, path.name)
        chosen_targets = [_column(spec, names, index) for spec in target_specs]
        if features is None:
            chosen_features = list(range(len(names)))
        else:
            chosen_features = [_column(spec, names, index) for spec in features]
        if not chosen_features:
            raise DatasetError("Choose at least one feature column.")
        if len(names) == 1:
            _check_one_column(cells, delimiter, path.name)
        for group in (chosen_features, chosen_targets):
            _check_once(group, names)
        read = sorted(set(chosen_features) | set(chosen_targets))
        table = CsvTable(read, [], names, REGRESSION,
                         "the header" if has_header else f"line {line}")  # fmt: skip
        if not has_header:
            table.add(line, [cells])
        table.read(rows)
    values = table.samples()  # (rows, read columns) float32, in file order
    where = {column: i for i, column in enumerate(read)}
    series = values[:, [where[c] for c in chosen_features]]
    answers = values[:, [where[c] for c in chosen_targets]]
    count = _window_count(len(values), window, horizon, stride, path.name)
    size = count * (window * len(chosen_features) + horizon * len(chosen_targets)) * 4
    if size > MAX_ARRAY_BYTES:
        raise DatasetError(
            f"{count:,} windows of {window:,} rows would take {size_text(size)}; the most "
            f"is {size_text(MAX_ARRAY_BYTES)}. Use a larger stride or a shorter window."
        )
    starts = np.arange(count, dtype=np.int64) * stride
    x = series[starts[:, None] + np.arange(window)]
    y = answers[(starts + window)[:, None] + np.arange(horizon)].reshape(count, -1)
    target_names = tuple(
        f"{names[c]} (t+{h + 1})" for h in range(horizon) for c in chosen_targets
    )
    return Dataset(x, y, REGRESSION, name=name or path.name, target_names=target_names,
                   chronological=True)  # fmt: skip


def _check_once(group: list[int], names: list[str]) -> None:
    seen: set[int] = set()
    for i in group:
        if i in seen:
            raise DatasetError(f"Column '{names[i]}' is chosen twice.")
        seen.add(i)


def _window_count(rows: int, window: int, horizon: int, stride: int, name: str) -> int:
    if rows < window + horizon:
        raise DatasetError(
            f"{name} has {rows:,} data row{'s' if rows != 1 else ''}; a window of {window:,} "
            f"and a horizon of {horizon:,} need at least {window + horizon:,}. Use a "
            "shorter window or horizon, or a longer file."
        )
    return (rows - window - horizon) // stride + 1
