"""Reading a data set setting without Qt: the reasons in words, one reading kept, a large
file on a worker thread with progress and Cancel (app.datasets.loading)."""

import threading
import time

import numpy as np
import pytest

from app.datasets import csv_stream, file_import, loading
from app.datasets.loading import (
    STILL_READING,
    DatasetLoader,
    DatasetRefused,
    ReadingCancelled,
    column_names,
    guess_delimiter,
    read_dataset,
)
from app.session import TrainingError, load_dataset

MOONS = {"builtin": "moons", "options": {"n_samples": 50}}


def write_csv(path, rows=2_000, seed=0):
    x = np.random.default_rng(seed).normal(size=(rows, 2)).round(4)
    lines = ["x1,x2,label"] + [f"{a},{b},{i % 2}" for i, (a, b) in enumerate(x.tolist())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def reads(monkeypatch):
    """The names of the data files read, each time one is read; files of 10 KB or more
    count as large, and are read in 1 KB chunks."""
    seen = []

    def counting(load):
        def load_counted(path, **options):
            seen.append(path.name)
            return load(path, **options)

        return load_counted

    monkeypatch.setattr(loading, "load_csv", counting(file_import.load_csv))
    monkeypatch.setattr(loading, "load_npz", counting(file_import.load_npz))
    monkeypatch.setattr(loading, "PROGRESS_BYTES", 10_000)
    monkeypatch.setattr(csv_stream, "CHUNK_BYTES", 1_024)
    return seen


def no_reading_thread():
    return not any(t.name == "data-import" for t in threading.enumerate())


# ---- read_dataset: the one reader, for the form and the training session ---------------------


@pytest.mark.parametrize(
    "spec, words",
    [
        (42, "The data set setting must be a name or a mapping, not 42."),
        ({"csv": "a.csv", "npz": "b.npz"},
         "needs exactly one of 'builtin', 'csv', 'npz', 'text' or 'images'"),
        ({"builtin": "moons", "colour": 1}, "Unknown built-in data set entries: colour."),
        ({"builtin": "moons", "options": {"petals": 3}}, "The data set setting has a bad option"),
        ({"csv": "missing.csv"}, "The data set can't be used: There is no file"),
        ({"npz": "data.csv"}, "The data set can't be used: "),
        ({"builtin": "no such set"}, "The data set can't be used: "),
    ],
)
def test_a_setting_that_gives_no_data_is_refused_in_the_same_words_everywhere(
    tmp_path, spec, words
):
    write_csv(tmp_path / "data.csv", rows=5)
    with pytest.raises(DatasetRefused) as refused:
        read_dataset(spec, tmp_path)
    assert words in str(refused.value)
    with pytest.raises(TrainingError) as session_refused:  # what training says
        load_dataset(spec, tmp_path)
    assert str(session_refused.value) == str(refused.value)
    answer = DatasetLoader()
    with pytest.raises(DatasetRefused) as form_refused:  # what the Run dock's form says
        answer.load(spec, tmp_path)
    assert str(form_refused.value) == str(refused.value)


def test_built_in_sets_and_files_relative_to_the_folder_load(tmp_path):
    assert read_dataset(MOONS).name == "Moons" and len(read_dataset(MOONS)) == 50
    write_csv(tmp_path / "points.csv", rows=30)
    data = read_dataset({"csv": "points.csv", "label_column": "label"}, tmp_path)
    assert data.x.shape == (30, 2) and data.num_classes == 2
    np.savez(tmp_path / "arrays.npz", x=np.zeros((12, 3)), y=np.arange(12) % 4)
    assert read_dataset({"npz": "arrays.npz"}, tmp_path).num_classes == 4


def test_a_loader_bug_is_said_in_words_not_raised(tmp_path, monkeypatch):
    write_csv(tmp_path / "points.csv", rows=5)

    def broken(path, **options):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(loading, "load_csv", broken)
    with pytest.raises(DatasetRefused, match="can't be used: RuntimeError: disk on fire"):
        DatasetLoader().load({"csv": "points.csv"}, tmp_path)


# ---- the loader keeps its answer -------------------------------------------------------------


def test_a_file_is_read_once_until_it_changes_on_disk(tmp_path, reads):
    path = write_csv(tmp_path / "points.csv", rows=20)
    spec = {"csv": "points.csv"}
    loader = DatasetLoader()
    assert loader.already_read(spec, tmp_path) is None  # never reads anything
    first = loader.load(spec, tmp_path)
    assert loader.load(spec, tmp_path) is first and loader.already_read(spec, tmp_path) is first
    assert reads == ["points.csv"]
    assert loader.already_read(spec, tmp_path / "elsewhere") is None
    assert loader.already_read({"csv": "points.csv", "task": "regression"}, tmp_path) is None
    write_csv(path, rows=25, seed=1)
    assert loader.already_read(spec, tmp_path) is None  # changed: not what was read
    assert len(loader.load(spec, tmp_path)) == 25 and reads == ["points.csv"] * 2


def test_a_refusal_is_kept_too_and_never_offered_as_read(tmp_path, reads):
    (tmp_path / "bad.csv").write_text("a,b,c\n1,x,0\n", encoding="utf-8")
    loader = DatasetLoader()
    for _ in range(2):
        with pytest.raises(DatasetRefused, match="'x' is not a number"):
            loader.load({"csv": "bad.csv"}, tmp_path)
    assert reads == ["bad.csv"] and loader.already_read({"csv": "bad.csv"}, tmp_path) is None


# ---- a large file: on a worker thread, with progress and Cancel -------------------------------


class Waiter:
    """A caller's `wait`: polls the reading from the calling thread as a window would,
    noting the progress; with `cancel_at` it cancels once past that much."""

    def __init__(self, cancel_at=None, leave_early=False):
        self.cancel_at, self.leave_early = cancel_at, leave_early
        self.values, self.threads, self.polls = [], set(), 0

    def __call__(self, reading):
        self.threads.add(threading.current_thread().name)
        self.name = reading.path.name
        while not reading.finished.is_set():
            if self.leave_early:
                return
            self.polls += 1
            self.values.append(reading.permille())
            if self.cancel_at is not None and self.values[-1] > self.cancel_at:
                reading.cancel()
            time.sleep(0.001)
        self.values.append(reading.permille())


@pytest.fixture
def slow(monkeypatch, reads):
    """Each 1 KB chunk takes 2 ms, so a cancel arrives while the file is being read."""
    load = loading.load_csv

    def load_slowly(path, progress=None, **options):
        def on_progress(done, total):
            progress(done, total)
            time.sleep(0.002)

        return load(path, progress=on_progress if progress else None, **options)

    monkeypatch.setattr(loading, "load_csv", load_slowly)


def test_a_large_file_is_read_on_a_worker_thread_while_the_caller_shows_progress(tmp_path, slow,
                                                                                 reads):
    # `slow`: the read lasts long enough (~0.1 s) for the caller to poll it, as a window
    # would; unslowed, the worker could finish before the first poll on a quick machine.
    path = write_csv(tmp_path / "big.csv")
    assert path.stat().st_size > 3 * loading.PROGRESS_BYTES
    waiter = Waiter()
    loader = DatasetLoader(wait=waiter)
    data = loader.load({"csv": "big.csv"}, tmp_path)
    assert len(data) == 2_000 and reads == ["big.csv"] and waiter.name == "big.csv"
    assert waiter.threads == {threading.current_thread().name}  # the caller polls, not the reader
    assert waiter.values == sorted(waiter.values) and waiter.values[-1] == 1000
    assert no_reading_thread() and loader.reading is None
    small = write_csv(tmp_path / "small.csv", rows=10)
    assert small.stat().st_size < loading.PROGRESS_BYTES
    loader.load({"csv": "small.csv"}, tmp_path)
    assert waiter.polls and len(waiter.threads) == 1 and reads[-1] == "small.csv"


def test_cancelling_an_import_keeps_the_data_set_read_before(tmp_path, slow, reads):
    write_csv(tmp_path / "big.csv")
    waiter = Waiter(cancel_at=100)
    loader = DatasetLoader(wait=waiter)
    moons = loader.load(MOONS, tmp_path)
    with pytest.raises(ReadingCancelled, match=r"^Reading big.csv was cancelled.$"):
        loader.load({"csv": "big.csv"}, tmp_path, retry=True)  # the user's own choice
    assert max(waiter.values) < 1000 and no_reading_thread()
    assert loader.already_read(MOONS, tmp_path) is moons  # kept, not read again
    assert loader.load(MOONS, tmp_path) is moons
    # Asked for by the setting shown (not by the user): a cancel is kept as a refusal ...
    with pytest.raises(DatasetRefused, match="was cancelled. Import it again to use it."):
        loader.load({"csv": "big.csv"}, tmp_path)
    with pytest.raises(DatasetRefused, match="Import it again"):
        loader.load({"csv": "big.csv"}, tmp_path)
    assert reads == ["big.csv", "big.csv"]
    # ... and importing it again reads it again, to the end this time.
    waiter.cancel_at = None
    assert len(loader.load({"csv": "big.csv"}, tmp_path, retry=True)) == 2_000
    assert reads == ["big.csv"] * 3


def test_a_wait_that_ends_early_cancels_the_reading(tmp_path, slow):
    write_csv(tmp_path / "big.csv")
    loader = DatasetLoader(wait=Waiter(leave_early=True))
    with pytest.raises(ReadingCancelled):
        loader.load({"csv": "big.csv"}, tmp_path, retry=True)
    assert no_reading_thread() and loader.reading is None


def test_asking_again_while_a_file_is_read_is_refused_not_read_twice(tmp_path, slow, reads):
    write_csv(tmp_path / "big.csv")
    asked = []

    def wait(reading):
        try:
            loader.load(MOONS, tmp_path)  # e.g. a window repainting meanwhile
        except DatasetRefused as exc:
            asked.append(str(exc))
        Waiter()(reading)

    loader = DatasetLoader(wait=wait)
    assert len(loader.load({"csv": "big.csv"}, tmp_path)) == 2_000
    assert asked == [STILL_READING] and reads == ["big.csv"]


def test_a_refusal_from_the_worker_thread_is_worded_as_any_other(tmp_path, reads):
    lines = ["a,b,label"] + [f"{i},{i},0" for i in range(3_000)] + ["1,oops,0"]
    (tmp_path / "big.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    loader = DatasetLoader(wait=Waiter())
    with pytest.raises(DatasetRefused) as refused:
        loader.load({"csv": "big.csv"}, tmp_path)
    assert str(refused.value).startswith("The data set can't be used: Line 3002")
    with pytest.raises(TrainingError) as session_refused:
        load_dataset({"csv": "big.csv"}, tmp_path)
    assert str(session_refused.value) == str(refused.value)


# ---- what the form asks of a file before reading it -------------------------------------------


def test_columns_and_the_delimiter_come_from_the_first_row(tmp_path):
    semicolons = tmp_path / "excel.csv"
    semicolons.write_text("a;b;label\n1.5;2;x\n", encoding="utf-8")
    assert guess_delimiter(semicolons) == ";"
    assert column_names(semicolons, {"delimiter": ";"}) == ["a", "b", "label"]
    plain = write_csv(tmp_path / "plain.csv", rows=3)
    assert guess_delimiter(plain) == "," and column_names(plain, {}) == ["x1", "x2", "label"]
    assert column_names(plain, {"has_header": False}) == ["column 1", "column 2", "column 3"]
    assert column_names(tmp_path / "missing.csv", {}) == []
