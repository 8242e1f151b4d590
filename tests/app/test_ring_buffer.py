"""RingBuffer: ordered snapshots, wraparound, the version counter, a reader on another thread."""

import threading

import numpy as np
import pytest

from app.session import RingBuffer


def test_rows_come_back_oldest_first_until_full():
    buffer = RingBuffer(4, 2)
    assert len(buffer) == 0 and buffer.snapshot().shape == (0, 2) and buffer.last() is None
    buffer.append([1, 10])
    buffer.append_values(2, 20)
    np.testing.assert_array_equal(buffer.snapshot(), [[1, 10], [2, 20]])
    np.testing.assert_array_equal(buffer.last(), [2, 20])


def test_wraparound_keeps_the_newest_rows_in_order():
    buffer = RingBuffer(3, 1)
    for i in range(7):
        buffer.append_values(i)
    assert len(buffer) == 3 and buffer.total == 7
    np.testing.assert_array_equal(buffer.snapshot()[:, 0], [4, 5, 6])
    assert buffer.last()[0] == 6


def test_version_grows_with_every_write_and_only_then():
    buffer = RingBuffer(2, 1)
    seen = [buffer.version]
    for i in range(5):  # past the capacity: wrapping writes count too
        buffer.append_values(i)
        seen.append(buffer.version)
    buffer.snapshot()
    buffer.last()
    assert buffer.version == seen[-1]  # reading changes nothing
    buffer.extend([[7], [8], [9]])
    seen.append(buffer.version)
    buffer.clear()
    seen.append(buffer.version)
    assert seen == sorted(set(seen))  # strictly increasing
    assert len(buffer) == 0 and buffer.total == 0


def test_snapshot_is_a_copy():
    buffer = RingBuffer(3, 2)
    buffer.append_values(1, 2)
    rows = buffer.snapshot()
    rows[:] = 99
    np.testing.assert_array_equal(buffer.snapshot(), [[1, 2]])


def test_extend_with_more_rows_than_capacity_keeps_the_last():
    buffer = RingBuffer(3, 2)
    buffer.append_values(-1, -1)
    buffer.extend(np.arange(20).reshape(10, 2))
    np.testing.assert_array_equal(buffer.snapshot(), [[14, 15], [16, 17], [18, 19]])
    assert buffer.total == 11
    buffer.append_values(0, 0)
    np.testing.assert_array_equal(buffer.snapshot()[:, 0], [16, 18, 0])


def test_append_writes_into_storage_allocated_once():
    buffer = RingBuffer(5, 3)
    storage = buffer._rows
    for i in range(12):
        buffer.append_values(i, i, i)
        buffer.append((i, i, i))
    assert buffer._rows is storage


@pytest.mark.parametrize("capacity, width", [(0, 1), (1, 0), (-3, 2), (2.5, 1), (True, 1)])
def test_sizes_must_be_positive_whole_numbers(capacity, width):
    with pytest.raises(ValueError):
        RingBuffer(capacity, width)


def test_a_row_must_have_the_width():
    buffer = RingBuffer(2, 3)
    with pytest.raises(ValueError, match="3 numbers"):
        buffer.append_values(1, 2)
    with pytest.raises(ValueError):
        buffer.append([1, 2])
    assert len(buffer) == 0


def test_a_reader_on_another_thread_never_sees_a_torn_row():
    buffer = RingBuffer(64, 8)
    done = threading.Event()

    def write():
        for i in range(20_000):
            buffer.append_values(*([float(i)] * 8))
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    snapshots = 0
    last_version = -1
    while not done.is_set() or snapshots == 0:
        rows, version = buffer.snapshot_with_version()
        assert version >= last_version
        last_version = version
        assert (rows == rows[:, :1]).all()  # every row written whole
        assert (np.diff(rows[:, 0]) == 1).all()  # in order, none skipped
        snapshots += 1
    writer.join()
    assert buffer.snapshot()[-1, 0] == 19_999
