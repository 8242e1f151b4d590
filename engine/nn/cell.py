"""`nn.Cell`: parameter registration, traversal, train/predict mode, hooks and custom `bprop`."""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict

import numpy as np

from engine import autograd
from engine.autograd import HookError, Node, leaf_node, no_grad, run_backward, state, walk_region
from engine.parameter import Parameter
from engine.tensor import Tensor, wrap

_hook_ids = itertools.count()


class _Tracing(threading.local):
    # `engine.plan` sets `tracer` while it traces one step in this thread: every Cell
    # call then goes to `tracer(cell, args, kwargs)`. `hook_changes[0]` grows whenever
    # hooks are added or removed (in any thread), so a compiled step notices.
    tracer = None


tracing = _Tracing()
hook_changes = [0]


class HookHandle:
    """Returned by `register_*_hook`; `remove()` detaches the hook. Also a context manager."""

    __slots__ = ("_cell", "_registry", "id")

    def __init__(self, cell: Cell, registry: dict, hook_id: int):
        self._cell = cell
        self._registry = registry
        self.id = hook_id

    def remove(self) -> None:
        if self._registry.pop(self.id, None) is not None:
            self._cell._update_hooked()

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc) -> bool:
        self.remove()
        return False

    def __repr__(self) -> str:
        return f"<HookHandle {self.id} on {type(self._cell).__name__}>"


