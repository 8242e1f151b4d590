"""Custom Cell nodes: a node whose body is user-written Python (a Cell subclass), headless.

A CustomCell node keeps its source in its params: `code` (the Python text), `class_name`
(empty: the last Cell subclass the code defines) and `args` (keyword arguments for the
class, as Python literals: ``threshold=0.1, value=20``). Its ports are `construct`'s
parameters and the class's optional ``output_names`` (default ``("out",)``), read from
the text with `ast`, so nothing runs to draw the node.

Trust. Code runs only once this process trusts its exact text for the file it comes from
(`trust_scope`, `trust_code`, `trust_project`); the ready-made cells (`READY_MADE`) are
ours and trusted everywhere from the start. Until then the node's shape check says
`NOT_RUN` and compiling refuses it, so loading a project, `cellwright info`, shape
inference and compiling never execute a file's code. Trust lives in this process only,
never in the project file (a file could claim anything). The GUI, on opening a project
where `untrusted_code(project)` is not empty, asks (showing that code) unless it
remembers `code_digest(project)` for the file, and calls `trust_project(project)` when
the user agrees; code the user types in the editor is theirs, so the editor calls
`trust_code` for it.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import itertools
import linecache
import os
import traceback
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

import engine
from app.catalogue.spec import CatalogueError, NodeType, ParamSpec, PortSpec, ShapeError
from app.catalogue.user_cells import probe_outputs
from app.document import Node, Project
from engine import Parameter, Tensor, nn, ops
from engine._random import fork_rng

CUSTOM_CELL = "CustomCell"
CUSTOM_CATEGORY = "Custom Cells"
NOT_RUN = "Not run: this project's code was not trusted when it was opened."
DEFAULT_OUTPUTS = ("out",)
_CACHE_SIZE = 64

# What the code's namespace holds before it runs: the seeds' imports, with MindSpore
# spelled `engine` (`import engine`, `from engine import nn, ops` work as written too).
_PRELUDE_NAMES = {"np": np, "engine": engine, "nn": nn, "ops": ops,
                  "Tensor": Tensor, "Parameter": Parameter}

THRESHOLD = '''\
import engine
from engine import nn, ops


class Threshold(nn.Cell):
    """x where x > threshold, else value (the seeds' Threshold)."""

    def __init__(self, threshold=0.1, value=20.0):
        super().__init__()
        self.threshold = threshold
        self.value = value

    def construct(self, inputs):
        cond = ops.gt(inputs, self.threshold)
        value = ops.fill(inputs.dtype, inputs.shape, self.value)
        return ops.select(cond, inputs, value)
'''

DROPOUT2D = '''\
import engine
from engine import nn, ops


class Dropout2d(nn.Cell):
    """Zeroes whole channels of (N, C, H, W) images; its gradient comes from `bprop`."""

    output_names = ("out", "mask")

    def __init__(self, keep_prob=0.8):
        super().__init__()
        self.keep_prob = keep_prob
        self.dropout2d = ops.Dropout2D(keep_prob)

    def construct(self, x):
        return self.dropout2d(x)

    def bprop(self, x, out, dout):
        _, mask = out
        dy, _ = dout
        if self.keep_prob != 0:
            dy = dy * (1 / self.keep_prob)
        dy = mask.astype(engine.float32) * dy
        return (dy.astype(x.dtype), )
'''

# Palette entries: name -> (code, args, description).
# The code is kept stripped, as a node stores it (a "str" param is stripped).
# (The seeds' Dropout2d is offered as Dropout2dBprop: engine.nn.Dropout2d is a node too.)
READY_MADE: dict[str, str] = {"Threshold": THRESHOLD.strip(),
                              "Dropout2dBprop": DROPOUT2D.strip()}
_READY_ARGS = {"Threshold": "threshold=0.0, value=0.0", "Dropout2dBprop": "keep_prob=0.8"}
_READY_TEXT = {
    "Threshold": "Custom Cell: x where x > threshold, else value (the seeds' example).",
    "Dropout2dBprop": "Custom Cell: the seeds' Dropout2d, dropping whole channels with a "
                      "hand-written bprop.",
}
TEMPLATE = '''\
from engine import nn, ops


class MyCell(nn.Cell):
    """What this Cell does."""

    def __init__(self, scale=1.0):
        super().__init__()
        self.scale = scale

    def construct(self, x):
        return x * self.scale
'''.strip()


# What user code may raise without ending the app: `exit()` too (only Ctrl+C goes through).
_CAUGHT = (Exception, SystemExit)


class CustomCellError(ValueError):
    """User code that fails: `line` is the 1-based line in that code (0 when unknown)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.message = message
        self.line = line


# ---- trust --------------------------------------------------------------------------------

def _key(code: str) -> str:
    return hashlib.sha256(code.strip().encode("utf-8", "surrogatepass")).hexdigest()


_READY: frozenset[str] = frozenset(_key(code) for code in (*READY_MADE.values(), TEMPLATE))
_TRUSTED: set[tuple[str, str]] = set()  # (scope, key): code trusted for one file
_scope = ""  # the file whose code may run now ("": the one project of a command)
_untitled = itertools.count(1)


def trust_scope(path: str | os.PathLike[str] | None) -> str:
    """Make the project file at `path` the one whose trusted code may run (None: a new,
    untitled project, trusted for nothing yet); its scope. Trust is kept per file and
    code: code trusted for one file does not run in another file holding the same text.
    The window calls this as it opens or starts a project, before anything is built."""
    global _scope
    _scope = os.path.realpath(path) if path is not None else f"untitled {next(_untitled)}"
    return _scope


def is_trusted(code: str) -> bool:
    key = _key(code)
    return key in _READY or (_scope, key) in _TRUSTED


def trust_code(code: str) -> None:
    """Let this exact text run for the current file (`trust_scope`) in this process (the
    user wrote it, or agreed to it)."""
    _TRUSTED.add((_scope, _key(code)))


def custom_nodes(project_or_graph: Project | Any) -> list[Node]:
    """Every CustomCell node, composites included, in the graph's walk order."""
    graph = getattr(project_or_graph, "graph", project_or_graph)
    return [node for _, node in graph.walk() if node.type == CUSTOM_CELL]


def _codes(project: Project | Any) -> list[str]:
    codes = [node.params.get("code") for node in custom_nodes(project)]
    return [code for code in codes if isinstance(code, str)]


def code_digest(project: Project | Any) -> str:
    """sha256 over the code of every CustomCell node ('' if none): what a trust is kept by.

    The order of nodes does not matter, nor how often the same code appears.
    """
    keys = sorted({_key(code) for code in _codes(project)})
    return hashlib.sha256("\n".join(keys).encode()).hexdigest() if keys else ""


def untrusted_code(project: Project | Any) -> list[str]:
    """The distinct code texts of the project that may not run yet (show these in the prompt)."""
    seen, texts = set(), []
    for code in _codes(project):
        if not is_trusted(code) and _key(code) not in seen:
            seen.add(_key(code))
            texts.append(code.strip())
    return texts


def trust_project(project: Project | Any) -> None:
    """Let every CustomCell's code of `project` run (the user agreed to it)."""
    for code in _codes(project):
        trust_code(code)


# ---- reading code without running it ------------------------------------------------------

@dataclass(frozen=True)
class CellOutline:
    """What `ast` reads from the code: the class, its input and output port names, and
    the inputs that have a default (they may stay unconnected)."""

    class_name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    optional: tuple[str, ...] = ()


def _syntax_error(exc: SyntaxError) -> CustomCellError:
    return CustomCellError(f"SyntaxError: {exc.msg}", exc.lineno or 0)


def outline(code: str, class_name: str = "") -> CellOutline:
    """The class `class_name` (or the last Cell subclass) of `code`, read without running it.

    Raises CustomCellError (with the line) for a syntax error or a missing class.
    """
    try:
        tree = ast.parse(code, _filename(code, class_name))
    except SyntaxError as exc:
        raise _syntax_error(exc) from None
    except ValueError as exc:  # null bytes
        raise CustomCellError(f"SyntaxError: {exc}") from None
    cells: dict[str, ast.ClassDef] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and any(_is_cell(base, cells) for base in stmt.bases):
            cells[stmt.name] = stmt
    if class_name:
        found = cells.get(class_name)
        if found is None:
            raise CustomCellError(f"The code defines no Cell subclass called {class_name}.")
    elif not cells:
        raise CustomCellError("The code defines no Cell subclass (class Name(nn.Cell): ...).")
    else:
        found = list(cells.values())[-1]
    inputs, outputs, optional = (), DEFAULT_OUTPUTS, ()
    for stmt in found.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "construct":
            args = stmt.args
            if args.vararg or args.kwarg:
                raise CustomCellError(f"{found.name}.construct must name its inputs "
                                      "(no *args).", stmt.lineno)
            named = [*args.posonlyargs, *args.args]
            inputs = tuple(a.arg for a in named[1:])
            optional = tuple(a.arg for a in named[len(named) - len(args.defaults):])
        elif isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "output_names" for t in stmt.targets):
            outputs = _names(stmt)
    if not inputs:
        raise CustomCellError(f"{found.name} needs construct(self, x): at least one input.",
                              found.lineno)
    return CellOutline(found.name, inputs, outputs, tuple(p for p in optional if p in inputs))


def _is_cell(base: ast.expr, known: Mapping[str, Any]) -> bool:
    text = ast.unparse(base)
    return text.split(".")[-1] == "Cell" or text in known


def _names(stmt: ast.Assign) -> tuple[str, ...]:
    try:
        names = ast.literal_eval(stmt.value)
    except ValueError:
        names = None
    if isinstance(names, str):
        names = (names,)
    if (not isinstance(names, tuple | list) or not names
            or not all(isinstance(n, str) and n.isidentifier() for n in names)
            or len(set(names)) != len(names)):
        raise CustomCellError("output_names must be a tuple of distinct names, "
                              "e.g. ('out', 'mask').", stmt.lineno)
    return tuple(names)


def parse_args(text: str) -> dict[str, Any]:
    """Keyword arguments from text like 'threshold=0.1, value=20' (literals only, no code)."""
    text = text.strip()
    if not text:
        return {}
    try:
        call = ast.parse(f"f({text})", mode="eval").body
    except SyntaxError:
        raise CatalogueError(f"args must be name=value pairs, not {text!r}.") from None
    if not isinstance(call, ast.Call) or call.args or any(k.arg is None for k in call.keywords):
        raise CatalogueError("args must be name=value pairs such as threshold=0.1, value=20.")
    values = {}
    for keyword in call.keywords:
        try:
            values[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            raise CatalogueError(f"args: {keyword.arg} must be a plain value (a number, text, "
                                 "a tuple...), not an expression.") from None
    return values


# ---- running code -------------------------------------------------------------------------

def _filename(code: str, class_name: str = "") -> str:
    return f"<custom cell {class_name or 'code'} {_key(code)[:8]}>"


_LOADED: OrderedDict[tuple[str, str], type | CustomCellError] = OrderedDict()


def load_custom_cell(code: str, class_name: str = "") -> type:
    """Run `code` in a fresh namespace and return its Cell class (guarded: see `_guard`).

    This runs the code: callers check trust first. The same code and class name give the
    same class (the code runs once). Raises CustomCellError naming the line.
    """
    code = code.strip() + "\n"
    key = (code, class_name)
    if key in _LOADED:
        _LOADED.move_to_end(key)
        found = _LOADED[key]
        if isinstance(found, CustomCellError):
            raise found
        return found
    try:
        found = _load(code, class_name)
    except CustomCellError as exc:
        found = exc
    _LOADED[key] = found
    while len(_LOADED) > _CACHE_SIZE:
        _LOADED.popitem(last=False)
    if isinstance(found, CustomCellError):
        raise found
    return found


def _load(code: str, class_name: str) -> type:
    shape = outline(code, class_name)
    filename = _filename(code, shape.class_name)
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    namespace: dict[str, Any] = {"__name__": f"custom_cell_{_key(code)[:8]}",
                                 "__builtins__": __builtins__, **_PRELUDE_NAMES}
    try:
        exec(compile(code, filename, "exec"), namespace)  # noqa: S102 - the user's trusted code
    except SyntaxError as exc:
        raise _syntax_error(exc) from None
    except _CAUGHT as exc:
        raise user_error(exc, filename) from exc
    cls = namespace.get(shape.class_name)
    if not (isinstance(cls, type) and issubclass(cls, nn.Cell)):
        raise CustomCellError(f"{shape.class_name} is not a Cell subclass once the code runs.")
    return _guard(cls, filename)


def user_error(exc: BaseException, filename: str) -> CustomCellError:
    """`exc` as 'line N: Kind: message', N being the deepest line of the user's code."""
    if isinstance(exc, CustomCellError):
        return exc
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno or 0
    return CustomCellError(f"{type(exc).__name__}: {exc}", line)


def _guard(cls: type, filename: str) -> type:
    """A subclass whose `construct` and `bprop` raise CustomCellError with the user's line."""

    def guarded(method):
        @functools.wraps(method)
        def call(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except CustomCellError:
                raise
            except _CAUGHT as exc:
                raise user_error(exc, filename) from exc

        return call

    body: dict[str, Any] = {"construct": guarded(cls.construct), "__doc__": cls.__doc__,
                            "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                            "user_code_file": filename}
    if cls.bprop is not None:
        body["bprop"] = guarded(cls.bprop)
    return type(cls.__name__, (cls,), body)


def user_class(values: Mapping[str, Any]) -> type:
    """The Cell class of a CustomCell node's (parsed) values, if its code is trusted.

    Raises CustomCellError: `NOT_RUN` for untrusted code, else the code's own error.
    """
    code = values["code"]
    if not is_trusted(code):
        raise CustomCellError(NOT_RUN)
    return load_custom_cell(code, values["class_name"])


def build_cell(values: Mapping[str, Any]) -> nn.Cell:
    """An instance of the node's class with its `args` (for the compiler)."""
    cls, args = user_class(values), parse_args(values["args"])
    try:
        return cls(**args)
    except CustomCellError:
        raise
    except _CAUGHT as exc:
        raise user_error(exc, cls.user_code_file) from exc


# ---- the node type ------------------------------------------------------------------------

def _infer(values: Mapping[str, Any], ins: Mapping[str, tuple]) -> dict[str, tuple]:
    """Output shapes from running the Cell once on zeros; the random streams are left as
    they were, so checking shapes never changes what a seeded run draws."""
    legacy = np.random.get_state()  # user code may draw from NumPy's own global source
    try:
        with fork_rng():  # a copy on this thread: a run's generator is never rewound
            shape = outline(values["code"], values["class_name"])
            cell = build_cell(values)
            return probe_outputs(cell, ins, shape.outputs, shape.class_name)
    except (CustomCellError, CatalogueError) as exc:
        raise ShapeError(str(exc)) from exc
    finally:
        np.random.set_state(legacy)


def _summary(values: Mapping[str, Any]) -> str:
    name = outline(values["code"], values["class_name"]).class_name
    args = values["args"].strip()
    return f"{name}({args})" if len(args) <= 24 else f"{name}(…)"


PARAMS = (
    ParamSpec("code", "str", TEMPLATE, description="The Cell's Python code."),
    ParamSpec("class_name", "str", "",
              description="The Cell class to use; empty: the last one the code defines."),
    ParamSpec("args", "str", "",
              description="Arguments for the class, e.g. threshold=0.1, value=20."),
)


@dataclass(frozen=True, eq=False)
class CustomCellType(NodeType):
    """A palette entry that makes CustomCell nodes: ports come from the node's code."""

    code: str = TEMPLATE
    args: str = ""

    def new_node(self, *, name: str = "", position=(0.0, 0.0),
                 params: Mapping[str, Any] | None = None) -> Node:
        given = {"code": self.code, "args": self.args, **(params or {})}
        values = CUSTOM_TYPE.values(given)
        try:
            shape = outline(values["code"], values["class_name"])
        except CustomCellError as exc:
            raise CatalogueError(str(exc)) from None
        return Node(CUSTOM_CELL, name, inputs=shape.inputs,
                    outputs=shape.outputs, params=values, position=position)


def custom_ports(code: str, class_name: str = "") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(input ports, output ports) for a node with this code: the GUI re-ports a node with it."""
    shape = outline(code, class_name)
    return shape.inputs, shape.outputs


CUSTOM_TYPE = CustomCellType(
    CUSTOM_CELL, CUSTOM_CATEGORY,
    "A Cell written in Python: __init__, construct and an optional bprop.",
    (PortSpec("x", "The tensor coming in."),), (PortSpec("out", "The result."),), PARAMS,
    _summary, build=build_cell, infer=_infer,
)


def ready_made_types() -> list[NodeType]:
    """The palette's ready-made custom Cells: they make CustomCell nodes with their code."""
    types = []
    for name, code in READY_MADE.items():
        shape, args = outline(code), _READY_ARGS[name]
        params = (ParamSpec("code", "str", code, description=PARAMS[0].description),
                  PARAMS[1], ParamSpec("args", "str", args, description=PARAMS[2].description))
        types.append(CustomCellType(
            name, CUSTOM_CATEGORY, _READY_TEXT[name], tuple(PortSpec(p) for p in shape.inputs),
            tuple(PortSpec(p) for p in shape.outputs), params, _summary, code=code, args=args,
        ))
    return types


def custom_types() -> list[NodeType]:
    return [CUSTOM_TYPE, *ready_made_types()]


def optional_ports(node: Node) -> tuple[str, ...]:
    """The inputs of a CustomCell node that may stay unconnected (a default in `construct`)."""
    try:
        values = CUSTOM_TYPE.values(node.params)
        return outline(values["code"], values["class_name"]).optional
    except (CustomCellError, CatalogueError):
        return ()


def port_problem(node: Node) -> str | None:
    """Why a CustomCell node's ports no longer fit its code (re-port it), or None."""
    try:
        values = CUSTOM_TYPE.values(node.params)
        inputs, outputs = custom_ports(values["code"], values["class_name"])
    except (CustomCellError, CatalogueError) as exc:
        return str(exc)
    if (tuple(node.inputs), tuple(node.outputs)) == (inputs, outputs):
        return None
    return (f"The node's ports ({', '.join(node.inputs)} → {', '.join(node.outputs)}) no "
            f"longer match the code's ({', '.join(inputs)} → {', '.join(outputs)}).")


def trust_if_asked(project: Project, args: Any) -> None:
    """The CLI's rule: a project's code runs only with `--trust` (`args.trust`); ready-made
    and already-trusted code always may. Untrusted nodes report `NOT_RUN`."""
    if getattr(args, "trust", False):
        trust_project(project)
