"""Generators of project files, valid and hostile, for tests/app/io/test_project_fuzz.py.

The kinds of damage are listed in that file's docstring.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import struct
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from app.document import Hook, Project, editing
from app.io.project_file import FORMAT_VERSION, save_project
from app.io.project_schema import MAX_HOOKS
from app.session import TrainingSession
from tests.app.session.session_samples import chain

# ---- the valid project every case starts from ------------------------------------------


def base_project() -> Project:
    """Input → Dense → [Dense → ReLU] (a composite) → Dense → Output, with weights, hooks,
    a capture history, a frozen Parameter and training settings: every part of a file."""
    graph = chain(
        ("Input", {"shape": (2,)}),
        ("Dense", {"in_channels": 2, "out_channels": 4}),
        ("Dense", {"in_channels": 4, "out_channels": 4}),
        ("ReLU", {}),
        ("Dense", {"in_channels": 4, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    dense = [graph.node_named(f"dense{i}") for i in (1, 2, 3)]
    edge = graph.edge_into(dense[1].id, "in")
    editing.group(graph, [dense[1].id, graph.node_named("relu1").id], definition="Block")
    hook = Hook("forward", dense[0].id)
    project = Project(
        graph=graph, name="fuzz base",
        training={"dataset": {"builtin": "moons", "options": {"n_samples": 40}},
                  "epochs": 1, "batch_size": 8, "learning_rate": 0.1},
        hooks=[hook, Hook("hook_backward", edge.id)],
        view={"zoom": 1.0}, metadata={"notes": "ünïcödé"},
        frozen={dense[2].id: {"bias"}},
    )  # fmt: skip
    rng = np.random.default_rng(0)
    for node in dense:
        fan_in, fan_out = node.params["in_channels"], node.params["out_channels"]
        project.param_values[node.id] = {
            "weight": rng.standard_normal((fan_out, fan_in)).astype(np.float32),
            "bias": np.zeros(fan_out, np.float32),
        }
    project.hook_history[hook.id] = {"history": np.zeros((3, 4), np.float32),
                                     "total": np.array(3)}  # fmt: skip
    # Three steps into a run of one epoch: every field of the saved progress is there
    # (counters, the epoch in progress, generator, optimizer step and arrays, curves).
    TrainingSession(project).run(epochs=1, steps=3)
    return project


def _base_file() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "base.cwproj"
        save_project(base_project(), path)
        return path.read_bytes()


VALID = _base_file()
with zipfile.ZipFile(io.BytesIO(VALID)) as _zf:
    MEMBERS = {name: _zf.read(name) for name in _zf.namelist()}
CONTENT = json.loads(MEMBERS["project.json"])
NODE_IDS = [n["id"] for n in CONTENT["graph"]["nodes"]]  # the top level's
with zipfile.ZipFile(io.BytesIO(MEMBERS["params.npz"])) as _zf:
    PARAM_NAMES = _zf.namelist()  # "<dense node id>/weight.npy", …
DENSE_IDS = sorted({name.split("/")[0] for name in PARAM_NAMES})  # at every level


@dataclass(frozen=True)
class Case:
    """A generated file and what was done to make it (what a failure report shows)."""

    how: str
    data: bytes
    train: bool = False  # also run `cellwright train` on it (damaged training progress)

    def __repr__(self) -> str:
        return f"Case({self.how[:300]!r}, {len(self.data):,} bytes)"

    def _repr_pretty_(self, printer, cycle) -> None:  # what Hypothesis prints
        printer.text(repr(self))


def case(how: str) -> Callable[[bytes], Case]:
    return lambda data: Case(how, data)


def zipped(members: list[tuple[str, bytes]] | dict[str, bytes],
           compression: int = zipfile.ZIP_DEFLATED) -> bytes:  # fmt: skip
    buffer = io.BytesIO()
    items = members.items() if isinstance(members, dict) else members
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w", compression) as zf:
        warnings.simplefilter("ignore")  # "Duplicate name": wanted here
        for name, data in items:
            entry = zipfile.ZipInfo(name)  # (writestr refuses an empty name given as text)
            entry.compress_type = compression
            zf.writestr(entry, data)
    return buffer.getvalue()


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


# ---- a pickle that must never run --------------------------------------------------------

PICKLES_RUN: list[str] = []


def _ran(what: str) -> None:
    PICKLES_RUN.append(what)


class Booby:
    """Unpickling it calls `_ran`: a file that got an object array unpickled would show."""

    def __reduce__(self):
        return (_ran, ("an object array was unpickled",))


# ---- damaged bytes -------------------------------------------------------------------------


def damaged(data: bytes) -> st.SearchStrategy[bytes]:
    """Truncations, flipped bytes and spliced runs of `data`."""
    n = len(data)
    truncated = st.integers(0, n - 1).map(lambda k: data[:k])

    def flip(changes):
        out = bytearray(data)
        for at, mask in changes:
            out[at] ^= mask
        return bytes(out)

    flipped = st.lists(st.tuples(st.integers(0, n - 1), st.integers(1, 255)),
                       min_size=1, max_size=8).map(flip)  # fmt: skip
    spliced = st.tuples(st.integers(0, n), st.integers(0, 64), st.binary(max_size=64)).map(
        lambda t: data[: t[0]] + t[2] + data[t[0] + t[1] :]
    )
    return truncated | flipped | spliced


def byte_cases() -> st.SearchStrategy[Case]:
    return damaged(VALID).map(case("damaged bytes of the whole file"))


# ---- replaced members ----------------------------------------------------------------------


@st.composite
def replaced_members(draw) -> Case:
    members = dict(MEMBERS)
    name = draw(st.sampled_from(sorted(MEMBERS)))
    other = draw(st.sampled_from(sorted(MEMBERS)))
    members[name] = draw(st.one_of(
        st.binary(max_size=200), st.just(b""), st.just(MEMBERS[other]), st.just(VALID),
        damaged(MEMBERS[name]),
        st.just(npy(np.zeros(3))), st.just(b'{"format_version": 1}'),
    ))  # fmt: skip
    compression = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    return Case(f"{name} replaced", zipped(members, compression))


# ---- project.json --------------------------------------------------------------------------

HUGE = [10**400, -(10**400), 2**63, 2**64, -(2**63) - 1, 10**18, 10**9, 10**6, 10**5, 10**4,
        1e308, -1e308, 5e-324, 0, -1]  # fmt: skip
ODD_TEXT = ["\ud800", "a\udfffb", "\udc80", "Composite", "Dense", "Conv9d", "SubgraphInput",
            "SubgraphOutput", "Input", "Output", "HookBackward", "in", "out", "", " ", "../..",
            "NaN", "x" * 20_000, "名前", "relu1", "dense1", "🙂"]  # fmt: skip
DEPTHS = [30, 63, 65, 200, 3_000, 100_000]
DEEP = "\x00deep{}\x00"  # a placeholder json.dumps escapes; replaced by real nesting


def deep(n: int) -> str:
    return DEEP.format(n)


scalars = (st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(HUGE)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6)
           | st.sampled_from(ODD_TEXT))  # fmt: skip
values = st.recursive(
    scalars | st.sampled_from(DEPTHS).map(deep),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.text(max_size=4) | st.sampled_from(["\ud800", "id", "type", "nodes"]), inner,
        max_size=3),
    max_leaves=6,
)  # fmt: skip


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from paths(v, (*prefix, i))


def holder(content, path):
    for key in path[:-1]:
        content = content[key]
    return content


PATHS = list(paths(CONTENT))[1:]
NUMBER_PATHS = [p for p in PATHS if type(holder(CONTENT, p)[p[-1]]) in (int, float)]
TEXT_PATHS = [p for p in PATHS if isinstance(holder(CONTENT, p)[p[-1]], str)]
SETTINGS = ["dataset", "loss", "optimizer", "optimizer_options", "learning_rate", "batch_size",
            "epochs", "validation_fraction", "seed", "history_steps", "state"]  # fmt: skip
STATE_PATHS = [p for p in PATHS if p[:2] == ("training", "state")]
STATE_DAMAGE = [None, 0, 5, -1, -(2**64), 2**53 + 1, 10**18, 1e308, -1e308, 0.5, True, "3",
                [], [None], [1, 2], {}, {"int": "-5"}, {"int": "1e5"}, {"int": str(2**128)},
                {"int": ""}, [None] * 6, [[None] * 6], float("nan")]  # fmt: skip


def damage_state(content, pick, draw):
    """Something in the saved progress replaced by a value of the wrong kind or size: a
    whole part (history, rng, optimizer, a table), a row, a count or a generator number."""
    paths = STATE_PATHS + [("training", "state", "history", table, draw(st.integers(0, 3)))
                           for table in ("steps", "epochs")]  # fmt: skip
    value = draw(st.sampled_from(STATE_DAMAGE) | values)  # NaN: json writes it, loading refuses
    set_value(content, pick(paths), value)



def set_value(content, path, value):
    holder(content, path)[path[-1]] = value


def delete(content, path):
    del holder(content, path)[path[-1]]


def add_field(content, path, key, value):
    target = holder(content, path + ("x",))  # the container at `path` itself
    if isinstance(target, dict):
        target[key] = value
    elif isinstance(target, list):
        target.append(value)


def graphs_of(content):
    """Every graph in the content (top level and composites' insides)."""
    todo = [content.get("graph")]
    while todo:
        graph = todo.pop()
        if isinstance(graph, dict) and isinstance(graph.get("nodes"), list):
            yield graph
            todo += [n.get("subgraph") for n in graph["nodes"] if isinstance(n, dict)]


def add_edge(content, pick):
    """An edge between two nodes of one graph: often a loop, a second input, a self-loop."""
    graph = pick(list(graphs_of(content)))
    nodes = [n for n in graph["nodes"] if isinstance(n, dict)]
    src, dst = pick(nodes), pick(nodes)
    graph.setdefault("edges", []).append({
        "id": f"extra{len(graph.get('edges', []))}", "src": src.get("id"),
        "src_port": pick(list(src.get("outputs") or ["out"])), "dst": dst.get("id"),
        "dst_port": pick(list(dst.get("inputs") or ["in"])),
    })  # fmt: skip


def copy_node(content, pick, same_id):
    graph = pick(list(graphs_of(content)))
    node = copy.deepcopy(pick(graph["nodes"]))
    if not same_id and isinstance(node, dict):
        node["id"] = f"copy{len(graph['nodes'])}"
    graph["nodes"].append(node)


def many_hooks(content, count):
    target = NODE_IDS[1]
    content["hooks"] = [{"id": f"h{i}", "kind": "forward", "target": target,
                         "pane": "histogram", "settings": {}} for i in range(count)]  # fmt: skip


# Sizes of a square network that compiles: 3 Dense layers of size² weights each.
LAYER_SIZES = [2, 64, 1_000, 5_000, 10_000, 10**6, 10**9]


def big_layers(content, size):
    """Every Dense size→size and the Input (size,): a network that holds 3·size² weights
    (the saved weights no longer fit and are left out)."""
    for graph in graphs_of(content):
        for node in graph["nodes"]:
            if isinstance(node, dict) and node.get("type") == "Dense":
                node["params"] = {"in_channels": size, "out_channels": size}
            elif isinstance(node, dict) and node.get("type") == "Input":
                node["params"] = {"shape": [size], "dtype": "float32"}


def many_nodes(content, count):
    graph = content["graph"]
    graph["nodes"] += [{"id": f"many{i}", "type": "ReLU", "name": f"many{i}",
                        "position": [i, i], "inputs": ["in"], "outputs": ["out"], "params": {}}
                       for i in range(count)]  # fmt: skip


@st.composite
def mutated_json(draw) -> Case:
    content = copy.deepcopy(CONTENT)
    done = []

    def pick(seq):
        chosen = draw(st.sampled_from(seq)) if seq else None
        done.append(repr(chosen)[:80])
        return chosen

    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["set", "set", "number", "text", "training", "delete",
                                     "add", "edge", "copy", "type", "version", "hooks", "big",
                                     "nodes", "state", "state"]))  # fmt: skip
        done.append(f"; {kind}")
        with contextlib.suppress(KeyError, IndexError, TypeError, AttributeError):
            if kind == "set":
                set_value(content, pick(PATHS), draw(values))
            elif kind == "number":
                set_value(content, pick(NUMBER_PATHS), draw(st.sampled_from(HUGE) | scalars))
            elif kind == "text":
                set_value(content, pick(TEXT_PATHS), draw(st.sampled_from(ODD_TEXT) | scalars))
            elif kind == "training":
                content["training"][pick(SETTINGS)] = draw(values)
            elif kind == "delete":
                delete(content, pick(PATHS))
            elif kind == "add":
                add_field(content, pick([(), *PATHS]), draw(st.sampled_from(
                    ["extra", "id", "subgraph", "definition", "x", "\ud800"])), draw(values))
            elif kind == "edge":
                add_edge(content, pick)
            elif kind == "copy":
                copy_node(content, pick, draw(st.booleans()))
            elif kind == "type":
                node = pick([n for g in graphs_of(content) for n in g["nodes"]])
                node["type"] = draw(st.sampled_from(ODD_TEXT) | st.text(max_size=8))
            elif kind == "version":
                content["format_version"] = draw(st.sampled_from(
                    [FORMAT_VERSION + 1, FORMAT_VERSION + 99, 0, -1, 10**400, "1", None, 1.0]))
            elif kind == "hooks":
                many_hooks(content, draw(st.sampled_from([MAX_HOOKS, MAX_HOOKS + 1, 2_000])))
            elif kind == "big":
                big_layers(content, draw(st.sampled_from(LAYER_SIZES)))
            elif kind == "state":
                damage_state(content, pick, draw)
            else:
                many_nodes(content, draw(st.sampled_from([10, 1_000])))
    text = json.dumps(content)
    for n in DEPTHS:
        text = text.replace(json.dumps(deep(n)), "[" * n + "]" * n)
    how = "project.json:" + " ".join(done)[1:]
    train = any(step == "; state" for step in done)
    return Case(how, zipped({**MEMBERS, "project.json": text.encode()}), train)


