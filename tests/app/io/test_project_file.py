"""Project files: exact round trips, atomic saves, migrations, and every hostile file refused."""

from __future__ import annotations

import io
import json
import os
import stat
import struct
import zipfile

import numpy as np
import pytest

from app.document import Hook, Project, editing
from app.document.data import graph_to_data
from app.io import project_file
from app.io.project_file import (
    FORMAT_VERSION,
    MIGRATIONS,
    ProjectFileError,
    load_project,
    save_project,
)
from tests.app.document.document_samples import assert_same_project, mlp


@pytest.fixture
def project() -> Project:
    graph, (a, b, c, d) = mlp()
    edge_in = graph.edge_into(b.id, "in")
    graph.set_params(c.id, {"in_channels": 3, "out_channels": 4})
    editing.group(graph, [b.id, c.id], definition="Block")
    rng = np.random.default_rng(0)
    return Project(
        graph=graph,
        name="Spiral MLP",
        training={"optimizer": "Adam", "lr": 0.001, "epochs": 20, "batch": [32, None], "on": True},
        hooks=[
            Hook("forward", b.id, pane="heatmap", settings={"every": 5}),
            Hook("hook_backward", edge_in.id),
        ],
        view={"zoom": 1.5, "centre": [0.0, -2.5]},
        param_values={
            b.id: {
                "weight": rng.standard_normal((3, 2)).astype(np.float32),
                "bias": np.array([0.0, -0.0, np.nan], dtype=np.float64),  # bit-exact, NaN included
            },
            c.id: {  # a Dense 3 → 4: arrays of its Parameters' shapes, in odd types
                "weight": np.asfortranarray(np.arange(12, dtype=">i4").reshape(4, 3)),
                "bias": np.array([1, 0, 7, 2], np.float16),
                "_optimizer.moment1.weight": np.full((4, 3), 7, np.int64),
                "_optimizer.moment2.bias": np.array([True, False, True, True]),
            },
        },
        metadata={"author": "Ada", "notes": "ünïcödé ✓"},
    )


@pytest.fixture
def saved(project, tmp_path):
    path = tmp_path / "spiral.cwproj"
    save_project(project, path)
    return path


