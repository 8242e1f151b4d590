"""Differentiable functional ops on Tensors; each forward sits beside its gradient rule.

A forward computes with NumPy and, only while recording and only when an
input is on the tape, records one `Node` with its rule.  Rules are named
`_<op>_vjp(g, saved, needs)` and return one gradient (or None) per input.
"""

from __future__ import annotations

import numpy as np

from engine._dtype import to_numpy_dtype
from engine.autograd import Node, state, unbroadcast
from engine.ops._args import renamed
from engine.ops._erf import erf
from engine.tensor import Tensor, _infer_array, wrap

# ----------------------------------------------------------------------------- plumbing


def _arr(x):
    """Raw operand: a Tensor's array, a Python number as is (NumPy's weak typing), else an array."""
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (np.ndarray, float, int)):
        return x
    return _infer_array(x, None)


def _link(x):
    if isinstance(x, Tensor) and x._node is not None:
        return (x._node, x._oi)
    return None


def _finish1(out, x, vjp, saved, name):
    if state.recording and x._node is not None:
        return wrap(out, Node(vjp, saved, ((x._node, x._oi),), name))
    return wrap(out)


def _finish2(out, a, b, vjp, saved, name):
    if state.recording:
        la = _link(a)
        lb = _link(b)
        if la is not None or lb is not None:
            return wrap(out, Node(vjp, saved, (la, lb), name))
    return wrap(out)


def _finish_n(out, inputs, vjp, saved, name):
    if state.recording:
        links = tuple(_link(x) for x in inputs)
        if any(link is not None for link in links):
            return wrap(out, Node(vjp, saved, links, name))
    return wrap(out)


def _tensor(x, name="input") -> Tensor:
    if isinstance(x, Tensor):
        return x
    try:
        return wrap(_infer_array(x, None))
    except TypeError as exc:
        raise TypeError(f"{name} must be a Tensor, got {type(x).__name__}") from exc


def _fix_float(out, ad, bd):
    # An int tensor mixed with a Python float gives float32 (the seeds' default), not float64.
    if out.dtype.char == "d" and not (
        getattr(ad, "dtype", None) == np.float64 or getattr(bd, "dtype", None) == np.float64
    ):
        return out.astype(np.float32)
    return out


def _shape(x) -> tuple:
    return x.shape if isinstance(x, np.ndarray) else ()


# ----------------------------------------------------------------------------- arithmetic


def add(input, other):  # noqa: A002 - MindSpore 2.x names
    x, y = input, other
    a, b = _arr(x), _arr(y)
    out = np.add(a, b)
    if out.dtype.char == "d":
        out = _fix_float(out, a, b)
    return _finish2(out, x, y, _add_vjp, (_shape(a), _shape(b)), "add")


def _add_vjp(g, saved, needs):
    sa, sb = saved
    return (unbroadcast(g, sa) if needs[0] else None, unbroadcast(g, sb) if needs[1] else None)


def sub(input, other):  # noqa: A002 - MindSpore 2.x names
    x, y = input, other
    a, b = _arr(x), _arr(y)
    out = np.subtract(a, b)
    if out.dtype.char == "d":
        out = _fix_float(out, a, b)
    return _finish2(out, x, y, _sub_vjp, (_shape(a), _shape(b)), "sub")


def _sub_vjp(g, saved, needs):
    sa, sb = saved
    return (unbroadcast(g, sa) if needs[0] else None, unbroadcast(-g, sb) if needs[1] else None)


def mul(input, other):  # noqa: A002 - MindSpore 2.x names
    x, y = input, other
    a, b = _arr(x), _arr(y)
    out = np.multiply(a, b)
    if out.dtype.char == "d":
        out = _fix_float(out, a, b)
    return _finish2(out, x, y, _mul_vjp, (a, b), "mul")


def _mul_vjp(g, saved, needs):
    a, b = saved
    return (
        unbroadcast(g * b, _shape(a)) if needs[0] else None,
        unbroadcast(g * a, _shape(b)) if needs[1] else None,
    )


