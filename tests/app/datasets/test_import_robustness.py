"""CSV and NPZ import under hostile and generated files: loaded whole or refused in words.

Every generated file is either loaded as a consistent Dataset or refused with a
DatasetError whose message can be shown; any other exception fails the test. Reading is
streamed: progress is reported, a cancel stops it, memory stays a small multiple of the
arrays made, and a wide header or a large file takes time linear in its size.
"""

import csv
import io
import os
import threading
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from app.datasets import (
    CLASSIFICATION,
    REGRESSION,
    Dataset,
    DatasetError,
    csv_stream,
    file_import,
    load_csv,
    load_npz,
)

GENERATED = settings(
    max_examples=120,
    deadline=3000,  # ms per example: a slow shared machine, not a slow loader
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def loads_or_refuses(load, path, **options):
    """The data set `load` makes, or None if it refused the file with a DatasetError."""
    try:
        data = load(path, **options)
    except DatasetError as exc:
        message = str(exc)
        assert message.strip() and len(message) < 800, message
        message.encode("utf-8")  # it can be shown and written anywhere
        return None
    assert isinstance(data, Dataset)
    assert data.x.dtype == np.float32 and np.isfinite(data.x).all()
    assert len(data.x) == len(data.y) > 0 and data.x.size > 0
    if data.task == CLASSIFICATION:
        assert data.y.dtype == np.int64 and data.y.min() >= 0 and data.y.max() < data.num_classes
    else:
        assert data.y.dtype == np.float32 and np.isfinite(data.y).all()
    for text in (*data.feature_names, *data.class_names, *data.target_names, data.describe()):
        text.encode("utf-8")
    return data


# --- generated CSV files --------------------------------------------------------------------

CELLS = st.one_of(
    st.integers(-3, 4).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(
        [
            "",
            " ",
            "nan",
            "-inf",
            "Infinity",
            "1e308",
            "-1e39",
            "3.4e38",
            "1" * 400,
            "0x10",
            "1_000",
            "١",
            "cat",
            "dog",
            '"',
            "\ufeff1",
            "\x00",
            "a\nb",
            "1;2",
            "0.5",
        ]
    ),  # fmt: skip
    st.text(max_size=6),
)
ROWS = st.lists(st.lists(CELLS, max_size=5), max_size=10)
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "label_column": st.one_of(
            st.integers(-6, 6),
            st.sampled_from(["a", "label", "", None, 2.5, True, [], ["a", 0], {"a": 1}]),
            st.lists(st.integers(-3, 3), max_size=3),
        ),
        "feature_columns": st.one_of(
            st.none(),
            st.lists(st.integers(-4, 4), max_size=3),
            st.sampled_from(["a", 3, ["a", "b"]]),
        ),  # fmt: skip
        "task": st.sampled_from([CLASSIFICATION, REGRESSION, "ranking", 7]),
        "delimiter": st.sampled_from([",", ";", "\t", ", ", "", '"', 0]),
        "has_header": st.sampled_from([True, False, "yes"]),
    },
)


@st.composite
def csv_files(draw) -> bytes:
    rows = draw(ROWS)
    delimiter = draw(st.sampled_from([",", ";", "\t"]))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    if draw(st.booleans()):  # quoted as a spreadsheet writes it
        out = io.StringIO()
        csv.writer(out, delimiter=delimiter, lineterminator=newline).writerows(rows)
        text = out.getvalue()
    else:  # or joined blindly, quotes and all
        text = "".join(delimiter.join(row) + newline for row in rows)
    if draw(st.booleans()):
        text = "\ufeff" + text
    data = text.encode("utf-8")
    if data and draw(st.booleans()):  # cut short, or one byte changed
        at = draw(st.integers(0, len(data) - 1))
        data = (
            data[:at]
            if draw(st.booleans())
            else data[:at] + bytes([data[at] ^ 0x80]) + data[at + 1 :]
        )
    return data


@GENERATED
@given(data=csv_files(), options=OPTIONS)
def test_a_generated_csv_is_loaded_or_refused_in_words(tmp_path, data, options):
    path = tmp_path / "generated.csv"
    path.write_bytes(data)
    loads_or_refuses(load_csv, path, **options)


@settings(GENERATED, max_examples=60)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_as_a_csv_are_loaded_or_refused(tmp_path, data):
    path = tmp_path / "bytes.csv"
    path.write_bytes(data)
    loads_or_refuses(load_csv, path)


