"""What each sweep axis may take, and putting a trial's values into a project copy.

The settings a sweep changes (SETTINGS) with their checks; a node's numeric
hyper-parameter named "<node path>.<hyper-parameter>" (path names as app.document.run_diff
writes them: the names of enclosing composites joined with "/"), checked against the
catalogue's ParamSpec; and `apply_trial`, which sets a trial's values on a copy of the
project, letting the sizes that follow a changed width catch up as an edit would.
Errors are ValueError with a message naming the axis and the value (sweep_spec raises
them as SweepSpecError).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from app.catalogue import CATALOGUE, CatalogueError
from app.compiler.shapes import infer_shapes
from app.compiler.size_flow import follow, following_keys
from app.document import Graph, Node, Project
from app.session.settings import DEFAULTS, OPTIMIZERS
from engine import nn

Axis = Any  # app.runs.sweep_spec.Axis (that module imports this one)
MAX_RUNS = 1_000  # most runs a sweep trains
ALIASES = {"lr": "learning_rate"}
NUMERIC_KINDS = ("int", "float")


def _above_zero(value: float) -> bool:
    return value > 0


def _at_least_zero(value: float) -> bool:
    return value >= 0


def _at_least_one(value: float) -> bool:
    return value >= 1


# name -> (kind, what a value must be, its test, the default when the project has none)
SETTINGS: dict[str, tuple[str, str, Callable[[Any], bool] | None, Any]] = {
    "learning_rate": ("float", "a number above 0", _above_zero, DEFAULTS["learning_rate"]),
    "batch_size": ("int", "a whole number of 1 or more", _at_least_one, DEFAULTS["batch_size"]),
    "optimizer": ("choice", "an optimizer (" + ", ".join(OPTIMIZERS) + ")", None,
                  DEFAULTS["optimizer"]),  # fmt: skip
    "weight_decay": ("float", "a number of 0 or more", _at_least_zero, 0.0),
    "epochs": ("int", "a whole number of 1 or more", _at_least_one, DEFAULTS["epochs"]),
}
SHORT = {"learning_rate": "lr"}  # how a run's name shows a setting


def show(value: Any) -> str:
    """A value as a user types it: 32, 0.001, 1e-5, Adam."""
    if isinstance(value, float):
        mantissa, e, exponent = f"{value:g}".partition("e")
        return f"{mantissa}e{int(exponent)}" if e else mantissa
    return str(value)


def _quoted(value: Any) -> str:
    return f"'{show(value)}'"


def check_axis_values(axis: Axis, typed: str) -> Axis:
    """`axis` with its values in their kind (an int setting's 64.0 is 64, an optimizer's
    'adam' is 'Adam'); ValueError naming `typed` (the axis as the user wrote it) and the
    value that can't be used."""
    name = ALIASES.get(axis.name, axis.name)
    if not isinstance(name, str) or not name or (name not in SETTINGS and "." not in name):
        raise ValueError(f"{name!r} is not a setting a sweep can change.")
    if name in SETTINGS:
        kind = SETTINGS[name][0]
    else:
        path, _, param = name.rpartition(".")
        if not path or not param:
            raise ValueError(f"{typed}: a node's hyper-parameter is written NODE.PARAM, e.g. "
                             "dense2.out_channels.")  # fmt: skip
        kind = axis.kind
        if kind not in NUMERIC_KINDS:
            raise ValueError(f"{typed}: a node's hyper-parameter swept is an int or a float, "
                             f"not {kind!r}.")  # fmt: skip
    check = _value_check(name, kind, typed)
    if axis.values:
        if axis.low is not None or axis.high is not None:
            raise ValueError(f"{typed}: give either a list of values or a range, not both.")
        values = tuple(check(v) for v in axis.values)
        twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
        if twice is not None:
            raise ValueError(f"{typed}: {_quoted(twice)} is given twice; give each value once.")
        return replace(axis, name=name, kind=kind, values=values)
    if axis.low is None or axis.high is None:
        raise ValueError(f"{typed}: no values given; type a list (a,b,c) or a range "
                         "(low..high).")  # fmt: skip
    if kind == "choice":
        raise ValueError(f"{typed}: a range can't be used; list the optimizers to try.")
    low, high = check(axis.low), check(axis.high)
    if not low < high:
        raise ValueError(f"{typed}: the range {show(low)}..{show(high)} must go from low to "
                         "high.")  # fmt: skip
    if axis.log and low <= 0:
        raise ValueError(f"{typed}: a log range must start above 0, not at {show(low)}.")
    points = axis.points
    if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= MAX_RUNS:
        raise ValueError(f"{typed}: a grid takes 2 to {MAX_RUNS:,} values from a range, not "
                         f"{points!r}.")  # fmt: skip
    return replace(axis, name=name, kind=kind, low=low, high=high, log=bool(axis.log))


