"""The layout of project.json, a small checker for it, and conversion to and from a Project."""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from typing import Any

from app.document import Hook, Project
from app.document.data import MAX_NESTING, graph_from_data, graph_to_data
from app.document.project import EDGE_HOOK_KINDS, HOOK_KINDS

Check = Callable[[Any, str], None]

FORMAT_VERSION = 1  # the layout this module describes

MAX_NODES = 100_000
MAX_LIST = 1_000_000
MAX_HOOKS = 256  # each hook keeps capture buffers while training: a bound on that memory
MAX_JSON_DEPTH = 64
_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON's "\ud800" escapes make these, UTF-8 can't


class SchemaError(Exception):
    """Where project.json breaks its layout and how."""


# ---- checks: each is f(value, where) and raises SchemaError -----------------------------


def text(max_len: int = 10_000, min_len: int = 0) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, str):
            raise SchemaError(f"{where} must be text, not {_kind(value)}")
        if not min_len <= len(value) <= max_len:
            raise SchemaError(f"{where} must be {min_len} to {max_len} characters long")
        unicode_text(value, where)

    return check


def unicode_text(value: str, where: str) -> None:
    """Text that UTF-8 can hold: no lone surrogates (else saving it, or printing it, fails)."""
    if not value.isascii() and _SURROGATE.search(value):
        raise SchemaError(
            f"{where} holds a character that is not valid Unicode (a lone surrogate, "
            f"{_SURROGATE.search(value).group()!r})"
        )


def _key(key: Any, where: str) -> None:
    if not isinstance(key, str):  # JSON keys always are; checked for data from elsewhere
        raise SchemaError(f"{where} has a key that is not text ({_kind(key)})")
    unicode_text(key, f"a key of {where}")


