"""Iris, wine and breast cancer as built-in sets: shipped files, names, options, training."""

import csv
import re

import numpy as np
import pytest

from app import cli
from app.datasets import BUILTIN, CLASSIFICATION, DatasetError, make_builtin
from app.datasets.loading import read_dataset
from app.datasets.tabular import TABULAR_FILES
from app.io.project_file import save_project
from app.resources_path import resource_path
from tests.app.session.session_samples import mlp_project

KEYS = list(TABULAR_FILES)


def shipped_rows(key: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows of a shipped file, read with the csv module, not our reader."""
    with resource_path("data", TABULAR_FILES[key][0]).open(newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    return header, rows


@pytest.mark.parametrize(
    "key, samples, features, counts",
    [
        # As UCI describes each set.
        ("iris", 150, 4, {"setosa": 50, "versicolor": 50, "virginica": 50}),
        ("wine", 178, 13, {"cultivar 1": 59, "cultivar 2": 71, "cultivar 3": 48}),
        ("breast_cancer", 569, 30, {"benign": 357, "malignant": 212}),
    ],
)
def test_each_set_has_its_samples_classes_and_names(key, samples, features, counts):
    data = make_builtin(key, standardise=False)
    assert data.task == CLASSIFICATION and data.x.shape == (samples, features)
    assert dict(zip(data.class_names, data.class_counts().tolist(), strict=True)) == counts
    header, rows = shipped_rows(key)
    assert data.feature_names == tuple(header[:-1])
    # The raw values are the file's, row for row, each with its class by name.
    assert np.array_equal(data.x, np.array([r[:-1] for r in rows], dtype=np.float32))
    assert [data.class_names[i] for i in data.y] == [r[-1] for r in rows]


@pytest.mark.parametrize("key", KEYS)
def test_features_are_standardised_unless_asked_not_to(key):
    raw, data = make_builtin(key, standardise=False), make_builtin(key)
    assert np.allclose(data.x.mean(axis=0), 0.0, atol=1e-5)
    assert np.allclose(data.x.std(axis=0), 1.0, atol=1e-4)
    assert np.array_equal(data.y, raw.y) and data.class_names == raw.class_names
    expected = (raw.x - raw.x.mean(axis=0)) / raw.x.std(axis=0)
    assert np.allclose(data.x, expected, atol=1e-4)


@pytest.mark.parametrize("key", KEYS)
def test_each_is_listed_with_the_other_built_ins_and_read_from_a_setting(key):
    entry = BUILTIN[key]
    assert entry.task == CLASSIFICATION and entry.default_samples is None  # all, as digits
    assert entry.options == {"n_samples": None, "seed": 0, "standardise": True}
    data = read_dataset({"builtin": key, "options": {"n_samples": 40, "seed": 3}})
    again = read_dataset({"builtin": key, "options": {"n_samples": 40, "seed": 3}})
    other = read_dataset({"builtin": key, "options": {"n_samples": 40, "seed": 4}})
    assert len(data) == 40 and np.array_equal(data.x, again.x)
    assert not np.array_equal(data.x, other.x)
    train, val = read_dataset(key).split(0.2, seed=0)  # the usual validation split
    assert len(val) == round(0.2 * len(make_builtin(key)))
    assert set(np.unique(val.y)) == set(range(train.num_classes))  # stratified


@pytest.mark.parametrize(
    "options, words",
    [
        ({"n_samples": 0}, "choose from 1 to 150, not 0"),
        ({"n_samples": 151}, "choose from 1 to 150, not 151"),
        ({"n_samples": 2.5}, "whole number"),
        ({"seed": -1}, "seed must be a whole number"),
        ({"standardise": "yes"}, "Standardise must be true or false"),
    ],
)
def test_bad_options_are_refused_in_words(options, words):
    with pytest.raises(DatasetError, match=words):
        make_builtin("iris", **options)


def test_a_missing_shipped_file_says_reinstall(tmp_path):
    with pytest.raises(DatasetError, match="Iris data file is missing .* reinstall"):
        BUILTIN["iris"].make(path=tmp_path / "gone.csv")


def test_the_readme_names_each_files_source_and_licence():
    readme = resource_path("data", "README.md").read_text(encoding="utf-8")
    for file_name, doi in (("iris.csv", "10.24432/C56C76"), ("wine.csv", "10.24432/C5PC7J"),
                           ("breast_cancer.csv", "10.24432/C5DW2B")):  # fmt: skip
        assert f"`{file_name}`" in readme and doi in readme
    assert "CC BY 4.0" in readme and "creativecommons.org/licenses/by/4.0" in readme


@pytest.mark.parametrize("key, inputs, classes", [("iris", 4, 3), ("wine", 13, 3)])
def test_cellwright_train_learns_them(tmp_path, capsys, key, inputs, classes):
    project = mlp_project(
        inputs=inputs, outputs=classes, dataset=key, epochs=30, learning_rate=0.02,
        batch_size=16,
    )  # fmt: skip
    path = tmp_path / f"{key}.cwproj"
    save_project(project, path)
    assert cli.main(["train", str(path), "--quiet"]) == 0
    final = capsys.readouterr().out.strip().splitlines()[-1]
    accuracy = float(re.search(r"validation accuracy ([\d.]+)%", final).group(1))
    assert accuracy >= 85.0, final  # chance is about 33%