def _value_check(name: str, kind: str, typed: str) -> Callable[[Any], Any]:
    if kind == "choice":
        def choice(value: Any) -> str:
            found = next((o for o in OPTIMIZERS
                          if isinstance(value, str) and o.lower() == value.strip().lower()),
                         None)  # fmt: skip
            if found is None:
                raise ValueError(f"{typed}: {_quoted(value)} is not an optimizer: choose "
                                 f"{', '.join(OPTIMIZERS)}.")  # fmt: skip
            return found
        return choice
    what, test = (SETTINGS[name][1], SETTINGS[name][2]) if name in SETTINGS else (
        "a whole number" if kind == "int" else "a number", None)

    def number(value: Any) -> int | float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if ok and kind == "int":
            ok = isinstance(value, int) or (math.isfinite(value) and float(value).is_integer())
            value = int(value) if ok else value
        elif ok:
            ok = math.isfinite(value)
            value = float(value) if ok else value
        if not ok or (test is not None and not test(value)):
            raise ValueError(f"{typed}: {_quoted(value)} is not {what}.")
        return value
    return number


# ---- a project's nodes -------------------------------------------------------------------

def node_paths(graph: Graph) -> dict[str, tuple[Graph, Node]]:
    """Every named node by its path name ("dense2", "block1/conv2"), with its graph."""
    found: dict[str, tuple[Graph, Node]] = {}
    stack: list[tuple[Graph, str]] = [(graph, "")]
    while stack:
        inside, prefix = stack.pop()
        for node in inside.nodes.values():
            if not node.name:
                continue
            path = prefix + node.name
            found[path] = (inside, node)
            if node.subgraph is not None:
                stack.append((node.subgraph, path + "/"))
    return found


def _numeric_params(node: Node) -> dict[str, str]:
    """The node's numeric hyper-parameters: name -> "int" / "float"."""
    if node.type in CATALOGUE:
        node_type = CATALOGUE.get(node.type)
        return {s.name: s.kind for s in node_type.visible_params(node.params)
                if s.kind in NUMERIC_KINDS}  # fmt: skip
    return {k: "int" if isinstance(v, int) else "float" for k, v in node.params.items()
            if isinstance(v, int | float) and not isinstance(v, bool)}  # fmt: skip


def node_axes(project: Project) -> list[str]:
    """Every "<node path>.<hyper-parameter>" a sweep can change, in graph order."""
    return [f"{path}.{param}" for path, (_, node) in sorted(node_paths(project.graph).items())
            for param in _numeric_params(node)]  # fmt: skip


