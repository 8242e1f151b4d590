"""Decompression bombs and misfitting arrays (issue 26, point 9): a data .npz or a project
whose arrays declare far more than they or their network can hold is refused from the zip
directory and the .npy headers, quickly and without taking the memory; a Parameter's
array of the wrong shape is refused naming its node, not dropped without a word.

The bombs are real: every byte they declare is there once unpacked (deflate blocks of
zeros, a few of random bytes so a ratio check alone would let the file through).
"""

from __future__ import annotations

import io
import struct
import time
import tracemalloc
import zipfile
import zlib
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from app.catalogue import CATALOGUE
from app.compiler.size import parameter_count
from app.datasets.dataset import DatasetError
from app.datasets.file_import import load_npz
from app.document import Project
from app.io.param_check import ParamLayout, node_shapes, parameter_shapes
from app.io.project_file import ProjectFileError, load_project, save_project
from tests.app.session.session_samples import chain

MIB = 1 << 20
GIB = 1 << 30


def npy_header(shape: tuple[int, ...], descr: str) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": descr, "fortran_order": False,
                                               "shape": shape})  # fmt: skip
    return out.getvalue()


def deflated(header: bytes, zero_mib: int, random_mib: int = 0) -> tuple[bytes, int, int]:
    """(raw deflate data, CRC-32, size) of `header` then `random_mib` MiB of random bytes
    then `zero_mib` MiB of zeros, built in a blink: after a full flush the compressor
    starts afresh, so each MiB of zeros compresses to the same block, made once."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    parts = [compressor.compress(header) + compressor.flush(zlib.Z_FULL_FLUSH)]
    crc = zlib.crc32(header)
    noise = np.random.default_rng(0).bytes(MIB)
    for _ in range(random_mib):
        parts.append(compressor.compress(noise) + compressor.flush(zlib.Z_FULL_FLUSH))
        crc = zlib.crc32(noise, crc)
    zeros = bytes(MIB)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    parts += [block] * zero_mib
    parts.append(compressor.flush())
    for _ in range(zero_mib):
        crc = zlib.crc32(zeros, crc)
    return b"".join(parts), crc, len(header) + (random_mib + zero_mib) * MIB


def raw_zip(members: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip of (name, deflate data, CRC-32, size) members, written by hand (zipfile
    can't take data deflated already). Sizes under 4 GiB: no zip64 records needed."""
    out, directory = io.BytesIO(), io.BytesIO()
    for name, data, crc, size in members:
        offset, encoded = out.tell(), name.encode()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data),
                              size, len(encoded), 0) + encoded + data)  # fmt: skip
        directory.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21,
                                    crc, len(data), size, len(encoded), 0, 0, 0, 0, 0, offset)
                        + encoded)  # fmt: skip
    start, listing = out.tell(), directory.getvalue()
    out.write(listing)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                          len(listing), start, 0))  # fmt: skip
    return out.getvalue()


def stored_zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def refused_quickly(load, path: Path, error: type[Exception], match: str) -> Exception:
    """`load(path)` raises `error` matching `match` within 2 s, and Python's allocations
    (NumPy's arrays among them) peak under 16 MiB meanwhile."""
    tracemalloc.start()
    began = time.perf_counter()
    try:
        with pytest.raises(error, match=match) as caught:
            load(path)
        seconds = time.perf_counter() - began
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < 2.0, f"refused after {seconds:.1f} s"
    assert peak < 16 * MIB, f"{peak / MIB:.0f} MiB taken before refusing"
    return caught.value


# ---- a data set's .npz ------------------------------------------------------------------


@cache
def data_bomb() -> bytes:
    """1 GiB of float32 samples and 256 MiB of uint8 labels (2**28 of each), all zeros,
    in a file of about 1.3 MB: consistent, so without a cap it loads (taking gigabytes)."""
    n = 1 << 28
    x = deflated(npy_header((n,), "<f4"), zero_mib=1024)
    y = deflated(npy_header((n,), "|u1"), zero_mib=256)
    return raw_zip([("x.npy", *x), ("y.npy", *y)])