def div(input, other, *, rounding_mode=None):  # noqa: A002
    """MindSpore 2.x `ops.div(input, other, *, rounding_mode=None)` ('floor' or 'trunc')."""
    x, y = input, other
    if rounding_mode is not None:
        return _rounded_div(x, y, rounding_mode)
    a, b = _arr(x), _arr(y)
    out = np.true_divide(a, b)
    if out.dtype.char == "d":
        out = _fix_float(out, a, b)
    return _finish2(out, x, y, _div_vjp, (a, b, out), "div")


def _div_vjp(g, saved, needs):
    a, b, out = saved
    return (
        unbroadcast(g / b, _shape(a)) if needs[0] else None,
        unbroadcast(-g * out / b, _shape(b)) if needs[1] else None,
    )


def _rounded_div(x, y, mode):
    if mode == "floor":
        return floor_div(x, y)
    if mode != "trunc":
        raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got {mode!r}")
    a, b = _arr(x), _arr(y)
    out = np.trunc(np.true_divide(a, b))
    if np.result_type(a, b).kind in "iu":
        out = out.astype(np.result_type(a, b))
    elif out.dtype.char == "d":
        out = _fix_float(out, a, b)
    return wrap(out)  # piecewise constant: no gradient


@renamed(x="input", y="other")
def floor_div(input, other):  # noqa: A002
    return wrap(np.floor_divide(_arr(input), _arr(other)))


@renamed(x="input", y="other")
def mod(input, other):  # noqa: A002
    x, y = input, other
    a, b = _arr(x), _arr(y)
    out = np.mod(a, b)
    return _finish2(out, x, y, _mod_vjp, (a, b), "mod")


def _mod_vjp(g, saved, needs):
    a, b = saved
    return (
        unbroadcast(g, _shape(a)) if needs[0] else None,
        unbroadcast(-g * np.floor_divide(a, b), _shape(b)) if needs[1] else None,
    )


def pow(input, exponent):  # noqa: A001,A002 - MindSpore 2.x names
    x, y = input, exponent
    a, b = _arr(x), _arr(y)
    out = np.power(a, b)
    if out.dtype.char == "d":
        out = _fix_float(out, a, b)
    return _finish2(out, x, y, _pow_vjp, (a, b, out), "pow")


def _pow_vjp(g, saved, needs):
    a, b, out = saved
    ga = gb = None
    if needs[0]:
        ga = unbroadcast(g * b * np.power(a, b - 1), _shape(a))
    if needs[1]:
        safe = np.where(a > 0, a, 1)
        gb = unbroadcast(g * out * np.log(safe) * (a > 0), _shape(b))
    return ga, gb


def neg(input):  # noqa: A002
    x = _tensor(input)
    return _finish1(np.negative(x._data), x, _neg_vjp, None, "neg")


def _neg_vjp(g, saved, needs):
    return (-g,)


def maximum(input, other):  # noqa: A002
    x, y = input, other
    a, b = _arr(x), _arr(y)
    out = np.maximum(a, b)
    return _finish2(out, x, y, _maximum_vjp, (a, b), "maximum")


def _maximum_vjp(g, saved, needs):
    a, b = saved
    mask = a >= b
    return (
        unbroadcast(g * mask, _shape(a)) if needs[0] else None,
        unbroadcast(g * ~mask, _shape(b)) if needs[1] else None,
    )


def minimum(input, other):  # noqa: A002
    x, y = input, other
    a, b = _arr(x), _arr(y)
    out = np.minimum(a, b)
    return _finish2(out, x, y, _minimum_vjp, (a, b), "minimum")


def _minimum_vjp(g, saved, needs):
    a, b = saved
    mask = a <= b
    return (
        unbroadcast(g * mask, _shape(a)) if needs[0] else None,
        unbroadcast(g * ~mask, _shape(b)) if needs[1] else None,
    )


# ----------------------------------------------------------------------------- matmul and dense


