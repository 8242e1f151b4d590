"""Export a project as a readable Python script that rebuilds its network on `engine` alone.

The script defines one `engine.nn.Cell` subclass per graph (the network, and each
composite) with `__init__` and `construct`, and loads the trained weights from an
`.npz` written beside it (`engine.save_checkpoint` format). It imports only `engine`
and NumPy, and its Cells run the same operations in the same order as the compiled
network, so its outputs are the app's, bit for bit. Running it prints the outputs
for random inputs, or for the inputs in an `.npy` file given on the command line.
"""

from __future__ import annotations

import contextlib
import inspect
import keyword
import os
from dataclasses import dataclass
from pathlib import Path

import engine
from app import __version__
from app.catalogue import CATALOGUE, LOSSES, NO_LOSS, Catalogue
from app.catalogue.custom_cells import CUSTOM_CELL, outline, parse_args
from app.catalogue.schema import read_params
from app.compiler import compile_project
from app.compiler.network_io import trained_output
from app.document import COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Edge, Graph, Node, Project
from app.export import kinds
from app.export.kinds.common import op_call
from app.export.report import ExportError, ExportReport, give_user_mode
from app.export.training_code import engine_training_code
from engine import nn

# Names the generated code uses itself; a node called like this gets a trailing underscore.
_TAKEN = frozenset({"self", "engine", "nn", "ops", "np", "argparse", "Path", "WEIGHTS", "main",
                    "load_network", "make_loss", "INPUT_SHAPES", "INPUT_DTYPES"})  # fmt: skip
_INPUTS, _OUTPUTS = ("Input", SUBGRAPH_INPUT), ("Output", SUBGRAPH_OUTPUT)


@dataclass(frozen=True)
class ExportedScript:
    script: Path
    weights: Path
    class_name: str

    # What File → Export reports, as every exporter's ExportReport says it.
    @property
    def written(self) -> list[Path]:
        return [self.script, self.weights]

    @property
    def left_out(self) -> list[str]:
        return []

    def report(self) -> ExportReport:
        return ExportReport(self.written, self.left_out)


def export_python(project: Project, path: str | os.PathLike[str], *,
                  catalogue: Catalogue = CATALOGUE) -> ExportedScript:  # fmt: skip
    """Write `path` (the script) and `path` with `.npz` (the weights); returns both paths.

    Custom Cell nodes' code goes into the script as written, before the network's class.
    Raises CompileError for a graph that does not compile (custom code that was not trusted
    or fails), and ExportError for one the script can't express (user Cells registered
    from Python) or a file that can't be written.
    """
    script = Path(path)
    if script.suffix != ".py":
        raise ExportError(f"A Python script's name ends in .py, not '{script.name}'.")
    compiled = compile_project(project, catalogue=catalogue)
    writer = _Writer(catalogue)
    class_name = _class_name(project.name)
    writer.graph_class(project.graph, class_name, f"The network of '{_plain(project.name)}'")
    text = _script(project, writer, class_name, compiled, script)
    compile(text, str(script), "exec")  # a bug here must never reach the user's disk
    weights = script.with_suffix(".npz")
    try:
        engine.save_checkpoint(compiled.network, str(weights))
        give_user_mode(weights)  # the checkpoint goes through a private (0600) temporary file
        _write_text(script, text)
    except OSError as exc:
        raise ExportError(f"Could not write {exc.filename or script}: {exc.strerror}.") from None
    return ExportedScript(script, weights, class_name)


