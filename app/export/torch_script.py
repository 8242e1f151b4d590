"""Export a project as a readable PyTorch script: one `torch.nn.Module` per graph and composite.

The script rebuilds the network with `torch.nn` layers and loads the trained weights from
an `.npz` written beside it under torch's state_dict names. Its `--train` trains it as the
project does, in one process or under torchrun with DistributedDataParallel (see
app.export.torch_train); a built-in data set is written beside it for that as
`NAME.data.npz`. Exporting needs no torch: only the script imports it.

What changes on the way: MindSpore's layouts are torch's (Dense weight (out, in), Conv2d
(out, in/groups, kh, kw)); BatchNorm's `momentum` becomes 1 - momentum (torch weighs the
new statistic); 'same' padding becomes explicit padding (an odd one via `F.pad`, bottom
and right as MindSpore). torch's BatchNorm updates its running variance with the unbiased
batch variance, MindSpore's CPU kernel with the biased one: the only training difference.
"""

from __future__ import annotations

import contextlib
import keyword
import os
from pathlib import Path

import numpy as np

from app import __version__
from app.catalogue import CATALOGUE, LOSSES, Catalogue
from app.compiler import CompiledNetwork, compile_project
from app.document import COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT, Graph, Node, Project
from app.export import kinds, torch_train
from app.export.kinds.common import op_call
from app.export.kinds.pool import torch_pool
from app.export.python_script import (
    ExportError,
    _class_name,
    _plain,
    _write_text,
    call_args,
    connected_inputs,
)
from app.export.report import ExportReport
from app.export.training_code import torch_training_code
from engine.ops._conv import same_pads

# Names the generated code uses itself; a variable called like this gets a trailing underscore.
_TAKEN = frozenset({"self", "torch", "nn", "F", "np", "argparse", "Path", "WEIGHTS", "main",
                    "load_network", "load_weights", "make_loss", "INPUT_SHAPES",
                    "INPUT_DTYPES", "FROZEN"}) | torch_train.NAMES  # fmt: skip
_INPUTS, _OUTPUTS = ("Input", SUBGRAPH_INPUT), ("Output", SUBGRAPH_OUTPUT)
# Dense's `activation` names as torch calls on the layer's result.
_ACTIVATIONS = {"relu": "torch.relu({})", "sigmoid": "torch.sigmoid({})",
                "tanh": "torch.tanh({})", "gelu": "F.gelu({}, approximate='tanh')",
                "leakyrelu": "F.leaky_relu({}, 0.2)", "softmax": "torch.softmax({}, dim=-1)",
                "logsoftmax": "torch.log_softmax({}, dim=-1)"}  # fmt: skip
# engine Parameter name -> torch state_dict name, for the layers whose names differ.
_BN_NAMES = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
             "moving_variance": "running_var"}  # fmt: skip
_MODULE_NAMES = frozenset(
    {"training", "forward", "train", "eval", "parameters", "buffers", "children", "modules",
     "state_dict", "load_state_dict", "apply", "to", "cuda", "cpu", "type", "float", "double",
     "half", "bfloat16", "zero_grad", "register_buffer", "register_parameter", "add_module",
     "get_submodule", "named_parameters", "named_buffers", "named_children", "named_modules",
     "requires_grad_", "share_memory", "extra_repr", "dump_patches", "call_super_init",
     "register_module", "ipu", "xpu", "mtia", "compile", "get_parameter", "get_buffer",
     "set_extra_state", "get_extra_state", "to_empty", "register_forward_hook",
     "register_forward_pre_hook", "register_backward_hook", "register_full_backward_hook",
     "register_full_backward_pre_hook", "register_state_dict_pre_hook",
     "register_load_state_dict_post_hook", "T_destination"}
)  # nn.Module's own attributes: a submodule with one of these names would be hidden


