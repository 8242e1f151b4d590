"""Conv1d, Conv3d, Conv2dTranspose, Conv1dTranspose and ops.conv1d/conv3d: forward and
gradients against PyTorch (float32), finite differences (float64), MindSpore's defaults,
Parameter layouts and the errors that name what is wrong."""

from __future__ import annotations

import inspect
import math
import typing

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Parameter, Tensor, nn, ops
from engine.gradcheck import gradcheck

RS = np.random.default_rng(0)
RTOL, ATOL = 1e-4, 1e-5


def _float64(cell):
    for _, sub in cell.cells_and_names():
        for name, p in list(sub._params.items()):
            if p is not None:
                setattr(sub, name, Parameter(p._data.astype(np.float64)))
    return cell


def _engine(cell, x, cot):
    """(output, input gradient, Parameter gradients) of sum(cell(x) * cot)."""
    fn = engine.value_and_grad(lambda a: (cell(a) * Tensor(cot)).sum(), 0,
                               cell.trainable_params())
    _, (gx, gp) = fn(Tensor(x))
    return cell(Tensor(x)).asnumpy(), gx.asnumpy(), [g.asnumpy() for g in gp]


def _close(got, want):
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * scale)


def _pairs(layer, dims):
    """(begin, end) padding per axis as MindSpore pads `layer` ('pad' mode)."""
    sides = layer.padding if isinstance(layer.padding, tuple) else (layer.padding,) * 2 * dims
    return [(sides[2 * i], sides[2 * i + 1]) for i in range(dims)]


def _axes(value, dims):
    return tuple(value) if isinstance(value, tuple) else (value,) * dims