def members_of(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def write_zip(path, members, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def npz_bytes(arrays: dict) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def refused(path, match: str) -> ProjectFileError:
    """Loading fails with ProjectFileError matching `match`, and nothing is written."""
    folder = sorted(os.listdir(path.parent))
    with pytest.raises(ProjectFileError, match=match) as caught:
        load_project(path)
    assert sorted(os.listdir(path.parent)) == folder
    return caught.value


# ---- round trips --------------------------------------------------------------------------


def test_round_trip_is_exact(project, saved):
    loaded = load_project(saved)
    assert_same_project(project, loaded)
    assert loaded.param_values.keys() == project.param_values.keys()
    composite = next(n for n in loaded.graph.nodes.values() if n.is_composite)
    assert composite.definition == "Block" and len(composite.subgraph) == 4
    weight = loaded.param_values[list(project.param_values)[1]]["weight"]
    assert weight.dtype == np.dtype(">i4") and weight.flags.f_contiguous and weight.flags.writeable


def test_saving_twice_gives_the_same_bytes_for_the_project_part(project, saved, tmp_path):
    again = tmp_path / "again.cwproj"
    save_project(project, again)
    assert members_of(saved)["project.json"] == members_of(again)["project.json"]


def test_layout_of_the_file(saved):
    members = members_of(saved)
    assert sorted(members) == ["params.npz", "project.json"]
    data = json.loads(members["project.json"])
    assert data["format_version"] == FORMAT_VERSION == 1
    assert data["saved_by"].startswith("Cellwright ")
    with zipfile.ZipFile(io.BytesIO(members["params.npz"])) as npz:
        assert all(name.count("/") == 1 and name.endswith(".npy") for name in npz.namelist())
    with zipfile.ZipFile(saved) as zf:  # weights are stored, the JSON compressed
        assert zf.getinfo("params.npz").compress_type == zipfile.ZIP_STORED
        assert zf.getinfo("project.json").compress_type == zipfile.ZIP_DEFLATED


def test_an_empty_project_round_trips(tmp_path):
    path = tmp_path / "empty.cwproj"
    save_project(Project(), path)
    assert_same_project(Project(), load_project(path))


def test_values_of_removed_nodes_and_dangling_hooks_are_not_saved(project, tmp_path):
    composite = next(n for n in project.graph.nodes.values() if n.is_composite)
    project.graph.remove_node(composite.id)
    path = tmp_path / "pruned.cwproj"
    save_project(project, path)
    loaded = load_project(path)
    assert loaded.param_values == {} and loaded.hooks == []


# ---- saving -------------------------------------------------------------------------------


def test_a_failure_mid_save_keeps_the_old_file(project, saved, monkeypatch):
    old = saved.read_bytes()
    project.name = "changed"

    def broken_savez(stream, **arrays):
        stream.write(b"half an array")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(project_file.np, "savez", broken_savez)
    with pytest.raises(ProjectFileError, match="No space left on device"):
        save_project(project, saved)
    assert saved.read_bytes() == old
    assert os.listdir(saved.parent) == [saved.name]  # no temporary file left behind


def test_a_failing_rename_keeps_the_old_file(project, saved, monkeypatch):
    old = saved.read_bytes()

    def broken_replace(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(project_file.os, "replace", broken_replace)
    with pytest.raises(ProjectFileError, match="Could not save 'spiral.cwproj': Permission denied"):
        save_project(project, saved)
    assert saved.read_bytes() == old and os.listdir(saved.parent) == [saved.name]


@pytest.mark.parametrize(
    ("spoil", "match"),
    [
        (lambda p: p.training.update(fn=print), "can't be stored"),
        (lambda p: p.metadata.update(x=float("inf")), "can't be stored"),
        (lambda p: p.view.update(text="\ud800"), "can't be stored"),
        (lambda p: p.param_values[next(iter(p.param_values))].update(w=np.array([{}])), "object"),
        (
            lambda p: p.param_values[next(iter(p.param_values))].update({"bad name": np.ones(1)}),
            "can't name",
        ),
    ],
)
def test_unsaveable_values_are_refused_before_touching_the_file(project, saved, spoil, match):
    old = saved.read_bytes()
    spoil(project)
    with pytest.raises(ProjectFileError, match=match):
        save_project(project, saved)
    assert saved.read_bytes() == old and os.listdir(saved.parent) == [saved.name]


def test_save_keeps_the_file_mode_and_writes_through_a_symlink(project, saved, tmp_path):
    saved.chmod(0o640)
    link = tmp_path / "link.cwproj"
    link.symlink_to(saved)
    save_project(project, link)
    assert link.is_symlink() and stat.S_IMODE(saved.stat().st_mode) == 0o640
    load_project(link)


def test_a_new_file_gets_the_usual_permissions(project, tmp_path):
    old_umask = os.umask(0o022)
    try:
        save_project(project, tmp_path / "new.cwproj")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE((tmp_path / "new.cwproj").stat().st_mode) == 0o644


def test_saving_into_a_missing_folder_is_a_project_file_error(project, tmp_path):
    with pytest.raises(ProjectFileError, match="Could not save"):
        save_project(project, tmp_path / "missing" / "x.cwproj")


# ---- versions and migrations --------------------------------------------------------------


def test_a_newer_format_is_refused_saying_which_this_app_opens(saved):
    members = members_of(saved)
    data = json.loads(members["project.json"])
    data["format_version"] = FORMAT_VERSION + 1
    members["project.json"] = json.dumps(data).encode()
    error = refused(write_zip(saved, members), "newer Cellwright")
    assert f"format {FORMAT_VERSION + 1}" in str(error) and f"opens format {FORMAT_VERSION}" in str(
        error
    )


def v0_members(project: Project) -> dict[str, bytes]:
    """The project as the version-0 draft layout wrote it."""
    graph = graph_to_data(project.graph)
    for node in graph["nodes"]:
        node["x"], node["y"] = node.pop("position")
    graph["edges"] = [
        {"id": e["id"], "from": [e["src"], e["src_port"]], "to": [e["dst"], e["dst_port"]]}
        for e in graph["edges"]
    ]
    data = {"format_version": 0, "name": project.name, "graph": graph, "settings": project.training}
    params = {f"{n}/{k}": v for n, vals in project.param_values.items() for k, v in vals.items()}
    return {"project.json": json.dumps(data).encode(), "params.npz": npz_bytes(params)}


def test_a_version_0_file_is_migrated(tmp_path):
    graph, (a, b, c, d) = mlp()
    project = Project(graph=graph, name="old", training={"lr": 0.5})
    project.param_values[b.id] = {"weight": np.eye(3, 2, dtype=np.float32)}
    loaded = load_project(write_zip(tmp_path / "old.cwproj", v0_members(project)))
    assert_same_project(project, loaded)
    assert 0 in MIGRATIONS and sorted(MIGRATIONS) == list(range(FORMAT_VERSION))


def test_a_damaged_version_0_file_is_a_project_file_error(tmp_path):
    members = v0_members(Project(graph=mlp()[0]))
    data = json.loads(members["project.json"])
    data["graph"]["edges"][0]["from"] = "nonsense"
    members["project.json"] = json.dumps(data).encode()
    refused(write_zip(tmp_path / "old.cwproj", members), "could not be upgraded from file format 0")


def test_migrations_run_in_order_from_the_files_version(saved, monkeypatch):
    members = members_of(saved)
    data = json.loads(members["project.json"])
    data["format_version"] = 0
    data["settings"] = data.pop("training")
    members["project.json"] = json.dumps(data).encode()
    calls = []
    real = MIGRATIONS[0]

    def recorded(content):
        calls.append(content["format_version"])
        return real(content)

    monkeypatch.setitem(MIGRATIONS, 0, recorded)
    load_project(write_zip(saved, members))
    assert calls == [0]


def test_a_version_without_a_migration_is_too_old(saved, monkeypatch):
    monkeypatch.delitem(MIGRATIONS, 0)
    edit_json(saved, lambda d: d.update(format_version=0))
    refused(saved, "too old")


# ---- damaged and hostile files ------------------------------------------------------------


def test_missing_file_folder_and_non_zip(tmp_path):
    refused(tmp_path / "nope.cwproj", "There is no file")
    folder = tmp_path / "folder.cwproj"
    folder.mkdir()
    refused(folder, "is a folder")
    (tmp_path / "text.cwproj").write_text("hello")
    refused(tmp_path / "text.cwproj", "damaged or not a zip")
    (tmp_path / "empty.cwproj").write_bytes(b"")
    refused(tmp_path / "empty.cwproj", "damaged or not a zip")


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.9, 0.99])
def test_truncated_files(saved, keep):
    data = saved.read_bytes()
    saved.write_bytes(data[: int(len(data) * keep)])
    # cut near its end, the file may show the weights' own zip directory instead of its own
    refused(saved, "damaged|truncated|unexpected entry")


def test_a_flipped_byte_in_the_weights_is_caught(saved):
    data = bytearray(saved.read_bytes())
    data[data.index(b"\x93NUMPY") + 200] ^= 0xFF
    saved.write_bytes(bytes(data))
    refused(saved, "damaged")


@pytest.mark.parametrize("missing", ["project.json", "params.npz"])
def test_missing_members(saved, missing):
    members = members_of(saved)
    del members[missing]
    refused(write_zip(saved, members), f"has no {missing}")


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("notes.txt", "unexpected entry 'notes.txt'"),
        ("../evil.json", "unsafe name"),
        ("/etc/passwd", "unsafe name"),
        ("sub/../../x", "unsafe name"),
        ("..\\evil", "unsafe name"),
        ("C:/evil", "unsafe name"),
        ("project.json/", "unsafe name|unexpected"),
    ],
)
def test_unexpected_and_unsafe_member_names(saved, name, match):
    members = members_of(saved)
    members[name] = b"x"
    refused(write_zip(saved, members), match)