@settings(GENERATED, max_examples=60)
@given(
    x=hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 3))),
    labels=st.lists(
        st.sampled_from(["0", "1", "2", "cat", "2.5", "-1", "1e3", " "]), min_size=6, max_size=6
    ),  # fmt: skip
)
def test_generated_numbers_load_exactly_or_are_refused(tmp_path, x, labels):
    """Any float64 (NaN, inf, 1e308, subnormal, -0.0) written as text: float32 or refused."""
    path = tmp_path / "numbers.csv"
    names = [f"f{i}" for i in range(x.shape[1])]
    lines = [",".join([*names, "label"])]
    lines += [",".join([*map(repr, row.tolist()), labels[r]]) for r, row in enumerate(x)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = loads_or_refuses(load_csv, path)
    finite = np.isfinite(x).all() and (np.abs(x) <= csv_stream.FLOAT32_MAX).all()
    if data is not None:
        assert finite and np.array_equal(data.x, x.astype(np.float32))
    elif finite and all(s.strip() for s in labels[: len(x)]):
        with pytest.raises(DatasetError, match="label"):  # the labels were the trouble
            load_csv(path)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("a,b,c\n1,2,0\n3,4\n", "Line 3 has 2 values, but the header has 3"),
        ("a,b,c\n1,2,0\n3\n", "Line 3 has 1 value, but"),
        ("a,b,c\n1,x,0\n", "Line 2, column 2 \\('b'\\): 'x' is not a number"),
        ("a,b,c\n1,\x00,0\n", "Line 2, column 2 \\('b'\\): '\\\\x00' is not a number"),
        ("a,b,c\n1,NaN,0\n", "is 'NaN'; NaN and infinite values are not allowed"),
        ("a,b,c\n1,-Infinity,0\n", "is '-Infinity'; NaN and infinite"),
        ("a,b,c\n1,1e308,0\n", "1e308 is too large for 32-bit numbers"),
        ("a,b,c\n1," + "9" * 400 + ",0\n", "999… is too large for 32-bit numbers"),
        ("a,b,c\n1,2,1e308\n", "the class label 1e\\+308 is above the most"),
        ("a;b;c\n1;2;0\n", "single column with delimiter ','; .* separated by ';'"),
        ("", "is empty"),
        ("\ufeff", "is empty"),
        ("\n \n\t\n", "is empty"),
        ("a,b,c\n", "has a header but no data rows"),
        ("\ufeffa,b,c\n\n", "has a header but no data rows"),
        ("a,b\n" + "1" * 200_000 + ",0\n", "Line 2 of data.csv has a value longer than 131,072"),
        ('a,b\n1,0\n"2,1\n3,0\n', 'Line 3 of data.csv opens a quote \\(\\"\\) that is never'),
    ],
)
def test_each_kind_of_bad_csv_is_refused_with_a_clear_message(tmp_path, text, fragment):
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=fragment):
        load_csv(path)


