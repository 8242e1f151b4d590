"""CSV and NPZ import: good files load whole, bad ones fail with the user's words."""

import numpy as np
import pytest

from app.datasets import CLASSIFICATION, REGRESSION, DatasetError, load_csv, load_npz

IRIS_LIKE = """\
sepal,petal,width,species
5.1,1.4,0.2,setosa
4.9,1.4,0.2,setosa
6.4,4.5,1.5,versicolor
5.5,4.0,1.3,versicolor
6.3,6.0,2.5,virginica
5.8,5.1,1.9,virginica
5.0,1.6,0.2,setosa
6.0,4.5,1.6,versicolor
7.2,6.1,2.5,virginica
"""


def write(tmp_path, text, name="data.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- CSV ------------------------------------------------------------------------------------


def test_a_ten_line_csv_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(10, 3)).astype(np.float32)
    y = np.array([0, 1, 2, 1, 0, 2, 2, 1, 0, 1])
    lines = ["a,b,c,label"] + [
        ",".join([*map(repr, map(float, r)), str(k)]) for r, k in zip(x, y, strict=True)
    ]
    data = load_csv(write(tmp_path, "\n".join(lines) + "\n"), label_column="label")
    assert np.array_equal(data.x, x) and np.array_equal(data.y, y)
    assert data.x.dtype == np.float32 and data.y.dtype == np.int64
    assert data.feature_names == ("a", "b", "c") and data.class_names == ("0", "1", "2")
    assert data.task == CLASSIFICATION and data.num_classes == 3 and data.name == "data.csv"


def test_class_names_become_sorted_class_indices(tmp_path):
    data = load_csv(write(tmp_path, IRIS_LIKE))  # the label is the last column by default
    assert data.class_names == ("setosa", "versicolor", "virginica")
    assert data.y.tolist() == [0, 0, 1, 1, 2, 2, 0, 1, 2]
    assert data.x.shape == (9, 3) and data.x[2].tolist() == pytest.approx([6.4, 4.5, 1.5])


def test_columns_by_name_or_index_and_no_header(tmp_path):
    data = load_csv(write(tmp_path, IRIS_LIKE), "species", feature_columns=["width", 0])
    assert data.feature_names == ("width", "sepal") and data.x[0].tolist() == pytest.approx(
        [0.2, 5.1]
    )
    headless = write(tmp_path, "1;2;0\n3;4;1\n\n5;6;1\n", "plain.csv")
    data = load_csv(headless, label_column=2, delimiter=";", has_header=False)
    assert data.feature_names == ("column 1", "column 2") and data.y.tolist() == [0, 1, 1]
    same = load_csv(headless, label_column="column 3", delimiter=";", has_header=False)
    assert np.array_equal(same.x, data.x)


def test_regression_with_one_or_several_targets(tmp_path):
    path = write(tmp_path, "x,y,z\n0.5,1.25,3\n-1,2e3,4\n")
    one = load_csv(path, label_column="y", feature_columns=["x"], task=REGRESSION)
    assert one.y.shape == (2, 1) and one.y.dtype == np.float32 and one.target_names == ("y",)
    two = load_csv(path, label_column=["y", "z"], task=REGRESSION)
    assert two.y.tolist() == [[1.25, 3.0], [2000.0, 4.0]] and two.feature_names == ("x",)


