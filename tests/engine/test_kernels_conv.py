"""conv2d cut into blocks of samples on the pool's threads: the same values as PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Tensor, ops
from engine.ops import _conv

CONV = [
    # (input shape, weight shape, stride, pad_mode, padding, dilation, groups)
    ((5, 3, 8, 7), (4, 3, 3, 3), 1, "same", 0, 1, 1),   # pitched, junk columns cropped
    ((5, 3, 8, 7), (4, 3, 3, 3), 1, "valid", 0, 1, 1),
    ((5, 2, 6, 6), (4, 2, 1, 1), 1, "valid", 0, 1, 1),  # pitched, no junk
    ((5, 3, 9, 8), (6, 3, 3, 3), 2, "same", 0, 1, 1),   # strided im2col
    ((5, 4, 9, 8), (6, 2, 3, 2), (2, 1), "pad", (2, 1, 0, 3), (1, 2), 2),
    ((4, 6, 10, 10), (6, 1, 3, 3), 1, "same", 0, 2, 6),  # depthwise, dilated
]


@pytest.fixture
def three_blocks(monkeypatch):
    """Every convolution cut into three blocks of samples, however small."""
    monkeypatch.setattr(_conv, "PARALLEL_FROM", 0)
    monkeypatch.setattr(_conv, "workers", lambda: 3)


def _torch_pads(xs, ws, stride, mode, padding, dilation):
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    if mode == "same":
        return (*_conv.same_pads(xs[2], (ws[2] - 1) * dh + 1, sh),
                *_conv.same_pads(xs[3], (ws[3] - 1) * dw + 1, sw))
    if mode == "pad":
        return padding if isinstance(padding, tuple) else (padding,) * 4
    return (0, 0, 0, 0)


@pytest.mark.parametrize("xs, ws, stride, mode, padding, dilation, groups", CONV)
def test_conv2d_in_blocks_matches_torch(three_blocks, xs, ws, stride, mode, padding, dilation,
                                        groups):
    assert len(_conv._batch_parts(xs[0], 1)) == 3
    rs = np.random.default_rng(1)
    x, w, b = rs.standard_normal(xs), rs.standard_normal(ws), rs.standard_normal(ws[0])
    kw = dict(stride=stride, pad_mode=mode, padding=padding, dilation=dilation, groups=groups)
    out = ops.conv2d(Tensor(x), Tensor(w), Tensor(b), **kw).asnumpy()

    pads = _torch_pads(xs, ws, stride, mode, padding, dilation)
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    tout = F.conv2d(F.pad(tx, (pads[2], pads[3], pads[0], pads[1])), tw, tb, stride=stride,
                    dilation=dilation, groups=groups)
    np.testing.assert_allclose(out, tout.detach().numpy(), rtol=1e-10, atol=1e-10)

    cot = rs.standard_normal(out.shape)
    tout.backward(torch.tensor(cot))
    grads = engine.grad(lambda a, c, d: (ops.conv2d(a, c, d, **kw) * Tensor(cot)).sum(),
                        (0, 1, 2))(Tensor(x), Tensor(w), Tensor(b))
    for got, t in zip(grads, (tx, tw, tb), strict=True):
        np.testing.assert_allclose(got.asnumpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_blocks_without_input_gradient_give_the_weight_gradients(three_blocks):
    rs = np.random.default_rng(2)
    x = rs.standard_normal((7, 1, 12, 12)).astype(np.float32)
    w = rs.standard_normal((8, 1, 3, 3)).astype(np.float32)
    b = rs.standard_normal(8).astype(np.float32)
    gw, gb = engine.grad(lambda c, d: ops.conv2d(Tensor(x), c, d, pad_mode="same").sum(),
                         (0, 1))(Tensor(w), Tensor(b))
    tw, tb = (torch.tensor(a, requires_grad=True) for a in (w, b))
    F.conv2d(torch.tensor(x), tw, tb, padding=1).sum().backward()
    np.testing.assert_allclose(gw.asnumpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gb.asnumpy(), tb.grad.numpy(), rtol=1e-5, atol=1e-4)


def test_small_batches_stay_in_one_block():
    assert _conv._batch_parts(64, _conv.PARALLEL_FROM - 1) == [slice(0, 64)]
    parts = _conv._batch_parts(3, 1 << 30)
    assert parts[0].start == 0 and parts[-1].stop == 3 and len(parts) <= 3