@cache
def big_networks() -> list[bytes]:
    """The base file with its network made square at each of LAYER_SIZES (and nothing else
    changed): the files of 10,000 or more ask for gigabytes unless a cap refuses them."""
    files = []
    for size in LAYER_SIZES:
        content = copy.deepcopy(CONTENT)
        big_layers(content, size)
        files.append(zipped({**MEMBERS, "project.json": json.dumps(content).encode()}))
    return files


# ---- params.npz and captures.npz -----------------------------------------------------------


def lying(array: np.ndarray, shape: bytes) -> bytes:
    data = npy(array)
    old = repr(array.shape).encode()
    return data.replace(b"'shape': " + old, b"'shape': " + shape, 1)


@cache
def arrays() -> list[bytes]:
    """.npy contents, good and bad."""
    return [
        npy(np.zeros((4, 2), np.float32)),  # the right shape for dense1's weight
        npy(np.zeros((5, 5), np.float32)),  # a wrong shape
        npy(np.full((4, 2), np.nan, np.float32)), npy(np.full(4, np.inf)),
        npy(np.zeros((4, 2), ">f8")), npy(np.asfortranarray(np.ones((4, 2)))),
        npy(np.ones((4, 2), np.float16)), npy(np.array(3.0)), npy(np.zeros((0, 2))),
        npy(np.ones(4, bool)), npy(np.arange(4, dtype=np.uint64)),
        npy(np.array([Booby(), None], dtype=object)),
        npy(np.array(["text"])), npy(np.zeros(2, dtype=[("a", "f4"), ("b", "i4")])),
        npy(np.array([1 + 2j])), npy(np.array(["2020-01-01"], dtype="datetime64[D]")),
        lying(np.zeros((1, 3)), b"(1099511627776, 3)"),  # 2**40 rows in a 500-byte file
        lying(np.zeros(4), b"(10**12,)"), lying(np.zeros(4), b"(-4,)"),
        lying(np.zeros(4), b"(9,)"), npy(np.zeros(4))[:-3], b"\x93NUMPY\x03\x00",
        b"\x93NUMPY\x01\x00\xff\xff" + b"{" * 100, b"not an array",
    ]


