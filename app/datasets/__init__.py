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
from app.datasets.csv_windows import load_csv_windows
from app.datasets.dataset import CLASSIFICATION, REGRESSION, TASKS, Dataset, DatasetError
from app.datasets.file_import import load_csv, load_npz
from app.datasets.images import ImageDataset, folder_status, image_setting, load_images
from app.datasets.sequences import make_adding, make_multisine, make_running_sign
from app.datasets.text import load_text, make_text

__all__ = [
    "BUILTIN",
    "CLASSIFICATION",
    "REGRESSION",
    "TASKS",
    "BuiltinDataset",
    "Dataset",
    "DatasetError",
    "ImageDataset",
    "folder_status",
    "image_setting",
    "load_csv",
    "load_csv_windows",
    "load_images",
    "load_npz",
    "load_text",
    "make_adding",
    "make_builtin",
    "make_circles",
    "make_digits",
    "make_moons",
    "make_multisine",
    "make_running_sign",
    "make_sine",
    "make_spirals",
    "make_text",
    "make_xor",
]