def test_the_data_bomb_is_a_real_one():
    data = data_bomb()
    assert len(data) < 2 * MIB
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = zf.infolist()
        assert [i.file_size for i in infos] == [GIB + 128, (GIB >> 2) + 128]
        with zf.open("y.npy") as member:  # unpacked in pieces: zeros, and the CRC holds
            assert np.lib.format.read_magic(member) == (1, 0)
            assert np.lib.format.read_array_header_1_0(member)[0] == (1 << 28,)
            total = 0
            while piece := member.read(16 * MIB):
                assert piece.count(0) == len(piece)
                total += len(piece)
            assert total == GIB >> 2


def test_a_small_data_file_declaring_a_gigabyte_is_refused_quickly_in_little_memory(tmp_path):
    path = tmp_path / "bomb.npz"
    path.write_bytes(data_bomb())
    error = refused_quickly(load_npz, path, DatasetError, "would unpack to")
    text = str(error)
    assert "bomb.npz" in text and "1.25 GB from 1.27 MB" in text and "zip bomb" in text, text


def test_data_that_compresses_like_real_data_still_loads(tmp_path):
    """MNIST-like: mostly zero pixels (about 8:1), past the floor of the ratio rule."""
    rng = np.random.default_rng(0)
    x = np.zeros((70_000, 784), np.uint8)
    x[:, 200:500] = rng.integers(0, 256, (70_000, 300), dtype=np.uint8)
    path = tmp_path / "digits.npz"
    np.savez_compressed(path, x=x, y=rng.integers(0, 10, 70_000))
    assert load_npz(path).x.shape == (70_000, 784)


# ---- a project's params.npz -------------------------------------------------------------


def small_project() -> Project:
    graph = chain(("Input", {"shape": (2,)}), ("Dense", {"in_channels": 2, "out_channels": 4}),
                  ("Output", {"loss": "MSELoss"}))  # fmt: skip
    return Project(graph=graph, name="small")