def export_torch(project: Project, path: str | os.PathLike[str], *,
                 catalogue: Catalogue = CATALOGUE) -> ExportReport:  # fmt: skip
    """Write `path` (the script) and `path` with `.npz` (the weights, torch's names).

    Raises CompileError for a graph that does not compile and ExportError, naming the
    node, for one torch can't express here, or for a file that can't be written.
    """
    script = Path(path)
    if script.suffix != ".py":
        raise ExportError(f"A Python script's name ends in .py, not '{script.name}'.")
    compiled = compile_project(project, catalogue=catalogue)
    writer = _Writer(compiled)
    class_name = _class_name(project.name)
    writer.graph_class(project.graph, class_name, f"The network of '{_plain(project.name)}'", "")
    state = _state_dict(compiled, writer.types)
    # Every Parameter that doesn't train: frozen ones, and those that never train (a
    # GroupNorm's gamma and beta with affine off); names of torch buffers are harmless here.
    frozen = [_torch_name(name, writer.types, compiled)
              for name, param in compiled.parameters().items() if not param.requires_grad]
    data, why_not = torch_train.built_in_data(project)
    if why_not:
        writer.left_out.append(why_not)
    data_file = script.with_suffix(".data.npz") if data is not None else None
    text = _script(project, compiled, writer, class_name, script, frozen, data_file)
    compile(text, str(script), "exec")  # a bug here must never reach the user's disk
    weights = script.with_suffix(".npz")
    try:
        _write_weights(weights, state)
        if data_file is not None:  # the built-in data set, for the script's --train
            _write_weights(data_file, data)
        _write_text(script, text)
    except OSError as exc:
        raise ExportError(f"Could not write {exc.filename or script}: {exc.strerror}.") from None
    return ExportReport([script, weights, *([data_file] if data_file else [])],
                        writer.left_out)


class _Writer:
    """Collects Module classes, innermost first, for a graph and its composites."""

    def __init__(self, compiled: CompiledNetwork) -> None:
        self.compiled = compiled
        self.classes: list[str] = []
        self.names: set[str] = set()
        self.types: dict[str, str] = {}  # dotted node path -> node type
        self.left_out: list[str] = []

    def graph_class(self, graph: Graph, name: str, doc: str, prefix: str) -> str:
        name = self._unique(name)
        init, body, variables = [], [], {}
        inputs = [n for n in graph.nodes.values() if n.type in _INPUTS]
        for node in inputs:
            variables[(node.id, "out")] = _variable(node.name, variables)
        for node_id in graph.topological_order():
            node = graph.nodes[node_id]
            if node.type in _INPUTS + _OUTPUTS:
                continue
            edges = [edge for _, edge, _ in connected_inputs(graph, node)]
            args = call_args(graph, node, variables)  # 'port=x' after an open optional port
            outs = [_variable(node.name if len(node.outputs) == 1 else f"{node.name}_{port}",
                              variables) for port in node.outputs]  # fmt: skip
            for port, var in zip(node.outputs, outs, strict=True):
                variables[(node_id, port)] = var
            in_shape = self.compiled.report.edge_shapes.get(edges[0].id) if edges else None
            call = self._node(node, args, init, prefix, in_shape)
            body.append(f"        {', '.join(outs)} = {call}")
        results = []
        for node in graph.nodes.values():
            edge = graph.edge_into(node.id, "in") if node.type in _OUTPUTS else None
            if edge is not None:
                results.append(variables[(edge.src_node, edge.src_port)])
        params = ", ".join(["self", *(variables[(n.id, "out")] for n in inputs)])
        lines = [f"class {name}(nn.Module):", f'    """{doc}."""', "",
                 "    def __init__(self):", "        super().__init__()", *init, "",
                 f"    def forward({params}):", *body,
                 f"        return {', '.join(results) if results else 'None'}"]  # fmt: skip
        self.classes.append("\n".join(lines))
        return name

    def _node(self, node: Node, args: list[str], init: list[str], prefix: str,
              in_shape) -> str:  # fmt: skip
        path = prefix + node.name
        self.types[path] = node.type
        if node.name in _MODULE_NAMES:
            raise ExportError(f"Node {path}: torch.nn.Module uses the name '{node.name}' itself; "
                              "rename the node to export it.")  # fmt: skip
        # The Module's attribute is the node's name, so state_dict names follow the app's.
        if keyword.iskeyword(node.name):
            attr = f"getattr(self, {node.name!r})"
            assign = f"        setattr(self, {node.name!r}, {{}})"
        else:
            attr = f"self.{node.name}"
            assign = f"        {attr} = {{}}"
        x = ", ".join(args)
        if node.type == COMPOSITE:
            doc = f"Composite '{_plain(node.definition)}'"
            cls = self.graph_class(node.subgraph, _class_name(node.definition), doc, path + ".")
            init.append(assign.format(f"{cls}()"))
            return f"{attr}({x})"
        ops = {"Add": "{0} + {1}", "Mul": "{0} * {1}", "MatMul": "torch.matmul({0}, {1})"}
        if node.type in ops:
            return ops[node.type].format(*args)
        cell = self.compiled.cells.get(node.id)
        if node.type in kinds.TORCH_OPS:
            made = kinds.TORCH_OPS[node.type](cell, args)
            return op_call(made, init, assign, attr, "module")
        if node.type == "Concat":
            return f"torch.cat(({x}{',' if len(args) == 1 else ''}), dim={cell.axis})"
        if node.type == "Reshape":
            sizes = ", ".join(str(size) for size in cell.shape)
            return f"{x}.reshape({x}.shape[0], {sizes})"
        if node.type == "HookBackward":
            init.append(assign.format("nn.Identity()") + "  # HookBackward: identity forward")
            self.left_out.append(f"{path}: HookBackward's gradient view (an identity here)")
            return f"{attr}({x})"
        module, call = _layer(node, cell, path, in_shape)
        init.append(assign.format(module))
        return call.format(x if "{m}" in call else f"{attr}({x})", m=attr)

    def _unique(self, name: str) -> str:
        base, n = name, 1
        while name in self.names or name in _TAKEN:
            n += 1
            name = f"{base}{n}"
        self.names.add(name)
        return name


