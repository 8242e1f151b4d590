"""Upsample/interpolate, PixelShuffle and the padding layers: forward and input gradients
against PyTorch (float32), finite differences (float64), signatures and the errors."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from engine import Tensor, nn, ops
from tests.engine.test_layers_pool_nd import against_torch

RS = np.random.default_rng(11)


# ----------------------------------------------------------------------------- Upsample

SIZES = [{"size": (14, 20)}, {"size": (3, 4)}, {"size": (5, 23)}, {"scale_factor": 2.0},
         {"scale_factor": 1.7}, {"scale_factor": 0.5}]


def torch_kwargs(kw):
    # torch maps positions by 1/scale_factor unless it recomputes the ratio from the sizes,
    # as MindSpore (and the engine) always do.
    return {**kw, "recompute_scale_factor": True} if "scale_factor" in kw else kw


@pytest.mark.parametrize("kw", SIZES)
@pytest.mark.parametrize("mode, corners", [("nearest", None), ("bilinear", False),
                                           ("bilinear", True)])
def test_upsample_2d_matches_torch(kw, mode, corners):
    layer = nn.Upsample(mode=mode, align_corners=corners, **kw)
    against_torch(layer, lambda t: F.interpolate(t, mode=mode, align_corners=corners,
                                                 **torch_kwargs(kw)), (2, 3, 7, 10))


@pytest.mark.parametrize("mode, size, corners, shape", [
    ("linear", 17, False, (2, 3, 6)),
    ("linear", 4, True, (2, 3, 9)),
    ("linear", 1, False, (1, 2, 5)),  # one output: the middle (half pixel), as torch
    ("nearest", 9, None, (2, 3, 4)),
    ("trilinear", (3, 8, 9), True, (1, 2, 4, 5, 6)),
    ("trilinear", (6, 3, 7), False, (1, 2, 4, 5, 6)),
    ("nearest", (3, 8, 9), None, (1, 2, 4, 5, 6)),
])  # fmt: skip
def test_interpolate_other_ranks_match_torch(mode, size, corners, shape):
    against_torch(lambda t: ops.interpolate(t, size, mode=mode, align_corners=corners),
                  lambda t: F.interpolate(t, size, mode=mode, align_corners=corners), shape)


def test_nearest_reads_floor_of_out_index_times_in_over_out():
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    out = ops.interpolate(Tensor(x), size=8).asnumpy()[0, 0]
    np.testing.assert_array_equal(out, np.floor(np.arange(8) * 5 / 8))
    # MindSpore's nn.Upsample example
    y = Tensor(np.array([[[[1, 2, 3, 4], [5, 6, 7, 8]]]], np.float32))
    np.testing.assert_array_equal(nn.Upsample(size=(5, 5))(y).asnumpy()[0, 0],
                                  [[1, 1, 2, 3, 4]] * 3 + [[5, 5, 6, 7, 8]] * 2)
    assert ops.upsample is ops.interpolate


def test_upsample_signature_and_repr():
    params = inspect.signature(nn.Upsample).parameters
    assert {k: v.default for k, v in params.items()} == {
        "size": None, "scale_factor": None, "mode": "nearest", "align_corners": None,
        "recompute_scale_factor": None}
    assert repr(nn.Upsample(scale_factor=2.0, mode="bilinear")).endswith(
        "scale_factor=2.0, mode=bilinear, align_corners=None>")
    assert "size=(4, 4), mode=nearest>" in repr(nn.Upsample(size=(4, 4)))


# ----------------------------------------------------------------------------- PixelShuffle


@pytest.mark.parametrize("r, shape", [(2, (2, 8, 3, 4)), (3, (1, 9, 2, 2)), (2, (4, 3, 5))])
def test_pixel_shuffle_matches_torch(r, shape):
    out = against_torch(nn.PixelShuffle(r), lambda t: F.pixel_shuffle(t, r), shape)
    assert out.shape[-2:] == (shape[-2] * r, shape[-1] * r)
    against_torch(lambda t: ops.pixel_shuffle(t, r), lambda t: F.pixel_shuffle(t, r), shape)


# ----------------------------------------------------------------------------- padding

PADS = [
    (nn.ZeroPad2d, torch.nn.ZeroPad2d, ((1, -1, 2, 0),)),
    (nn.ZeroPad2d, torch.nn.ZeroPad2d, (2,)),
    (nn.ConstantPad2d, torch.nn.ConstantPad2d, ((1, 2, 0, 3), 0.5)),
    (nn.ConstantPad2d, torch.nn.ConstantPad2d, ((-1, 2), -2.0)),
    (nn.ReflectionPad2d, torch.nn.ReflectionPad2d, ((2, 1, 3, 0),)),
    (nn.ReflectionPad2d, torch.nn.ReflectionPad2d, (1,)),
    (nn.ReplicationPad2d, torch.nn.ReplicationPad2d, ((3, 1, 2, 4),)),
]


@pytest.mark.parametrize("cls, tcls, args", PADS, ids=lambda v: getattr(v, "__name__", ""))
def test_padding_layers_match_torch(cls, tcls, args):
    against_torch(cls(*args), tcls(*args), (2, 3, 4, 5))
    against_torch(cls(*args), tcls(*args), (3, 4, 5))  # unbatched


@pytest.mark.parametrize("mode, padding, value", [
    ("constant", (1, 2, -1, 0, 1, 1), 3.0), ("reflect", (2, 3, 1, 0), None),
    ("replicate", (0, 2, 3, 1), None), ("constant", (2, 1), None),
])  # fmt: skip
def test_ops_pad_matches_torch(mode, padding, value):
    tvalue = {} if value is None else {"value": value}
    against_torch(lambda t: ops.pad(t, padding, mode, value),
                  lambda t: F.pad(t, padding, mode, **tvalue), (2, 3, 4, 5))


def test_mindspore_padding_examples():
    x = Tensor(np.array([[[0, 1, 2], [3, 4, 5], [6, 7, 8]]], np.float32))
    np.testing.assert_array_equal(nn.ReflectionPad2d((1, 1, 2, 0))(x).asnumpy()[0],
                                  [[7, 6, 7, 8, 7], [4, 3, 4, 5, 4], [1, 0, 1, 2, 1],
                                   [4, 3, 4, 5, 4], [7, 6, 7, 8, 7]])  # fmt: skip
    ones = Tensor(np.ones((1, 2, 3, 4), np.float32))
    out = nn.ConstantPad2d((-1, 1, 0, 1), 0.5)(ones).asnumpy()
    assert out.shape == (1, 2, 4, 4)
    np.testing.assert_array_equal(out[0, 0], [[1, 1, 1, 0.5]] * 3 + [[0.5] * 4])
    assert repr(nn.ZeroPad2d(1)).endswith("padding=(1, 1, 1, 1)>")


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("make, error, match", [
    (lambda: nn.Upsample(), ValueError, "exactly one of size and scale_factor, got neither"),
    (lambda: nn.Upsample(size=4, scale_factor=2.0), ValueError, "got both"),
    (lambda: nn.Upsample(size=4, mode="bicubic"), NotImplementedError, "'bicubic'"),
    (lambda: nn.Upsample(size=4, mode="cubic"), ValueError, "mode must be"),
    (lambda: nn.Upsample(size=4, align_corners=True), ValueError, "not 'nearest'"),
    (lambda: nn.PixelShuffle(0), ValueError, "upscale_factor"),
    (lambda: nn.ReflectionPad2d((1, 2, 3)), ValueError, "left, right, top, bottom"),
    (lambda: nn.ReplicationPad2d(-1), ValueError, ">= 0"),
    (lambda: nn.ConstantPad2d(1, "x"), ValueError, "value"),
    (lambda: ops.pad(Tensor(np.zeros((2, 3))), (1, 1), "circular"), NotImplementedError,
     "circular"),
])  # fmt: skip
def test_bad_arguments_raise_naming_them(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("call, shape, match", [
    (nn.Upsample(size=0), (1, 2, 3, 3), "size must be at least 1"),
    (nn.Upsample(size=-2), (1, 2, 3, 3), "size must be at least 1"),
    (nn.Upsample(scale_factor=0.1), (1, 2, 3, 3), r"resizes spatial shape \(3, 3\) to \(0, 0\)"),
    (nn.Upsample(size=(2, 2, 2)), (1, 2, 3, 3),
     r"2 ints for an input of spatial shape \(3, 3\), got \(2, 2, 2\)"),
    (nn.Upsample(size=4, mode="bilinear"), (1, 2, 3), "'bilinear' takes a 4-D input, got a 3-D"),
    (nn.PixelShuffle(2), (1, 6, 2, 2), r"6 channels of input shape \(1, 6, 2, 2\) are not "
                                       r"divisible by upscale_factor² \(4\)"),
    (nn.ReflectionPad2d(3), (1, 1, 3, 5), r"less than the input's height and width, got shape"),
    (nn.ReplicationPad2d(1), (4, 5), r"\(N, C, H, W\) or \(C, H, W\), got shape \(4, 5\)"),
    (nn.ZeroPad2d((0, 0, -2, -2)), (1, 1, 3, 5), "leaves nothing"),
    (lambda t: ops.pad(t, (3, 3), "reflect"), (1, 3), "must be less than the size 3"),
])  # fmt: skip
def test_inputs_that_do_not_fit_are_refused_naming_the_shape(call, shape, match):
    with pytest.raises(ValueError, match=match):
        call(Tensor(np.zeros(shape, np.float32)))
