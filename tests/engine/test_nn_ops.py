"""Convolution, pooling, dropout and batch_norm ops: gradcheck, and PyTorch on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Parameter, Tensor, ops
from engine.gradcheck import gradcheck
from tests.engine.op_cases import OpCase

C = OpCase


def _seeded_dropout(a, p=0.3):
    engine.set_seed(7)  # the same mask on every call gradcheck makes
    return ops.dropout(a, p)


CASES = [
    C("conv2d", lambda x, w: ops.conv2d(x, w), None, [(2, 3, 6, 5), (4, 3, 3, 3)]),
    C("conv2d", lambda x, w, b: ops.conv2d(x, w, b, pad_mode="same"), None,
      [(2, 3, 6, 5), (4, 3, 3, 3), (4,)]),
    C("conv2d", lambda x, w: ops.conv2d(x, w, stride=2, pad_mode="same"), None,
      [(2, 2, 7, 6), (3, 2, 2, 2)]),
    C("conv2d", lambda x, w: ops.conv2d(x, w, stride=(2, 1), dilation=(1, 2), pad_mode="pad",
                                        padding=(1, 0, 2, 1)), None,
      [(1, 2, 6, 6), (2, 2, 3, 2)]),
    C("conv2d", lambda x, w: ops.conv2d(x, w, groups=2, dilation=2, pad_mode="same"), None,
      [(2, 4, 7, 7), (6, 2, 3, 3)]),
    C("max_pool2d", lambda x: ops.max_pool2d(x, 2), None, [(2, 3, 6, 4)], away_from_zero=True),
    C("max_pool2d", lambda x: ops.max_pool2d(x, 3, 2, pad_mode="same"), None, [(2, 2, 7, 6)],
      away_from_zero=True),
    C("max_pool2d", lambda x: ops.max_pool2d(x, 3, 1, padding=1), None, [(1, 2, 5, 5)],
      away_from_zero=True),
    C("avg_pool2d", lambda x: ops.avg_pool2d(x, 2, 2), None, [(2, 3, 6, 4)]),
    C("avg_pool2d", lambda x: ops.avg_pool2d(x, 3, 2, pad_mode="same"), None, [(2, 2, 7, 6)]),
    C("avg_pool2d", lambda x: ops.avg_pool2d(x, 3, 1, 1, count_include_pad=False), None,
      [(1, 2, 5, 4)]),
    C("dropout", _seeded_dropout, None, [(4, 5)]),
    C("batch_norm", lambda x, g, b: ops.batch_norm(x, np.zeros(3), np.ones(3), g, b, True),
      None, [(4, 3, 2, 3), (3,), (3,)]),
    C("batch_norm", lambda x, g, b: ops.batch_norm(x, np.zeros(3), np.ones(3), g, b, True),
      None, [(5, 3), (3,), (3,)]),
    C("batch_norm", lambda x, g, b: ops.batch_norm(x, np.full(3, 0.5), np.full(3, 2.0), g, b),
      None, [(4, 3, 2, 2), (3,), (3,)]),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradcheck(case):
    gradcheck(case.fn, [Tensor(a) for a in case.make_inputs(np.float64)], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_float32_stays_float32(case):
    tensors = [Tensor(a) for a in case.make_inputs(np.float32)]
    assert case.fn(*tensors).dtype == engine.float32
    grads = engine.grad(lambda *xs: case.fn(*xs).sum(), tuple(range(len(tensors))))(*tensors)
    for g, t in zip(grads, tensors, strict=True):
        assert g.dtype == engine.float32 and g.shape == t.shape


# ----------------------------------------------------------------------------- vs PyTorch


def _same_pads(size, k_eff, stride):
    out = -(-size // stride)
    total = max((out - 1) * stride + k_eff - size, 0)
    return total // 2, total - total // 2


def _torch_grads(out, inputs, cot):
    out.backward(torch.tensor(cot))
    return [t.grad.numpy() for t in inputs]


def _engine_grads(fn, inputs, cot):
    positions = tuple(range(len(inputs)))
    return [g.asnumpy() for g in engine.grad(lambda *a: (fn(*a) * Tensor(cot)).sum(), positions)(
        *inputs)]


CONV = [
    # (input shape, weight shape, stride, pad_mode, padding, dilation, groups)
    ((2, 3, 8, 7), (4, 3, 3, 3), 1, "valid", 0, 1, 1),
    ((2, 3, 8, 7), (4, 3, 3, 3), 1, "same", 0, 1, 1),
    ((2, 3, 8, 7), (4, 3, 2, 2), 1, "same", 0, 1, 1),  # odd total padding: extra at bottom/right
    ((2, 3, 9, 8), (6, 3, 3, 3), 2, "same", 0, 1, 1),
    ((2, 4, 9, 8), (6, 2, 3, 2), (2, 1), "pad", (2, 1, 0, 3), (1, 2), 2),
    ((1, 6, 10, 10), (6, 1, 3, 3), 1, "same", 0, 2, 6),  # depthwise, dilated
    ((2, 4, 6, 6), (4, 4, 1, 1), 1, "pad", 1, 1, 1),
]


@pytest.mark.parametrize("xs, ws, stride, mode, padding, dilation, groups", CONV)
def test_conv2d_matches_torch(xs, ws, stride, mode, padding, dilation, groups):
    rs = np.random.default_rng(0)
    x, w, b = rs.standard_normal(xs), rs.standard_normal(ws), rs.standard_normal(ws[0])
    kw = dict(stride=stride, pad_mode=mode, padding=padding, dilation=dilation, groups=groups)
    out = ops.conv2d(Tensor(x), Tensor(w), Tensor(b), **kw).asnumpy()

    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    if mode == "same":
        pads = (*_same_pads(xs[2], (ws[2] - 1) * dh + 1, sh),
                *_same_pads(xs[3], (ws[3] - 1) * dw + 1, sw))
    elif mode == "pad":
        pads = padding if isinstance(padding, tuple) else (padding,) * 4
    else:
        pads = (0, 0, 0, 0)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    tout = F.conv2d(F.pad(tx, (pads[2], pads[3], pads[0], pads[1])), tw, tb, stride=stride,
                    dilation=dilation, groups=groups)
    np.testing.assert_allclose(out, tout.detach().numpy(), rtol=1e-10, atol=1e-10)

    cot = rs.standard_normal(out.shape)
    expected = _torch_grads(tout, [tx, tw, tb], cot)
    got = _engine_grads(lambda a, c, d: ops.conv2d(a, c, d, **kw),
                        [Tensor(x), Tensor(w), Tensor(b)], cot)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)


def test_conv2d_same_puts_the_odd_row_at_the_bottom_right():
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 2, 2))
    out = ops.conv2d(Tensor(x), Tensor(w), pad_mode="same").asnumpy()[0, 0]
    assert out.shape == (4, 4)
    assert out[0, 0] == 0 + 1 + 4 + 5  # window starts at the top-left pixel
    assert out[3, 3] == 15  # the padding row/column is after the last pixel


POOL = [
    # (kernel, stride, pad_mode, padding)
    (2, 2, "valid", 0),
    (3, 2, "valid", 0),
    (3, 2, "same", 0),
    (2, 1, "same", 0),
    ((3, 2), (1, 2), "same", 0),
    (3, 1, "pad", 1),
]


def _torch_pool(kind, tx, k, s, mode, padding):
    if mode == "same":
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (s, s) if isinstance(s, int) else s
        t, b = _same_pads(tx.shape[2], kh, sh)
        l, r = _same_pads(tx.shape[3], kw, sw)
        if kind == "max":
            return F.max_pool2d(F.pad(tx, (l, r, t, b), value=-np.inf), k, s)
        # MindSpore's 'same' average counts only real pixels.
        total = F.avg_pool2d(F.pad(tx, (l, r, t, b)), k, s, divisor_override=1)
        count = F.avg_pool2d(F.pad(torch.ones_like(tx), (l, r, t, b)), k, s, divisor_override=1)
        return total / count
    pool = F.max_pool2d if kind == "max" else F.avg_pool2d
    return pool(tx, k, s, padding=padding)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("k, s, mode, padding", POOL)
def test_pooling_matches_torch(kind, k, s, mode, padding):
    rs = np.random.default_rng(1)
    x = rs.standard_normal((2, 3, 7, 6))
    fn = ops.max_pool2d if kind == "max" else ops.avg_pool2d

    def call(a):
        return fn(a, k, s, padding, pad_mode=mode)

    out = call(Tensor(x)).asnumpy()
    tx = torch.tensor(x, requires_grad=True)
    tout = _torch_pool(kind, tx, k, s, mode, padding)
    np.testing.assert_allclose(out, tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    cot = rs.standard_normal(out.shape)
    np.testing.assert_allclose(_engine_grads(call, [Tensor(x)], cot)[0],
                               _torch_grads(tout, [tx], cot)[0], rtol=1e-12, atol=1e-12)


def test_max_pool_gives_a_tied_gradient_to_the_first_maximum_like_torch():
    x = np.array([[[[1.0, 3.0, 3.0, 0.0], [3.0, 2.0, 0.0, 0.0]]]])
    g = engine.grad(lambda a: ops.max_pool2d(a, 2).sum())(Tensor(x)).asnumpy()
    tx = torch.tensor(x, requires_grad=True)
    F.max_pool2d(tx, 2).sum().backward()
    np.testing.assert_array_equal(g, tx.grad.numpy())
    assert g.sum() == 2


def test_max_pool_pads_integers_with_their_lowest_value():
    x = -np.arange(1, 10, dtype=np.int32).reshape(1, 1, 3, 3)
    out = ops.max_pool2d(Tensor(x), 2, 2, pad_mode="same").asnumpy()
    assert out.dtype == np.int32 and out.tolist() == [[[[-1, -3], [-7, -9]]]]


def test_max_pool_stride_defaults_to_kernel_size():
    assert ops.max_pool2d(Tensor(np.zeros((1, 1, 6, 6))), 3).shape == (1, 1, 2, 2)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_torch(training):
    rs = np.random.default_rng(2)
    x = rs.standard_normal((6, 3, 4, 5)) * 2 + 1
    gamma, beta = rs.standard_normal(3), rs.standard_normal(3)
    rm, rv = rs.standard_normal(3), rs.random(3) + 0.5
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    mean, var = rm.copy(), rv.copy()

    def call(a, g, b):
        return ops.batch_norm(a, mean.copy(), var.copy(), g, b, training, 0.1, 1e-5)

    out = ops.batch_norm(Tensor(x), mean, var, Tensor(gamma), Tensor(beta), training, 0.1, 1e-5)
    tx, tg, tb = (torch.tensor(a, requires_grad=True) for a in (x, gamma, beta))
    tout = F.batch_norm(tx, trm, trv, tg, tb, training=training, momentum=0.1, eps=1e-5)
    np.testing.assert_allclose(out.asnumpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-10)
    cot = rs.standard_normal(x.shape)
    got = _engine_grads(call, [Tensor(x), Tensor(gamma), Tensor(beta)], cot)
    for g, e in zip(got, _torch_grads(tout, [tx, tg, tb], cot), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-10)
    if training:
        np.testing.assert_allclose(mean, trm.numpy(), rtol=1e-12)
        # PyTorch keeps the unbiased batch variance; MindSpore's CPU kernel the biased one.
        m = x.size // 3
        batch_var = x.transpose(1, 0, 2, 3).reshape(3, -1).var(axis=1)
        np.testing.assert_allclose(var, 0.9 * rv + 0.1 * batch_var, rtol=1e-12)
        np.testing.assert_allclose((trv.numpy() - 0.9 * rv) * (m - 1) / m, 0.1 * batch_var)
    else:
        np.testing.assert_array_equal(mean, rm)  # predict mode leaves the statistics alone
        np.testing.assert_array_equal(var, rv)


def test_dropout_scales_kept_elements_and_is_seeded():
    x = Tensor(np.ones((200, 100), dtype=np.float32))
    engine.set_seed(3)
    a = ops.dropout(x, 0.25).asnumpy()
    engine.set_seed(3)
    b = ops.dropout(x, 0.25).asnumpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == {0.0, np.float32(1 / 0.75)}
    assert abs((a == 0).mean() - 0.25) < 0.01
    assert ops.dropout(x, 0.25, training=False) is x
    assert not ops.dropout(x, 1.0).asnumpy().any()
    # PyTorch's contract: same keep/scale rule, so expectations agree.
    t = F.dropout(torch.ones(200, 100), 0.25, training=True).numpy()
    assert set(np.unique(t)) == set(np.unique(a))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ops.dropout(x, 1.5)


def test_dropout_gradient_uses_the_forward_mask():
    x = Tensor(np.ones((20, 30)))
    engine.set_seed(5)
    out, g = engine.value_and_grad(lambda a: ops.dropout(a, 0.4).sum())(x)
    engine.set_seed(5)
    mask = ops.dropout(x, 0.4).asnumpy()
    np.testing.assert_array_equal(g.asnumpy(), mask)


# ----------------------------------------------------------------------------- errors


def test_conv2d_reports_bad_arguments():
    x, w = Tensor(np.zeros((1, 3, 5, 5))), Tensor(np.zeros((4, 3, 3, 3)))
    with pytest.raises(ValueError, match="pad_mode"):
        ops.conv2d(x, w, pad_mode="full")
    with pytest.raises(ValueError, match="padding must be 0"):
        ops.conv2d(x, w, pad_mode="same", padding=1)
    with pytest.raises(ValueError, match=r"expects an input with 3 channels.*\(1, 2, 5, 5\)"):
        ops.conv2d(Tensor(np.zeros((1, 2, 5, 5))), w)
    with pytest.raises(ValueError, match="4-D"):
        ops.conv2d(Tensor(np.zeros((3, 5, 5))), w)
    with pytest.raises(ValueError, match="smaller than the kernel"):
        ops.conv2d(Tensor(np.zeros((1, 3, 2, 2))), w)
    with pytest.raises(ValueError, match="stride"):
        ops.conv2d(x, w, stride=0)
    with pytest.raises(ValueError, match="4-tuple"):
        ops.conv2d(x, w, pad_mode="pad", padding=(1, 2))


def test_pooling_reports_bad_arguments():
    x = Tensor(np.zeros((1, 1, 4, 4)))
    with pytest.raises(ValueError, match="kernel_size"):
        ops.max_pool2d(x, 0)
    with pytest.raises(ValueError, match="at most half"):
        ops.avg_pool2d(x, 2, 1, 2)
    with pytest.raises(ValueError, match="pad_mode"):
        ops.max_pool2d(x, 2, pad_mode="full")
    with pytest.raises(ValueError, match="smaller than the kernel"):
        ops.max_pool2d(x, 5)


def test_batch_norm_without_running_statistics():
    x = Tensor(np.random.default_rng(3).standard_normal((6, 2)))
    out = ops.batch_norm(x, None, None, training=True).asnumpy()
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-12)
    with pytest.raises(ValueError, match="needs running_mean"):
        ops.batch_norm(x, None, None)


def test_batch_norm_reports_channel_mismatch():
    with pytest.raises(ValueError, match=r"3 channels.*running_mean has shape \(2,\)"):
        ops.batch_norm(Tensor(np.zeros((2, 3))), np.zeros(2), np.ones(3), None, None)


def test_parameters_get_gradients_through_conv():
    w = Parameter(np.random.default_rng(0).standard_normal((2, 1, 3, 3)), name="w")
    x = Tensor(np.random.default_rng(1).standard_normal((2, 1, 5, 5)))
    gradcheck(lambda a: ops.conv2d(a, w, pad_mode="same"), [x], [w])