def integer(value: Any, where: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise SchemaError(f"{where} must be a whole number, not {_kind(value)}")
    _in_float_range(value, where)


def number(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SchemaError(f"{where} must be a number, not {_kind(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise SchemaError(f"{where} must be finite")
    _in_float_range(value, where)


def _in_float_range(value: int | float, where: str) -> None:
    """Whole numbers too large for a float are refused: nothing in a project needs one, and
    whatever turns one into a float (a position, a learning rate) would fail later."""
    if isinstance(value, int) and not -_FLOAT_MAX <= value <= _FLOAT_MAX:
        digits = len(str(abs(value)))
        raise SchemaError(f"{where} is a number too large to use ({digits} digits)")


_FLOAT_MAX = int(sys.float_info.max)


def ident(value: Any, where: str) -> None:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise SchemaError(f"{where} must be an id (1-64 letters, digits, _ or -)")


def one_of(*choices: str) -> Check:
    def check(value: Any, where: str) -> None:
        if value not in choices:
            raise SchemaError(f"{where} must be one of {', '.join(choices)}, not {value!r}")

    return check


def list_of(item: Check, max_len: int = MAX_LIST, exact: int | None = None) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise SchemaError(f"{where} must be a list, not {_kind(value)}")
        if exact is not None and len(value) != exact:
            raise SchemaError(f"{where} must hold exactly {exact} items")
        if len(value) > max_len:
            raise SchemaError(f"{where} holds more than {max_len:,} items")
        for i, v in enumerate(value):
            item(v, f"{where}[{i}]")

    return check


def map_of(item: Check, max_len: int = MAX_LIST) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise SchemaError(f"{where} must be an object, not {_kind(value)}")
        if len(value) > max_len:
            raise SchemaError(f"{where} holds more than {max_len:,} entries")
        for k, v in value.items():
            _key(k, where)
            item(v, f"{where}.{k}")

    return check


def record(required: dict[str, Check], optional: dict[str, Check] | None = None) -> Check:
    optional = optional or {}

    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise SchemaError(f"{where} must be an object, not {_kind(value)}")
        for key in required:
            if key not in value:
                raise SchemaError(f"{where} is missing '{key}'")
        for key, v in value.items():
            rule = required.get(key) or optional.get(key)
            if rule is None:  # (a key the layout names is plain text: only others are checked)
                _key(key, where)
                raise SchemaError(f"{where} has an unexpected entry '{key}'")
            rule(v, f"{where}.{key}")

    return check


def json_value(value: Any, where: str, depth: int = 0) -> None:
    """Any JSON value (finite numbers only), nested at most MAX_JSON_DEPTH deep."""
    if depth > MAX_JSON_DEPTH:
        raise SchemaError(f"{where} is nested too deeply")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, str):
        unicode_text(value, where)
    elif isinstance(value, int | float):
        number(value, where)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            json_value(v, f"{where}[{i}]", depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            _key(k, where)
            json_value(v, f"{where}.{k}", depth + 1)
    else:
        raise SchemaError(f"{where} must be a plain value, not {_kind(value)}")


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "text", bool: "true/false", type(None): "null"}
    return names.get(
        type(value), "a number" if isinstance(value, int | float) else "something else"
    )


# ---- the layout of FORMAT_VERSION ------------------------------------------------------

EDGE = record(
    {"id": ident, "src": ident, "src_port": text(64, 1), "dst": ident, "dst_port": text(64, 1)}
)
_NODE_FIELDS = {
    "id": ident,
    "type": text(100, 1),
    "name": text(64, 1),
    "position": list_of(number, exact=2),
    "inputs": list_of(text(64, 1), max_len=1000),
    "outputs": list_of(text(64, 1), max_len=1000),
    "params": map_of(json_value, max_len=1000),
}
HOOK = record(
    {
        "id": ident,
        "kind": one_of(*HOOK_KINDS),
        "target": ident,
        "pane": text(100, 1),
        "settings": map_of(json_value),
    }
)


def graph_check(value: Any, where: str, depth: int = 0) -> None:
    if depth > MAX_NESTING:
        raise SchemaError(f"{where}: composites are nested more than {MAX_NESTING} deep")
    record({"nodes": list_of(_node_check(depth), MAX_NODES), "edges": list_of(EDGE)})(value, where)


def _node_check(depth: int) -> Check:
    def subgraph(value: Any, where: str) -> None:
        graph_check(value, where, depth + 1)

    return record(_NODE_FIELDS, {"definition": text(64, 1), "subgraph": subgraph,
                                 "typed": list_of(text(64, 1), max_len=1000)})


PROJECT = record(
    {
        "format_version": integer,
        "name": text(1000),
        "graph": graph_check,
        "training": map_of(json_value),
        "hooks": list_of(HOOK, MAX_HOOKS),
        "view": map_of(json_value),
        "metadata": map_of(json_value),
    },
    # "runs": the run history, checked apart (app.io.runs_file): damaged, it is left out.
    {"saved_by": text(200), "frozen": map_of(list_of(text(200, 1))), "runs": lambda v, w: None},
)


def check_references(data: dict) -> tuple[set[str], set[str]]:
    """Ids unique across the whole project, edges within their graph; returns (nodes, edges)."""
    node_ids: set[str] = set()
    edge_ids: set[str] = set()
    hook_nodes: set[str] = set()  # HookBackward nodes: a hook_backward hook may name one
    todo = [(data["graph"], "graph")]
    while todo:
        graph, where = todo.pop()
        here = set()
        for i, node in enumerate(graph["nodes"]):
            if node["id"] in node_ids or node["id"] in edge_ids:
                raise SchemaError(f"{where}.nodes[{i}] reuses the id {node['id']}")
            node_ids.add(node["id"])
            here.add(node["id"])
            if node["type"] == "HookBackward":
                hook_nodes.add(node["id"])
            if "subgraph" in node:
                todo.append((node["subgraph"], f"{where}.nodes[{i}].subgraph"))
        for i, edge in enumerate(graph["edges"]):
            if edge["id"] in node_ids or edge["id"] in edge_ids:
                raise SchemaError(f"{where}.edges[{i}] reuses the id {edge['id']}")
            edge_ids.add(edge["id"])
            for end in ("src", "dst"):
                if edge[end] not in here:
                    raise SchemaError(f"{where}.edges[{i}].{end} names a node not in this graph")
    hook_ids: set[str] = set()
    for i, hook in enumerate(data["hooks"]):
        targets = edge_ids | hook_nodes if hook["kind"] in EDGE_HOOK_KINDS else node_ids
        if hook["target"] not in targets:
            raise SchemaError(f"hooks[{i}].target names nothing in the graph")
        if hook["id"] in hook_ids:
            raise SchemaError(f"hooks[{i}] reuses the id {hook['id']}")
        hook_ids.add(hook["id"])
    for node_id in data.get("frozen", {}):
        if node_id not in node_ids:
            raise SchemaError(f"frozen names the node {node_id!r}, which is not in the graph")
    return node_ids, edge_ids


def project_to_json(project: Project, saved_by: str) -> dict:
    """project.json's content; only hooks whose target still exists are written."""
    return {
        "format_version": FORMAT_VERSION,
        "saved_by": saved_by,
        "name": project.name,
        "graph": graph_to_data(project.graph),
        "training": project.training,
        "hooks": [
            {
                "id": h.id,
                "kind": h.kind,
                "target": h.target,
                "pane": h.pane,
                "settings": dict(h.settings),
            }
            for h in project.live_hooks()
        ],
        "view": project.view,
        "metadata": project.metadata,
        **({"frozen": frozen} if (frozen := project.live_frozen()) else {}),
    }


def project_from_json(data: dict) -> Project:
    """A Project (without Parameter values) from checked project.json content.

    DocumentError from the graph means the data broke a document rule (names, ports,
    single input, loops).
    """
    return Project(
        graph=graph_from_data(data["graph"]),
        name=data["name"],
        training=data["training"],
        hooks=[
            Hook(h["kind"], h["target"], h["pane"], h["settings"], h["id"]) for h in data["hooks"]
        ],
        view=data["view"],
        metadata=data["metadata"],
        frozen={nid: set(names) for nid, names in data.get("frozen", {}).items() if names},
    )