def with_params(project_path: Path, params: bytes) -> None:
    with zipfile.ZipFile(project_path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    members["params.npz"] = params
    project_path.write_bytes(stored_zip(members))


def test_a_project_holding_a_gigabyte_array_under_the_ratio_limit_is_refused(tmp_path):
    """The probe's file: about 8 MB holding a 1 GiB array at some 130:1 (under the 200:1
    ratio limit), for a network of 12 numbers."""
    project = small_project()
    dense = project.graph.node_named("dense1")
    path = tmp_path / "bomb.cwproj"
    save_project(project, path)
    member = deflated(npy_header((1 << 28,), "<f4"), zero_mib=1017, random_mib=7)
    with_params(path, raw_zip([(f"{dense.id}/weight.npy", *member)]))
    assert path.stat().st_size < 9 * MIB and GIB / path.stat().st_size < 200
    error = refused_quickly(load_project, path, ProjectFileError, "would unpack to")
    assert "at most" in str(error) and "Parameters" in str(error), error


def test_a_parameter_array_of_the_wrong_shape_is_refused_naming_its_node(tmp_path):
    project = small_project()
    dense = project.graph.node_named("dense1")
    path = tmp_path / "wrong.cwproj"
    save_project(project, path)
    out = io.BytesIO()
    np.save(out, np.ones((5, 5), np.float32))
    with_params(path, stored_zip({f"{dense.id}/weight.npy": out.getvalue()}))
    with pytest.raises(ProjectFileError, match=r"'dense1''s weight is 4×2, but its weight in "
                                               r"the file is 5×5"):  # fmt: skip
        load_project(path)


@pytest.mark.parametrize(("name", "shape", "match"), [
    ("_optimizer.moment1.weight", (2, 4), r"'dense1''s weight is 4×2, but the optimizer state"),
    ("gamma", (4,), r"'dense1' has no Parameter 'gamma' \(its Parameters: weight, bias\)"),
    ("_optimizer.moment1", (4,), "names no Parameter"),
])  # fmt: skip
def test_optimizer_state_and_other_arrays_must_fit_too(tmp_path, name, shape, match):
    project = small_project()
    dense = project.graph.node_named("dense1")
    path = tmp_path / "odd.cwproj"
    save_project(project, path)
    out = io.BytesIO()
    np.save(out, np.ones(shape, np.float32))
    with_params(path, stored_zip({f"{dense.id}/{name}.npy": out.getvalue()}))
    with pytest.raises(ProjectFileError, match=match):
        load_project(path)


def test_a_save_leaves_out_values_that_no_longer_fit_their_node(tmp_path):
    """A weight from before its layer was resized is of no use and would be refused."""
    project = small_project()
    dense = project.graph.node_named("dense1")
    project.param_values[dense.id] = {"weight": np.ones((4, 2), np.float32),
                                      "bias": np.ones(4, np.float32)}  # fmt: skip
    project.graph.set_params(dense.id, {"out_channels": 3})
    path = tmp_path / "resized.cwproj"
    save_project(project, path)
    assert load_project(path).param_values == {}
    project.param_values[dense.id] = {"weight": np.full((3, 2), 2, np.float32)}
    save_project(project, path)
    loaded = load_project(path).param_values[dense.id]
    assert list(loaded) == ["weight"] and (loaded["weight"] == 2).all()


def test_a_trained_project_with_optimizer_state_loads_with_all_its_arrays(tmp_path):
    from app.session import TrainingSession

    graph = chain(("Input", {"shape": (2,)}), ("Dense", {"in_channels": 2, "out_channels": 2}),
                  ("Output", {"loss": "CrossEntropyLoss"}))  # fmt: skip
    project = Project(graph=graph, training={
        "dataset": {"builtin": "moons", "options": {"n_samples": 40}}, "optimizer": "Adam",
        "batch_size": 8})  # fmt: skip
    TrainingSession(project).run(epochs=1)
    path = tmp_path / "trained.cwproj"
    save_project(project, path)
    dense = project.graph.node_named("dense1")
    saved = load_project(path).param_values[dense.id]
    assert sorted(saved) == sorted(project.param_values[dense.id]) and len(saved) == 6


# ---- the shapes are the engine's --------------------------------------------------------


@pytest.mark.parametrize(("node_type", "params"), [
    ("Dense", {"in_channels": 3, "out_channels": 5}),
    ("Dense", {"in_channels": 7, "out_channels": 2, "has_bias": False}),
    ("Conv2d", {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "group": 2}),
    ("Conv2d", {"in_channels": 3, "out_channels": 3, "kernel_size": [1, 5], "has_bias": True}),
    ("BatchNorm1d", {"num_features": 9}),
    ("BatchNorm2d", {"num_features": 2}),
])  # fmt: skip
def test_parameter_shapes_are_those_the_compiled_network_has(node_type, params):
    node = CATALOGUE.new_node(node_type, params=params)
    values = CATALOGUE.get(node_type).values(node.params)
    graph = chain(("Input", {"shape": (1,)}))
    graph.add_node(node)
    cell = CATALOGUE.get(node_type).cell(**values)
    built = {name: tuple(p.shape) for name, p in cell.parameters_and_names()}
    assert parameter_shapes(node_type, values) == built
    assert sum(int(np.prod(s)) for s in built.values()) == parameter_count(node_type, values)
    layout = ParamLayout(graph)
    assert layout.shapes[node.id] == built


def test_types_taken_to_have_no_parameters_have_none():
    """Every catalogue type `node_shapes` gives {} for builds Cells without Parameters;
    custom code and user Cells are the unknown kind (their arrays are only capped)."""
    for node_type in CATALOGUE.types():
        try:
            node = CATALOGUE.new_node(node_type.name)
        except Exception:  # noqa: BLE001 - a type the palette can't make with defaults
            continue
        shapes = node_shapes(node)
        if node_type.name in ("CustomCell", "Threshold", "Dropout2dBprop"):
            assert shapes is None, node_type.name
        elif shapes == {} and node_type.cell is not None:
            cell = node_type.cell(**node_type.values(node.params))
            assert dict(cell.parameters_and_names()) == {}, node_type.name