class _Writer:
    """Collects Cell classes, innermost first, for a graph and its composites."""

    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue
        self.classes: list[str] = []
        self.names: set[str] = set()
        self.custom: dict[tuple[str, str], str] = {}  # (code, class) -> name in the script
        self.custom_blocks: list[str] = []

    def graph_class(self, graph: Graph, name: str, doc: str) -> str:
        name = self._unique(name)
        init, body, variables = [], [], {}
        inputs = [n for n in graph.nodes.values() if n.type in _INPUTS]
        for node in inputs:
            variables[(node.id, "out")] = _variable(node.name, variables)
        for node_id in graph.topological_order():
            node = graph.nodes[node_id]
            if node.type in _INPUTS + _OUTPUTS:
                continue
            args = call_args(graph, node, variables)
            outs = [_variable(node.name if len(node.outputs) == 1 else f"{node.name}_{port}",
                              variables) for port in node.outputs]  # fmt: skip
            for port, var in zip(node.outputs, outs, strict=True):
                variables[(node_id, port)] = var
            call = self._node(node, args, init)
            body.append(f"        {', '.join(outs)} = {call}")
        results = []
        for node in graph.nodes.values():
            edge = graph.edge_into(node.id, "in") if node.type in _OUTPUTS else None
            if edge is not None:
                results.append(variables[(edge.src_node, edge.src_port)])
        params = ", ".join(["self", *(variables[(n.id, "out")] for n in inputs)])
        lines = [f"class {name}(nn.Cell):", f'    """{doc}."""', "",
                 "    def __init__(self):", "        super().__init__()", *init, "",
                 f"    def construct({params}):", *body,
                 f"        return {', '.join(results) if results else 'None'}"]  # fmt: skip
        self.classes.append("\n".join(lines))
        return name

    def _node(self, node: Node, args: list[str], init: list[str]) -> str:
        # The Cell's attribute is the node's name, so Parameter names match the app's.
        if keyword.iskeyword(node.name):
            attr = f"getattr(self, {node.name!r})"
            assign = f"        setattr(self, {node.name!r}, {{}})"
        else:
            attr = f"self.{node.name}"
            assign = f"        {attr} = {{}}"
        if node.type == COMPOSITE:
            cls = self.graph_class(node.subgraph, _class_name(node.definition),
                                   f"Composite '{_plain(node.definition)}'")  # fmt: skip
            init.append(assign.format(f"{cls}()"))
            return f"{attr}({', '.join(args)})"
        if node.type == "HookBackward":
            init.append(assign.format("nn.Identity()") + "  # HookBackward: identity here")
            return f"{attr}({', '.join(args)})"
        node_type = self.catalogue.get(node.type)
        values = node_type.values(node.params)
        if node.type == CUSTOM_CELL:
            cls = self._custom(values["code"], values["class_name"])
            kwargs = ", ".join(f"{k}={v!r}" for k, v in parse_args(values["args"]).items())
            init.append(assign.format(f"{cls}({kwargs})"))
            return f"{attr}({', '.join(args)})"
        ops = {"Add": "ops.add({0}, {1})", "Mul": "ops.mul({0}, {1})",
               "MatMul": "ops.matmul({0}, {1})"}  # fmt: skip
        if node.type in ops:
            return ops[node.type].format(*args)
        if node.type in kinds.PYTHON_OPS:
            made = kinds.PYTHON_OPS[node.type](values, args)
            return op_call(made, init, assign, attr, "cell")
        if node.type == "Concat":
            joined = ", ".join(args) + ("," if len(args) == 1 else "")
            return f"ops.concat(({joined}), {values['axis']!r})"
        if node.type == "Reshape":
            (x,) = args
            sizes = ", ".join(str(size) for size in values["shape"])
            return f"ops.reshape({x}, ({x}.shape[0], {sizes}))"
        cls = node_type.cell
        if cls is None or getattr(nn, cls.__name__, None) is not cls:
            raise ExportError(
                f"Node {node.name} is a {node.type}, a user-written Cell; "
                "scripts can't carry its code yet."
            )
        init.append(assign.format(_constructor(cls, values)))
        return f"{attr}({', '.join(args)})"

    def _custom(self, code: str, class_name: str) -> str:
        """The script's name for a custom Cell's class; its code goes in once, as written."""
        code = code.strip()
        real = outline(code, class_name).class_name
        key = (code, real)
        if key not in self.custom:
            name = self._unique(real)
            block = [f"# Custom Cell {real}, as written in the project.", code]
            if name != real:
                block += ["", "", f"{name} = {real}"]
            self.custom[key] = name
            self.custom_blocks.append("\n".join(block))
        return self.custom[key]

    def _unique(self, name: str) -> str:
        base, n = name, 1
        while name in self.names or name in _TAKEN:
            n += 1
            name = f"{base}{n}"
        self.names.add(name)
        return name


def connected_inputs(graph: Graph, node: Node) -> list[tuple[str, Edge, bool]]:
    """(port, edge, by name) for each connected input port of `node`, in port order. As the
    compiled graph passes them (app.compiler.cells.Step), the inputs after an unconnected
    optional port go by name: a MultiheadAttention fed query and attn_mask only gets
    `attn_mask=...`, never the mask in the key's place."""
    found, gap = [], False
    for port in node.inputs:
        edge = graph.edge_into(node.id, port)
        if edge is None:
            gap = True
        else:
            found.append((port, edge, gap))
    return found


def call_args(graph: Graph, node: Node, variables: dict) -> list[str]:
    """The argument expressions of `node`'s call: the variable of each connected input, as
    'port=variable' for those passed by name (see connected_inputs)."""
    args = []
    for port, edge, by_name in connected_inputs(graph, node):
        var = variables[(edge.src_node, edge.src_port)]
        args.append(f"{port}={var}" if by_name else var)
    return args


def _constructor(cls: type, values: dict) -> str:
    """`nn.Dense(2, 16, activation='relu')`: required values by position, others if not default."""
    args = []
    positional = True
    for name, param in inspect.signature(cls).parameters.items():
        if name not in values:
            positional = False
            continue
        value = values[name]
        if param.default is param.empty and positional:
            args.append(repr(value))
        elif param.default is param.empty or value != param.default:
            positional = False
            args.append(f"{name}={value!r}")
    return f"nn.{cls.__name__}({', '.join(args)})"


