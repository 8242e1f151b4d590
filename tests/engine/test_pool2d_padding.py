"""MaxPool2d and AvgPool2d with MindSpore 2.x's full signatures: padding, dilation, ceil_mode
and count_include_pad against PyTorch (forward and input gradient, float32) and finite
differences (float64); the arguments that need pad_mode 'pad' and those not implemented."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Tensor, nn
from engine.gradcheck import gradcheck

RS = np.random.default_rng(11)
RTOL, ATOL = 1e-4, 1e-5


def against_torch(cell, torch_fn, shape):
    """`cell` and `torch_fn` agree on a random float32 input, forward and input gradient; the
    cell's gradient agrees with finite differences in float64."""
    x = RS.standard_normal(shape)
    x32 = x.astype(np.float32)
    out = cell(Tensor(x32))
    tx = torch.tensor(x32, requires_grad=True)
    tout = torch_fn(tx)
    assert out.shape == tuple(tout.shape)
    np.testing.assert_allclose(out.asnumpy(), tout.detach().numpy(), rtol=RTOL, atol=ATOL)
    cot = RS.standard_normal(out.shape).astype(np.float32)
    gx = engine.grad(lambda a: (cell(a) * Tensor(cot)).sum())(Tensor(x32))
    tout.backward(torch.tensor(cot))
    np.testing.assert_allclose(gx.asnumpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    gradcheck(cell, [Tensor(x)])


MAX = [
    # engine kwargs, torch kwargs, (H, W)
    ({"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1},
     {"kernel_size": 3, "stride": 2, "padding": 1}, (7, 6)),
    ({"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": (1, 0), "ceil_mode": True},
     {"kernel_size": 3, "stride": 2, "padding": (1, 0), "ceil_mode": True}, (8, 7)),
    # ceil_mode would add a window starting in the bottom padding: PyTorch drops it.
    ({"kernel_size": 2, "stride": 2, "pad_mode": "pad", "padding": 1, "ceil_mode": True},
     {"kernel_size": 2, "stride": 2, "padding": 1, "ceil_mode": True}, (5, 6)),
    ({"kernel_size": (3, 2), "stride": (1, 2), "pad_mode": "pad", "padding": (1, 1),
      "dilation": (2, 1)},
     {"kernel_size": (3, 2), "stride": (1, 2), "padding": 1, "dilation": (2, 1)}, (8, 7)),
    ({"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1, "dilation": 2,
      "ceil_mode": True},
     {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2, "ceil_mode": True}, (9, 8)),
]


@pytest.mark.parametrize("kw, tkw, size", MAX)
def test_max_pool2d_padding_dilation_and_ceil_mode_match_torch(kw, tkw, size):
    against_torch(nn.MaxPool2d(**kw), lambda t: F.max_pool2d(t, **tkw), (2, 3, *size))


AVG = [
    ({"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1},
     {"kernel_size": 3, "stride": 2, "padding": 1}, (7, 6)),
    ({"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": (1, 0),
      "count_include_pad": False},
     {"kernel_size": 3, "stride": 2, "padding": (1, 0), "count_include_pad": False}, (7, 6)),
    ({"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1, "ceil_mode": True},
     {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}, (8, 6)),
    ({"kernel_size": (2, 3), "stride": 2, "pad_mode": "pad", "padding": (1, 1),
      "ceil_mode": True, "count_include_pad": False},
     {"kernel_size": (2, 3), "stride": 2, "padding": 1, "ceil_mode": True,
      "count_include_pad": False}, (5, 8)),
    # ceil_mode without padding: the last, partial window divides by what it covers.
    ({"kernel_size": 3, "stride": 2, "ceil_mode": True},
     {"kernel_size": 3, "stride": 2, "ceil_mode": True}, (8, 6)),
]


@pytest.mark.parametrize("kw, tkw, size", AVG)
def test_avg_pool2d_padding_ceil_mode_and_count_include_pad_match_torch(kw, tkw, size):
    against_torch(nn.AvgPool2d(**kw), lambda t: F.avg_pool2d(t, **tkw), (2, 3, *size))


def test_unbatched_images_pool_as_a_batch_of_one():
    against_torch(nn.MaxPool2d(3, 2, "pad", 1, ceil_mode=True),
                  lambda t: F.max_pool2d(t, 3, 2, 1, ceil_mode=True), (3, 6, 7))
    against_torch(nn.AvgPool2d(2, 2, "pad", 1, count_include_pad=False),
                  lambda t: F.avg_pool2d(t, 2, 2, 1, count_include_pad=False), (3, 5, 4))


def test_mindspore_doc_examples_give_their_shapes():
    x = Tensor(RS.integers(0, 10, (5, 3, 4, 5)).astype(np.float32))
    pool = nn.MaxPool2d(kernel_size=2, stride=1, pad_mode="pad", padding=1, dilation=1)
    assert pool(x).shape == (5, 3, 5, 6)
    y = Tensor(RS.standard_normal((6, 6, 8, 8)).astype(np.float32))
    assert nn.AvgPool2d(4, stride=1, pad_mode="pad", padding=2)(y).shape == (6, 6, 9, 9)


def test_same_padding_is_unchanged_by_the_new_arguments():
    # 'same' never counts its padding in a mean and sets the output size itself.
    x = RS.standard_normal((2, 3, 7, 7)).astype(np.float32)
    got = nn.AvgPool2d(2, 2, "same", ceil_mode=True)(Tensor(x)).asnumpy()
    want = F.avg_pool2d(F.pad(torch.tensor(x), (0, 1, 0, 1)), 2, 2).numpy()
    want /= F.avg_pool2d(F.pad(torch.ones(1, 1, 7, 7), (0, 1, 0, 1)), 2, 2).numpy()
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_the_new_arguments_are_kept_and_shown():
    pool = nn.MaxPool2d(3, 2, "pad", (1, 0), dilation=(1, 2), ceil_mode=True)
    assert (pool.padding, pool.dilation, pool.ceil_mode) == ((1, 0), (1, 2), True)
    assert "padding=(1, 0)" in repr(pool)
    avg = nn.AvgPool2d(3, 2, "pad", 1, ceil_mode=True, count_include_pad=False)
    assert (avg.padding, avg.ceil_mode, avg.count_include_pad) == ((1, 1), True, False)


@pytest.mark.parametrize("make, name", [
    (lambda: nn.MaxPool2d(2, 2, "pad", 1, return_indices=True), "return_indices"),
    (lambda: nn.MaxPool2d(2, return_indices=True), "return_indices"),
    (lambda: nn.MaxPool2d(2, data_format="NHWC"), "data_format"),
    (lambda: nn.AvgPool2d(2, 2, "pad", 1, divisor_override=3), "divisor_override"),
    (lambda: nn.AvgPool2d(2, data_format="NHWC"), "data_format"),
])  # fmt: skip
def test_unimplemented_arguments_raise_naming_them(make, name):
    with pytest.raises(NotImplementedError, match=name):
        make()


@pytest.mark.parametrize("make, match", [
    # MindSpore: padding, dilation and ceil_mode of a max pool need pad_mode 'pad'.
    (lambda: nn.MaxPool2d(2, dilation=2), "need pad_mode 'pad'"),
    (lambda: nn.MaxPool2d(2, 2, "same", ceil_mode=True), "need pad_mode 'pad'"),
    (lambda: nn.MaxPool2d(2, padding=1), "padding must be 0 when pad_mode is 'valid'"),
    (lambda: nn.AvgPool2d(3, padding=(1, 0)), "padding must be 0 when pad_mode is 'valid'"),
    (lambda: nn.AvgPool2d(3, pad_mode="pad", padding=(1, 2, 3)), "padding must be an int or 2"),
    (lambda: nn.MaxPool2d(2, 2, "pad", dilation=0), "dilation"),
])  # fmt: skip
def test_arguments_that_need_pad_mode_pad_or_are_malformed_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_bad_inputs_are_refused_naming_the_shapes():
    with pytest.raises(ValueError, match=r"at most half the kernel"):
        nn.AvgPool2d(3, 1, "pad", 2)(Tensor(np.zeros((1, 1, 6, 6), np.float32)))
    with pytest.raises(ValueError, match=r"\(C, H, W\) or \(N, C, H, W\), got shape \(2, 4\)"):
        nn.AvgPool2d(2)(Tensor(np.zeros((2, 4), np.float32)))
    with pytest.raises(TypeError, match="ceil_mode"):
        nn.MaxPool2d(2, 2, "pad", ceil_mode=1)