@st.composite
def npz_member(draw, names: list[str]) -> bytes:
    owners = [*NODE_IDS, *DENSE_IDS, "nonode", "../..", ""]
    entries = []
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.one_of(
            st.sampled_from(names),
            st.builds("{}/{}.npy".format, st.sampled_from(owners),
                      st.sampled_from(["weight", "bias", "history", "total", "we ight", "_x"])),
            st.sampled_from(["../evil.npy", "/abs.npy", "a\\b.npy", "C:/x.npy", "x/../y.npy",
                             "weight.npy", "x/w.pkl", "", "dir/"]),
        ))  # fmt: skip
        entries.append((name, draw(st.sampled_from(arrays()))))
    if draw(st.booleans()) and entries:
        entries.append(entries[0])  # the same name twice
    return zipped(entries, draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])))


@st.composite
def bad_arrays(draw) -> Case:
    member = draw(st.sampled_from(["params.npz", "captures.npz"]))
    names = PARAM_NAMES if member == "params.npz" else [f"{h['id']}/history.npy"
                                                         for h in CONTENT["hooks"]]
    members = {**MEMBERS, member: draw(npz_member(names))}
    return Case(f"{member} rebuilt", zipped(members, zipfile.ZIP_STORED))


# ---- the outer zip ------------------------------------------------------------------------