def test_a_byte_order_mark_semicolons_and_any_line_ending_load(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes("\ufeffa;b;label\r\n1,5;2;x\r\n\r\n3;4;y\r".encode().replace(b"1,5", b"1.5"))
    data = load_csv(path, delimiter=";")
    assert data.feature_names == ("a", "b") and data.x.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert data.class_names == ("x", "y")
    path.write_bytes(b"a,b\r1,0\r2,1\r")  # old Mac line ends
    assert load_csv(path).x[:, 0].tolist() == [1.0, 2.0]


def test_a_line_number_counts_line_breaks_inside_quoted_cells(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text('a,b\n1,"x\ny"\n\n2,"p\r\nq"\n3,\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="Line 7, column 2 \\('b'\\) has no label"):
        load_csv(path)
    path.write_text("a,b\n" + "1,0\n" * 40_000 + '1,"x\ny"\n' * 3 + "2.5.1,0\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="Line 40008, column 1 \\('a'\\): '2.5.1'"):
        load_csv(path)


def test_label_column_none_or_another_type_is_refused_not_a_type_error(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("a,b\n1,0\n2,1\n", encoding="utf-8")
    for wrong in (None, 2.5, {"a": 1}):
        with pytest.raises(DatasetError, match="Columns are chosen by name or number, not"):
            load_csv(path, label_column=wrong)
    with pytest.raises(DatasetError, match="feature columns are a list"):
        load_csv(path, feature_columns="a")


def test_a_wide_header_takes_time_linear_in_its_width(tmp_path):
    """Eight times the columns may take at most three times as long per column."""

    def seconds(width: int) -> float:
        path = tmp_path / f"wide{width}.csv"
        header = ",".join(f"c{i}" for i in range(width))
        path.write_text(header + "\n" + ",".join(["1"] * width) + "\n", encoding="utf-8")
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            data = load_csv(path, task="regression")  # one row: one class
            best = min(best, time.perf_counter() - start)
        assert data.x.shape == (1, width - 1)
        return best

    narrow, wide = seconds(10_000), seconds(80_000)
    assert wide / 80_000 <= 3 * narrow / 10_000, (narrow, wide)


def npy_bytes(array=None, *, shape=None, descr="<f8", data=b"") -> bytes:
    """An .npy file: of `array`, or a header claiming `shape` followed by `data`."""
    if array is not None:
        out = io.BytesIO()
        np.save(out, array)
        return out.getvalue()
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape!r}, }}"
    header = header.ljust(117) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + data


def write_zip(path, members, compression=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)


def test_a_header_claiming_a_huge_shape_is_refused_before_memory_is_taken(tmp_path):
    path = tmp_path / "liar.npz"
    write_zip(path, {"x.npy": npy_bytes(shape=(2**40, 3)), "y.npy": npy_bytes(np.zeros(3, int))})
    assert path.stat().st_size < 600
    tracemalloc.start()
    try:
        with pytest.raises(DatasetError, match="'x' in liar.npz is damaged: its header says"):
            load_npz(path)
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_an_archive_that_expands_past_the_cap_is_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(file_import, "MAX_ARRAY_BYTES", 50_000_000)
    path = tmp_path / "bomb.npz"
    members = {"x.npy": npy_bytes(np.zeros((4_000_000, 2))), "y.npy": npy_bytes(np.zeros(4, int))}
    write_zip(path, members, zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < 200_000  # 64 MB of zeros
    tracemalloc.start()
    try:
        with pytest.raises(DatasetError, match=r"would take 61 MB of memory; the most .* 47.7 MB"):
            load_npz(path)
        assert tracemalloc.get_traced_memory()[1] < 1 << 20
    finally:
        tracemalloc.stop()


def test_text_labels_that_are_not_valid_unicode_are_refused(tmp_path):
    path = tmp_path / "labels.npz"
    np.savez(path, x=np.zeros((3, 1)), y=np.array(["a", "b\ud800", "a"]))
    with pytest.raises(DatasetError, match="'y' at index 1: the class label is not valid text"):
        load_npz(path)
    np.savez(path, x=np.zeros((2, 1)), y=np.array([b"ok", b"\xff"]))
    with pytest.raises(DatasetError, match="index 1: the class label is not valid text"):
        load_npz(path)


DTYPES = st.sampled_from(
    [np.float64, np.float32, np.float16, np.int64, np.int8, np.uint64, np.bool_,
     np.complex64, "U3", "S2", "m8[s]", "M8[D]", [("a", "<f4")]]
)  # fmt: skip
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
TEXT = st.one_of(st.characters(), st.characters(categories=["Cs"]))
ARRAYS = st.one_of(
    hnp.arrays(DTYPES, SHAPES),
    hnp.arrays(np.float64, SHAPES, elements=st.sampled_from([0.0, 1.0, np.nan, np.inf, 1e308])),
    # Text, lone surrogates included (NumPy holds them; they can't be shown or saved).
    st.lists(st.text(TEXT, max_size=3), min_size=1, max_size=4).map(np.array),
    st.just(np.array([{"a": 1}, None], dtype=object)),
)


@st.composite
def npz_files(draw) -> bytes:
    members = {}
    keys = ["x", "y"] if draw(st.integers(0, 3)) else []  # mostly both arrays are there
    keys += draw(st.lists(st.sampled_from(["x", "y", "z"]), max_size=2))
    for key in keys:
        choice = draw(st.integers(0, 7))
        if choice == 0:  # a header that lies about its shape
            rows = st.one_of(st.integers(0, 2**62), st.sampled_from([2**31, 2**40, 2**62]))
            shape = draw(st.tuples(rows, st.integers(0, 4)))
            data = npy_bytes(shape=shape, data=draw(st.binary(max_size=40)))
        elif choice == 1:
            data = draw(st.binary(max_size=40))
        else:
            data = npy_bytes(draw(ARRAYS))
        members[key if draw(st.integers(0, 4)) == 0 else f"{key}.npy"] = data
    out = io.BytesIO()
    compression = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    data = out.getvalue()
    if draw(st.integers(0, 3)) == 0:
        at = draw(st.integers(0, len(data) - 1))
        data = (
            data[:at]
            if draw(st.booleans())
            else data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]
        )
    return data


@GENERATED
@given(
    data=npz_files(),
    options=st.fixed_dictionaries(
        {},
        optional={
            "x_key": st.sampled_from(["x", "z", "", 3]),
            "task": st.sampled_from([None, CLASSIFICATION, REGRESSION, "other"]),
        },
    ),
)
def test_a_generated_npz_is_loaded_or_refused_in_words(tmp_path, data, options):
    path = tmp_path / "generated.npz"
    path.write_bytes(data)
    loads_or_refuses(load_npz, path, **options)


@settings(GENERATED, max_examples=60)
@given(x=ARRAYS, y=ARRAYS, task=st.sampled_from([None, CLASSIFICATION, REGRESSION]))
def test_generated_arrays_saved_by_numpy_are_loaded_or_refused(tmp_path, x, y, task):
    path = tmp_path / "saved.npz"
    np.savez(path, x=x, y=y)
    loads_or_refuses(load_npz, path, task=task)


KINDS = ["regular", "fifo", "device", "link to a device", "folder", "missing", "too large"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@settings(GENERATED, max_examples=25)
@given(kind=st.sampled_from(KINDS), load=st.sampled_from([load_csv, load_npz]))
def test_a_generated_path_of_any_kind_is_loaded_or_refused_at_once(tmp_path, kind, load):
    path = tmp_path / f"{len(list(tmp_path.iterdir()))}.data"
    if kind == "regular":
        path.write_text("a,b\n1,0\n", encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "link to a device":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "too large":
        with path.open("wb") as out:
            out.truncate(csv_stream.MAX_FILE_BYTES + 1)
    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(loads_or_refuses(load, path)))
    worker.daemon = True
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), f"{load.__name__} is still reading {kind}"
    assert len(outcome) == 1, "it raised something other than DatasetError"
