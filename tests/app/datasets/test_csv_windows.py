"""A CSV time series cut into sliding windows: shapes, targets, stride, and refusals."""

import numpy as np
import pytest

from app.datasets import REGRESSION, DatasetError, load_csv_windows
from app.datasets.loading import DatasetLoader, DatasetRefused, read_dataset


@pytest.fixture
def series(tmp_path):
    """10 rows: t = 0…9, temp = 10 t, rain = 100 t (so each value tells its row)."""
    path = tmp_path / "weather.csv"
    rows = ["t,temp,rain"] + [f"{t},{10 * t},{100 * t}" for t in range(10)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_windows_of_every_column_predict_the_last_one(series):
    data = load_csv_windows(series, window=3, horizon=2)
    assert data.task == REGRESSION and data.chronological and data.name == "weather.csv"
    assert data.x.shape == (6, 3, 3) and data.x.dtype == np.float32  # (N, window, F)
    assert data.y.shape == (6, 2) and data.target_names == ("rain (t+1)", "rain (t+2)")
    assert np.array_equal(data.x[0, :, 0], [0, 1, 2]) and np.array_equal(data.y[0], [300, 400])
    assert np.array_equal(data.x[-1, :, 0], [5, 6, 7]) and np.array_equal(data.y[-1], [800, 900])


def test_chosen_features_targets_and_stride(series):
    data = load_csv_windows(series, window=2, horizon=2, stride=3, targets=["temp", "rain"],
                            features=["t"])  # fmt: skip
    assert data.x.shape == (3, 2, 1)
    assert np.array_equal(data.x[:, 0, 0], [0, 3, 6])
    assert data.target_names == ("temp (t+1)", "rain (t+1)", "temp (t+2)", "rain (t+2)")
    assert np.array_equal(data.y[1], [50, 500, 60, 600])  # rows 5 and 6, step by step


def test_a_windows_setting_reads_through_the_loader_with_the_csv_options(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("a;b\n" + "".join(f"{i};{-i}\n" for i in range(8)))
    spec = {"csv": "semi.csv", "delimiter": ";", "windows": {"window": 4, "targets": ["a"]}}
    data = read_dataset(spec, tmp_path)
    assert data.x.shape == (4, 4, 2) and data.y.shape == (4, 1)
    assert len(DatasetLoader().load(spec, tmp_path)) == 4
    with pytest.raises(DatasetRefused, match="'windows' entry must be a mapping"):
        read_dataset({"csv": "semi.csv", "windows": 4}, tmp_path)
    with pytest.raises(DatasetRefused, match="bad option"):
        read_dataset({"csv": "semi.csv", "delimiter": ";", "label_column": "a",
                      "windows": {"window": 2}}, tmp_path)  # fmt: skip


def test_a_split_validates_on_the_last_windows(series):
    train, val = load_csv_windows(series, window=2, horizon=1).split(0.25, seed=9)
    assert np.array_equal(val.x[:, 0, 0], [6, 7]) and train.x[:, 0, 0].max() == 5


@pytest.mark.parametrize(
    "content, options, words",
    [
        ("t,v\n1,2\n2,3\n", {"window": 2, "horizon": 1}, "has 2 data rows; a window of 2 and a"
                                                          " horizon of 1 need at least 3"),
        ("t,v\n", {"window": 1}, "has 0 data rows"),
        ("", {}, "is empty"),
        ("t,v\n1,2\n2,x\n3,4\n", {"window": 1}, r"Line 3, column 2 \('v'\): 'x' is not a number"),
        ("t,v\n1,2\n2\n", {"window": 1}, "Line 3 has 1 value, but the header has 2"),
        ("t;v\n1;2\n", {"window": 1}, "seem to be separated by ';'"),
        ("t,v\n1,2\n2,3\n", {"window": 1, "targets": ["w"]}, "There is no column 'w'"),
        ("t,v\n1,2\n2,3\n", {"window": 1, "targets": []}, "at least one target column"),
        ("t,v\n1,2\n2,3\n", {"window": 1, "features": []}, "at least one feature column"),
        ("t,v\n1,2\n2,3\n", {"window": 1, "features": ["t", "t"]}, "'t' is chosen twice"),
        ("t,v\n1,2\n2,3\n", {"window": 0}, "Window must be from 1"),
        ("t,v\n1,2\n2,3\n", {"window": 1, "stride": 1.5}, "Stride must be a whole number"),
    ],
)
def test_bad_files_and_options_are_refused_with_the_reason(tmp_path, content, options, words):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DatasetError, match=words):
        load_csv_windows(path, **options)
