"""Bad tabular input: one class is refused; empty, NaN or infinite values are refused with
their count and place, or their rows dropped (the data set's note says how many)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import cli
from app.datasets import DatasetError, load_csv, load_csv_windows, load_npz
from app.datasets.loading import DatasetRefused, read_dataset
from app.io.project_file import save_project
from tests.app.session.session_samples import mlp_project


def write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- one class ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, options, words",
    [
        ("a,b,kind\n1,2,cat\n3,4,cat\n", {}, "same label 'cat' \\(label column 3 \\('kind'\\)"),
        ("a,b,c\n1,2,1\n3,4,1\n", {}, "same label '1'"),
        ("a,b\n1,0\n", {}, "same label '0'"),
        # Two classes in the file, one left once the row with a gap is dropped.
        ("a,b\n1,x\n,y\n2,x\n", {"missing": "drop"}, "same label 'x'"),
    ],
)
def test_a_csv_label_column_with_one_class_is_refused_with_the_reason(
    tmp_path, text, options, words
):
    with pytest.raises(DatasetError, match=words) as caught:
        load_csv(write(tmp_path, text), **options)
    assert "needs at least two classes" in str(caught.value)
    assert "choose regression" in str(caught.value)


def test_one_class_is_fine_for_a_regression_and_two_classes_load(tmp_path):
    path = write(tmp_path, "a,b\n1,5\n2,5\n")
    assert load_csv(path, task="regression").y[:, 0].tolist() == [5.0, 5.0]
    assert load_csv(write(tmp_path, "a,b\n1,5\n2,6\n")).y.tolist() == [5, 6]


def test_an_npz_with_one_class_is_refused(tmp_path):
    path = tmp_path / "one.npz"
    np.savez(path, x=np.zeros((3, 2)), y=np.array(["dog", "dog", "dog"]))
    with pytest.raises(DatasetError, match="same label 'dog' \\(array 'y' of one.npz\\)"):
        load_npz(path)
    np.savez(path, x=np.zeros((3, 2)), y=np.array([2, 2, 2]))
    with pytest.raises(DatasetError, match="same label '2'"):
        load_npz(path)


# --- missing values in a CSV ---------------------------------------------------------------

GAPPY = "a,b,c,label\n" + "".join(
    f"{row}\n"
    for row in [
        "1,2,3,x",  # line 2
        "4,,6,y",  # line 3: b empty
        "7,8,9,x",  # line 4
        "nan,11,inf,y",  # line 5: a NaN, c infinite
        "13,14,15,y",  # line 6
        "16,17,18,",  # line 7: no label
        "19,20,21,x",  # line 8
    ]
)


def test_missing_values_are_refused_with_their_count_and_place(tmp_path):
    with pytest.raises(DatasetError) as caught:
        load_csv(write(tmp_path, GAPPY))
    message = str(caught.value)
    assert message.startswith("Line 3, column 2 ('b') is empty")  # the first, in full
    assert "3 rows of 7 have an empty, NaN or infinite value" in message
    assert "column 2 ('b'): 1, column 1 ('a'): 1, column 3 ('c'): 1" in message
    assert "column 4 ('label'): 1" in message and "lines 3, 5, 7)" in message
    assert "missing: 'drop'" in message  # how to go on


def test_missing_values_can_be_dropped_and_the_note_says_how_many(tmp_path):
    data = load_csv(write(tmp_path, GAPPY), missing="drop")
    assert data.x.tolist() == [[1, 2, 3], [7, 8, 9], [13, 14, 15], [19, 20, 21]]
    assert [data.class_names[i] for i in data.y] == ["x", "x", "y", "x"]
    assert data.note.startswith("Dropped 3 rows of 7 with an empty, NaN or infinite value")
    assert "lines 3, 5, 7" in data.note


def test_a_file_without_gaps_has_no_note_either_way(tmp_path):
    path = write(tmp_path, "a,b\n1,0\n2,1\n")
    assert load_csv(path).note == "" and load_csv(path, missing="drop").note == ""


def test_regression_targets_with_gaps_are_dropped_too(tmp_path):
    path = write(tmp_path, "a,t\n1,0.5\n2,NaN\n3,\n4,1.5\n")
    with pytest.raises(DatasetError, match="2 rows of 4 .*column 2 \\('t'\\): 2; lines 3, 4"):
        load_csv(path, task="regression")
    data = load_csv(path, task="regression", missing="drop")
    assert data.x[:, 0].tolist() == [1.0, 4.0] and data.y[:, 0].tolist() == [0.5, 1.5]


def test_gaps_in_unused_columns_are_not_missing_values(tmp_path):
    data = load_csv(write(tmp_path, "note,a,y\n,1,0\nnan,2,1\n"), feature_columns=["a"])
    assert len(data) == 2 and data.note == ""


def test_a_long_file_counts_every_gap_and_names_the_first_lines(tmp_path):
    rows = [f"{i},{'' if i % 7 == 0 else i},{i % 2}" for i in range(10_000)]
    path = write(tmp_path, "a,b,y\n" + "\n".join(rows) + "\n")
    gaps = len(range(0, 10_000, 7))
    with pytest.raises(DatasetError, match=f"{gaps:,} rows of 10,000 .* lines 2, 9, 16, 23, 30, …"):
        load_csv(path)
    data = load_csv(path, missing="drop")
    assert len(data) == 10_000 - gaps and f"Dropped {gaps:,} rows of 10,000" in data.note
    assert not np.isin(data.x[:, 0] % 7, 0).any()


def test_only_gaps_leaves_nothing_and_says_so(tmp_path):
    with pytest.raises(DatasetError, match="Every row has an empty, NaN or infinite value"):
        load_csv(write(tmp_path, "a,b\n,0\nnan,1\n"), missing="drop")


def test_other_bad_values_are_refused_even_when_dropping(tmp_path):
    path = write(tmp_path, "a,b\n1,0\nx,1\n,0\n")
    with pytest.raises(DatasetError, match="Line 3, column 1 \\('a'\\): 'x' is not a number"):
        load_csv(path, missing="drop")


def test_a_time_series_with_a_gap_is_refused_without_offering_to_drop_rows(tmp_path):
    path = write(tmp_path, "t,v\n1,2\n2,\n3,4\n4,5\n5,6\n")
    with pytest.raises(DatasetError) as caught:
        load_csv_windows(path, window=2, horizon=1)
    assert "1 row of 5 has an empty, NaN or infinite value" in str(caught.value)
    assert "time series can't be left out" in str(caught.value)
    assert "drop" not in str(caught.value)


@pytest.mark.parametrize("missing", ["skip", None, True, ""])
def test_an_unknown_missing_choice_is_refused_with_the_choices(tmp_path, missing):
    with pytest.raises(DatasetError, match="'refuse' .* or 'drop' .*, not"):
        load_csv(write(tmp_path, "a,b\n1,0\n2,1\n"), missing=missing)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "nan", "-inf", "Infinity", None]),
                          st.booleans()), min_size=2, max_size=30))  # fmt: skip
def test_dropping_keeps_exactly_the_rows_without_a_gap(tmp_path_factory, cells):
    """Each row: a cell (a gap, or None for a number) and a class; any mix of gaps."""
    lines = [f"{i if cell is None else cell},{int(flag)}" for i, (cell, flag) in enumerate(cells)]
    path = write(tmp_path_factory.mktemp("g"), "a,y\n" + "\n".join(lines) + "\n")
    clean = [(i, int(flag)) for i, (cell, flag) in enumerate(cells) if cell is None]
    try:
        data = load_csv(path, missing="drop")
    except DatasetError as exc:  # nothing or one class left: refused, saying so
        assert len({y for _, y in clean}) < 2, exc
        return
    assert data.x[:, 0].tolist() == [i for i, _ in clean]
    assert [int(data.class_names[k]) for k in data.y] == [y for _, y in clean]
    dropped = len(cells) - len(clean)
    assert data.note == "" if not dropped else f"Dropped {dropped:,} row" in data.note


# --- missing values in an NPZ ----------------------------------------------------------------


def test_npz_samples_with_nan_or_inf_are_refused_counted_or_dropped(tmp_path):
    path = tmp_path / "d.npz"
    x = np.arange(24, dtype=np.float64).reshape(6, 1, 2, 2)  # image-shaped samples
    x[1, 0, 1, 1], x[4, 0, 0, 0], x[4, 0, 0, 1] = np.nan, np.inf, np.nan
    np.savez(path, x=x, y=np.array([0, 1, 0, 1, 0, 1]))
    with pytest.raises(DatasetError) as caught:
        load_npz(path)
    message = str(caught.value)
    assert message.startswith("Array 'x' has values that are NaN or infinite (first at index 1)")
    assert "2 samples of 6 have an empty, NaN or infinite value ('x': 2; indices 1, 4)" in message
    data = load_npz(path, missing="drop")
    assert data.sample_shape == (1, 2, 2) and data.y.tolist() == [0, 0, 1, 1]
    assert np.array_equal(data.x, x[[0, 2, 3, 5]].astype(np.float32))
    assert data.note.startswith("Dropped 2 samples of 6")


def test_npz_targets_with_nan_are_dropped_with_their_samples(tmp_path):
    path = tmp_path / "r.npz"
    np.savez(path, x=np.arange(4.0), y=np.array([0.5, np.nan, 1.5, 2.5]))
    data = load_npz(path, missing="drop")
    assert data.x[:, 0].tolist() == [0.0, 2.0, 3.0] and "'y': 1; index 1" in data.note


# --- through a setting, the training session and `cellwright train` ------------------------


def test_the_setting_carries_the_choice_and_a_refusal_is_words_not_a_crash(tmp_path):
    write(tmp_path, GAPPY, "gappy.csv")
    with pytest.raises(DatasetRefused, match="can't be used: Line 3, .* 3 rows of 7"):
        read_dataset({"csv": "gappy.csv", "label_column": "label"}, tmp_path)
    data = read_dataset({"csv": "gappy.csv", "missing": "drop"}, tmp_path)
    assert len(data) == 4 and "Dropped 3 rows of 7" in data.note
    with pytest.raises(DatasetRefused, match="'missing' option must be"):
        read_dataset({"csv": "gappy.csv", "missing": "ignore"}, tmp_path)


def test_cellwright_train_says_what_was_dropped_and_refuses_one_class(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = [f"{a:.3f},{b:.3f},{int(a > b)}" for a, b in rng.uniform(-1, 1, (60, 2))]
    rows[5] = "nan,0.1,1"
    write(tmp_path, "a,b,y\n" + "\n".join(rows) + "\n", "points.csv")
    project = mlp_project(dataset={"csv": "points.csv", "missing": "drop"}, epochs=1)
    save_project(project, tmp_path / "net.cwproj")
    assert cli.main(["train", str(tmp_path / "net.cwproj"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "Dropped 1 row of 60 with an empty, NaN or infinite value" in err and "line 7" in err
    write(tmp_path, "a,b,y\n1,2,0\n3,4,0\n", "points.csv")
    assert cli.main(["train", str(tmp_path / "net.cwproj"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "same label '0'" in err and "Traceback" not in err
