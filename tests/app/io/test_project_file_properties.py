"""Properties: random projects round-trip exactly; damaged files only give ProjectFileError."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from app.document import DocumentError, Graph, Hook, Node, Project, editing
from app.document.data import graph_from_data, graph_to_data, restore_graph
from app.io.param_check import node_shapes
from app.io.project_file import ProjectFileError, load_project, save_project
from tests.app.document.document_samples import assert_same_project, canonical, mlp

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

identifiers = st.builds(str.__add__, st.sampled_from("abxyz_"), st.text("abxyz_019", max_size=6))
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
param_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3), max_leaves=6)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
coordinates = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def graphs(draw) -> Graph:
    """A random valid graph built through the edit API, sometimes with (nested) composites."""
    graph = Graph()
    for _ in range(draw(st.integers(0, 7))):
        inputs = [f"in{i}" for i in range(draw(st.integers(0, 2)))]
        outputs = [f"out{i}" for i in range(draw(st.integers(0, 2)))]
        name = draw(st.one_of(st.just(""), identifiers))
        node = Node(
            draw(st.sampled_from(["Dense", "Conv2d", "Add", "Input", "Output", "ReLU"])),
            "" if graph.node_named(name) else name,
            inputs=inputs,
            outputs=outputs,
            params=draw(st.dictionaries(identifiers, param_values, max_size=3)),
            position=(draw(coordinates), draw(coordinates)),
        )
        graph.add_node(node)
    nodes = list(graph.nodes.values())
    for i, a in enumerate(nodes):
        for b in nodes[i + 1 :]:  # forward edges only: never a loop
            free = [p for p in b.inputs if graph.edge_into(b.id, p) is None]
            if a.outputs and free and draw(st.booleans()):
                graph.connect(
                    a.id, draw(st.sampled_from(a.outputs)), b.id, draw(st.sampled_from(free))
                )
    for _ in range(draw(st.integers(0, 2))):
        ids = list(graph.nodes)
        if ids:
            chosen = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3, unique=True))
            with contextlib.suppress(DocumentError):  # e.g. a node between its parts
                editing.group(graph, chosen, definition=draw(st.sampled_from(["Block", "Res"])))
    return graph


@st.composite
def projects(draw) -> Project:
    graph = draw(graphs())
    project = Project(
        graph=graph,
        name=draw(st.text(max_size=20)),
        training=draw(st.dictionaries(st.text(max_size=5), json_values, max_size=3)),
        view=draw(st.dictionaries(st.text(max_size=5), json_values, max_size=2)),
        metadata=draw(st.dictionaries(st.text(max_size=5), json_values, max_size=2)),
    )
    node_ids = [n.id for _, n in graph.walk()]
    edge_ids = sorted(project.edge_ids())
    if node_ids:
        for node_id in draw(st.lists(st.sampled_from(node_ids), max_size=4, unique=True)):
            shapes = node_shapes(graph.find(node_id)[1])
            if shapes is None:  # Parameters only code knows: any arrays
                project.param_values[node_id] = draw(
                    st.dictionaries(identifiers, arrays(), min_size=1, max_size=3)
                )
            elif shapes:  # arrays of the node's Parameters' shapes, in any number type
                names = draw(st.lists(st.sampled_from(sorted(shapes)), min_size=1, unique=True))
                project.param_values[node_id] = {
                    name: draw(arrays(shapes[name])) for name in names
                }
            project.hooks.append(Hook(draw(st.sampled_from(["forward", "backward"])), node_id))
    if edge_ids:
        project.hooks.append(Hook("hook_backward", draw(st.sampled_from(edge_ids))))
    return project


def arrays(shape: tuple[int, ...] | None = None):
    dtypes = st.sampled_from(["<f2", "<f4", ">f4", "<f8", "<i4", "<i8", "|u1", "|b1", "<u8"])
    shapes = hnp.array_shapes(min_dims=0, max_dims=3, max_side=3) if shape is None \
        else st.just(shape)  # fmt: skip
    return dtypes.flatmap(lambda dtype: hnp.arrays(np.dtype(dtype), shapes))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("properties")


@FAST
@given(project=projects())
def test_random_projects_round_trip_exactly(folder, project):
    path = folder / "random.cwproj"
    save_project(project, path)
    loaded = load_project(path)
    assert_same_project(project, loaded)
    assert canonical(loaded.graph) == canonical(project.graph)


@FAST
@given(graph=graphs())
def test_random_graphs_restore_from_any_snapshot(graph):
    snapshot = graph_to_data(graph)
    other = graph_from_data(snapshot)
    assert canonical(other) == canonical(graph)
    for node in list(other.nodes.values())[:2]:
        other.remove_node(node.id)
    restore_graph(other, snapshot)
    assert canonical(other) == canonical(graph)


# ---- damaged bytes ------------------------------------------------------------------------


def _valid_file() -> bytes:
    graph, (a, b, c, d) = mlp()
    editing.group(graph, [b.id, c.id])
    project = Project(graph=graph, training={"lr": 0.1}, hooks=[Hook("forward", b.id)])
    project.param_values[b.id] = {"weight": np.arange(6, dtype=np.float32).reshape(3, 2)}
    project.param_values[c.id] = {"bias": np.zeros(8)}  # a Dense of the default 1 → 8
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "valid.cwproj"
        save_project(project, path)
        return path.read_bytes()


VALID = _valid_file()
with zipfile.ZipFile(io.BytesIO(VALID)) as _zf:
    MEMBERS = {name: _zf.read(name) for name in _zf.namelist()}


def loads_or_refuses(folder, data: bytes) -> None:
    """Loading may succeed or raise ProjectFileError; anything else fails the test."""
    path = folder / "damaged.cwproj"
    path.write_bytes(data)
    try:
        project = load_project(path)
    except ProjectFileError as exc:
        assert str(exc)
    else:
        assert isinstance(project, Project)


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def damage(data: bytes):
    """Truncations, flipped bytes and inserted or deleted runs of `data`."""
    n = len(data)
    truncated = st.integers(0, n - 1).map(lambda k: data[:k])
    flipped = st.lists(
        st.tuples(st.integers(0, n - 1), st.integers(1, 255)), min_size=1, max_size=6
    )

    def flip(changes):
        out = bytearray(data)
        for at, mask in changes:
            out[at] ^= mask
        return bytes(out)

    spliced = st.tuples(st.integers(0, n), st.integers(0, 16), st.binary(max_size=16)).map(
        lambda t: data[: t[0]] + t[2] + data[t[0] + t[1] :]
    )
    return truncated | flipped.map(flip) | spliced


MANY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@MANY
@given(data=damage(VALID))
def test_damaged_file_bytes_give_only_project_file_errors(folder, data):
    loads_or_refuses(folder, data)


@MANY
@given(text=damage(MEMBERS["project.json"]))
def test_damaged_project_json_in_a_sound_zip_gives_only_project_file_errors(folder, text):
    loads_or_refuses(folder, zipped({**MEMBERS, "project.json": text}))


@MANY
@given(npz=damage(MEMBERS["params.npz"]))
def test_damaged_params_npz_in_a_sound_zip_gives_only_project_file_errors(folder, npz):
    loads_or_refuses(folder, zipped({**MEMBERS, "params.npz": npz}))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


CONTENT = json.loads(MEMBERS["project.json"])
PATHS = list(_paths(CONTENT))[1:]


@MANY
@given(path=st.sampled_from(PATHS), value=json_values | st.sampled_from(["out", "in", "Composite"]))
def test_wrong_values_anywhere_in_project_json_give_only_project_file_errors(folder, path, value):
    content = json.loads(MEMBERS["project.json"])
    holder = content
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    loads_or_refuses(folder, zipped({**MEMBERS, "project.json": json.dumps(content).encode()}))