@cache
def bombs() -> list[bytes]:
    """Files whose members inflate far beyond their size (built once: compressing takes time)."""
    spaces = b" " * (40 << 20) + MEMBERS["project.json"]
    inner = zipped({f"{DENSE_IDS[0]}/weight.npy": npy(np.zeros(4 << 20, np.float32))})
    return [
        zipped({**MEMBERS, "project.json": spaces}),
        zipped({**MEMBERS, "params.npz": inner}, zipfile.ZIP_STORED),
        zipped({**MEMBERS, "params.npz": inner}),  # a bomb inside a bomb
        zipped({**MEMBERS, "captures.npz": b"\x00" * (30 << 20)}),
    ]


def flag_encrypted(data: bytes, which: int) -> bytes:
    out = bytearray(data)
    directory = struct.unpack("<I", out[-6:-2])[0]
    for _ in range(which):
        directory = out.find(b"PK\x01\x02", directory + 4)
    if directory >= 0 and out[directory:directory + 4] == b"PK\x01\x02":
        out[directory + 8] |= 0x1
    return bytes(out)


@st.composite
def zip_structure(draw) -> Case:
    kind = draw(st.sampled_from(["names", "duplicate", "missing", "compression", "bomb",
                                 "encrypted", "prefix", "nested"]))  # fmt: skip
    return Case(f"zip: {kind}", draw(zip_variant(kind)))