def _loss_code(project: Project, catalogue: Catalogue) -> str | None:
    trained = trained_output(project.graph)
    if trained is None:
        return None
    values = catalogue.get("Output").values(trained.params)
    if values["loss"] == NO_LOSS:
        return None
    cls = LOSSES[values["loss"]]
    return _constructor(cls, {spec.name: values[spec.name] for spec in read_params(cls)})


def _variable(name: str, variables: dict) -> str:
    taken = set(variables.values())
    if keyword.iskeyword(name) or name in _TAKEN:
        name += "_"
    base, n = name, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def _class_name(text: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in text).split()
    name = "".join(w[:1].upper() + w[1:] for w in words)
    return name if name.isidentifier() and not keyword.iskeyword(name) else "Network"


def _script(project: Project, writer: _Writer, class_name: str, compiled, script: Path) -> str:
    shapes = {name: tuple(shape[1:]) for name, shape in
              zip(compiled.input_names, compiled.input_shapes, strict=True)}  # fmt: skip
    dtypes = dict(zip(compiled.input_names, compiled.input_dtypes, strict=True))
    loss = _loss_code(project, writer.catalogue)
    loss_lines = ["def make_loss():", '    """The loss the project trains with."""',
                  f"    return {loss}", "", "", ""] if loss else []  # fmt: skip
    custom = [CUSTOM_PRELUDE] + writer.custom_blocks if writer.custom_blocks else []
    classes = "\n\n\n".join(custom + writer.classes)
    return TEMPLATE.format(
        title=_plain(project.name), version=__version__, script=_plain(script.name),
        weights=_plain(script.with_suffix(".npz").name), classes=classes,
        class_name=class_name, shapes=repr(shapes), dtypes=repr(dtypes),
        loss="\n".join(loss_lines), read_inputs=READ_INPUTS,
        training=engine_training_code(project.training),
    )  # fmt: skip


def _plain(text: str) -> str:
    """Text that can sit inside a docstring."""
    return text.replace("\\", "/").replace('"', "'")


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.exporting")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


# Names the app gives a custom Cell's code before it runs (app.catalogue.custom_cells).
CUSTOM_PRELUDE = "from engine import Parameter, Tensor  # custom Cells' code may use these"

TEMPLATE = '''\
"""{title}: a network exported from Cellwright {version}.

Rebuilds the network on the Cellwright engine and loads its trained weights from
{weights}, next to this file. Needs only `engine` and NumPy.

    python {script}
        prints the outputs for a few random inputs;
    python {script} INPUT.npy -o OUTPUT.npy
        runs the network on your inputs (one .npy file per input) and saves the outputs.

To train it as the project does (make_optimizer, clip_gradients, make_loss):

    net = load_network(); net.set_train(True); optimizer = make_optimizer(net, batches_per_epoch)
    step = engine.value_and_grad(lambda x, y: loss(net(x), y), None, optimizer.parameters)
    for each batch: value, grads = step(x, y); optimizer(clip_gradients(grads))
"""

import argparse
from pathlib import Path

import numpy as np

import engine
from engine import nn, ops

WEIGHTS = Path(__file__).with_suffix(".npz")
# One sample's shape (without the batch axis) and number type, per input.
INPUT_SHAPES = {shapes}
INPUT_DTYPES = {dtypes}


{classes}


{loss}{training}def load_network(weights=WEIGHTS):
    """The network with its trained weights, in predict mode."""
    net = {class_name}()
    engine.load_param_into_net(net, engine.load_checkpoint(str(weights)), strict_load=True)
    net.set_train(False)
    return net


{read_inputs}    inputs = [engine.Tensor(np.asarray(x, dtype=dtype))
              for x, dtype in zip(arrays, INPUT_DTYPES.values())]
    net = load_network()
    outputs = net(*inputs)
    if args.output is None:
        print(outputs)
    elif isinstance(outputs, tuple):
        np.savez(args.output, *(o.asnumpy() for o in outputs))
    else:
        np.save(args.output, outputs.asnumpy())


if __name__ == "__main__":
    main()
'''

# The command line of an exported script up to its input arrays: the same for the engine
# and the PyTorch scripts (torch_script.py puts it in its template too).
READ_INPUTS = '''\
def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the exported network.")
    parser.add_argument("inputs", nargs="*",
                        help="one .npy file per input: " + ", ".join(INPUT_SHAPES))
    parser.add_argument("-o", "--output", help="save the outputs here (.npy, or .npz for several)")
    args = parser.parse_args(argv)
    if args.inputs and len(args.inputs) != len(INPUT_SHAPES):
        parser.error(f"give {len(INPUT_SHAPES)} input file(s), one per input")
    if args.inputs:
        arrays = [np.load(path, allow_pickle=False) for path in args.inputs]
    else:
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal((4, *shape)) for shape in INPUT_SHAPES.values()]
'''
