"""Built-in and imported data sets (headless)."""

from app.datasets.builtin import (
    BUILTIN,
    BuiltinDataset,
    make_builtin,
    make_circles,
    make_digits,
    make_moons,
    make_sine,
    make_spirals,
    make_xor,
)
from app.datasets.dataset import CLASSIFICATION, REGRESSION, TASKS, Dataset, DatasetError
from app.datasets.file_import import load_csv, load_npz

__all__ = [
    "BUILTIN",
    "CLASSIFICATION",
    "REGRESSION",
    "TASKS",
    "BuiltinDataset",
    "Dataset",
    "DatasetError",
    "load_csv",
    "load_npz",
    "make_builtin",
    "make_circles",
    "make_digits",
    "make_moons",
    "make_sine",
    "make_spirals",
    "make_xor",
]