def test_quoted_cells_spaces_and_a_byte_order_mark(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes('\ufeffa,"b"\n 1 ,"0"\n2,1\n'.encode())
    data = load_csv(path, label_column="b")
    assert data.x[:, 0].tolist() == [1.0, 2.0] and data.y.tolist() == [0, 1]


@pytest.mark.parametrize(
    "text, options, fragment",
    [
        ("", {}, "is empty"),
        ("\n  \n", {}, "is empty"),
        ("a,b\n", {}, "no data rows"),
        ("a,b,c\n1,2,0\n3,4\n", {}, "Line 3 has 2 values, but the header has 3"),
        ("1,2,0\n3,4,1,9\n", {"has_header": False}, "Line 2 has 4 values, but line 1 has 3"),
        ("a,b,c\n1,2,0\n1,x2,1\n", {}, "Line 3, column 2 \\('b'\\): 'x2' is not a number"),
        ("a,b,c\n1,2,0\n1,,1\n", {}, "Line 3, column 2 \\('b'\\) is empty"),
        ("a,b,c\n1,nan,0\n", {}, "Line 2, column 2 \\('b'\\) is 'nan'; NaN and infinite"),
        ("a,b,c\n1,2,0\n-inf,2,0\n", {}, "Line 3, column 1 \\('a'\\) is '-inf'"),
        ("a,b,c\n1,1e39,0\n", {}, "too large for 32-bit"),
        ("a,b,c\n1,2,0\n1,2,0.5\n", {}, "Line 3, column 3 \\('c'\\): the class label 0.5 is not"),
        ("a,b,c\n1,2,-1\n", {}, "Line 2, column 3 \\('c'\\): the class label -1 is negative"),
        ("a,b,c\n1,2,\n", {}, "Line 2, column 3 \\('c'\\) has no label"),
        ("a,b,c\n1,2,0\n", {"label_column": "d"}, "no column 'd'; the columns are a, b, c"),
        ("a,b,c\n1,2,0\n", {"feature_columns": ["a", "e"]}, "no column 'e'"),
        ("a,b,c\n1,2,0\n", {"label_column": 5}, "no column 5: the file has 3 columns"),
        ("a,b,c\n1,2,0\n", {"feature_columns": ["a", "c"]}, "both a feature and a label"),
        ("a,b,c\n1,2,0\n", {"feature_columns": []}, "at least one feature"),
        ("a,b,c\n1,2,0\n", {"feature_columns": ["a", "a"]}, "chosen twice"),
        ("a,b,c\n1,2,0\n", {"label_column": ["b", "c"]}, "one label column"),
        ("a,b,c\n1,2,0\n", {"task": "ranking"}, "Unknown task"),
        ("a,b,c\n1,2,0\n", {"delimiter": ", "}, "single character"),
        ('a,b,c\n1,"2,0\n', {}, "Line 2 of data.csv opens a quote"),
        ('a,b,c\n1,"2\n3",0\n4,5,x\n', {}, "Line 2, column 2 \\('b'\\): '2\\n3' is not"),
        ("a,b,c\n1,2,x\n", {"task": REGRESSION}, "Line 2, column 3 \\('c'\\): 'x' is not a"),
    ],
)
def test_a_bad_csv_is_refused_with_where_and_why(tmp_path, text, options, fragment):
    with pytest.raises(DatasetError, match=fragment):
        load_csv(write(tmp_path, text), **options)


def test_unused_columns_may_hold_anything(tmp_path):
    data = load_csv(write(tmp_path, "id,a,c\nx7,1,0\n,2,1\n"), feature_columns=["a"])
    assert data.x[:, 0].tolist() == [1.0, 2.0]


def test_unreadable_csv_files(tmp_path):
    with pytest.raises(DatasetError, match="There is no file"):
        load_csv(tmp_path / "missing.csv")
    (tmp_path / "bad.csv").write_bytes(b"a,b\n\xff\xfe,1\n")
    with pytest.raises(DatasetError, match="not a UTF-8 text file"):
        load_csv(tmp_path / "bad.csv")
    with pytest.raises(DatasetError, match="Cannot read"):
        load_csv(tmp_path)


# --- NPZ ------------------------------------------------------------------------------------


def test_npz_classification_regression_and_images(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x=np.arange(6).reshape(3, 2), y=np.array([1, 0, 1], np.uint8))
    data = load_npz(path)
    assert data.task == CLASSIFICATION and data.x.dtype == np.float32 and data.y.dtype == np.int64
    assert data.num_classes == 2 and data.name == "d.npz"
    np.savez(path, inputs=np.zeros((4, 1, 5, 5)), targets=np.linspace(0, 1, 4))
    data = load_npz(path, x_key="inputs", y_key="targets")
    assert data.task == REGRESSION and data.sample_shape == (1, 5, 5) and data.y.shape == (4, 1)
    np.savez(path, x=np.arange(3.0), y=np.array(["cat", "dog", "cat"]))
    data = load_npz(path)
    assert data.x.shape == (3, 1) and data.class_names == ("cat", "dog")
    assert data.y.tolist() == [0, 1, 0]
    np.savez(path, x=np.zeros((2, 2)), y=np.array([[1.0], [0.0]]))
    assert load_npz(path, task=CLASSIFICATION).y.tolist() == [1, 0]


@pytest.mark.parametrize(
    "arrays, options, fragment",
    [
        ({"x": np.zeros((3, 2))}, {}, "has no array 'y'; it holds 'x'"),
        ({"x": np.zeros((3, 2)), "y": np.zeros(3)}, {"x_key": "inputs"}, "no array 'inputs'"),
        ({"x": np.zeros((3, 2)), "y": np.zeros(4, int)}, {}, "'x' has 3 samples but 'y' has 4"),
        ({"x": np.array([[1.0, np.nan]]), "y": [0]}, {}, "NaN or infinite \\(first at index 0"),
        ({"x": np.zeros((2, 1)), "y": [1.0, np.inf]}, {}, "'y' has values that are NaN"),
        ({"x": np.array([[1e300]]), "y": [0]}, {}, "too large for 32-bit"),
        ({"x": np.zeros((2, 1)), "y": [0.5, 1.0]}, {"task": CLASSIFICATION}, "0.5 is not a whole"),
        ({"x": np.zeros((2, 1)), "y": [0, -2]}, {}, "index 1: the class label -2 is negative"),
        ({"x": np.zeros((2, 1)), "y": np.zeros((2, 3), int)}, {}, "one class label per sample"),
        ({"x": np.array(["a", "b"]), "y": [0, 1]}, {}, "samples must be numbers"),
        ({"x": np.zeros((0, 2)), "y": np.zeros(0, int)}, {}, "holds no samples"),
        ({"x": np.float64(1.0), "y": [0]}, {}, "single number"),
        ({"x": np.zeros((2, 1)), "y": np.int64(1)}, {}, "single value"),
        ({"x": np.zeros((2, 1)), "y": ["a", "b"]}, {"task": REGRESSION}, "must hold numbers"),
        ({"x": np.zeros((2, 1)), "y": [0, 1]}, {"y_key": "x"}, "different arrays"),
        ({"x": np.zeros((2, 1)), "y": [0, 1]}, {"task": "sorting"}, "Unknown task"),
    ],
)
def test_a_bad_npz_is_refused_with_a_reason(tmp_path, arrays, options, fragment):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(DatasetError, match=fragment):
        load_npz(path, **options)


def test_pickled_object_arrays_are_never_loaded(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, x=np.array([{"a": 1}, None], dtype=object), y=np.array([0, 1]))
    with pytest.raises(DatasetError, match="'x' in objects.npz holds Python objects"):
        load_npz(path)


def test_files_that_are_not_npz_archives(tmp_path):
    with pytest.raises(DatasetError, match="There is no file"):
        load_npz(tmp_path / "missing.npz")
    np.save(tmp_path / "one.npy", np.zeros(3))
    with pytest.raises(DatasetError, match="holds a single array"):
        load_npz(tmp_path / "one.npy")
    (tmp_path / "text.npz").write_text("x,y\n1,2\n")
    with pytest.raises(DatasetError, match="not a NumPy .npz file"):
        load_npz(tmp_path / "text.npz")
    good = tmp_path / "good.npz"
    np.savez(good, x=np.zeros((50, 4)), y=np.zeros(50, int))
    (tmp_path / "cut.npz").write_bytes(good.read_bytes()[:300])
    with pytest.raises(DatasetError, match="cut.npz"):
        load_npz(tmp_path / "cut.npz")