def torch_conv(layer, tx, tw, tb):
    """MindSpore's convolution of `layer` written with torch ops."""
    dims = tx.dim() - 2
    kernel, stride, dilation = (_axes(getattr(layer, n), dims)
                                for n in ("kernel_size", "stride", "dilation"))
    if layer.pad_mode == "same":
        pairs = []
        for size, k, s, d in zip(tx.shape[2:], kernel, stride, dilation, strict=True):
            total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
            pairs.append((total // 2, total - total // 2))
    elif layer.pad_mode == "valid":
        pairs = [(0, 0)] * dims
    else:
        pairs = _pairs(layer, dims)
    pad = [p for pair in reversed(pairs) for p in pair]
    conv = {1: F.conv1d, 3: F.conv3d}[dims]
    return conv(F.pad(tx, pad), tw, tb, stride=stride, dilation=dilation, groups=layer.group)


def torch_transposed(layer, tx, tw, tb):
    """MindSpore's transposed convolution of `layer`: the full result cropped or extended
    (zeros, then bias) as its pad_mode says, then output_padding zeros after the bias."""
    dims = tx.dim() - 2
    kernel, stride, dilation = (_axes(getattr(layer, n), dims)
                                for n in ("kernel_size", "stride", "dilation"))
    conv = {1: F.conv_transpose1d, 2: F.conv_transpose2d}[dims]
    full = conv(tx, tw, None, stride=stride, dilation=dilation, groups=layer.group)
    crops = []
    for i, (size, k, s, d) in enumerate(zip(tx.shape[2:], kernel, stride, dilation,
                                            strict=True)):
        reach = (k - 1) * d + 1
        if layer.pad_mode == "same":
            begin, out = max(reach - s, 0) // 2, size * s
        elif layer.pad_mode == "valid":
            begin, out = 0, size * s + max(reach - s, 0)
        else:
            b, e = _pairs(layer, dims)[i]
            begin, out = b, full.shape[2 + i] - b - e
        crops.append((begin, out))
    grow = []  # F.pad: last axis first
    for i in reversed(range(dims)):
        begin, out = crops[i]
        grow += [0, max(begin + out - full.shape[2 + i], 0)]
    y = F.pad(full, grow)[(slice(None), slice(None),
                           *(slice(b, b + o) for b, o in crops))]
    if tb is not None:
        y = y + tb.reshape(-1, *(1,) * dims)
    extra = _axes(getattr(layer, "output_padding", 0), dims)
    return F.pad(y, [p for e in reversed(extra) for p in (0, e)])


def check_against_torch(layer, x, oracle, squeeze):
    """Forward and gradients (input, weight, bias) of `layer` vs the torch `oracle`."""
    out = layer(Tensor(x)).asnumpy()
    cot = RS.standard_normal(out.shape).astype(np.float32)
    got, gx, gp = _engine(layer, x, cot)
    weight = layer.weight.asnumpy()
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(weight[:, :, 0] if squeeze else weight, requires_grad=True)
    tb = torch.tensor(layer.bias.asnumpy(), requires_grad=True) if layer.has_bias else None
    tout = oracle(layer, tx, tw, tb)
    _close(got, tout.detach().numpy())
    tout.backward(torch.tensor(cot))
    _close(gx, tx.grad.numpy())
    want_w = tw.grad.numpy()[:, :, None] if squeeze else tw.grad.numpy()
    _close(gp[0], want_w)
    if layer.has_bias:
        _close(gp[1], tb.grad.numpy())
    return out


# ----------------------------------------------------------------------------- Conv1d, Conv3d

CONV1D = [
    # in, out, kernel, stride, pad_mode, padding, dilation, group, has_bias, L
    (3, 4, 3, 1, "same", 0, 1, 1, True, 11),
    (2, 3, 4, 1, "same", 0, 1, 1, False, 9),  # odd padding goes at the end
    (4, 6, 3, 2, "pad", 2, 2, 2, True, 13),
    (4, 4, 3, 3, "valid", 0, 1, 4, True, 10),  # depthwise
    (2, 4, 2, 3, "same", 0, 3, 2, False, 8),
    (3, 5, 1, 1, "valid", 0, 1, 1, True, 6),  # a pointwise kernel: no junk columns at all
]


@pytest.mark.parametrize("cin, cout, k, s, mode, pad, dil, group, bias, length", CONV1D)
def test_conv1d_matches_torch(cin, cout, k, s, mode, pad, dil, group, bias, length):
    layer = nn.Conv1d(cin, cout, k, s, mode, pad, dil, group, bias)
    x = RS.standard_normal((2, cin, length)).astype(np.float32)
    out = check_against_torch(layer, x, torch_conv, squeeze=True)
    if mode == "same":
        assert out.shape[2] == -(-length // s)


CONV3D = [
    (2, 3, (3, 2, 3), (1, 2, 1), "same", 0, 1, 1, True, (5, 6, 7)),
    (4, 4, 2, 1, "pad", (1, 0, 2, 1, 0, 3), (2, 1, 3), 2, True, (4, 5, 3)),
    (3, 3, (1, 3, 3), 2, "valid", 0, 1, 3, False, (3, 7, 6)),
]


@pytest.mark.parametrize("cin, cout, k, s, mode, pad, dil, group, bias, size", CONV3D)
def test_conv3d_matches_torch(cin, cout, k, s, mode, pad, dil, group, bias, size):
    layer = nn.Conv3d(cin, cout, k, s, mode, pad, dil, group, bias)
    x = RS.standard_normal((2, cin, *size)).astype(np.float32)
    check_against_torch(layer, x, torch_conv, squeeze=False)


# ----------------------------------------------------------------------------- transposed

CONV2D_T = [
    # in, out, kernel, stride, pad_mode, padding, output_padding, dilation, group, bias, HW
    (3, 2, 4, 2, "same", 0, 0, 1, 1, True, (5, 4)),
    (3, 2, (3, 4), (2, 3), "same", 0, 0, 1, 1, True, (4, 5)),  # odd crop at the end
    (2, 4, 1, (2, 3), "valid", 0, 0, 1, 2, True, (4, 3)),  # reach < stride: extended
    (2, 2, (3, 5), (1, 2), "valid", 0, 0, 2, 1, False, (3, 4)),
    (4, 6, 3, 2, "pad", (1, 2, 0, 1), (1, 0), (1, 2), 2, True, (5, 4)),
    (4, 4, 3, 1, "pad", 1, 0, 1, 4, True, (6, 6)),  # depthwise
]


@pytest.mark.parametrize("cin, cout, k, s, mode, pad, extra, dil, group, bias, hw", CONV2D_T)
def test_conv2d_transpose_matches_torch(cin, cout, k, s, mode, pad, extra, dil, group, bias,
                                        hw):
    layer = nn.Conv2dTranspose(cin, cout, k, s, mode, pad, extra, dil, group, bias)
    x = RS.standard_normal((2, cin, *hw)).astype(np.float32)
    out = check_against_torch(layer, x, torch_transposed, squeeze=False)
    if mode == "same":
        assert out.shape[2:] == tuple(n * st for n, st in zip(hw, layer.stride, strict=True))


CONV1D_T = [
    (3, 2, 3, 2, "same", 0, 1, 1, True, 7),
    (2, 2, 2, 3, "valid", 0, 1, 1, True, 5),
    (4, 2, 3, 3, "pad", 1, 2, 2, False, 6),
    (4, 4, 5, 1, "pad", 2, 1, 4, True, 9),
]


@pytest.mark.parametrize("cin, cout, k, s, mode, pad, dil, group, bias, length", CONV1D_T)
def test_conv1d_transpose_matches_torch(cin, cout, k, s, mode, pad, dil, group, bias, length):
    layer = nn.Conv1dTranspose(cin, cout, k, s, mode, pad, dil, group, bias)
    x = RS.standard_normal((2, cin, length)).astype(np.float32)
    check_against_torch(layer, x, torch_transposed, squeeze=True)


# ----------------------------------------------------------------------------- gradcheck


@pytest.mark.parametrize("make, shape", [
    (lambda: nn.Conv1d(4, 2, 3, 2, "pad", 1, 2, 2, True), (2, 4, 9)),
    (lambda: nn.Conv3d(2, 2, (2, 1, 2), (1, 2, 1), "same", group=2, has_bias=True),
     (1, 2, 3, 4, 3)),
    (lambda: nn.Conv2dTranspose(2, 4, 3, 2, "pad", (1, 0, 0, 1), 1, 1, 2, True), (1, 2, 3, 4)),
    (lambda: nn.Conv2dTranspose(2, 2, 1, (2, 3), "valid", has_bias=True), (1, 2, 2, 3)),
    (lambda: nn.Conv1dTranspose(2, 3, 3, 2, "same", has_bias=True), (2, 2, 5)),
])  # fmt: skip
def test_gradcheck_float64(make, shape):
    layer = _float64(make())
    gradcheck(layer, [Tensor(RS.standard_normal(shape))], layer.trainable_params())


# ----------------------------------------------------------------------------- ops


def test_ops_conv1d_and_conv3d_match_torch():
    x = RS.standard_normal((2, 4, 10)).astype(np.float32)
    w = RS.standard_normal((6, 2, 3)).astype(np.float32)
    b = RS.standard_normal(6).astype(np.float32)
    got = ops.conv1d(Tensor(x), Tensor(w), Tensor(b), stride=2, pad_mode="pad", padding=(1,),
                     dilation=2, groups=2)
    want = F.conv1d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride=2, padding=1,
                    dilation=2, groups=2)
    _close(got.asnumpy(), want.numpy())
    same = ops.conv1d(Tensor(x), Tensor(w[:, :, :2]), groups=2, pad_mode="same")
    assert same.shape == (2, 6, 10)
    x3 = RS.standard_normal((1, 2, 4, 5, 6)).astype(np.float32)
    w3 = RS.standard_normal((3, 2, 2, 3, 1)).astype(np.float32)
    got = ops.conv3d(Tensor(x3), Tensor(w3), pad_mode="pad", padding=(1, 0, 2), stride=(1, 2, 1))
    want = F.conv3d(torch.tensor(x3), torch.tensor(w3), padding=(1, 0, 2), stride=(1, 2, 1))
    _close(got.asnumpy(), want.numpy())
    assert ops.conv3d(Tensor(x3), Tensor(w3)).shape == (1, 3, 3, 3, 6)  # 'valid' by default
    gradcheck(lambda a, k: ops.conv3d(a, k, pad_mode="same", dilation=(1, 2, 1)),
              [Tensor(x3.astype(np.float64)), Tensor(w3.astype(np.float64))])


@pytest.mark.parametrize("call, match", [
    (lambda: ops.conv1d(Tensor(np.ones((1, 2, 5))), Tensor(np.ones((2, 2, 3))), padding=1),
     "padding must be 0 when pad_mode is 'valid'"),
    (lambda: ops.conv1d(Tensor(np.ones((1, 2, 5, 5))), Tensor(np.ones((2, 2, 3)))),
     r"conv1d expects a 3-D \(N, C, L\) input, got shape \(1, 2, 5, 5\)"),
    (lambda: ops.conv1d(Tensor(np.ones((1, 3, 5))), Tensor(np.ones((2, 2, 3)))),
     r"expects 2 input channels .* got input shape \(1, 3, 5\)"),
    (lambda: ops.conv3d(Tensor(np.ones((1, 1, 2, 2, 2))), Tensor(np.ones((1, 1, 3, 3, 3)))),
     "smaller than the kernel's reach 3"),
    (lambda: ops.conv3d(Tensor(np.ones((1, 1, 4, 4, 4))), Tensor(np.ones((1, 1, 1, 1, 1))),
                        stride=(1, 2)), "stride must be an int or 3 ints"),
    (lambda: ops.conv1d(Tensor(np.ones((1, 2, 5))), Tensor(np.ones((2, 2, 3))), groups=0),
     "groups must be a positive int"),
])  # fmt: skip
def test_ops_errors_say_what_is_wrong(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ----------------------------------------------------------------------------- MindSpore API


def test_defaults_and_parameter_layouts_follow_mindspore():
    conv1 = nn.Conv1d(6, 4, 5, group=2, has_bias=True)
    assert conv1.pad_mode == "same" and conv1.weight.shape == (4, 3, 1, 5)
    assert [p.name for p in conv1.trainable_params()] == ["weight", "bias"]
    bound = 1 / math.sqrt(3 * 5)  # HeUniform(sqrt(5)): 1/sqrt(fan_in); the bias the same
    assert bound * 0.8 < np.abs(conv1.weight.asnumpy()).max() <= bound
    assert np.abs(conv1.bias.asnumpy()).max() <= bound
    assert nn.Conv3d(2, 4, (3, 2, 1)).weight.shape == (4, 2, 3, 2, 1)
    deconv = nn.Conv2dTranspose(6, 4, 3, group=2)
    assert deconv.weight.shape == (6, 2, 3, 3) and deconv.bias is None
    assert nn.Conv1dTranspose(3, 6, 4, group=3).weight.shape == (3, 2, 1, 4)
    assert nn.Conv1d(2, 2, 3, dtype=engine.float64).weight.dtype == engine.float64
    # A Conv1d weight Tensor is given as (out, in/group, k), as MindSpore takes it.
    given = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    np.testing.assert_array_equal(nn.Conv1d(2, 2, 3, weight_init=Tensor(given)).weight
                                  .asnumpy()[:, :, 0], given)
    assert nn.Conv1d(1, 1, 3, weight_init="ones")(Tensor(np.ones((1, 1, 5), np.float32))) \
        .asnumpy().tolist() == [[[2, 3, 3, 3, 2]]]


def test_mindspore_examples_give_its_shapes():
    ones = lambda *shape: Tensor(np.ones(shape, np.float32))  # noqa: E731
    assert nn.Conv1d(120, 240, 4, weight_init="normal")(ones(1, 120, 64)).shape == (1, 240, 64)
    assert nn.Conv3d(3, 32, (4, 3, 3))(ones(2, 3, 10, 8, 8)).shape == (2, 32, 10, 8, 8)
    assert nn.Conv2dTranspose(3, 64, 4, pad_mode="pad")(ones(1, 3, 16, 50)).shape == \
        (1, 64, 19, 53)
    assert nn.Conv1dTranspose(3, 64, 4, pad_mode="pad")(ones(1, 3, 50)).shape == (1, 64, 53)


def test_signatures_are_mindspores():
    def defaults(cls):
        return {k: p.default for k, p in inspect.signature(cls).parameters.items()
                if p.default is not p.empty}

    common = {"stride": 1, "pad_mode": "same", "padding": 0, "dilation": 1, "group": 1,
              "has_bias": False, "weight_init": None, "bias_init": None}
    for cls in (nn.Conv1d, nn.Conv3d, nn.Conv2dTranspose, nn.Conv1dTranspose):
        assert {k: defaults(cls)[k] for k in common} == common, cls
        names = list(inspect.signature(cls).parameters)
        assert names[:3] == ["in_channels", "out_channels", "kernel_size"]
        mode = inspect.signature(cls).parameters["pad_mode"].annotation
        assert typing.get_args(typing.get_type_hints(cls.__init__)["pad_mode"]) == \
            ("same", "valid", "pad"), mode
    assert list(inspect.signature(nn.Conv2dTranspose).parameters)[5:7] == ["padding",
                                                                          "output_padding"]
    assert defaults(nn.Conv3d)["data_format"] == "NCDHW"
    assert "output_padding" not in inspect.signature(nn.Conv1dTranspose).parameters
    assert "output_padding=(1, 0)" in repr(nn.Conv2dTranspose(1, 1, 3, 2, "pad",
                                                              output_padding=(1, 0)))


@pytest.mark.parametrize("make, error, match", [
    (lambda: nn.Conv1d(6, 4, 3, group=4), ValueError,
     r"in_channels \(6\) and out_channels \(4\) must both be divisible by group \(4\)"),
    (lambda: nn.Conv1d(2, 2, (3,)), ValueError, "kernel_size must be an int >= 1"),
    (lambda: nn.Conv1d(2, 2, 3, padding=1), ValueError, "padding must be 0 when pad_mode"),
    (lambda: nn.Conv1d(2, 2, 3, pad_mode="full"), ValueError, "pad_mode"),
    (lambda: nn.Conv3d(2, 2, 3, pad_mode="pad", padding=(1, 1)), ValueError,
     "padding must be an int or 6 ints"),
    (lambda: nn.Conv3d(2, 2, (3, 3)), ValueError, "kernel_size must be an int or 3 ints"),
    (lambda: nn.Conv3d(2, 2, 3, data_format="NDHWC"), NotImplementedError, "data_format"),
    (lambda: nn.Conv2dTranspose(2, 2, 3, 2, "pad", output_padding=2), ValueError,
     r"output_padding 2 must be less than max\(stride, dilation\) = 2"),
    (lambda: nn.Conv2dTranspose(2, 2, 3, 1, "pad", output_padding=(0, 2), dilation=(1, 3)),
     None, None),  # dilation 3 allows an output_padding of 2
    (lambda: nn.Conv2dTranspose(2, 2, 3, 2, output_padding=1), ValueError,
     "output_padding 1 needs pad_mode 'pad'"),
    (lambda: nn.Conv1dTranspose(2, 2, 3, dilation=0), ValueError, "dilation must be an int"),
    (lambda: nn.Conv1d(2, 2, 3, dtype=engine.int32), TypeError, "floating-point"),
])  # fmt: skip
def test_bad_hyper_parameters_raise(make, error, match):
    if error is None:
        make()
        return
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("layer, shape, match", [
    (nn.Conv1d(8, 4, 3), (2, 8, 4, 4), r"Conv1d expects input of shape \(N, 8, L\), got "
                                       r"shape \(2, 8, 4, 4\)"),
    (nn.Conv1d(8, 4, 3), (2, 3, 9), r"\(N, 8, L\), got shape \(2, 3, 9\)"),
    (nn.Conv3d(2, 4, 3), (2, 2, 4, 4), r"\(N, 2, D, H, W\), got shape \(2, 2, 4, 4\)"),
    (nn.Conv2dTranspose(3, 4, 3), (2, 4, 5, 5), r"\(N, 3, H, W\), got shape \(2, 4, 5, 5\)"),
    (nn.Conv1dTranspose(3, 4, 3), (3, 5), r"\(N, 3, L\), got shape \(3, 5\)"),
    (nn.Conv1d(1, 1, 5, pad_mode="valid"), (1, 1, 3), "smaller than the kernel's reach 5"),
    (nn.Conv1dTranspose(1, 1, 2, 1, "pad", 2), (1, 1, 2), "padding 2 leaves no output"),
])  # fmt: skip
def test_wrong_inputs_name_expected_and_actual(layer, shape, match):
    with pytest.raises(ValueError, match=match):
        layer(Tensor(np.ones(shape, np.float32)))


# ----------------------------------------------------------------------------- threaded blocks

@pytest.mark.parametrize("make, oracle, squeeze, shape", [
    (lambda: nn.Conv1d(4, 6, 3, 2, "pad", 2, 2, 2, True), torch_conv, True, (5, 4, 13)),
    (lambda: nn.Conv3d(2, 3, (3, 2, 3), (1, 2, 1), "same", 0, 1, 1, True), torch_conv, False,
     (5, 2, 5, 6, 7)),
    (lambda: nn.Conv2dTranspose(4, 6, 3, 2, "pad", (1, 2, 0, 1), (1, 0), (1, 2), 2, True),
     torch_transposed, False, (5, 4, 5, 4)),
    (lambda: nn.Conv1dTranspose(4, 4, 5, 1, "pad", 2, 1, 4, True), torch_transposed, True,
     (5, 4, 9)),
])
def test_a_batch_cut_into_blocks_on_threads_matches_torch(monkeypatch, make, oracle, squeeze,
                                                           shape):
    """Big batches run in blocks of samples on the engine's threads: here every batch does
    (an odd batch of 5, uneven blocks), and the results are torch's."""
    from engine.ops import _conv_layout, _conv_threads

    monkeypatch.setattr(_conv_threads, "PARALLEL_FROM", 1)
    monkeypatch.setattr(_conv_layout, "CHUNK", 64)
    layer = make()
    x = RS.standard_normal(shape).astype(np.float32)
    check_against_torch(layer, x, oracle, squeeze=squeeze)
    blocks = _conv_threads.runs([slice(0, 3), slice(3, 5)], 10)
    assert len(blocks) == min(2, _conv_threads.workers())


@pytest.mark.parametrize("make, oracle, squeeze, shape", [
    (lambda: nn.Conv1d(4, 6, 3, 2, "pad", 2, 2, 2, True), torch_conv, True, (3, 4, 13)),
    (lambda: nn.Conv1d(3, 4, 3, 1, "same", 0, 1, 1, True), torch_conv, True, (3, 3, 11)),
    (lambda: nn.Conv3d(2, 3, (3, 2, 3), (1, 2, 1), "same", 0, 1, 1, True), torch_conv, False,
     (2, 2, 5, 6, 7)),
])
def test_the_weight_gradient_tap_by_tap_matches_torch(monkeypatch, make, oracle, squeeze, shape):
    """Big convolutions take the weight gradient tap by tap from the saved planes; forced
    here for small ones, it is torch's."""
    from engine.ops import _conv_nd

    monkeypatch.setattr(_conv_nd, "TAP_PRODUCT", 0)
    check_against_torch(make(), RS.standard_normal(shape).astype(np.float32), oracle,
                        squeeze=squeeze)