def _layer(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    """The layer's `nn.…(…)` constructor and its call: '{}' is `self.name(x)`, or with '{m}'
    the call is spelled out around `x` ('{m}(F.pad({}, …))')."""
    kind = node.type
    simple = {"Identity": "nn.Identity()", "ReLU": "nn.ReLU()", "Tanh": "nn.Tanh()",
              "Sigmoid": "nn.Sigmoid()"}  # fmt: skip
    if kind in simple:
        return simple[kind], "{}"
    if kind == "Dense":
        bias = "" if cell.has_bias else ", bias=False"
        act = type(cell.activation).__name__.lower() if cell.activation_flag else None
        if act is not None and act not in _ACTIVATIONS:
            raise ExportError(f"Node {path}: Dense activation {act!r} has no torch export.")
        return (f"nn.Linear({cell.in_channels}, {cell.out_channels}{bias})",
                _ACTIVATIONS[act] if act else "{}")  # fmt: skip
    if kind == "LeakyReLU":
        return f"nn.LeakyReLU({cell.alpha!r})", "{}"
    if kind == "GELU":
        return f"nn.GELU(approximate={'tanh' if cell.approximate else 'none'!r})", "{}"
    if kind in ("Softmax", "LogSoftmax"):
        return f"nn.{kind}(dim={cell.axis})", "{}"
    if kind == "Flatten":
        dims = (cell.start_dim, cell.end_dim)
        return ("nn.Flatten()" if dims == (1, -1) else f"nn.Flatten{dims}"), "{}"
    if kind == "Dropout":
        return f"nn.Dropout({round(cell.p, 12)!r})", "{}"
    if kind in ("BatchNorm1d", "BatchNorm2d"):
        if cell.use_batch_statistics is not None:
            raise ExportError(f"Node {path}: use_batch_statistics={cell.use_batch_statistics} "
                              "has no torch BatchNorm equivalent.")  # fmt: skip
        extra = "" if cell.eps == 1e-5 else f", eps={cell.eps!r}"
        momentum = round(1.0 - cell.momentum, 12)  # torch weighs the new statistic
        extra += "" if momentum == 0.1 else f", momentum={momentum!r}"
        extra += "" if cell.affine else ", affine=False"
        return f"nn.{kind}({cell.num_features}{extra})", "{}"
    if kind == "Conv2d":
        return _conv(cell, path, in_shape)
    if kind in ("MaxPool2d", "AvgPool2d"):
        return _pool(kind, cell, path, in_shape)
    if kind in kinds.TORCH:
        return kinds.TORCH[kind](node, cell, path, in_shape)
    raise ExportError(f"Node {path} is a {kind}, which the PyTorch export can't express.")


def _pads(cell, path: str, in_shape, dilation=(1, 1)) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) as the engine pads this Conv2d or pool."""
    if cell.pad_mode == "valid":
        return (0, 0, 0, 0)
    if cell.pad_mode == "pad":
        p = cell.padding
        return tuple(p) if isinstance(p, (tuple, list)) else (p,) * 4
    if in_shape is None or len(in_shape) != 4:
        raise ExportError(f"Node {path}: 'same' padding needs its input's height and width.")
    h, w = int(in_shape[2]), int(in_shape[3])
    (kh, kw), (sh, sw) = cell.kernel_size, cell.stride
    return (same_pads(h, (kh - 1) * dilation[0] + 1, sh)
            + same_pads(w, (kw - 1) * dilation[1] + 1, sw))  # fmt: skip


def _pair(value: tuple[int, int]) -> str:
    return str(value[0]) if value[0] == value[1] else repr(tuple(value))


def _conv(cell, path: str, in_shape) -> tuple[str, str]:
    t, b, l, r = _pads(cell, path, in_shape, cell.dilation)
    args = [str(cell.in_channels), str(cell.out_channels), _pair(cell.kernel_size)]
    if tuple(cell.stride) != (1, 1):
        args.append(f"stride={_pair(cell.stride)}")
    symmetric = t == b and l == r
    if symmetric and (t or l):
        args.append(f"padding={_pair((t, l))}")
    if tuple(cell.dilation) != (1, 1):
        args.append(f"dilation={_pair(cell.dilation)}")
    if cell.group != 1:
        args.append(f"groups={cell.group}")
    if not cell.has_bias:
        args.append("bias=False")
    call = "{}" if symmetric else f"{{m}}(F.pad({{}}, ({l}, {r}, {t}, {b})))"
    return f"nn.Conv2d({', '.join(args)})", call


def _pool(kind: str, cell, path: str, in_shape) -> tuple[str, str]:
    # The 2-D pools are written as the 1-D and 3-D ones (padding, dilation, ceil_mode).
    return torch_pool(kind, cell, path, in_shape)


def _split(name: str, compiled: CompiledNetwork) -> tuple[str, str]:
    """(the owning node's path, the Parameter's name inside it): 'enc1.layers.0.dense1.weight'
    gives ('enc1', 'layers.0.dense1.weight')."""
    local = compiled.parameter_owner[name][1]
    return name[: len(name) - len(local) - 1], local


def _torch_name(name: str, types: dict[str, str], compiled: CompiledNetwork) -> str:
    head, local = _split(name, compiled)
    rename = kinds.TORCH_STATE.get(types.get(head, ""))
    if rename is not None:
        param = compiled.parameters()[name]
        local = (rename(local, param.asnumpy()) or (local,))[0]
    if types.get(head, "").startswith("BatchNorm"):
        local = _BN_NAMES.get(local, local)
    return f"{head}.{local}" if head else local


def _state_dict(compiled: CompiledNetwork, types: dict[str, str]) -> dict[str, np.ndarray]:
    state = {}
    for name, param in compiled.parameters().items():
        head, local = _split(name, compiled)
        rename = kinds.TORCH_STATE.get(types.get(head, ""))
        if rename is not None:
            renamed = rename(local, param.asnumpy())
            if renamed is not None:
                state[f"{head}.{renamed[0]}" if head else renamed[0]] = renamed[1]
            continue
        if types.get(head, "").startswith("BatchNorm"):
            cell = compiled.cells[compiled.parameter_owner[name][0]]
            if local in ("gamma", "beta") and not cell.affine:
                continue
            if local == "moving_variance":
                state[f"{head}.num_batches_tracked"] = np.array(0, dtype=np.int64)
        state[_torch_name(name, types, compiled)] = param.asnumpy()
    return state


def _write_weights(path: Path, state: dict[str, np.ndarray]) -> None:
    # A plain open() makes the file with the user's mode (umask), unlike a mkstemp file.
    tmp = path.with_name(f".{path.name}.exporting")
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, **state)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def _project_loss(project: Project, compiled: CompiledNetwork):
    """The loss the project trains with: its `loss` setting if any (made as the session
    makes it), else the Output node's."""
    name = project.training.get("loss")
    if not isinstance(name, str) or name not in LOSSES:
        return compiled.loss_fn
    if name == "SoftmaxCrossEntropyWithLogits":
        return LOSSES[name](sparse=True, reduction="mean")
    return LOSSES[name](reduction="mean") if name == "SmoothL1Loss" else LOSSES[name]()


