"""Function transformations: `grad`, `value_and_grad` and `ops.GradOperation`.

Each call runs the function once with recording on, with fresh tape leaves for
the differentiated inputs and for the requested weights, then one backward
pass from the output(s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from engine.autograd import leaf_node, run_backward, state
from engine.parameter import Parameter
from engine.tensor import Tensor, wrap


def _positions(grad_position, nargs: int):
    if grad_position is None:
        return None
    single = isinstance(grad_position, int)
    positions = (grad_position,) if single else tuple(grad_position)
    for p in positions:
        if not isinstance(p, int):
            raise TypeError(f"grad_position must be an int or a tuple of ints, got {p!r}")
        if not -nargs <= p < nargs:
            raise ValueError(
                f"grad_position {p} is out of range: the function was called with {nargs} "
                "positional argument(s)"
            )
    return single, tuple(p % nargs for p in positions)


def _weights_list(weights) -> list[Parameter] | None:
    if weights is None:
        return None
    if isinstance(weights, Parameter):
        return [weights]
    items = list(weights)
    for w in items:
        if not isinstance(w, Parameter):
            raise TypeError(f"weights must be Parameters, got {type(w).__name__}")
    return items


def _output_tensors(out, has_aux: bool):
    """The outputs that are differentiated, and the auxiliary ones."""
    if has_aux:
        if not isinstance(out, tuple) or len(out) < 2:
            raise TypeError("with has_aux=True the function must return a tuple of 2+ values")
        return (out[0],), tuple(out[1:])
    if isinstance(out, (tuple, list)):
        return tuple(out), ()
    return (out,), ()


def _zeros_like(t: Tensor) -> np.ndarray:
    return np.zeros(t._data.shape, dtype=t._data.dtype)


def _compute(fn, args, kwargs, positions, weights, has_aux, sens=None):
    """Run `fn` on the tape and backprop; returns (output, input_grads, weight_grads)."""
    args = list(args)
    leaves = []
    if positions is not None:
        for p in positions[1]:
            a = args[p]
            if not isinstance(a, Tensor):
                raise TypeError(
                    f"cannot differentiate with respect to argument {p}: it is a "
                    f"{type(a).__name__}, not a Tensor"
                )
            if a._data.dtype.kind in "fc":
                leaf = wrap(a._data, leaf_node(f"input{p}"))
                args[p] = leaf
            else:
                leaf = wrap(a._data)  # integer and bool inputs get a zero gradient
            leaves.append(leaf)
    saved_nodes = []
    if weights:
        for w in weights:
            saved_nodes.append(w._node)
            w._node = leaf_node(w.name)
    prev = state.recording
    try:
        state.recording = True
        out = fn(*args, **kwargs)
        state.recording = False
        diff, _aux = _output_tensors(out, has_aux)
        roots = []
        for i, o in enumerate(diff):
            if not isinstance(o, Tensor):
                raise TypeError(
                    f"cannot differentiate: the function returned a {type(o).__name__}, "
                    "not a Tensor"
                )
            if o._node is None or o._data.dtype.kind != "f":
                continue
            if sens is not None:
                s = sens[i] if isinstance(sens, (tuple, list)) else sens
                g = np.asarray(s._data if isinstance(s, Tensor) else s, dtype=o._data.dtype)
                g = np.broadcast_to(g, o._data.shape)
            else:
                g = np.ones(o._data.shape, dtype=o._data.dtype)
            roots.append((o._node, o._oi, g))
        found = run_backward(roots) if roots else {}
        input_grads = tuple(
            _result(found.get(leaf._node) if leaf._node is not None else None, leaf)
            for leaf in leaves
        )
        weight_grads = (
            tuple(_result(found.get(w._node), w) for w in weights) if weights is not None else None
        )
    finally:
        state.recording = prev
        if weights:
            for w, node in zip(weights, saved_nodes, strict=True):
                w._node = node
    return out, input_grads, weight_grads


def _result(g, like: Tensor) -> Tensor:
    if g is None:
        return wrap(_zeros_like(like))
    g = np.asarray(g)
    if g.dtype != like._data.dtype:
        g = g.astype(like._data.dtype)
    if g.shape != like._data.shape:
        g = np.broadcast_to(g, like._data.shape).copy()
    return wrap(g)


def _pack(positions, weights, input_grads, weight_grads, return_ids=False):
    """The result's shape: one gradient or a tuple per request; with `return_ids` each
    gradient becomes `(position, gradient)` or `(parameter name, gradient)`."""
    if return_ids:
        if positions is not None:
            input_grads = tuple(zip(positions[1], input_grads, strict=True))
        if weight_grads is not None:
            weight_grads = tuple((w.name, g) for w, g in zip(weights, weight_grads, strict=True))
    if positions is None:
        return weight_grads
    single = positions[0]
    ig = input_grads[0] if single else input_grads
    if weights is None:
        return ig
    return ig, weight_grads


def _check(fn, grad_position, weights, has_aux, return_ids):
    if not callable(fn):
        raise TypeError(f"grad needs a function or Cell, got {type(fn).__name__}")
    if grad_position is None and weights is None:
        raise ValueError("grad_position and weights cannot both be None")
    for name, flag in (("has_aux", has_aux), ("return_ids", return_ids)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")


def grad(fn: Callable, grad_position=0, weights=None, has_aux: bool = False,
         return_ids: bool = False) -> Callable:
    """Gradient function of `fn` (MindSpore 2.x `mindspore.grad`).

    An int `grad_position` gives one gradient, a tuple gives a tuple; with
    `weights` the result is `(input_grads, weight_grads)`, or only the weight
    gradients when `grad_position` is None.  With `has_aux`, only the first
    output is differentiated and `(gradients, aux)` is returned.  With
    `return_ids`, the result keeps its shape but each gradient becomes a pair:
    `(position, gradient)` for an input, `(parameter name, gradient)` for a
    weight (`get_grad` picks one out).
    """
    _check(fn, grad_position, weights, has_aux, return_ids)
    wlist = _weights_list(weights)

    def grad_fn(*args, **kwargs):
        positions = _positions(grad_position, len(args))
        out, ig, wg = _compute(fn, args, kwargs, positions, wlist, has_aux)
        grads = _pack(positions, wlist, ig, wg, return_ids)
        if has_aux:
            return grads, tuple(out[1:])
        return grads

    return grad_fn


def value_and_grad(fn: Callable, grad_position=0, weights=None, has_aux: bool = False,
                   return_ids: bool = False) -> Callable:
    """Like `grad`, returning `(fn(*args), gradients)` from the same single forward run."""
    _check(fn, grad_position, weights, has_aux, return_ids)
    wlist = _weights_list(weights)

    def value_and_grad_fn(*args, **kwargs):
        positions = _positions(grad_position, len(args))
        out, ig, wg = _compute(fn, args, kwargs, positions, wlist, has_aux)
        return out, _pack(positions, wlist, ig, wg, return_ids)

    return value_and_grad_fn


def get_grad(gradients, identifier):
    """MindSpore 2.x `get_grad(gradients, identifier)`: from the result of
    `grad(..., return_ids=True)` (or the second result of `value_and_grad`), the
    gradient of input position `identifier` (an int) or of Parameter `identifier`.
    """
    if isinstance(identifier, Parameter):
        key = identifier.name
    elif isinstance(identifier, int) and not isinstance(identifier, bool):
        key = identifier
    else:
        raise TypeError(
            f"get_grad: identifier must be an int position or a Parameter, got "
            f"{type(identifier).__name__}"
        )
    found = _find_grad(gradients, key, isinstance(identifier, Parameter))
    if found is None:
        raise RuntimeError(f"get_grad: no gradient for {identifier!r} in the given gradients")
    return found


def _find_grad(node, key, by_name: bool):
    if not isinstance(node, tuple):
        return None
    if len(node) == 2 and isinstance(node[1], Tensor) and not isinstance(node[0], Tensor):
        ident = node[0]
        if (isinstance(ident, str) == by_name) and ident == key:
            return node[1]
        return None
    for item in node:
        hit = _find_grad(item, key, by_name)
        if hit is not None:
            return hit
    return None


class GradOperation:
    """`ops.GradOperation(get_all, get_by_list, sens_param)`: a higher-order gradient maker."""

    def __init__(self, get_all: bool = False, get_by_list: bool = False, sens_param: bool = False):
        self.get_all = get_all
        self.get_by_list = get_by_list
        self.sens_param = sens_param

    def __call__(self, fn: Callable, weights: Sequence[Parameter] | None = None) -> Callable:
        if not callable(fn):
            raise TypeError(f"GradOperation needs a function or Cell, got {type(fn).__name__}")
        if self.get_by_list and weights is None:
            raise TypeError("GradOperation(get_by_list=True) needs weights: grad_op(fn, params)")
        wlist = _weights_list(weights) if self.get_by_list else None

        def grad_fn(*args, **kwargs):
            sens = None
            if self.sens_param:
                if not args:
                    raise TypeError("sens_param=True: pass the sensitivity as the last argument")
                *args, sens = args
            nargs = len(args)
            if self.get_all:
                positions = (False, tuple(range(nargs)))
            elif self.get_by_list:
                positions = None
            else:
                if nargs == 0:
                    raise TypeError("GradOperation: the function needs at least one input")
                positions = (True, (0,))
            _, ig, wg = _compute(fn, args, kwargs, positions, wlist, False, sens)
            if self.get_by_list:
                return (ig, wg) if self.get_all else wg
            return ig if self.get_all else ig[0]

        return grad_fn
