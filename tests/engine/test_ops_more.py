"""The engine ops the op nodes run (app.compiler.op_cells), called as those Cells call them:
forward and gradients against PyTorch in float32, and gradcheck in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import engine
from engine import Tensor, ops
from engine.gradcheck import gradcheck

RS = np.random.default_rng(7)
X = RS.standard_normal((3, 4, 6))
POSITIVE = np.abs(X) + 0.5
Y = RS.standard_normal((4, 6))  # broadcasts against X

# (name, engine fn, torch fn, inputs): each fn takes one argument per input.
CASES = [
    ("sub", lambda a, b: ops.sub(a, b), lambda a, b: a - b, (X, Y)),
    ("div", lambda a, b: ops.div(a, b), lambda a, b: a / b, (X, POSITIVE[0])),
    ("neg", ops.neg, torch.neg, (X,)),
    ("abs", ops.abs, torch.abs, (X,)),
    ("exp", ops.exp, torch.exp, (X,)),
    ("log", ops.log, torch.log, (POSITIVE,)),
    ("sqrt", ops.sqrt, torch.sqrt, (POSITIVE,)),
    ("pow", lambda a: ops.pow(a, 2.5), lambda a: torch.pow(a, 2.5), (POSITIVE,)),
    ("pow_int", lambda a: ops.pow(a, 3.0), lambda a: torch.pow(a, 3.0), (X,)),
    ("clip", lambda a: ops.clamp(a, -0.5, 0.7), lambda a: torch.clamp(a, -0.5, 0.7), (X,)),
    ("clip_max", lambda a: ops.clamp(a, None, 0.2), lambda a: torch.clamp(a, max=0.2), (X,)),
    ("clip_min", lambda a: ops.clamp(a, -0.2, None), lambda a: torch.clamp(a, min=-0.2), (X,)),
    ("rescale", lambda a: ops.mul(a, 0.25), lambda a: a * 0.25, (X,)),
    ("mean", lambda a: ops.mean(a, -1, False), lambda a: torch.mean(a, dim=-1), (X,)),
    ("mean_axes", lambda a: ops.mean(a, (1, 2), True),
     lambda a: torch.mean(a, dim=(1, 2), keepdim=True), (X,)),
    ("sum", lambda a: ops.sum(a, (1, -1), False), lambda a: torch.sum(a, dim=(1, -1)), (X,)),
    ("sum_keep", lambda a: ops.sum(a, 1, True), lambda a: torch.sum(a, dim=1, keepdim=True),
     (X,)),
    ("max", lambda a: ops.amax(a, 2, False), lambda a: torch.amax(a, dim=2), (X,)),
    ("max_axes", lambda a: ops.amax(a, (1, 2), True),
     lambda a: torch.amax(a, dim=(1, 2), keepdim=True), (X,)),
    ("transpose", lambda a: ops.transpose(a, (0, 2, 1)), lambda a: a.permute(0, 2, 1), (X,)),
    ("squeeze", lambda a: ops.squeeze(a, 1), lambda a: a.squeeze(1), (X[:, :1],)),
    ("squeeze_all", lambda a: ops.squeeze(a, (1, 3)), lambda a: a.squeeze((1, 3)),
     (X[:, :1, :, None],)),
    ("unsqueeze", lambda a: ops.expand_dims(a, -1), lambda a: a.unsqueeze(-1), (X,)),
    ("slice_last", lambda a: a[(slice(None), slice(-1, None, 1))], lambda a: a[:, -1:], (X,)),
    ("slice_step", lambda a: a[(Ellipsis, slice(1, 6, 2))], lambda a: a[..., 1:6:2], (X,)),
    ("stack", lambda a, b: ops.stack((a, b), 1), lambda a, b: torch.stack((a, b), dim=1),
     (X, X[::-1].copy())),
    ("cast", lambda a: ops.cast(a, "float64"), lambda a: a.to(torch.float64), (X,)),
]
IDS = [case[0] for case in CASES]


def _engine_grads(fn, arrays, cot):
    tensors = [Tensor(a) for a in arrays]
    out = fn(*tensors)
    grads = engine.grad(lambda *xs: (fn(*xs) * Tensor(cot.astype(out.asnumpy().dtype))).sum(),
                        tuple(range(len(arrays))))(*tensors)
    return out.asnumpy(), [g.asnumpy() for g in grads]


@pytest.mark.parametrize(("name", "fn", "torch_fn", "inputs"), CASES, ids=IDS)
def test_forward_and_gradients_match_torch_in_float32(name, fn, torch_fn, inputs):
    arrays = [np.asarray(a, np.float32) for a in inputs]
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    expected = torch_fn(*tensors)
    cot = RS.standard_normal(tuple(expected.shape))
    out, grads = _engine_grads(fn, arrays, cot)
    np.testing.assert_allclose(out, expected.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert out.dtype == expected.detach().numpy().dtype
    expected.backward(torch.tensor(cot, dtype=expected.dtype))
    for grad, t in zip(grads, tensors, strict=True):
        np.testing.assert_allclose(grad, t.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("name", "fn", "torch_fn", "inputs"), CASES, ids=IDS)
def test_gradients_match_finite_differences_in_float64(name, fn, torch_fn, inputs):
    gradcheck(fn, [Tensor(np.asarray(a, np.float64)) for a in inputs])


def test_split_into_equal_parts_matches_torch_chunk():
    x = np.asarray(X, np.float32)
    tx = torch.tensor(x, requires_grad=True)
    parts = ops.split(Tensor(x), 6 // 3, -1)
    expected = torch.chunk(tx, 3, dim=-1)
    assert len(parts) == 3
    for part, want in zip(parts, expected, strict=True):
        np.testing.assert_allclose(part.asnumpy(), want.detach().numpy(), rtol=1e-4)
    cots = [RS.standard_normal(tuple(p.shape)).astype(np.float32) for p in parts]
    grad = engine.grad(lambda a: sum((p * Tensor(c)).sum()
                                     for p, c in zip(ops.split(a, 2, -1), cots, strict=True)))
    torch.autograd.backward(expected, [torch.tensor(c) for c in cots])
    np.testing.assert_allclose(grad(Tensor(x)).asnumpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    gradcheck(lambda a: ops.split(a, 2, -1), [Tensor(np.asarray(X, np.float64))])


def test_tied_maxima_share_the_gradient_as_torch_amax():
    x = np.array([[[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]], np.float32)
    tx = torch.tensor(x, requires_grad=True)
    torch.amax(tx, dim=(1, 2)).sum().backward()
    grad = engine.grad(lambda a: ops.amax(a, (1, 2), False).sum())(Tensor(x))
    np.testing.assert_allclose(grad.asnumpy(), tx.grad.numpy())
