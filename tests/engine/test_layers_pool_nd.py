"""1-D/3-D and adaptive pooling: forward and input gradients against PyTorch (float32),
finite differences (float64), MindSpore's signatures, and the errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Tensor, nn, ops
from engine.gradcheck import gradcheck

RS = np.random.default_rng(7)
RTOL, ATOL = 1e-4, 1e-5


def against_torch(fn, torch_fn, shape):
    """fn and torch_fn agree on a random float32 input, forward and input gradient; fn's
    gradient agrees with finite differences in float64."""
    x = RS.standard_normal(shape)
    x32 = x.astype(np.float32)
    out = fn(Tensor(x32))
    tx = torch.tensor(x32, requires_grad=True)
    tout = torch_fn(tx)
    np.testing.assert_allclose(out.asnumpy(), tout.detach().numpy(), rtol=RTOL, atol=ATOL)
    cot = RS.standard_normal(out.shape).astype(np.float32)
    gx = engine.grad(lambda a: (fn(a) * Tensor(cot)).sum())(Tensor(x32))
    tout.backward(torch.tensor(cot))
    np.testing.assert_allclose(gx.asnumpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    gradcheck(fn, [Tensor(x)])
    return out


# ----------------------------------------------------------------------------- window pools

POOL1D = [
    # engine kwargs, torch kwargs, input length
    ({"kernel_size": 3, "stride": 2}, {"kernel_size": 3, "stride": 2}, 11),
    ({"kernel_size": 2}, {"kernel_size": 2, "stride": 1}, 6),
    ({"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1, "ceil_mode": True},
     {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}, 10),
]


@pytest.mark.parametrize("kw, tkw, length", POOL1D)
def test_max_pool1d_matches_torch(kw, tkw, length):
    against_torch(nn.MaxPool1d(**kw), lambda t: F.max_pool1d(t, **tkw), (2, 3, length))


def test_max_pool1d_dilation_and_unbatched_input():
    pool = nn.MaxPool1d(3, 2, "pad", 1, dilation=2)
    against_torch(pool, lambda t: F.max_pool1d(t, 3, 2, 1, dilation=2), (3, 12))


@pytest.mark.parametrize("kw, tkw, length", [
    *POOL1D,
    ({"kernel_size": 4, "stride": 3, "pad_mode": "pad", "padding": 2, "ceil_mode": True,
      "count_include_pad": False},
     {"kernel_size": 4, "stride": 3, "padding": 2, "ceil_mode": True,
      "count_include_pad": False}, 11),
    ({"kernel_size": 4, "stride": 3, "ceil_mode": True},
     {"kernel_size": 4, "stride": 3, "ceil_mode": True}, 11),
])  # fmt: skip
def test_avg_pool1d_matches_torch(kw, tkw, length):
    against_torch(nn.AvgPool1d(**kw), lambda t: F.avg_pool1d(t, **tkw), (2, 3, length))


POOL3D = [
    ({"kernel_size": 2, "stride": 2}, {"kernel_size": 2, "stride": 2}),
    ({"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "pad_mode": "pad", "padding": (1, 1, 0),
      "ceil_mode": True},
     {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "padding": (1, 1, 0), "ceil_mode": True}),
]


@pytest.mark.parametrize("kw, tkw", POOL3D)
def test_max_pool3d_matches_torch(kw, tkw):
    against_torch(nn.MaxPool3d(**kw), lambda t: F.max_pool3d(t, **tkw), (2, 2, 4, 5, 6))


@pytest.mark.parametrize("kw, tkw", [
    *POOL3D,
    ({"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1,
      "count_include_pad": False},
     {"kernel_size": 3, "stride": 2, "padding": 1, "count_include_pad": False}),
])  # fmt: skip
def test_avg_pool3d_matches_torch(kw, tkw):
    against_torch(nn.AvgPool3d(**kw), lambda t: F.avg_pool3d(t, **tkw), (2, 2, 4, 5, 6))


def same_pads(size, k, s):
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def test_same_pads_odd_after_and_the_mean_leaves_padding_out():
    lo, hi = same_pads(7, 4, 3)
    assert (lo, hi) == (1, 2)  # the odd one after, as MindSpore
    against_torch(nn.MaxPool1d(4, 3, "same"),
                  lambda t: F.max_pool1d(F.pad(t, (lo, hi), value=-torch.inf), 4, 3), (2, 3, 7))

    def uncounted(t):
        ones = F.pad(torch.ones_like(t), (lo, hi))
        return F.avg_pool1d(F.pad(t, (lo, hi)), 4, 3) / F.avg_pool1d(ones, 4, 3)

    out = against_torch(nn.AvgPool1d(4, 3, "same"), uncounted, (2, 3, 7))
    assert out.shape == (2, 3, 3)  # ceil(7 / 3)
    x = Tensor(RS.standard_normal((1, 2, 7)).astype(np.float32))
    np.testing.assert_array_equal(nn.AvgPool1d(4, 3, "same", ceil_mode=True)(x).asnumpy(),
                                  nn.AvgPool1d(4, 3, "same")(x).asnumpy())  # 'same' sets it
    pads = [same_pads(n, 3, 2) for n in (5, 4, 7)]
    flat = tuple(p for pair in reversed(pads) for p in pair)
    against_torch(nn.MaxPool3d(3, 2, "same"),
                  lambda t: F.max_pool3d(F.pad(t, flat, value=-torch.inf), 3, 2),
                  (1, 2, 5, 4, 7))  # fmt: skip


def test_functional_forms_follow_mindspore():
    x = RS.standard_normal((2, 3, 4, 5, 6)).astype(np.float32)
    tx = torch.tensor(x)
    np.testing.assert_allclose(ops.max_pool3d(Tensor(x), 2).asnumpy(),
                               F.max_pool3d(tx, 2).numpy())  # stride defaults to the kernel
    np.testing.assert_allclose(ops.avg_pool3d(Tensor(x), 2, 1, 1).asnumpy(),
                               F.avg_pool3d(tx, 2, 1, 1).numpy(), rtol=RTOL, atol=ATOL)
    y = x[0, 0, 0]
    np.testing.assert_allclose(ops.avg_pool1d(Tensor(y), 3, 2, 1, True, False).asnumpy(),
                               F.avg_pool1d(torch.tensor(y), 3, 2, 1, True, False).numpy(),
                               rtol=RTOL, atol=ATOL)  # fmt: skip


def test_mindspore_signatures_and_defaults():
    def defaults(cls):
        return {k: v.default for k, v in inspect.signature(cls).parameters.items()}

    common = {"kernel_size": 1, "stride": 1, "pad_mode": "valid", "padding": 0}
    maxes = {**common, "dilation": 1, "return_indices": False, "ceil_mode": False}
    assert defaults(nn.MaxPool1d) == maxes and defaults(nn.MaxPool3d) == maxes
    assert defaults(nn.AvgPool1d) == {**common, "ceil_mode": False, "count_include_pad": True}
    assert defaults(nn.AvgPool3d) == {**common, "ceil_mode": False, "count_include_pad": True,
                                      "divisor_override": None}
    empty = inspect.Parameter.empty
    assert defaults(nn.AdaptiveAvgPool2d) == {"output_size": empty}
    assert defaults(nn.AdaptiveMaxPool1d) == {"output_size": empty, "return_indices": False}
    assert "kernel_size=(3,), stride=(2,), pad_mode=pad, padding=(1,)" in repr(
        nn.MaxPool1d(3, 2, "pad", 1))


# ----------------------------------------------------------------------------- adaptive


@pytest.mark.parametrize("size", [1, 3, (None, 4), (5, 3), (9, 13)])
def test_adaptive_pool2d_matches_torch(size):
    against_torch(nn.AdaptiveAvgPool2d(size), lambda t: F.adaptive_avg_pool2d(t, size),
                  (2, 3, 7, 10))
    against_torch(nn.AdaptiveMaxPool2d(size), lambda t: F.adaptive_max_pool2d(t, size),
                  (2, 3, 7, 10))


@pytest.mark.parametrize("size", [1, 3, 4, 15])
def test_adaptive_pool1d_matches_torch(size):
    against_torch(nn.AdaptiveAvgPool1d(size), lambda t: F.adaptive_avg_pool1d(t, size),
                  (2, 3, 11))
    against_torch(nn.AdaptiveMaxPool1d(size), lambda t: F.adaptive_max_pool1d(t, size), (3, 11))


def test_adaptive_functional_forms_and_global_pooling():
    x = RS.standard_normal((2, 3, 5, 4)).astype(np.float32)
    np.testing.assert_allclose(ops.adaptive_avg_pool2d(Tensor(x), 1).asnumpy(),
                               x.mean(axis=(2, 3), keepdims=True), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(ops.adaptive_max_pool2d(Tensor(x), (1, 1)).asnumpy(),
                                  x.max(axis=(2, 3), keepdims=True))
    line = x[:, :, 0]
    np.testing.assert_allclose(ops.adaptive_avg_pool1d(Tensor(line), 2).asnumpy(),
                               line.reshape(2, 3, 2, 2).mean(-1), rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(ops.adaptive_max_pool1d(Tensor(line), 1).asnumpy(),
                                  line.max(-1, keepdims=True))


def test_a_tie_gives_the_gradient_to_the_first_maximum_as_torch():
    x = np.array([[[1.0, 3.0, 3.0, 0.0, 2.0, 2.0]]], np.float32)
    for fn, tfn in [(nn.AdaptiveMaxPool1d(2), lambda t: F.adaptive_max_pool1d(t, 2)),
                    (nn.MaxPool1d(3, 3), lambda t: F.max_pool1d(t, 3, 3))]:
        g = engine.grad(lambda a, fn=fn: fn(a).sum())(Tensor(x)).asnumpy()
        tx = torch.tensor(x, requires_grad=True)
        tfn(tx).sum().backward()
        np.testing.assert_array_equal(g, tx.grad.numpy())


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("make, error, match", [
    (lambda: nn.MaxPool1d(0), ValueError, "kernel_size"),
    (lambda: nn.MaxPool3d((2, 2)), ValueError, "kernel_size must be an int or 3 ints"),
    (lambda: nn.AvgPool1d(2, pad_mode="full"), ValueError, "pad_mode"),
    (lambda: nn.MaxPool1d(2, padding=1), ValueError, "padding must be 0"),
    (lambda: nn.MaxPool1d(2, dilation=2), ValueError, "need pad_mode 'pad'"),
    (lambda: nn.MaxPool3d(2, ceil_mode=True), ValueError, "need pad_mode 'pad'"),
    (lambda: nn.AvgPool1d(2, count_include_pad=1), TypeError, "count_include_pad"),
    (lambda: nn.MaxPool1d(2, return_indices=True), NotImplementedError, "return_indices"),
    (lambda: nn.AvgPool3d(2, divisor_override=3), NotImplementedError, "divisor_override"),
    (lambda: nn.AdaptiveMaxPool2d(2, return_indices=True), NotImplementedError,
     "return_indices"),
    (lambda: nn.AdaptiveAvgPool1d((2,)), ValueError, "output_size must be a positive int"),
    (lambda: nn.AdaptiveAvgPool2d((2, 0)), ValueError, "output_size"),
    (lambda: ops.max_pool3d(Tensor(np.zeros((1, 1, 2, 2, 2))), 2, return_indices=True),
     NotImplementedError, "return_indices"),
    (lambda: ops.avg_pool3d(Tensor(np.zeros((1, 1, 2, 2, 2))), 2, divisor_override=2),
     NotImplementedError, "divisor_override"),
])  # fmt: skip
def test_bad_arguments_raise_naming_them(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("layer, shape, match", [
    (nn.MaxPool1d(2), (2, 3, 4, 5), r"\(N, C, L\) or \(C, L\), got shape \(2, 3, 4, 5\)"),
    (nn.AvgPool3d(2), (2, 3, 4), r"\(N, C, D, H, W\) or \(C, D, H, W\), got shape \(2, 3, 4\)"),
    (nn.AdaptiveAvgPool2d(1), (2, 3), r"\(N, C, H, W\) or \(C, H, W\), got shape \(2, 3\)"),
    (nn.MaxPool1d(5), (2, 3, 4), r"window of 5 doesn't fit .* \(4,\)"),
    (nn.AvgPool1d(4, 1, "pad", 3), (1, 1, 9), "at most half the kernel"),
    (nn.MaxPool1d(3, 1, "pad", 2), (1, 1, 9), "at most half the kernel"),
])  # fmt: skip
def test_inputs_that_do_not_fit_are_refused_naming_the_shape(layer, shape, match):
    with pytest.raises(ValueError, match=match):
        layer(Tensor(np.zeros(shape, np.float32)))