def _describe(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _flatten(out):
    """Output structure -> (tuple of Tensors, rebuild function)."""
    if isinstance(out, Tensor):
        return (out,), lambda items: items[0]
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        kind = type(out)
        return tuple(out), lambda items: kind(items)
    return None, None


class Cell:
    """Base class of every network layer and network.

    Assign Parameters and sub-Cells as attributes in `__init__` (after
    `super().__init__()`), and write the forward computation in `construct`.
    """

    bprop = None  # subclasses may define bprop(self, *inputs, out, dout)

    def __init__(self, auto_prefix: bool = True, flags=None):
        d = self.__dict__
        d["_params"] = OrderedDict()
        d["_cells"] = OrderedDict()
        d["_pre_hooks"] = OrderedDict()
        d["_fwd_hooks"] = OrderedDict()
        d["_bwd_hooks"] = OrderedDict()
        d["_auto_prefix"] = auto_prefix
        d["_scope_name"] = ""
        d["training"] = False
        d["bprop_debug"] = False
        d["_hooked"] = type(self).bprop is not None

    # -- registration ------------------------------------------------------------
    def _registries(self):
        try:
            return self.__dict__["_params"], self.__dict__["_cells"]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before "
                "assigning Parameters or sub-Cells"
            ) from None

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, Parameter):
            params, cells = self._registries()
            if not value._named:
                value.name = name
                value._named = True
            cells.pop(name, None)
            params[name] = value
        elif isinstance(value, Cell):
            params, cells = self._registries()
            params.pop(name, None)
            cells[name] = value
            if not value._scope_name:
                # First attachment names the sub-Cell and makes its Parameter names dotted
                # paths; attaching the same Cell again (sharing) renames nothing.
                value.__dict__["_scope_name"] = name
                if self._auto_prefix:
                    value.update_parameters_name(name + ".")
        else:
            d = self.__dict__
            if "_params" in d:
                if name in d["_params"]:
                    if value is not None:
                        raise TypeError(
                            f"'{name}' is a Parameter of {type(self).__name__}; assign a "
                            "Parameter or use set_data() to change its value"
                        )
                    d["_params"][name] = None
                d["_cells"].pop(name, None)
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        self.__dict__.get("_params", {}).pop(name, None)
        self.__dict__.get("_cells", {}).pop(name, None)
        object.__delattr__(self, name)

    def insert_param_to_cell(self, param_name: str, param: Parameter, check_name_contain_dot=True):
        if check_name_contain_dot and "." in param_name:
            raise KeyError(f"Parameter name '{param_name}' must not contain '.'")
        setattr(self, param_name, param)

    def insert_child_to_cell(self, child_name: str, child_cell: Cell) -> None:
        setattr(self, child_name, child_cell)

    def update_parameters_name(self, prefix: str = "", recurse: bool = True) -> None:
        """Prefix every Parameter name in this Cell (and below) so names are dotted paths."""
        for path, p in self.parameters_and_names(expand=recurse):
            p.name = prefix + path

    @property
    def cls_name(self) -> str:
        return type(self).__name__

    # -- traversal ---------------------------------------------------------------
    def cells_and_names(self, cells=None, name_prefix: str = ""):
        """Yield `(dotted_name, cell)` for this Cell and every sub-Cell, each once, in order."""
        memo = set() if cells is None else cells
        stack = [(name_prefix, self)]
        while stack:
            name, cell = stack.pop()
            if id(cell) in memo:
                continue
            memo.add(id(cell))
            yield name, cell
            children = [
                (f"{name}.{child_name}" if name else child_name, child)
                for child_name, child in cell._cells.items()
                if child is not None
            ]
            stack.extend(reversed(children))

    def cells(self):
        return list(self._cells.values())

    def name_cells(self) -> OrderedDict:
        return OrderedDict((k, v) for k, v in self._cells.items() if v is not None)

    def parameters_and_names(self, name_prefix: str = "", expand: bool = True):
        """Yield `(dotted_name, parameter)`; a Parameter shared by several Cells comes once."""
        seen = set()
        walk = self.cells_and_names(name_prefix=name_prefix) if expand else [(name_prefix, self)]
        for cell_name, cell in walk:
            for pname, p in cell._params.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{cell_name}.{pname}" if cell_name else pname), p

    def get_parameters(self, expand: bool = True):
        for _, p in self.parameters_and_names(expand=expand):
            yield p

    def trainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(expand=recurse) if p.requires_grad]

    def untrainable_params(self, recurse: bool = True) -> list[Parameter]:
        return [p for p in self.get_parameters(expand=recurse) if not p.requires_grad]

    def parameters_dict(self, recurse: bool = True) -> OrderedDict:
        """Parameters keyed by name (as MindSpore); a clashing name falls back to its path."""
        result = OrderedDict()
        for path, p in self.parameters_and_names(expand=recurse):
            result[p.name if p.name not in result else path] = p
        return result

    # -- mode --------------------------------------------------------------------
    def set_train(self, mode: bool = True) -> Cell:
        for _, cell in self.cells_and_names():
            cell.__dict__["training"] = bool(mode)
        return self

    @property
    def phase(self) -> str:
        return "train" if self.training else "predict"

    def set_grad(self, requires_grad: bool = True) -> Cell:
        return self

    # -- calling -----------------------------------------------------------------
    def construct(self, *inputs, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define construct()")

    def __call__(self, *args, **kwargs):
        if tracing.tracer is not None:
            return tracing.tracer(self, args, kwargs)
        if not self._hooked:
            return self.construct(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _update_hooked(self) -> None:
        hook_changes[0] += 1
        self.__dict__["_hooked"] = bool(
            self._pre_hooks or self._fwd_hooks or self._bwd_hooks or type(self).bprop is not None
        )

    def _register(self, registry: dict, fn, kind: str) -> HookHandle:
        if not callable(fn):
            raise TypeError(f"{kind} must be callable, got {type(fn).__name__}")
        hook_id = next(_hook_ids)
        registry[hook_id] = fn
        self._update_hooked()
        return HookHandle(self, registry, hook_id)

    def register_forward_pre_hook(self, hook_fn) -> HookHandle:
        """`hook_fn(cell, inputs)`; a returned value replaces the inputs."""
        return self._register(self._pre_hooks, hook_fn, "forward pre-hook")

    def register_forward_hook(self, hook_fn) -> HookHandle:
        """`hook_fn(cell, inputs, outputs)`; a returned value replaces the outputs."""
        return self._register(self._fwd_hooks, hook_fn, "forward hook")

    def register_backward_hook(self, hook_fn) -> HookHandle:
        """`hook_fn(cell, grad_input, grad_output)`; a returned tuple replaces grad_output.

        `grad_input` is the gradient arriving at the Cell's output(s),
        `grad_output` the gradient the Cell sends to its inputs.
        """
        return self._register(self._bwd_hooks, hook_fn, "backward hook")

    def _describe(self) -> str:
        name = self._scope_name
        return f"{type(self).__name__} '{name}'" if name else type(self).__name__

    def _run_hook(self, kind: str, fn, *args):
        try:
            return fn(self, *args)
        except Exception as exc:
            raise HookError(
                f"{kind} {_describe(fn)} on Cell {self._describe()} raised "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def _call_with_hooks(self, args, kwargs):
        for fn in list(self._pre_hooks.values()):
            result = self._run_hook("forward pre-hook", fn, args)
            if result is not None:
                args = tuple(result) if isinstance(result, (tuple, list)) else (result,)
        if state.recording and (self._bwd_hooks or type(self).bprop is not None):
            out = self._call_as_node(args, kwargs)
        else:
            out = self.construct(*args, **kwargs)
        for fn in list(self._fwd_hooks.values()):
            result = self._run_hook("forward hook", fn, args, out)
            if result is not None:
                out = result
        return out

    def _call_as_node(self, args, kwargs):
        """Record this call as one tape node so backward hooks and `bprop` see its gradients."""
        boundary = next(autograd._counter)
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        custom = type(self).bprop is not None
        leaves = []
        if custom:
            with no_grad():
                out = self.construct(*args, **kwargs)
            declared = getattr(self, "internal_params", None) or ()
            internal = [p for p in declared if p._node is not None]
            externals = [(p._node, p._oi) for p in internal]
        else:
            inner = list(args)
            for i in positions:
                leaf = wrap(args[i]._data, leaf_node("cell input"))
                inner[i] = leaf
                leaves.append(leaf)
            out = self.construct(*inner, **kwargs)
            internal = []
        outs, rebuild = _flatten(out)
        if outs is None:
            raise TypeError(
                f"Cell {self._describe()} returned {type(out).__name__}; Cells with backward "
                "hooks or bprop must return a Tensor or a tuple of Tensors"
            )
        if not custom:
            externals = walk_region([o._node for o in outs if o._node is not None], boundary)
            externals += [
                (o._node, o._oi) for o in outs if o._node is not None and o._node.seq < boundary
            ]
            externals = list(dict.fromkeys(externals))
        parents = tuple(
            (args[i]._node, args[i]._oi) if args[i]._node is not None else None for i in positions
        ) + tuple(externals)
        if all(link is None for link in parents):
            return out  # nothing upstream wants a gradient
        saved = (self, args, positions, outs, rebuild, leaves, externals, internal, boundary)
        node = Node(_cell_vjp, saved, parents, name=self._describe(), n_out=len(outs))
        return rebuild([wrap(o._data, node, k) for k, o in enumerate(outs)])

    # -- repr --------------------------------------------------------------------
    def extend_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, cell in self._cells.items():
            child = repr(cell).replace("\n", "\n  ")
            lines.append(f"  ({name}): {child}")
        extra = self.extend_repr()
        head = f"{type(self).__name__}<{extra}"
        if not lines:
            return head + ">"
        return head + "\n" + "\n".join(lines) + "\n  >"


def _as_grad_tuple(result, count: int, cell: Cell, what: str) -> list:
    if isinstance(result, Tensor):
        result = (result,)
    if not isinstance(result, (tuple, list)):
        raise TypeError(
            f"{what} of Cell {cell._describe()} must return a tuple of Tensors, "
            f"got {type(result).__name__}"
        )
    if len(result) != count:
        raise ValueError(
            f"{what} of Cell {cell._describe()} returned {len(result)} gradient(s) for "
            f"{count} input(s)"
        )
    return list(result)


def _array(g):
    if g is None:
        return None
    return g._data if isinstance(g, Tensor) else np.asarray(g)


def _node_grad(found: dict, link):
    g = found.get(link[0])
    if g is None:
        return None
    return g if link[0].n_out == 1 else g[link[1]]


def _cell_vjp(g, saved, needs):
    cell, args, positions, outs, rebuild, leaves, externals, internal, boundary = saved
    gs = [g] if len(outs) == 1 else list(g)
    gs = [np.zeros_like(o._data) if gi is None else gi for gi, o in zip(gs, outs, strict=True)]
    if type(cell).bprop is not None:
        dout = rebuild([wrap(x) for x in gs])
        out = rebuild([wrap(o._data) for o in outs])
        plain_args = [wrap(a._data) if isinstance(a, Tensor) else a for a in args]
        try:
            result = cell.bprop(*plain_args, out, dout)
        except Exception as exc:
            raise HookError(
                f"bprop of Cell {cell._describe()} raised {type(exc).__name__}: {exc}"
            ) from exc
        param_grads = {}
        if (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)
                and not isinstance(result[0], Tensor)):
            result, param_grads = result
        grads = _as_grad_tuple(result, len(args), cell, "bprop")
        input_grads = [_array(grads[i]) for i in positions]
        ext_grads = [_array(param_grads.get(p)) for p in internal]
    else:
        roots = [
            (o._node, o._oi, gi) for o, gi in zip(outs, gs, strict=True) if o._node is not None
        ]
        found = run_backward(roots, boundary)
        input_grads = [found.get(leaf._node) for leaf in leaves]
        ext_grads = [_node_grad(found, link) for link in externals]
    if cell._bwd_hooks:
        grad_input = tuple(wrap(x) for x in gs)
        grad_output = tuple(
            wrap(x if x is not None else np.zeros_like(args[i]._data))
            for x, i in zip(input_grads, positions, strict=True)
        )
        for fn in list(cell._bwd_hooks.values()):
            result = cell._run_hook("backward hook", fn, grad_input, grad_output)
            if result is not None:
                grad_output = tuple(_as_grad_tuple(result, len(positions), cell, "backward hook"))
        input_grads = [_array(t) for t in grad_output]
    for k, i in enumerate(positions):
        gk = input_grads[k]
        if gk is not None and gk.shape != args[i]._data.shape:
            raise ValueError(
                f"gradient for input {i} of Cell {cell._describe()} has shape {gk.shape}, "
                f"expected {args[i]._data.shape}"
            )
    return tuple(input_grads) + tuple(ext_grads)