def test_duplicate_members(saved):
    members = members_of(saved)
    with zipfile.ZipFile(saved, "a") as zf, pytest.warns(UserWarning, match="Duplicate name"):
        zf.writestr("project.json", members["project.json"])
    refused(saved, "twice")


def test_an_encrypted_member(saved):
    data = bytearray(saved.read_bytes())
    # set the "encrypted" flag in the central directory entry of the first member
    directory = struct.unpack("<I", data[-6:-2])[0]
    assert data[directory : directory + 4] == b"PK\x01\x02"
    data[directory + 8] |= 0x1
    saved.write_bytes(bytes(data))
    refused(saved, "encrypted")


def test_a_zip_bomb_is_refused_before_inflating(saved):
    members = members_of(saved)
    members["project.json"] = b" " * (20 << 20) + members["project.json"]  # 20 MB of spaces
    path = write_zip(saved, members)
    assert path.stat().st_size < 1 << 20
    refused(path, "suspiciously well")


def test_size_caps(saved, monkeypatch):
    monkeypatch.setattr(project_file, "MAX_JSON_BYTES", 100)
    refused(saved, "'project.json' would unpack to")
    monkeypatch.setattr(project_file, "MAX_JSON_BYTES", 1 << 20)
    monkeypatch.setattr(project_file, "MAX_PARAMS_BYTES", 100)
    refused(saved, "'params.npz' would unpack to")
    monkeypatch.setattr(project_file, "MAX_FILE_BYTES", 100)
    refused(saved, "too large")


