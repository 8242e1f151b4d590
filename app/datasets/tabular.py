"""Real tabular data sets shipped with Cellwright: iris, wine and breast cancer (UCI, CC BY 4.0).

Each is a small CSV file in `resources/data/` (source and licence in its README.md): a
header naming the features and the class column, one sample per line, the class by name.
They are read with the same reader as the user's CSV files (app.datasets.file_import), so
the classes are numbered in the sorted order of their names.

Options, as the other built-in sets have them: `n_samples` (None: every sample in file
order; a number: a seeded random choice of them, in file order), `seed`, and `standardise`
(on by default): each feature is shifted and scaled to mean 0 and standard deviation 1 over
the whole set, as the features' scales differ by up to four orders of magnitude (breast
cancer's areas are in the thousands, its smoothness below 0.2) and a network trains badly
on raw values. The validation split is made later, as for every data set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from app.datasets.dataset import Dataset, DatasetError
from app.datasets.file_import import load_csv
from app.resources_path import resource_path

# key: (file in resources/data, the data set's name, its class column)
TABULAR_FILES = {
    "iris": ("iris.csv", "Iris", "species"),
    "wine": ("wine.csv", "Wine", "cultivar"),
    "breast_cancer": ("breast_cancer.csv", "Breast cancer", "diagnosis"),
}


def make_iris(
    n_samples: int | None = None, seed: int = 0, standardise: bool = True,
    path: str | Path | None = None,
) -> Dataset:  # fmt: skip
    """Fisher's iris: 150 flowers, 4 measurements in cm, 3 species (50 each)."""
    return make_tabular("iris", n_samples, seed, standardise, path)


def make_wine(
    n_samples: int | None = None, seed: int = 0, standardise: bool = True,
    path: str | Path | None = None,
) -> Dataset:  # fmt: skip
    """178 Italian wines, 13 chemical measurements, 3 cultivars (59, 71 and 48)."""
    return make_tabular("wine", n_samples, seed, standardise, path)


def make_breast_cancer(
    n_samples: int | None = None, seed: int = 0, standardise: bool = True,
    path: str | Path | None = None,
) -> Dataset:  # fmt: skip
    """Breast Cancer Wisconsin (Diagnostic): 569 cell-nucleus images, 30 features,
    benign (357) or malignant (212)."""
    return make_tabular("breast_cancer", n_samples, seed, standardise, path)


def make_tabular(
    key: str, n_samples: int | None, seed: int, standardise: bool, path: str | Path | None
) -> Dataset:
    """The shipped set `key` (see TABULAR_FILES), or the file at `path` in its layout."""
    file_name, name, label = TABULAR_FILES[key]
    if not isinstance(standardise, bool):
        raise DatasetError(f"Standardise must be true or false, not {standardise!r}.")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise DatasetError(f"The seed must be a whole number of 0 or more, not {seed!r}.")
    source = Path(path) if path is not None else resource_path("data", file_name)
    if not source.is_file():
        raise DatasetError(f"The {name} data file is missing ({source}); reinstall Cellwright.")
    data = load_csv(source, label_column=label, name=name)
    total = len(data)
    if n_samples is not None:
        if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer):
            raise DatasetError(f"The number of samples must be a whole number, not {n_samples!r}.")
        if not 1 <= n_samples <= total:
            raise DatasetError(
                f"The {name} set has {total} samples; choose from 1 to {total}, not {n_samples}."
            )
        rng = np.random.default_rng(int(seed))
        data = data.take(np.sort(rng.permutation(total)[:n_samples]))
    if not standardise:
        return data
    x = data.x.astype(np.float64)
    mean, std = x.mean(axis=0), x.std(axis=0)
    std[std == 0] = 1.0  # a constant feature (a small choice of samples) stays 0
    return Dataset((x - mean) / std, data.y, data.task, data.num_classes, data.feature_names,
                   name, class_names=data.class_names)  # fmt: skip