def _loss_code(loss) -> str | None:
    if loss is None:
        return None
    kind = type(loss).__name__
    args = []
    if loss.reduction != "mean":
        args.append(f"reduction={loss.reduction!r}")
    if kind in ("CrossEntropyLoss", "NLLLoss"):
        if loss.weight is not None:
            return None
        if loss.ignore_index != -100:
            args.insert(0, f"ignore_index={loss.ignore_index}")
        if getattr(loss, "label_smoothing", 0.0):
            args.append(f"label_smoothing={loss.label_smoothing!r}")
    elif kind == "SoftmaxCrossEntropyWithLogits":  # indices or probabilities, as torch's
        kind = "CrossEntropyLoss"
    elif kind in ("BCEWithLogitsLoss", "BCELoss"):
        if loss.weight is not None or getattr(loss, "pos_weight", None) is not None:
            return None
    elif kind == "SmoothL1Loss":  # torch's default reduction is 'mean', MindSpore's 'none'
        args += [f"beta={loss.beta!r}"] if loss.beta != 1.0 else []
    elif kind == "HuberLoss":
        args += [f"delta={loss.delta!r}"] if loss.delta != 1.0 else []
    elif kind == "KLDivLoss":  # both read the labels as probabilities (log_target=False)
        pass
    elif kind not in ("MSELoss", "L1Loss"):
        return None
    return f"nn.{kind}({', '.join(args)})"