def test_a_bomb_inside_params_npz(saved, project):
    node_id = next(iter(project.param_values))
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as zf:
        buffer = io.BytesIO()
        np.save(buffer, np.zeros(3 << 20, np.float32))
        zf.writestr(f"{node_id}/weight.npy", buffer.getvalue())
    members = members_of(saved)
    members["params.npz"] = inner.getvalue()
    refused(write_zip(saved, members, zipfile.ZIP_STORED), "would unpack to")


def replace_params(saved, project, entries: dict[str, bytes]):
    members = members_of(saved)
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    members["params.npz"] = inner.getvalue()
    return write_zip(saved, members)


def npy(array, **kwargs) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, **kwargs)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("array", "match"),
    [
        (np.array([{"a": 1}, None], dtype=object), "type object"),
        (np.array(["text"]), "not plain numbers"),
        (np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]), "not plain numbers"),
        (np.array([1 + 2j]), "not plain numbers"),
        (np.array(["2020-01-01"], dtype="datetime64[D]"), "not plain numbers"),
    ],
)
def test_arrays_that_are_not_plain_numbers(saved, project, array, match):
    node_id = next(iter(project.param_values))
    path = replace_params(saved, project, {f"{node_id}/weight.npy": npy(array, allow_pickle=True)})
    refused(path, match)


def test_an_array_whose_header_lies_about_its_size(saved, project):
    node_id = next(iter(project.param_values))
    data = npy(np.zeros(4, np.float32))
    assert b"(4,)" in data

    def load_with(entry: bytes):
        return refused(replace_params(saved, project, {f"{node_id}/w.npy": entry}), "damaged|match")

    load_with(data.replace(b"(4,)", b"(9,)"))
    load_with(data.replace(b"(4,)", b"(9999999999999,)"[:4]))
    load_with(data.replace(b"'shape': (4,), }", b"'shape': (10**12,), }"))
    load_with(data[:-1])
    load_with(b"\x93NUMPY\x09\x00")
    load_with(b"not numpy")


