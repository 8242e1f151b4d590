"""Channel dropout (Dropout1d/2d/3d): whole channels zeroed at rate p in train mode, the rest
scaled by 1/(1-p); identity when predicting; gradients through kept channels only; seeds."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch

import engine
from engine import Tensor, nn
from engine.gradcheck import gradcheck

LAYERS = [(nn.Dropout1d, (40, 50, 3)), (nn.Dropout2d, (40, 50, 2, 3)),
          (nn.Dropout3d, (40, 50, 2, 2, 2))]


@pytest.mark.parametrize("cls, shape", LAYERS, ids=lambda v: getattr(v, "__name__", ""))
def test_whole_channels_are_dropped_at_rate_p_and_the_rest_scaled(cls, shape):
    layer = cls(p=0.3)
    layer.set_train()
    engine.set_seed(3)
    out = layer(Tensor(np.ones(shape, np.float32))).asnumpy()
    maps = out.reshape(shape[0], shape[1], -1)
    # every feature map is all zeros or all 1/(1-p)
    assert np.all(maps.min(axis=2) == maps.max(axis=2))
    values = maps[:, :, 0]
    assert set(np.unique(values).tolist()) == {0.0, np.float32(1 / 0.7)}
    # 2000 maps: the dropped share is within 4 standard deviations of p
    rate = (values == 0).mean()
    assert abs(rate - 0.3) < 4 * np.sqrt(0.3 * 0.7 / values.size)
    # different samples drop different channels (one draw per sample and channel)
    assert not np.all(values == values[:1])


@pytest.mark.parametrize("cls, shape", LAYERS, ids=lambda v: getattr(v, "__name__", ""))
def test_predict_mode_and_p_zero_are_the_identity(cls, shape):
    x = Tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    layer = cls(0.5)
    assert not layer.training and layer(x) is x  # a new Cell predicts
    layer.set_train()
    assert layer(x) is not x
    layer.set_train(False)
    assert layer(x) is x
    zero = cls(0.0)
    zero.set_train()
    assert zero(x) is x


@pytest.mark.parametrize("cls, shape", LAYERS, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_flows_only_through_kept_channels(cls, shape):
    small = (4, 6, *shape[2:])
    x = np.random.default_rng(1).standard_normal(small)
    layer = cls(0.5)
    layer.set_train()
    engine.set_seed(7)
    out = layer(Tensor(x)).asnumpy()
    engine.set_seed(7)
    g = engine.grad(lambda a: layer(a).sum())(Tensor(x)).asnumpy()
    kept = (out != 0).reshape(4, 6, -1).any(axis=2)
    expected = np.broadcast_to(np.where(kept, 2.0, 0.0).reshape(4, 6, *(1,) * (len(small) - 2)),
                               small)
    np.testing.assert_array_equal(g, expected)
    assert 0 < kept.sum() < kept.size

    def fixed_mask(a):  # the same mask on every call, for finite differences
        engine.set_seed(7)
        return layer(a)

    gradcheck(fixed_mask, [Tensor(x)])


@pytest.mark.parametrize("cls, shape", LAYERS, ids=lambda v: getattr(v, "__name__", ""))
def test_the_same_seed_gives_the_same_mask(cls, shape):
    layer = cls(0.4)
    layer.set_train()
    x = Tensor(np.ones(shape, np.float32))
    engine.set_seed(11)
    a = layer(x).asnumpy()
    b = layer(x).asnumpy()
    engine.set_seed(11)
    np.testing.assert_array_equal(layer(x).asnumpy(), a)
    assert not np.array_equal(a, b)  # the next call draws anew


def test_an_unbatched_sequence_drops_whole_channels():
    layer = nn.Dropout1d(0.5)
    layer.set_train()
    engine.set_seed(2)
    out = layer(Tensor(np.ones((200, 7), np.float32))).asnumpy()
    assert np.all(out.min(axis=1) == out.max(axis=1))
    assert 0.35 < (out[:, 0] == 0).mean() < 0.65


def test_p_one_zeroes_everything_and_scale_matches_torch():
    layer = nn.Dropout2d(1.0)
    layer.set_train()
    x = Tensor(np.ones((2, 3, 2, 2), np.float32))
    np.testing.assert_array_equal(layer(x).asnumpy(), 0)
    g = engine.grad(lambda a: layer(a).sum())(x).asnumpy()
    np.testing.assert_array_equal(g, 0)
    torch.manual_seed(0)
    t = torch.nn.Dropout2d(0.25).train()(torch.ones(20, 30, 2, 2)).numpy()
    ours = nn.Dropout2d(0.25)
    ours.set_train()
    mine = ours(Tensor(np.ones((20, 30, 2, 2), np.float32))).asnumpy()
    np.testing.assert_allclose(sorted(set(mine.ravel())), sorted(set(t.ravel())), rtol=1e-6)


@pytest.mark.parametrize("layer, shape, match", [
    (nn.Dropout1d(), (2, 3, 4, 5), r"\(N, C, L\) or \(C, L\), got shape \(2, 3, 4, 5\)"),
    (nn.Dropout2d(), (2, 3, 4), r"\(N, C, H, W\), got shape \(2, 3, 4\)"),
    (nn.Dropout3d(), (2, 3, 4, 5), r"\(N, C, D, H, W\), got shape \(2, 3, 4, 5\)"),
])
def test_wrong_ranks_name_the_shape(layer, shape, match):
    with pytest.raises(ValueError, match=match):
        layer(Tensor(np.zeros(shape, np.float32)))


def test_arguments_follow_mindspore():
    for cls in (nn.Dropout1d, nn.Dropout2d, nn.Dropout3d):
        assert {k: v.default for k, v in inspect.signature(cls).parameters.items()} == {"p": 0.5}
        assert cls().p == 0.5 and "p=0.2" in repr(cls(0.2))
        with pytest.raises(ValueError, match="p must be in"):
            cls(1.5)
        with pytest.raises(ValueError, match="p must be"):
            cls("half")