def matmul(input, other):  # noqa: A002
    x, y = _tensor(input, "matmul input"), _tensor(other, "matmul other")
    a, b = x._data, y._data
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul needs tensors with at least 1 dimension")
    ka = a.shape[-1]
    kb = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if ka != kb:
        raise ValueError(
            f"matmul shape mismatch: {tuple(a.shape)} @ {tuple(b.shape)} "
            f"(inner dimensions {ka} and {kb} differ)"
        )
    out = np.matmul(a, b)
    return _finish2(out, x, y, _matmul_vjp, (a, b), "matmul")


def _matmul_vjp(g, saved, needs):
    a, b = saved
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -2)
    if b.ndim == 1:
        g2 = np.expand_dims(g2, -1)
    ga = gb = None
    if needs[0]:
        ga = np.matmul(g2, np.swapaxes(b2, -1, -2))
        if a.ndim == 1:
            ga = ga.reshape(ga.shape[:-2] + ga.shape[-1:])
        ga = unbroadcast(ga, a.shape)
    if needs[1]:
        gb = np.matmul(np.swapaxes(a2, -1, -2), g2)
        if b.ndim == 1:
            gb = gb[..., 0]
        gb = unbroadcast(gb, b.shape)
    return ga, gb


def dense(input, weight, bias=None):  # noqa: A002
    """MindSpore 2.x `ops.dense(input, weight, bias=None)`: `input @ weight.T + bias`."""
    x = _tensor(input)
    weight = _tensor(weight, "weight")
    bias = None if bias is None else _tensor(bias, "bias")
    a, w = x._data, weight._data
    if a.shape[-1] != w.shape[1]:
        raise ValueError(
            f"Dense expects inputs with {w.shape[1]} features, got shape {tuple(a.shape)}"
        )
    out = a @ w.T
    if bias is not None:
        out += bias._data
    if state.recording:
        links = (_link(x), _link(weight), _link(bias) if bias is not None else None)
        if links[0] is not None or links[1] is not None or links[2] is not None:
            return wrap(out, Node(_dense_vjp, (a, w), links, "dense"))
    return wrap(out)


def _dense_vjp(g, saved, needs):
    a, w = saved
    gx = g @ w if needs[0] else None
    if needs[1]:
        if a.ndim == 2:
            gw = g.T @ a
        else:
            gw = g.reshape(-1, g.shape[-1]).T @ a.reshape(-1, a.shape[-1])
    else:
        gw = None
    gb = g.reshape(-1, g.shape[-1]).sum(axis=0) if needs[2] else None
    return gx, gw, gb


# ----------------------------------------------------------------------------- unary math


def _unary(fn, vjp, name):
    @renamed(x="input")
    def op(input):  # noqa: A002
        x = _tensor(input)
        d = x._data
        out = fn(d)
        return _finish1(out, x, vjp, (d, out), name)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"MindSpore 2.x `ops.{name}(input)`."
    return op


def _exp_vjp(g, saved, needs):
    return (g * saved[1],)


def _log_vjp(g, saved, needs):
    return (g / saved[0],)


def _sqrt_vjp(g, saved, needs):
    return (g / (2 * saved[1]),)


def _abs_vjp(g, saved, needs):
    return (g * np.sign(saved[0]),)


def _relu_vjp(g, saved, needs):
    return (g * (saved[1] > 0),)


def _sigmoid_vjp(g, saved, needs):
    s = saved[1]
    return (g * s * (1 - s),)


def _tanh_vjp(g, saved, needs):
    t = saved[1]
    return (g * (1 - t * t),)


def _square_vjp(g, saved, needs):
    return (g * 2 * saved[0],)


def _sin_vjp(g, saved, needs):
    return (g * np.cos(saved[0]),)


def _cos_vjp(g, saved, needs):
    return (-g * np.sin(saved[0]),)


def _softplus_vjp(g, saved, needs):
    bx, linear = saved
    return (np.where(linear, g, g * _np_sigmoid(bx)),)