@pytest.mark.parametrize(
    ("name", "match"),
    [
        ("nonode/weight.npy", "not in the graph"),
        ("weight.npy", "unexpected entry"),
        ("../x/weight.npy", "unsafe name"),
        ("{id}/weight.pkl", "unexpected entry"),
        ("{id}/we ight.npy", "unexpected entry"),
    ],
)
def test_bad_names_in_params_npz(saved, project, name, match):
    node_id = next(iter(project.param_values))
    path = replace_params(saved, project, {name.format(id=node_id): npy(np.ones(2))})
    refused(path, match)


def edit_json(saved, change) -> None:
    members = members_of(saved)
    data = json.loads(members["project.json"])
    change(data)
    members["project.json"] = json.dumps(data).encode()
    write_zip(saved, members)


def first_node(data):
    return data["graph"]["nodes"][0]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.update(name=5), "project.name must be text"),
        (lambda d: d.update(format_version="1"), "no valid format_version"),
        (lambda d: d.update(format_version=True), "no valid format_version"),
        (lambda d: d.pop("format_version"), "no valid format_version"),
        (lambda d: d.pop("graph"), "missing 'graph'"),
        (lambda d: d.update(extra=1), "unexpected entry 'extra'"),
        (lambda d: d["graph"].update(nodes={}), "nodes must be a list"),
        (lambda d: first_node(d).update(position="0,0"), "position must be a list"),
        (lambda d: first_node(d).update(position=[0]), "exactly 2"),
        (lambda d: first_node(d).update(position=[0, True]), "must be a number"),
        (lambda d: first_node(d).update(id="../../x"), "must be an id"),
        (lambda d: first_node(d).update(name=""), "1 to 64 characters"),
        (lambda d: first_node(d)["params"].update(x={"y": [1, {"z": None}]}), "not valid|not dict"),
        (lambda d: d["graph"]["nodes"].append(dict(first_node(d))), "reuses the id"),
        (lambda d: d["graph"]["edges"][0].update(src="someoneelse"), "not in this graph"),
        (lambda d: d["graph"]["edges"][0].update(id=first_node(d)["id"]), "reuses the id"),
        (lambda d: d["hooks"][0].update(target="gone"), "names nothing"),
        (lambda d: d["hooks"][0].update(kind="sideways"), "must be one of"),
        (lambda d: d["hooks"].append(d["hooks"][0]), "reuses the id"),
        (lambda d: d["training"].update(deep=_nested(100)), "nested too deeply"),
        (lambda d: d["graph"]["nodes"][1].update(name="input1"), "already named 'input1'"),
        (lambda d: d["graph"]["nodes"][1]["subgraph"]["nodes"].pop(0), "not in this graph"),
        (lambda d: d["graph"]["nodes"][1].update(type="Dense"), "unexpected|subgraph"),
        (lambda d: d["graph"]["edges"][0].update(dst_port="nope"), "no input 'nope'"),
        (lambda d: d["graph"]["nodes"].append(_port_node()), "made by grouping"),
        (lambda d: d["graph"]["edges"][0].update(src=d["graph"]["nodes"][1]["id"]), "itself"),
    ],
)
def test_wrong_project_json_is_refused_with_a_reason(saved, change, match):
    edit_json(saved, change)
    refused(saved, match)


def _nested(depth):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _port_node():
    return {
        "id": "p0",
        "type": "SubgraphInput",
        "name": "in",
        "position": [0, 0],
        "inputs": [],
        "outputs": ["out"],
        "params": {},
    }


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (b"\xff\xfe not utf-8", "unreadable"),
        (b'{"format_version": NaN}', "unreadable"),
        (b'{"a": 1, "a": 2}', "unreadable"),
        (b"[" * 100_000 + b"]" * 100_000, "unreadable|not an object"),
        (b"[1, 2]", "not an object"),
        (b'{"format_version": 1', "unreadable"),
        (b'{"format_version": ' + b"9" * 5000 + b"}", "unreadable"),
    ],
)
def test_project_json_that_is_not_json(saved, text, match):
    members = members_of(saved)
    members["project.json"] = text
    refused(write_zip(saved, members), match)
