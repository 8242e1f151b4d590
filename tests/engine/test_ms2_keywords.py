"""MindSpore 2.x keyword names: each op called as its 2.x API page's examples call it.

Signatures and printed values come from the mindspore.cn `mindspore.ops.<name>`
pages (r2.0-r2.5); values not printed there are compared with NumPy or torch.
Also: two spellings of one argument, and an unknown keyword, raise TypeError
for every public op (never silently ignored).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import engine
from engine import Tensor, ops

# The `ops.sum` page's input (3, 3, 6), and a random (3, 4, 5) float64 tensor.
X_SUM = np.repeat(np.arange(1, 10, dtype=np.float32).reshape(3, 3, 1), 6, axis=2)
R = np.random.RandomState(0).standard_normal((3, 4, 5))
R2 = np.random.RandomState(1).standard_normal((3, 4))
ARG = np.array([[1.0, 20, 5], [67, 8, 9], [130, 24, 15]], dtype=np.float32)
T = torch.from_numpy


def _t(a):
    return Tensor(np.asarray(a))


# (id, engine call, expected value or a callable giving it)
CASES = [
    # ops.sum(input, dim=None, keepdim=False, *, dtype=None)
    ("sum-page", lambda: ops.sum(_t(X_SUM)), 270.0),
    ("sum-dim", lambda: ops.sum(_t(X_SUM), dim=2),
     [[6, 12, 18], [24, 30, 36], [42, 48, 54]]),
    ("sum-dim-keepdim", lambda: ops.sum(_t(X_SUM), dim=2, keepdim=True),
     X_SUM.sum(2, keepdims=True)),
    ("sum-positional", lambda: ops.sum(_t(X_SUM), 2, True), X_SUM.sum(2, keepdims=True)),
    ("sum-input-kw", lambda: ops.sum(input=_t(R), dim=(0, 2)), R.sum((0, 2))),
    ("sum-dtype", lambda: ops.sum(_t(X_SUM), dim=0, dtype=engine.int32),
     X_SUM.sum(0).astype(np.int32)),
    ("sum-old-axis", lambda: ops.sum(_t(R), axis=1, keepdims=True), R.sum(1, keepdims=True)),
    # ops.mean(x, axis=None, keep_dims=False)
    ("mean-page", lambda: ops.mean(_t(R), 1, keep_dims=True).shape, (3, 1, 5)),
    ("mean-kw", lambda: ops.mean(x=_t(R), axis=(0, 2), keep_dims=False), R.mean((0, 2))),
    ("mean-input-kw", lambda: ops.mean(input=_t(R), axis=0), R.mean(0)),
    # ops.prod(input, axis=None, keep_dims=False, dtype=None)
    ("prod-kw", lambda: ops.prod(input=_t(R), axis=1, keep_dims=True), R.prod(1, keepdims=True)),
    ("prod-positional", lambda: ops.prod(_t(R), 0), R.prod(0)),
    ("prod-dtype", lambda: ops.prod(_t(R), axis=2, dtype=engine.float32),
     R.prod(2).astype(np.float32)),
    # ops.amax/amin(input, axis=None, keepdims=False, *, initial=None, where=None)
    ("amax-kw", lambda: ops.amax(input=_t(R), axis=(0, 1), keepdims=True),
     R.max((0, 1), keepdims=True)),
    ("amin-kw", lambda: ops.amin(_t(R), axis=-1, keepdims=False), R.min(-1)),
    ("amax-initial-where", lambda: ops.amax(_t(R), axis=1, initial=0.5, where=_t(R > 1)),
     np.max(R, axis=1, initial=0.5, where=R > 1)),
    ("amin-initial", lambda: ops.amin(_t(R), axis=0, initial=-3.0),
     np.min(R, axis=0, initial=-3.0)),
    # ops.max/min(input, axis=None, keepdims=False, *, initial=None, where=None) -> (values, index)
    ("max-page", lambda: [float(v.asnumpy()) for v in
                          ops.max(_t(np.array([0.0, 0.4, 0.6, 0.7, 0.1], np.float32)))],
     [np.float32(0.7), 0]),
    ("max-axis", lambda: ops.max(_t(R), axis=1, keepdims=True)[0], R.max(1, keepdims=True)),
    ("max-index", lambda: ops.max(input=_t(R), axis=1)[1], R.argmax(1)),
    ("min-axis", lambda: ops.min(_t(R), 0, True)[1], R.argmin(0)[None]),
    # ops.argmax(input, dim=None, keepdim=False); ops.argmin(input, axis=None, keepdims=False)
    ("argmax-page", lambda: ops.argmax(_t(ARG), dim=-1), [1, 0, 0]),
    ("argmax-keepdim", lambda: ops.argmax(input=_t(R), dim=1, keepdim=True),
     R.argmax(1)[:, None]),
    ("argmax-flat", lambda: ops.argmax(_t(R)), R.argmax()),
    ("argmin-page", lambda: ops.argmin(_t(np.array([2.0, 3.1, 1.2], np.float32))), 2),
    ("argmin-kw", lambda: ops.argmin(input=_t(R), axis=2, keepdims=True),
     R.argmin(2)[..., None]),
    # ops.std/var(input, axis=None, ddof=0, keepdims=False)
    ("var-kw", lambda: ops.var(input=_t(R), axis=1, ddof=1, keepdims=True),
     torch.var(T(R), dim=1, correction=1, keepdim=True).numpy()),
    ("std-kw", lambda: ops.std(_t(R), axis=(0, 2), ddof=True),
     torch.std(T(R), dim=(0, 2), correction=1).numpy()),
    ("std-positional", lambda: ops.std(_t(R), 0, 0, False), R.std(0)),
    # ops.logsumexp(input, axis, keep_dims=False)
    ("logsumexp-kw", lambda: ops.logsumexp(input=_t(R), axis=1, keep_dims=True),
     torch.logsumexp(T(R), 1, keepdim=True).numpy()),
    ("logsumexp-positional", lambda: ops.logsumexp(_t(R), 2), torch.logsumexp(T(R), 2).numpy()),
    # ops.softmax(input, axis=-1, *, dtype=None); ops.log_softmax(logits, axis=-1)
    ("softmax-page", lambda: ops.softmax(_t(np.arange(1, 6, dtype=np.float32))),
     [0.01165623, 0.03168492, 0.08612854, 0.23412167, 0.6364086]),
    ("softmax-kw", lambda: ops.softmax(input=_t(R), axis=1), torch.softmax(T(R), 1).numpy()),
    ("softmax-dtype", lambda: ops.softmax(_t(R), dtype=engine.float32).dtype, engine.float32),
    ("log_softmax-kw", lambda: ops.log_softmax(logits=_t(R), axis=0),
     torch.log_softmax(T(R), 0).numpy()),
    # joining and splitting
    ("cat-kw", lambda: ops.cat(tensors=(_t(R2), _t(R2)), axis=1), np.concatenate([R2, R2], 1)),
    ("concat-kw", lambda: ops.concat((_t(R2), _t(R2)), axis=0), np.concatenate([R2, R2], 0)),
    ("stack-kw", lambda: ops.stack(tensors=[_t(R2), _t(R2)], axis=2), np.stack([R2, R2], 2)),
    ("split-kw", lambda: ops.split(tensor=_t(R2), split_size_or_sections=[1, 3], axis=1)[1],
     R2[:, 1:]),
    ("split-int", lambda: ops.split(_t(R2), 2, 1)[0], R2[:, :2]),
    # shape ops
    ("reshape-kw", lambda: ops.reshape(input=_t(R2), shape=(2, 6)), R2.reshape(2, 6)),
    ("reshape-positional", lambda: ops.reshape(_t(R2), (4, 3)), R2.reshape(4, 3)),
    ("transpose-kw", lambda: ops.transpose(input=_t(R), input_perm=(2, 0, 1)),
     R.transpose(2, 0, 1)),
    ("permute-kw", lambda: ops.permute(_t(R), axis=(1, 2, 0)), R.transpose(1, 2, 0)),
    ("squeeze-kw", lambda: ops.squeeze(input=_t(R[:, :1]), axis=1), R[:, 0]),
    ("unsqueeze-kw", lambda: ops.unsqueeze(input=_t(R2), dim=0), R2[None]),
    ("expand_dims-kw", lambda: ops.expand_dims(input_x=_t(R2), axis=-1), R2[..., None]),
    ("flatten-kw", lambda: ops.flatten(input=_t(R), start_dim=0, end_dim=1),
     R.reshape(12, 5)),
    ("flatten-order-F", lambda: ops.flatten(_t(R), order="F"),
     torch.flatten(T(R).transpose(1, 2), 1).numpy()),
    ("tile-kw", lambda: ops.tile(input=_t(R2), dims=(2, 1)), np.tile(R2, (2, 1))),
    ("broadcast_to-kw", lambda: ops.broadcast_to(input=_t(R2[:1]), shape=(3, 4)),
     np.broadcast_to(R2[:1], (3, 4))),
    ("swapaxes-kw", lambda: ops.swapaxes(input=_t(R), axis0=0, axis1=2), R.swapaxes(0, 2)),
    # where / select / clamp
    ("where-kw", lambda: ops.where(condition=_t(R2 > 0), input=_t(R2), other=_t(-R2)),
     np.abs(R2)),
    ("select-kw", lambda: ops.select(cond=_t(R2 > 0), input=_t(R2), other=0.0),
     np.where(R2 > 0, R2, 0)),
    ("clamp-kw", lambda: ops.clamp(input=_t(R2), min=-0.5, max=0.5), np.clip(R2, -0.5, 0.5)),
    ("clip-tensor-bounds", lambda: ops.clip(_t(R2), _t(np.float64(-0.1)), None),
     np.maximum(R2, -0.1)),
    # elementwise, with the 2.x (input, other) names
    ("add-kw", lambda: ops.add(input=_t(R2), other=_t(R2)), 2 * R2),
    ("sub-kw", lambda: ops.sub(input=_t(R2), other=1.0), R2 - 1),
    ("mul-kw", lambda: ops.mul(input=_t(R2), other=_t(R2)), R2 * R2),
    ("div-kw", lambda: ops.div(input=_t(R2), other=0.3), R2 / 0.3),
    ("div-floor", lambda: ops.div(_t(R2), 0.3, rounding_mode="floor"),
     torch.div(T(R2), 0.3, rounding_mode="floor").numpy()),
    ("div-trunc", lambda: ops.div(_t(R2), 0.3, rounding_mode="trunc"),
     torch.div(T(R2), 0.3, rounding_mode="trunc").numpy()),
    ("pow-kw", lambda: ops.pow(input=_t(np.abs(R2)), exponent=1.5), np.abs(R2) ** 1.5),
    ("maximum-kw", lambda: ops.maximum(input=_t(R2), other=0.0), np.maximum(R2, 0)),
    ("matmul-kw", lambda: ops.matmul(input=_t(R2), other=_t(R2.T)), R2 @ R2.T),
    ("gt-kw", lambda: ops.gt(input=_t(R2), other=0.0), R2 > 0),
    ("equal-kw", lambda: ops.equal(input=_t(R2), other=_t(R2)), np.ones_like(R2, bool)),
    ("exp-kw", lambda: ops.exp(input=_t(R2)), np.exp(R2)),
    ("relu-kw", lambda: ops.relu(input=_t(R2)), np.maximum(R2, 0)),
    ("sigmoid-kw", lambda: ops.sigmoid(input=_t(R2)), torch.sigmoid(T(R2)).numpy()),
    ("leaky_relu-kw", lambda: ops.leaky_relu(input=_t(R2), alpha=0.3),
     torch.nn.functional.leaky_relu(T(R2), 0.3).numpy()),
    ("gelu-page", lambda: ops.gelu(_t(np.array([1.0, 2.0, 3.0], np.float32))),
     [0.8413447, 1.9544997, 2.9959505]),
    ("softplus-page", lambda: ops.softplus(_t(np.array([0.1, 0.2, 30, 25], np.float32))),
     [0.74439657, 0.7981388, 30.0, 25.0]),
    ("gelu-default-erf", lambda: ops.gelu(_t(R2)), torch.nn.functional.gelu(T(R2)).numpy()),
    ("gelu-tanh", lambda: ops.gelu(input=_t(R2), approximate="tanh"),
     torch.nn.functional.gelu(T(R2), approximate="tanh").numpy()),
    ("softplus-beta-threshold", lambda: ops.softplus(input=_t(3 * R2), beta=2, threshold=3),
     torch.nn.functional.softplus(T(3 * R2), beta=2, threshold=3).numpy()),
    ("cast-kw", lambda: ops.cast(input=_t(R2), dtype=engine.float32).dtype, engine.float32),
    ("ones-kw", lambda: ops.ones(shape=(2, 3), dtype=engine.int32), np.ones((2, 3), np.int32)),
    ("zeros-kw", lambda: ops.zeros(size=(2,), dtype=engine.float32), np.zeros(2, np.float32)),
    ("full_like-kw", lambda: ops.full_like(input=_t(R2), fill_value=2.0), np.full_like(R2, 2)),
]


def _value(v):
    if isinstance(v, Tensor):
        return v.asnumpy()
    return v


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_2x_keywords_as_the_api_pages_call_them(case):
    _, call, expected = case
    got = _value(call())
    if isinstance(expected, (tuple, type(engine.float32))) and not isinstance(expected, list):
        assert got == expected
        return
    np.testing.assert_allclose(np.asarray(got, dtype=np.float64),
                               np.asarray(expected, dtype=np.float64), rtol=1e-6, atol=1e-7)


def test_tensor_methods_take_2x_keywords():
    x = _t(R)
    np.testing.assert_allclose(x.sum(axis=1, keepdims=True).asnumpy(), R.sum(1, keepdims=True))
    np.testing.assert_allclose(x.sum(dim=2).asnumpy(), R.sum(2))
    np.testing.assert_allclose(x.sum(1, None, False, 1.0).asnumpy(), R.sum(1) + 1)
    np.testing.assert_allclose(x.mean(0, keep_dims=True).asnumpy(), R.mean(0, keepdims=True))
    np.testing.assert_allclose(x.max(axis=2).asnumpy(), R.max(2))
    values, index = x.max(axis=2, return_indices=True)
    np.testing.assert_array_equal(index.asnumpy(), R.argmax(2))
    np.testing.assert_array_equal(x.argmax(axis=1).asnumpy(), R.argmax(1))
    np.testing.assert_allclose(x.var(axis=0, ddof=1).asnumpy(), R.var(0, ddof=1))


@pytest.mark.parametrize("method", ["sum", "mean", "prod", "max", "min", "amax", "argmax",
                                    "argmin", "var", "std", "reshape", "transpose", "softmax"])
def test_tensor_methods_reject_unknown_keywords(method):
    with pytest.raises(TypeError, match="no_such_keyword"):
        getattr(_t(R), method)(no_such_keyword=1)


def test_new_arguments_have_gradients():
    from engine.gradcheck import gradcheck

    gradcheck(lambda a: ops.softplus(a, beta=2, threshold=1).sum(), [_t(R2)])
    gradcheck(lambda a: ops.amax(a, axis=1, initial=0.0, where=_t(R2 > -0.5)).sum(),
              [_t(R2 + np.arange(12).reshape(3, 4) * 1e-3)])
    gradcheck(lambda a: ops.softmax(a, axis=0).sum(0)[1], [_t(R2)])
    gradcheck(lambda a: ops.flatten(a, order="F")[1, 3], [_t(R)])


@pytest.mark.parametrize("call", [
    lambda: ops.sum(_t(R), dim=1, axis=1),
    lambda: ops.sum(_t(R), 1, dim=1),
    lambda: ops.mean(_t(R), axis=1, dim=1),
    lambda: ops.argmax(_t(R), keepdim=True, keepdims=True),
    lambda: ops.softmax(_t(R), axis=1, dim=1),
    lambda: ops.reshape(_t(R), (60,), shape=(60,)),
    lambda: ops.add(x=_t(R), y=_t(R)),  # 1.x names: MindSpore 2.x rejects them too
])
def test_two_spellings_of_one_argument_raise(call):
    with pytest.raises(TypeError):
        call()


@pytest.mark.parametrize("call, name", [
    (lambda: ops.dropout(_t(R), p=0.5, seed=1), "seed"),
    (lambda: ops.max_pool2d(_t(R[None]), 2, ceil_mode=True), "ceil_mode"),
    (lambda: ops.max_pool2d(_t(R[None]), 2, return_indices=True), "return_indices"),
    (lambda: ops.max_pool2d(_t(R[None]), 2, dilation=2), "dilation"),
    (lambda: ops.avg_pool2d(_t(R[None]), 2, divisor_override=3), "divisor_override"),
    (lambda: ops.avg_pool2d(_t(R[None]), 2, ceil_mode=True), "ceil_mode"),
])
def test_unimplemented_arguments_raise_naming_them(call, name):
    with pytest.raises(NotImplementedError, match=name):
        call()


def test_invalid_mode_values_raise():
    with pytest.raises(ValueError, match="approximate"):
        ops.gelu(_t(R2), approximate="fast")
    with pytest.raises(ValueError, match="rounding_mode"):
        ops.div(_t(R2), 2.0, rounding_mode="round")
    with pytest.raises(ValueError, match="order"):
        ops.flatten(_t(R2), order="A")


# Public names that are not ops taking keywords: the GradOperation class is
# covered by its own call (its keywords are checked below too).
NOT_OPS: set[str] = set()


def _public_callables():
    for name in sorted(ops.__all__):
        obj = getattr(ops, name)
        if callable(obj) and name not in NOT_OPS and not inspect.ismodule(obj):
            yield name, obj


@pytest.mark.parametrize("name, fn", list(_public_callables()), ids=lambda v: str(v)[:30])
def test_unknown_keyword_raises_type_error(name, fn):
    with pytest.raises(TypeError, match="no_such_keyword"):
        fn(no_such_keyword=1)


def test_every_public_op_is_checked():
    names = {name for name, _ in _public_callables()}
    assert {"sum", "mean", "max", "argmax", "softmax", "concat", "Dropout2D"} <= names
    assert len(names) >= 100