def _outputs(graph: Graph) -> int:
    """How many results the network's forward returns (its connected Output nodes)."""
    return sum(1 for node in graph.nodes.values()
               if node.type == "Output" and graph.edge_into(node.id, "in") is not None)


def _variable(name: str, variables: dict) -> str:
    taken = set(variables.values())
    if keyword.iskeyword(name) or name in _TAKEN:
        name += "_"
    base, n = name, 1
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def _script(project: Project, compiled: CompiledNetwork, writer: _Writer, class_name: str,
            script: Path, frozen: list[str], data_file: Path | None) -> str:  # fmt: skip
    shapes = {name: tuple(shape[1:]) for name, shape in
              zip(compiled.input_names, compiled.input_shapes, strict=True)}  # fmt: skip
    dtypes = dict(zip(compiled.input_names, compiled.input_dtypes, strict=True))
    loss_fn = _project_loss(project, compiled)
    loss = _loss_code(loss_fn)
    if loss is None and loss_fn is not None:
        writer.left_out.append(f"the loss ({type(loss_fn).__name__} with weights)")
    names = {name: _torch_name(name, writer.types, compiled) for name in compiled.trainable}
    training, left_out = torch_training_code(project.training, names)
    writer.left_out += left_out
    constants, data, left_out = torch_train.train_code(
        project, inputs=len(compiled.input_names), outputs=_outputs(project.graph),
        loss=type(loss_fn).__name__ if loss else None, trains="def make_optimizer" in training,
        data_name=data_file and data_file.name)  # fmt: skip
    writer.left_out += left_out
    index_labels = loss and ("CrossEntropy" in loss or "NLLLoss" in loss)
    labels = " (class labels as int64)" if index_labels else ""
    loss_lines = ["def make_loss():", f'    """The loss the project trains with{labels}."""',
                  f"    return {loss}", "", "", ""] if loss else []  # fmt: skip
    return TEMPLATE.format(
        title=_plain(project.name), version=__version__, script=_plain(script.name),
        weights=_plain(script.with_suffix(".npz").name), classes="\n\n\n".join(writer.classes),
        class_name=class_name, shapes=repr(shapes), dtypes=repr(dtypes), frozen=repr(frozen),
        loss="\n".join(loss_lines), main=torch_train.MAIN, training=training,
        constants=constants, data=_plain(data),
        trained=_plain(script.with_suffix(".trained.npz").name),
    )  # fmt: skip