def _rsqrt_vjp(g, saved, needs):
    return (-0.5 * g * saved[1] ** 3,)


def _np_sigmoid(d):
    # Stable in both tails: exp of a non-positive number only.
    e = np.exp(-np.abs(d))
    return np.where(d >= 0, 1 / (1 + e), e / (1 + e)).astype(d.dtype, copy=False)


def _np_relu(d):
    return np.maximum(d, 0, dtype=d.dtype) if d.dtype.kind == "f" else np.maximum(d, 0)


def _np_softplus(d):
    return (np.maximum(d, 0) + np.log1p(np.exp(-np.abs(d)))).astype(d.dtype, copy=False)


exp = _unary(np.exp, _exp_vjp, "exp")
log = _unary(np.log, _log_vjp, "log")
sqrt = _unary(np.sqrt, _sqrt_vjp, "sqrt")
rsqrt = _unary(lambda d: 1 / np.sqrt(d), _rsqrt_vjp, "rsqrt")
abs = _unary(np.abs, _abs_vjp, "abs")  # noqa: A001
relu = _unary(_np_relu, _relu_vjp, "relu")
sigmoid = _unary(_np_sigmoid, _sigmoid_vjp, "sigmoid")
tanh = _unary(np.tanh, _tanh_vjp, "tanh")
square = _unary(np.square, _square_vjp, "square")
sin = _unary(np.sin, _sin_vjp, "sin")
cos = _unary(np.cos, _cos_vjp, "cos")


@renamed(x="input")
def softplus(input, beta=1, threshold=20):  # noqa: A002
    """MindSpore 2.x `ops.softplus(input, beta=1, threshold=20)`: `log(1 + exp(beta*x)) / beta`,
    linear where `beta * x > threshold`."""
    x = _tensor(input)
    d = x._data
    bx = d * beta
    linear = bx > threshold
    out = np.where(linear, d, _np_softplus(bx) / beta).astype(d.dtype, copy=False)
    return _finish1(out, x, _softplus_vjp, (bx, linear), "softplus")


@renamed(x="input")
def leaky_relu(input, alpha=0.2):  # noqa: A002
    """MindSpore 2.x `ops.leaky_relu(input, alpha=0.2)`."""
    x = _tensor(input)
    d = x._data
    out = np.where(d > 0, d, d * alpha).astype(d.dtype, copy=False)
    return _finish1(out, x, _leaky_relu_vjp, (d, alpha), "leaky_relu")


def _leaky_relu_vjp(g, saved, needs):
    d, alpha = saved
    return (np.where(d > 0, g, g * alpha),)


_GELU_C = float(np.sqrt(2 / np.pi))  # a Python float keeps float32 inputs float32
_SQRT_HALF = float(np.sqrt(0.5))
_INV_SQRT_2PI = float(1 / np.sqrt(2 * np.pi))