def resolve_node_axis(project: Project, axis: Axis) -> Axis:
    """A node's axis checked against `project`: the node and its numeric hyper-parameter
    exist, every value (or each end of the range) fits the parameter; the axis's kind
    becomes the parameter's. ValueError naming the axis and what is wrong."""
    path, _, param = axis.name.rpartition(".")
    nodes = node_paths(project.graph)
    if path not in nodes:
        names = ", ".join(sorted(nodes)[:12]) + (", …" if len(nodes) > 12 else "")
        raise ValueError(f"{axis.name}: the network has no node {path!r} (its nodes: "
                         f"{names}).")  # fmt: skip
    node = nodes[path][1]
    numeric = _numeric_params(node)
    if param not in numeric:
        known = CATALOGUE.get(node.type) if node.type in CATALOGUE else None
        spec = next((s for s in known.params if s.name == param), None) if known else None
        choices = f"; its numeric ones: {', '.join(numeric)}" if numeric else \
            "; it has no numeric ones"
        if spec is not None or param in node.params:
            kind = spec.kind if spec is not None else type(node.params[param]).__name__
            unused = spec is not None and spec.kind in NUMERIC_KINDS  # not with these values
            raise ValueError(f"{axis.name}: {param} of {path} is "
                             + ("not used with its other settings as they are" if unused else
                                f"a {kind} setting, not a number")
                             + f"; a sweep changes numbers only{choices}.")  # fmt: skip
        raise ValueError(f"{axis.name}: {path} ({node.type}) has no hyper-parameter "
                         f"{param!r}{choices}.")  # fmt: skip
    kind = numeric[param]
    parse = (CATALOGUE.get(node.type).param(param).parse if node.type in CATALOGUE
             else lambda v: v)  # fmt: skip

    def fit(value: Any) -> Any:
        if kind == "int" and not (isinstance(value, int) or float(value).is_integer()):
            raise ValueError(f"{axis.name}: '{show(value)}' is not a whole number.")
        value = int(value) if kind == "int" else float(value)
        try:
            return parse(value)
        except CatalogueError as exc:
            raise ValueError(f"{axis.name}: '{show(value)}' can't be used: {exc}") from None

    if axis.values:
        return replace(axis, kind=kind, values=tuple(fit(v) for v in axis.values))
    return replace(axis, kind=kind, low=fit(axis.low), high=fit(axis.high))


def weight_decay_problem(optimizers: Iterable[str]) -> str | None:
    """Why weight decay can't be swept with one of `optimizers`, or None."""
    for name in optimizers:
        if "weight_decay" not in _keywords(name):
            having = [o for o in OPTIMIZERS if "weight_decay" in _keywords(o)]
            return (f"weight_decay: the {name} optimizer has no weight decay; sweep it with "
                    f"{', '.join(having) or 'none'}.")  # fmt: skip
    return None


def _keywords(optimizer: str) -> set[str]:
    made = getattr(nn, optimizer, None)
    if made is None:
        return set()
    return set(inspect.signature(made).parameters) - {"params", "learning_rate"}


# ---- applying a trial ----------------------------------------------------------------------

def apply_trial(project: Project, values: Mapping[str, Any], epochs: int | None) -> None:
    """Set a trial's values on `project` (a copy to train): training settings, then node
    hyper-parameters, whose dependent sizes nobody typed follow (as after an edit);
    `epochs` (the sweep's) unless the trial sets its own. ValueError if a node is gone."""
    training = project.training
    if "optimizer" in values and values["optimizer"] != training.get("optimizer"):
        accepted = _keywords(values["optimizer"])
        options = dict(training.get("optimizer_options") or {})
        training["optimizer"] = values["optimizer"]  # options the old one had, the new lacks,
        training["optimizer_options"] = {k: v for k, v in options.items() if k in accepted}
    if "weight_decay" in values:
        options = dict(training.get("optimizer_options") or {})
        training["optimizer_options"] = {**options, "weight_decay": values["weight_decay"]}
    for key in ("learning_rate", "batch_size"):
        if key in values:
            training[key] = values[key]
    if "epochs" in values:
        training["epochs"] = values["epochs"]
    elif epochs is not None:
        training["epochs"] = epochs
    changes = {k: v for k, v in values.items() if k not in SETTINGS}
    if not changes:
        return
    before = infer_shapes(project.graph)
    nodes = node_paths(project.graph)
    for name, value in changes.items():
        path, _, param = name.rpartition(".")
        if path not in nodes:
            raise ValueError(f"{name}: the network no longer has a node {path!r}.")
        graph, node = nodes[path]
        node = graph.node(node.id)  # as it is now (an earlier change may have replaced it)
        typed = node.typed | ({param} & set(following_keys(node.type)))
        graph.set_params(node.id, {param: value}, typed=typed)
    for change in follow(project.graph, before):
        found = project.graph.find(change.node_id)
        if found is not None:
            found[0].set_params(change.node_id, dict(change.new))


def run_name(index: int, values: Mapping[str, Any]) -> str:
    """"sweep 3 · lr=0.01 batch_size=64": a sweep run's name (its trial number from 1)."""
    shown = " ".join(f"{SHORT.get(k, k)}={show(v)}" for k, v in values.items())
    return f"sweep {index + 1} · {shown}"[:120]
