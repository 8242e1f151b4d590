"""ops.clip_by_value and ops.clip_by_global_norm: against torch's gradient clipping (values) and a
torch autograd formula (gradients), float64 gradcheck, MindSpore's documented examples, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import engine
from engine import Tensor, ops
from engine.gradcheck import gradcheck

RS = np.random.RandomState(3)
SHAPES = [(3, 4), (5,), (2, 2, 3)]


def _arrays(scale: float, dtype=np.float32):
    return [(RS.randn(*s) * scale).astype(dtype) for s in SHAPES]


def _torch_grads(arrays):
    params = [torch.nn.Parameter(torch.zeros(a.shape)) for a in arrays]
    for p, a in zip(params, arrays, strict=True):
        p.grad = torch.tensor(a)
    return params


@pytest.mark.parametrize("max_norm", [0.5, 2.0, 100.0])  # clipped hard, clipped, untouched
def test_clip_by_global_norm_matches_torch_clip_grad_norm(max_norm):
    arrays = _arrays(1.0)
    ours = ops.clip_by_global_norm(tuple(Tensor(a) for a in arrays), max_norm)
    params = _torch_grads(arrays)
    total = torch.nn.utils.clip_grad_norm_(params, max_norm)
    assert isinstance(ours, tuple) and len(ours) == 3
    for o, p, a in zip(ours, params, arrays, strict=True):
        assert o.dtype == engine.float32 and o.shape == a.shape
        # torch divides by norm + 1e-6: the same to about 1e-6 relative.
        np.testing.assert_allclose(o.asnumpy(), p.grad.numpy(), rtol=1e-5, atol=1e-7)
    clipped = np.sqrt(sum(float((o.asnumpy().astype(np.float64) ** 2).sum()) for o in ours))
    np.testing.assert_allclose(clipped, min(float(total), max_norm), rtol=1e-5)


@pytest.mark.parametrize("bound", [0.3, 1.5])
def test_clip_by_value_matches_torch_clip_grad_value(bound):
    arrays = _arrays(1.0)
    ours = ops.clip_by_value([Tensor(a) for a in arrays], -bound, bound)
    params = _torch_grads(arrays)
    torch.nn.utils.clip_grad_value_(params, bound)
    assert isinstance(ours, list)
    for o, p in zip(ours, params, strict=True):
        np.testing.assert_array_equal(o.asnumpy(), p.grad.numpy())


def _torch_global_norm(tensors, clip_norm):
    total = torch.sqrt(sum((t * t).sum() for t in tensors))
    scale = clip_norm / torch.maximum(total, torch.tensor(clip_norm, dtype=total.dtype))
    return [t * scale for t in tensors]


@pytest.mark.parametrize("clip_norm", [0.5, 50.0])
def test_clip_by_global_norm_gradients_match_torch_autograd(clip_norm):
    arrays = _arrays(1.0)
    cot = [RS.randn(*a.shape).astype(np.float32) for a in arrays]

    def loss(*xs):
        outs = ops.clip_by_global_norm(xs, clip_norm)
        return sum((o * Tensor(c)).sum() for o, c in zip(outs, cot, strict=True))

    ours = engine.grad(loss, grad_position=(0, 1, 2))(*(Tensor(a) for a in arrays))
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    total = sum((o * torch.tensor(c)).sum()
                for o, c in zip(_torch_global_norm(ts, clip_norm), cot, strict=True))
    total.backward()
    for g, t in zip(ours, ts, strict=True):
        np.testing.assert_allclose(g.asnumpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_the_taped_and_the_untaped_norm_clip_agree():
    # Gradients before an update are clipped off the tape, by a NumPy path of its own.
    arrays = _arrays(1.0)
    plain = ops.clip_by_global_norm([Tensor(a) for a in arrays], 0.7)
    taped = []
    engine.grad(lambda *xs: taped.extend(ops.clip_by_global_norm(xs, 0.7)) or xs[0].sum(),
                grad_position=(0, 1, 2))(*(Tensor(a) for a in arrays))  # fmt: skip
    for p, t in zip(plain, taped, strict=True):
        np.testing.assert_allclose(p.asnumpy(), t.asnumpy(), rtol=1e-6)


def test_clip_by_value_gradients_match_torch_clamp():
    x = RS.randn(4, 5).astype(np.float32)
    cot = RS.randn(4, 5).astype(np.float32)
    g = engine.grad(lambda t: (ops.clip_by_value(t, -0.5, 0.7) * Tensor(cot)).sum())(Tensor(x))
    tx = torch.tensor(x, requires_grad=True)
    (torch.clamp(tx, -0.5, 0.7) * torch.tensor(cot)).sum().backward()
    np.testing.assert_allclose(g.asnumpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("clip_norm", [0.5, 50.0])
def test_clip_by_global_norm_gradcheck_float64(clip_norm):
    arrays = _arrays(1.0, np.float64)
    gradcheck(lambda *xs: ops.clip_by_global_norm(xs, clip_norm), [Tensor(a) for a in arrays])


def test_clip_by_value_gradcheck_float64():
    # Away from the bounds, where the derivative is defined.
    x = np.array([[-2.0, -0.2, 0.1], [0.4, 1.7, -0.9]])
    gradcheck(lambda t: ops.clip_by_value(t, -0.5, 0.5), [Tensor(x)])
    gradcheck(lambda a, b: ops.clip_by_value((a, b), clip_value_max=0.3), [Tensor(x), Tensor(-x)])


def test_mindspore_documented_examples():
    x1 = Tensor(np.array([[2.0, 3.0], [1.0, 2.0]], np.float32))
    x2 = Tensor(np.array([[1.0, 4.0], [3.0, 1.0]], np.float32))
    out = ops.clip_by_global_norm((x1, x2), 1.0)
    np.testing.assert_allclose(out[0].asnumpy(), [[0.298142403, 0.447213590],
                                                  [0.149071202, 0.298142403]], rtol=1e-6)
    np.testing.assert_allclose(out[1].asnumpy(), [[0.149071202, 0.596284807],
                                                  [0.447213590, 0.149071202]], rtol=1e-6)
    x = Tensor(np.array([[1.0, 25.0, 5.0, 7.0], [4.0, 11.0, 6.0, 21.0]]), engine.float32)
    expected = [[5.0, 20.0, 5.0, 7.0], [5.0, 11.0, 6.0, 20.0]]
    lo, hi = Tensor(5, engine.float32), Tensor(20, engine.float32)
    np.testing.assert_array_equal(ops.clip_by_value(x, lo, hi).asnumpy(), expected)
    both = ops.clip_by_value((x, x), 5, 20)
    assert isinstance(both, tuple)
    for o in both:
        np.testing.assert_array_equal(o.asnumpy(), expected)


def test_one_bound_and_crossed_bounds():
    x = Tensor(np.array([-3.0, 0.0, 3.0], np.float32))
    np.testing.assert_array_equal(ops.clip_by_value(x, clip_value_min=-1).asnumpy(), [-1, 0, 3])
    np.testing.assert_array_equal(ops.clip_by_value(x, clip_value_max=1).asnumpy(), [-3, 0, 1])
    # min > max: everything becomes max, as MindSpore's maximum-then-minimum gives.
    np.testing.assert_array_equal(ops.clip_by_value(x, 2, 1).asnumpy(), [1, 1, 1])


def test_a_norm_below_the_limit_leaves_the_tensors_as_they_are():
    arrays = _arrays(0.01)
    out = ops.clip_by_global_norm([Tensor(a) for a in arrays], 1.0)
    for o, a in zip(out, arrays, strict=True):
        np.testing.assert_array_equal(o.asnumpy(), a)


def test_bad_arguments_are_refused():
    x = Tensor(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="at least one"):
        ops.clip_by_value(x)
    with pytest.raises(TypeError, match="clip_value_min"):
        ops.clip_by_value(x, "low", 1.0)
    with pytest.raises(TypeError, match=r"x\[1\]"):
        ops.clip_by_value([x, 3.0], 0, 1)
    with pytest.raises(ValueError, match="greater than 0"):
        ops.clip_by_global_norm((x,), 0.0)
    with pytest.raises(TypeError, match="list or tuple"):
        ops.clip_by_global_norm(x, 1.0)
    with pytest.raises(TypeError, match="floating-point"):
        ops.clip_by_global_norm((Tensor(np.arange(3)),))
    with pytest.raises(NotImplementedError, match="use_norm"):
        ops.clip_by_global_norm((x,), 1.0, use_norm=2.0)
