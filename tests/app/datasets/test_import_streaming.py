"""Data import under load: a big file is streamed in time and memory, progress is reported,
a cancel stops the read at once, and what is not a readable file is refused before reading.
"""

import json
import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from app.datasets import (
    DatasetError,
    csv_stream,
    file_import,
    load_csv,
    load_npz,
)


def write_numbers_csv(path: Path, megabytes: float, features: int = 8) -> None:
    """A CSV of about `megabytes` of 6-decimal numbers and a 3-class label."""
    rng = np.random.default_rng(0)
    block = rng.normal(size=(10_000, features)).round(6)
    lines = [",".join(map(str, row)) + f",{i % 3}" for i, row in enumerate(block.tolist())]
    text = "\n".join(lines) + "\n"
    with path.open("w", encoding="utf-8") as out:
        out.write(",".join(f"f{i}" for i in range(features)) + ",label\n")
        while out.tell() < megabytes * 1e6:
            out.write(text)


def test_loading_takes_a_small_multiple_of_the_arrays_memory(tmp_path):
    path = tmp_path / "twenty.csv"
    write_numbers_csv(path, 20)
    tracemalloc.start()
    try:
        data = load_csv(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    arrays = data.x.nbytes + data.y.nbytes
    assert len(data) > 200_000 and peak < 3 * arrays, (peak, arrays)


# --- progress and cancel ------------------------------------------------------------------


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(csv_stream, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(csv_stream, "TEXT_CHUNK_CHARS", 4096)


def test_progress_reports_the_bytes_read_up_to_the_size(tmp_path, small_chunks):
    path = tmp_path / "data.csv"
    write_numbers_csv(path, 0.2)
    seen = []
    data = load_csv(path, progress=lambda done, total: seen.append((done, total)))
    size = path.stat().st_size
    assert len(seen) >= size // 8192 - 1 and len(data) > 1000  # a report per read
    assert all(total == size for _, total in seen) and seen[-1][0] == size
    assert [done for done, _ in seen] == sorted({done for done, _ in seen})  # rising


@pytest.mark.parametrize("kind", ["csv", "npz"])
def test_a_cancel_stops_the_read_at_once_with_a_clear_message(tmp_path, small_chunks, kind):
    path = tmp_path / f"data.{kind}"
    if kind == "csv":
        write_numbers_csv(path, 0.5)
        load = load_csv
    else:
        np.savez(path, x=np.zeros((60_000, 2)), y=np.zeros(60_000, int))
        load = load_npz
    seen = []
    stop = threading.Event()

    def on_progress(done, total):
        seen.append(done)
        if done >= total // 4:
            stop.set()  # as a Cancel button would, from another thread

    with pytest.raises(DatasetError, match=f"^Reading data.{kind} was cancelled.$"):
        load(path, progress=on_progress, cancelled=stop.is_set)
    assert seen[-1] < path.stat().st_size // 4 + 2 * 4096  # it stopped at the next chunk


def test_a_progress_that_is_not_a_function_is_refused(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("a,b\n1,0\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="progress option must be a function"):
        load_csv(path, progress="yes")


# --- what a data file may be --------------------------------------------------------------


def refuses_at_once(load, path, fragment):
    """`load(path)` raises DatasetError matching `fragment` within 5 s (a FIFO would hang)."""
    outcome = []

    def run():
        try:
            load(path)
        except DatasetError as exc:
            outcome.append(str(exc))
        except Exception as exc:  # reported below
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), f"{load.__name__}({path}) is still reading"
    assert len(outcome) == 1 and isinstance(outcome[0], str), outcome
    assert fragment in outcome[0], outcome[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("load", [load_csv, load_npz, file_import.csv_columns])
def test_a_fifo_a_device_and_a_folder_are_refused_before_reading(tmp_path, load):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    refuses_at_once(load, fifo, "is a named pipe (FIFO), not a regular file")
    refuses_at_once(load, Path("/dev/zero"), "is a device, not a regular file")
    link = tmp_path / "zero.npz"
    link.symlink_to("/dev/zero")
    refuses_at_once(load, link, "is a device, not a regular file")
    refuses_at_once(load, tmp_path, "Cannot read")


def test_a_file_over_the_size_cap_is_refused_before_reading(tmp_path):
    path = tmp_path / "huge.csv"
    with path.open("wb") as out:
        out.truncate(csv_stream.MAX_FILE_BYTES + 1)  # sparse: takes no room on disk
    for load in (load_csv, load_npz):
        tracemalloc.start()
        try:
            with pytest.raises(
                DatasetError,
                match="huge.csv is larger than 1 GB \\(1,073,741,825 bytes\\), the most",
            ):
                load(path)
            assert tracemalloc.get_traced_memory()[1] < 1 << 20
        finally:
            tracemalloc.stop()


@pytest.mark.parametrize(
    "path, fragment",
    [("a\x00b.csv", "Cannot read 'a\\\\x00b.csv': embedded null byte"),
     (None, "named by its path, not None"), (7, "named by its path, not 7")],
)  # fmt: skip
def test_a_path_that_is_not_one_is_refused(path, fragment):
    for load in (load_csv, load_npz, file_import.csv_columns):
        with pytest.raises(DatasetError, match=fragment):
            load(path)


def test_a_line_with_no_end_is_refused_without_holding_it(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_stream, "MAX_LINE_CHARS", 100_000)
    path = tmp_path / "one_line.csv"
    path.write_text("a,b\n" + "1," * 200_000, encoding="utf-8")
    with pytest.raises(DatasetError, match="Line 2 of one_line.csv is longer than 100,000"):
        load_csv(path)


# --- NPZ ----------------------------------------------------------------------------------


# --- a large file -------------------------------------------------------------------------

LARGE_LOAD = """
import json, sys, threading, time
from app.datasets import DatasetError, load_csv

def peak_mb():  # this process's own peak (ru_maxrss would start from the parent's)
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024

path = sys.argv[1]
before = peak_mb()
reports = []
start = time.perf_counter()
data = load_csv(path, progress=lambda done, total: reports.append(done))
seconds = time.perf_counter() - start
after = peak_mb()
stop = threading.Event()
stopped = []

def on_progress(done, total):
    if done >= total // 2 and not stop.is_set():
        stop.set()
        stopped.append(time.perf_counter())

try:
    load_csv(path, progress=on_progress, cancelled=stop.is_set)
except DatasetError as exc:
    cancel_seconds = time.perf_counter() - stopped[0]
    message = str(exc)
print(json.dumps({
    "seconds": seconds, "rss_growth_mb": after - before, "samples": len(data),
    "arrays_mb": (data.x.nbytes + data.y.nbytes) / 2**20, "reports": len(reports),
    "cancel_seconds": cancel_seconds, "cancel_message": message,
}))
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak from /proc")
def test_a_200_mb_csv_is_streamed_in_time_and_memory(tmp_path):
    path = tmp_path / "large.csv"
    write_numbers_csv(path, 200)
    root = Path(__file__).resolve().parents[3]
    result = subprocess.run(
        [sys.executable, "-c", LARGE_LOAD, str(path)],
        cwd=root, capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    found = json.loads(result.stdout)
    print(f"\n200 MB CSV: {found}")
    assert found["samples"] > 2_500_000 and found["reports"] >= 190
    assert found["seconds"] < 30
    assert found["rss_growth_mb"] < 3 * found["arrays_mb"]
    assert found["cancel_seconds"] < 1 and found["cancel_message"].endswith("was cancelled.")