@st.composite
def zip_variant(draw, kind: str) -> bytes:
    members = list(MEMBERS.items())
    if kind == "names":
        name = draw(st.sampled_from(["../evil.json", "/etc/passwd", "sub/../../x", "..\\evil",
                                     "C:/evil", "project.json/", "notes.txt", "a\x01b",
                                     "./project.json", "project.json\x00x", "PROJECT.JSON"]))
        members.append((name, draw(st.binary(max_size=20))))
    elif kind == "duplicate":
        members.append(draw(st.sampled_from(members)))
    elif kind == "missing":
        members.pop(draw(st.integers(0, len(members) - 1)))
    elif kind == "compression":
        compression = draw(st.sampled_from([zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]))
        return zipped(members, compression)
    elif kind == "bomb":
        return draw(st.sampled_from(bombs()))
    elif kind == "encrypted":
        return flag_encrypted(VALID, draw(st.integers(0, 2)))
    elif kind == "prefix":
        return draw(st.binary(min_size=1, max_size=64)) + VALID
    else:
        members = [("project.json", MEMBERS["project.json"]), ("params.npz", VALID)]
    return zipped(members)


def cases() -> st.SearchStrategy[Case]:
    big = st.sampled_from(range(len(LAYER_SIZES))).map(
        lambda i: Case(f"square network of {LAYER_SIZES[i]:,}", big_networks()[i]))
    return st.one_of(byte_cases(), replaced_members(), mutated_json(), mutated_json(),
                     bad_arrays(), zip_structure(), big)