TEMPLATE = '''\
"""{title}: a network exported from Cellwright {version} as PyTorch modules.

Loads its trained weights from {weights}, next to this file (NumPy arrays under the
state_dict's names). BatchNorm momentum is torch's (1 - MindSpore's).

    python {script}
        prints the outputs for a few random inputs;
    python {script} INPUT.npy -o OUTPUT.npy
        runs the network on your inputs (one .npy file per input) and saves the outputs;
    python {script} --train {data} --steps 100 [--batch-size B] [--out W.npz] [--seed S]
        trains it as the project does (its optimizer, learning-rate schedule, loss, clipping
        and batch size) on a .csv or .npz data file read as the project reads it, and writes
        the weights to W.npz (default: {trained}); run it with --weights W.npz;
    torchrun --standalone --nproc_per_node 2 {script} --train {data} --steps 100
        trains the same in 2 processes (gloo backend, CPUs): DistributedDataParallel, each
        process taking its share of every batch of B samples (B: a multiple of 2).

Training takes full batches of B samples in the app's order (per epoch, a permutation
drawn from the seed and the epoch) from every sample of the file. Under torchrun the
BatchNorm layers normalise over the whole batch of B (SyncedBatchNorm), so the weights
equal a single process's with the same B and seed; Dropout draws its masks per process,
so a network with Dropout trains alike but not to the same numbers.

To train it in your own loop (make_optimizer, make_scheduler, make_loss, clip_gradients):

    net = load_network().train(); optimizer = make_optimizer(net)
    scheduler = make_scheduler(optimizer, len(loader))
    for x, y in loader:  # each epoch
        optimizer.zero_grad(); loss(net(x), y).backward(); clip_gradients(net)
        optimizer.step(); scheduler.step()
"""

import argparse
import csv
import gc
import os
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel

WEIGHTS = Path(__file__).with_suffix(".npz")
TRAINED = WEIGHTS.with_suffix(".trained.npz")
# One sample's shape (without the batch axis) and number type, per input.
INPUT_SHAPES = {shapes}
INPUT_DTYPES = {dtypes}
# Parameters the project keeps frozen (requires_grad off).
FROZEN = {frozen}
{constants}

{classes}


{loss}{training}def load_weights(net, weights=WEIGHTS):
    """Copy the exported weights into `net` (a freshly made network)."""
    with np.load(weights, allow_pickle=False) as arrays:
        state = {{name: torch.from_numpy(arrays[name].copy()) for name in arrays.files}}
    net.load_state_dict(state, strict=True)
    for name, param in net.named_parameters():
        param.requires_grad_(name not in FROZEN)
    return net


def load_network(weights=WEIGHTS):
    """The network with its trained weights, in predict mode (call .train() to train it)."""
    return load_weights({class_name}(), weights).eval()


{main}    inputs = [torch.from_numpy(np.asarray(x, dtype=dtype))
              for x, dtype in zip(arrays, INPUT_DTYPES.values())]
    net = load_network(args.weights)
    with torch.no_grad():
        outputs = net(*inputs)
    if args.output is None:
        print(outputs)
    elif isinstance(outputs, tuple):
        np.savez(args.output, *(o.numpy() for o in outputs))
    else:
        np.save(args.output, outputs.numpy())


if __name__ == "__main__":
    main()
'''