@renamed(x="input", input_x="input")
def gelu(input, approximate="none"):  # noqa: A002
    """MindSpore 2.x `ops.gelu(input, approximate='none')`: 'none' (erf) or 'tanh'.

    (`nn.GELU()` defaults to the tanh form; the functional op defaults to erf.)
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    x = _tensor(input)
    d = x._data
    if approximate == "tanh":
        inner = _GELU_C * (d + 0.044715 * d**3)
        t = np.tanh(inner)
        out = 0.5 * d * (1 + t)
        return _finish1(out, x, _gelu_tanh_vjp, (d, t), "gelu")
    cdf = erf(d * _SQRT_HALF)
    cdf += 1
    cdf *= 0.5
    return _finish1((d * cdf).astype(d.dtype, copy=False), x, _gelu_erf_vjp, (d, cdf), "gelu")


def _gelu_tanh_vjp(g, saved, needs):
    d, t = saved
    dinner = _GELU_C * (1 + 3 * 0.044715 * d * d)
    return (g * (0.5 * (1 + t) + 0.5 * d * (1 - t * t) * dinner),)


def _gelu_erf_vjp(g, saved, needs):
    d, cdf = saved  # d/dx x·Φ(x) = Φ(x) + x·φ(x), φ(x) = exp(-x²/2)/√(2π) exactly
    pdf = np.exp(-0.5 * d * d) * _INV_SQRT_2PI
    return (g * (cdf + d * pdf),)


@renamed(x="input")
def clip(input, min=None, max=None):  # noqa: A002 - MindSpore's names
    """MindSpore 2.x `ops.clamp(input, min=None, max=None)` (`ops.clip` is the same op)."""
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' and 'max' must be given")
    x = _tensor(input)
    d = x._data
    min = None if min is None else _arr(min)  # noqa: A001
    max = None if max is None else _arr(max)  # noqa: A001
    out = np.clip(d, min, max)
    return _finish1(out, x, _clip_vjp, (d, min, max), "clip")


def _clip_vjp(g, saved, needs):
    d, lo, hi = saved
    mask = np.ones(d.shape, dtype=bool)
    if lo is not None:
        mask &= d >= lo
    if hi is not None:
        mask &= d <= hi
    return (g * mask,)


clamp = clip


@renamed(x="input")
def cast(input, dtype):  # noqa: A002
    x = _tensor(input)
    target = to_numpy_dtype(dtype)
    d = x._data
    if d.dtype == target:
        return x
    out = d.astype(target)
    if target.kind != "f" or d.dtype.kind != "f":
        return wrap(out)  # integer and bool results are not differentiated
    return _finish1(out, x, _cast_vjp, d.dtype, "cast")


def _cast_vjp(g, saved, needs):
    return (g.astype(saved),)


@renamed(x="input")
def identity(input):  # noqa: A002
    x = _tensor(input)
    return _finish1(x._data, x, _identity_vjp, None, "identity")


def _identity_vjp(g, saved, needs):
    return (g,)


# ----------------------------------------------------------------------------- softmax family


@renamed(x="input", dim="axis")
def softmax(input, axis=-1, *, dtype=None):  # noqa: A002
    """MindSpore 2.x `ops.softmax(input, axis=-1, *, dtype=None)`; `dtype` casts the input first."""
    x = _tensor(input)
    if dtype is not None:
        x = cast(x, dtype)
    d = x._data
    e = np.exp(d - d.max(axis=axis, keepdims=True))
    out = e / e.sum(axis=axis, keepdims=True)
    return _finish1(out, x, _softmax_vjp, (out, axis), "softmax")


def _softmax_vjp(g, saved, needs):
    s, axis = saved
    gs = g * s
    return (gs - s * gs.sum(axis=axis, keepdims=True),)


@renamed(x="logits", input="logits", dim="axis")
def log_softmax(logits, axis=-1):
    """MindSpore 2.x `ops.log_softmax(logits, axis=-1)`."""
    x = _tensor(logits)
    d = x._data
    shifted = d - d.max(axis=axis, keepdims=True)
    out = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return _finish1(out, x, _log_softmax_vjp, (out, axis), "log_softmax")


def _log_softmax_vjp(g, saved, needs):
    out, axis = saved
    return (g - np.exp(out) * g.sum(axis=axis, keepdims=True),)


@renamed(x="input", dim="axis", keepdim="keep_dims", keepdims="keep_dims")
def logsumexp(input, axis=None, keep_dims=False):  # noqa: A002
    """MindSpore 2.x `ops.logsumexp(input, axis, keep_dims=False)` (axis None: all elements)."""
    x = _tensor(input)
    d = x._data
    m = d.max(axis=axis, keepdims=True)
    lse = m + np.log(np.exp(d - m).sum(axis=axis, keepdims=True))
    out = lse if keep_dims else np.squeeze(lse, axis=axis) if axis is not None else lse.reshape(())
    return _finish1(out, x, _logsumexp_vjp, (d, lse), "logsumexp")


def _logsumexp_vjp(g, saved, needs):
    d, lse = saved
    return (np.reshape(g, lse.shape) * np.exp(d - lse),)
