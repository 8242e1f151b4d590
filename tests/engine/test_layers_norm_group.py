"""LayerNorm, GroupNorm, InstanceNorm2d and LRN, and their ops: forward and gradients against
PyTorch (float32) and finite differences (float64), MindSpore's axes, defaults, Parameters,
modes and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Parameter, Tensor, nn, ops
from engine.gradcheck import gradcheck

RS = np.random.default_rng(7)
RTOL, ATOL = 1e-4, 1e-5


def _float64(cell):
    """Replace every Parameter of `cell` with a float64 copy, for gradcheck."""
    for name, p in list(cell._params.items()):
        if p is not None:
            setattr(cell, name, Parameter(p._data.astype(np.float64),
                                          requires_grad=p.requires_grad))
    return cell


def _random_affine(cell, shape):
    """Give gamma and beta values away from 1 and 0, so a mix-up shows."""
    cell.gamma.set_data(Tensor(RS.uniform(0.5, 1.5, shape).astype(np.float32)))
    cell.beta.set_data(Tensor(RS.standard_normal(shape).astype(np.float32)))
    return cell


def _check_against_torch(cell, x, torch_fn, params):
    """Forward and the gradients of sum(out * cot) w.r.t. x and `params` (Parameter names),
    engine against `torch_fn(tx, *torch params)`, all float32."""
    cot = RS.standard_normal(x.shape).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    tp = [torch.tensor(getattr(cell, name).asnumpy(), requires_grad=True) for name in params]
    tout = torch_fn(tx, *tp)
    tout.backward(torch.tensor(cot))
    out = cell(Tensor(x))
    assert out.dtype == engine.float32 and out.shape == x.shape
    np.testing.assert_allclose(out.asnumpy(), tout.detach().numpy(), rtol=RTOL, atol=ATOL)
    weights = [getattr(cell, name) for name in params]
    fn = engine.grad(lambda a: (cell(a) * Tensor(cot)).sum(), 0, weights or None)
    grads = fn(Tensor(x))
    gx, gw = (grads if weights else (grads, []))
    np.testing.assert_allclose(gx.asnumpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    for g, t in zip(gw, tp, strict=True):
        assert g.dtype == engine.float32
        np.testing.assert_allclose(g.asnumpy(), t.grad.numpy(), rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------------------- LayerNorm

# input shape, begin_norm_axis, begin_params_axis
LAYER_NORM = [
    ((4, 3, 5), -1, -1),
    ((4, 3, 5), 1, 1),
    ((4, 3, 5), 1, 2),  # statistics over (3, 5), gamma over the last axis only
    ((4, 3, 5), 2, 1),  # statistics per row of 5, gamma over (3, 5)
    ((2, 3, 4, 5), 1, -1),
    ((2, 3, 4, 5), 3, 2),
    ((6, 7), 0, 1),  # MindSpore lets the statistics span the batch axis too
]


def _torch_layer_norm(bna, eps):
    def fn(tx, gamma, beta):
        return F.layer_norm(tx, tx.shape[bna % tx.dim():], eps=eps) * gamma + beta

    return fn


@pytest.mark.parametrize("shape, bna, bpa", LAYER_NORM)
def test_layer_norm_matches_torch(shape, bna, bpa):
    pshape = shape[bpa % len(shape):]
    cell = _random_affine(nn.LayerNorm(pshape, bna, bpa), pshape)
    x = (RS.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    _check_against_torch(cell, x, _torch_layer_norm(bna, 1e-7), ["gamma", "beta"])


@pytest.mark.parametrize("shape, bna, bpa", LAYER_NORM[1:5])
def test_layer_norm_gradcheck(shape, bna, bpa):
    pshape = shape[bpa % len(shape):]
    cell = _float64(_random_affine(nn.LayerNorm(pshape, bna, bpa, epsilon=1e-3), pshape))
    gradcheck(cell, [Tensor(RS.standard_normal(shape))], cell.trainable_params())


def test_layer_norm_defaults_and_parameters_follow_mindspore():
    cell = nn.LayerNorm((16,))
    assert (cell.begin_norm_axis, cell.begin_params_axis, cell.epsilon) == (-1, -1, 1e-7)
    assert [p.name for p in cell.trainable_params()] == ["gamma", "beta"]
    assert cell.gamma.shape == cell.beta.shape == (16,) and cell.gamma.dtype == engine.float32
    np.testing.assert_array_equal(cell.gamma.asnumpy(), np.ones(16))
    np.testing.assert_array_equal(cell.beta.asnumpy(), np.zeros(16))
    assert list(cell.untrainable_params()) == []
    wide = nn.LayerNorm([3, 4], begin_norm_axis=1, begin_params_axis=1, dtype=engine.float64)
    assert wide.gamma.shape == (3, 4) and wide.gamma.dtype == engine.float64
    # The MindSpore API page's example: (20, 5, 10, 10) normalised over all but the batch.
    x = Tensor(np.ones([20, 5, 10, 10], np.float32))
    assert nn.LayerNorm(x.shape[1:], begin_norm_axis=1, begin_params_axis=1)(x).shape == x.shape


def test_layer_norm_is_the_same_when_predicting():
    cell = _random_affine(nn.LayerNorm((5,)), (5,))
    x = Tensor(RS.standard_normal((3, 5)).astype(np.float32))
    trained = cell.set_train(True)(x).asnumpy()
    np.testing.assert_array_equal(cell.set_train(False)(x).asnumpy(), trained)


def test_variance_survives_a_large_offset():
    """Two passes: values near 1000 with unit spread normalise as in float64 (one pass,
    E[x²] - E[x]², is off by up to a fifth here in float32)."""
    x = (1000 + RS.standard_normal((8, 512))).astype(np.float32)
    ref = x.astype(np.float64)
    ref = (ref - ref.mean(1, keepdims=True)) / np.sqrt(ref.var(1, keepdims=True) + 1e-7)
    np.testing.assert_allclose(nn.LayerNorm((512,))(Tensor(x)).asnumpy(), ref, rtol=1e-3,
                               atol=2e-3)
    out = ops.group_norm(Tensor(x.reshape(8, 4, 128)), 1).asnumpy().reshape(8, 512)
    np.testing.assert_allclose(out, ref, rtol=1e-3, atol=2e-3)


def test_layer_norm_refusals_name_the_shapes():
    with pytest.raises(TypeError, match="normalized_shape"):
        nn.LayerNorm(16)
    with pytest.raises(ValueError, match="begin_norm_axis"):
        nn.LayerNorm((4,), begin_norm_axis=-2)
    cell = nn.LayerNorm((4,))
    with pytest.raises(ValueError, match=r"normalized_shape \(4,\).*\(2, 5\).*\(5,\)"):
        cell(Tensor(np.zeros((2, 5), np.float32)))
    with pytest.raises(ValueError, match="begin_params_axis 3 is out of range.*shape \\(2, 4\\)"):
        nn.LayerNorm((4,), begin_params_axis=3)(Tensor(np.zeros((2, 4), np.float32)))


def test_ops_layer_norm_follows_the_api_page():
    x = Tensor(np.array([[1, 2, 3], [1, 2, 3]]), engine.float32)
    out = ops.layer_norm(x, (3,), Tensor(np.ones(3, np.float32)), Tensor(np.zeros(3, np.float32)),
                         1e-7)
    np.testing.assert_allclose(out.asnumpy(), [[-1.2247448, 0, 1.2247448]] * 2, rtol=1e-6)
    y = RS.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(ops.layer_norm(input=Tensor(y), normalized_shape=4).asnumpy(),
                               F.layer_norm(torch.tensor(y), (4,)).numpy(), rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match=r"\(3,\).*\(2, 3, 4\)"):
        ops.layer_norm(Tensor(y), (3,))
    with pytest.raises(TypeError):
        ops.layer_norm(Tensor(y), 4, eps=1e-5, epsilon=1e-5)


@pytest.mark.parametrize("layer, name", [(nn.LayerNorm((3,)), "layer_norm"),
                                         (nn.GroupNorm(2, 4), "group_norm"),
                                         (nn.LRN(1), "lrn")])
def test_each_layer_records_one_node_right_after_its_input(layer, name):
    """One tape node with the op's own vjp, linked straight to the input: no chain of
    small ops to differentiate."""
    seen = []

    def fn(a):
        out = layer(a)
        seen.append((a._node, out._node))
        return out.sum()

    engine.grad(fn)(Tensor(RS.standard_normal((2, 4, 3, 3)).astype(np.float32)))
    leaf, node = seen[0]
    assert node.name == name and node.vjp.__name__ == f"_{name}_vjp"
    assert node.parents[0][0] is leaf


# ----------------------------------------------------------------------------- GroupNorm

# input shape, groups
GROUP_NORM = [((2, 6, 3, 4), 3), ((3, 4), 2), ((2, 4, 5), 1), ((2, 4, 5), 4),
              ((1, 6, 2, 3, 2), 2)]


@pytest.mark.parametrize("shape, groups", GROUP_NORM)
def test_group_norm_matches_torch(shape, groups):
    c = shape[1]
    cell = _random_affine(nn.GroupNorm(groups, c), (c,))
    x = (RS.standard_normal(shape) * 3 - 1).astype(np.float32)
    _check_against_torch(cell, x, lambda tx, w, b: F.group_norm(tx, groups, w, b, 1e-5),
                         ["gamma", "beta"])


@pytest.mark.parametrize("shape, groups", GROUP_NORM[:3])
def test_group_norm_gradcheck(shape, groups):
    c = shape[1]
    cell = _float64(_random_affine(nn.GroupNorm(groups, c, eps=1e-3), (c,)))
    gradcheck(cell, [Tensor(RS.standard_normal(shape))], cell.trainable_params())


def test_group_norm_without_affine_keeps_its_frozen_scale():
    gamma = RS.uniform(0.5, 2, 4).astype(np.float32)
    cell = nn.GroupNorm(2, 4, affine=False, gamma_init=Tensor(gamma))
    assert cell.trainable_params() == [] and not cell.gamma.requires_grad
    assert [p.name for p in cell.untrainable_params()] == ["gamma", "beta"]
    x = RS.standard_normal((3, 4, 5)).astype(np.float32)
    _check_against_torch(cell, x, lambda tx: F.group_norm(tx, 2, torch.tensor(gamma)), [])


def test_group_norm_defaults_and_refusals():
    cell = nn.GroupNorm(4, 16)
    assert (cell.eps, cell.affine) == (1e-5, True)
    assert [p.name for p in cell.trainable_params()] == ["gamma", "beta"]
    assert cell.gamma.shape == (16,)
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by num_groups "
                                         r"\(4\)"):
        nn.GroupNorm(4, 6)
    with pytest.raises(ValueError, match=r"\(N, 16, \.\.\.\), got shape \(2, 8, 3\)"):
        cell(Tensor(np.zeros((2, 8, 3), np.float32)))
    with pytest.raises(ValueError, match="divisible"):
        ops.group_norm(Tensor(np.zeros((2, 6, 3), np.float32)), 4)
    # The API page's example: constant groups normalise to 0.
    out = ops.group_norm(Tensor(np.ones([1, 2, 4, 4], np.float32)), 2)
    np.testing.assert_array_equal(out.asnumpy(), np.zeros((1, 2, 4, 4)))


@pytest.mark.parametrize("layer", [nn.GroupNorm(2, 4), nn.LayerNorm((4, 3), 1, 1),
                                   nn.InstanceNorm2d(4), nn.LRN(1)])
def test_any_batch_size_even_none(layer):
    for n in (1, 0):
        x = Tensor(RS.standard_normal((n, 4, 3, 3))[..., :3].astype(np.float32))
        if isinstance(layer, nn.LayerNorm):
            x = Tensor(x.asnumpy()[:, :, :, 0])
        params = layer.trainable_params()
        grads = engine.grad(lambda a: layer(a).sum(), 0, params or None)(x)
        gx, gp = grads if params else (grads, [])
        assert gx.shape == x.shape and layer(x).shape == x.shape
        assert [g.shape for g in gp] == [p.shape for p in params]
    for g in gp:  # nothing came in: nothing learned
        np.testing.assert_array_equal(g.asnumpy(), np.zeros(g.shape))


# ----------------------------------------------------------------------------- InstanceNorm2d


def test_instance_norm_matches_torch():
    cell = _random_affine(nn.InstanceNorm2d(3), (3,))
    x = (RS.standard_normal((4, 3, 5, 6)) + 2).astype(np.float32)
    _check_against_torch(cell, x, lambda tx, w, b: F.instance_norm(tx, weight=w, bias=b),
                         ["gamma", "beta"])


def test_instance_norm_gradcheck():
    cell = _float64(_random_affine(nn.InstanceNorm2d(2, eps=1e-3), (2,)))
    gradcheck(cell, [Tensor(RS.standard_normal((2, 2, 3, 4)))], cell.trainable_params())


def test_instance_norm_keeps_moving_statistics_that_never_move():
    """MindSpore 2.x: instance statistics in both modes; the moving ones stay as made."""
    cell = nn.InstanceNorm2d(3, momentum=0.5)
    assert [p.name for p in cell.trainable_params()] == ["gamma", "beta"]
    assert [p.name for p in cell.untrainable_params()] == ["moving_mean", "moving_variance"]
    x = Tensor((RS.standard_normal((2, 3, 4, 4)) * 5 + 3).astype(np.float32))
    trained = cell.set_train(True)(x).asnumpy()
    np.testing.assert_array_equal(cell.moving_mean.asnumpy(), np.zeros(3))
    np.testing.assert_array_equal(cell.moving_variance.asnumpy(), np.ones(3))
    np.testing.assert_array_equal(cell.set_train(False)(x).asnumpy(), trained)
    np.testing.assert_allclose(ops.instance_norm(x).asnumpy(), trained, rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match=r"\(N, 3, H, W\), got shape \(2, 3, 4\)"):
        cell(Tensor(np.zeros((2, 3, 4), np.float32)))
    with pytest.raises(ValueError, match="momentum"):
        nn.InstanceNorm2d(3, momentum=1.5)


# ----------------------------------------------------------------------------- blocks of rows


@pytest.fixture
def three_threads(monkeypatch):
    """Split even small inputs into three blocks of rows, run on the thread pool."""
    from engine.ops import _norm_rows

    monkeypatch.setattr(_norm_rows, "PARALLEL_FROM", 0)
    monkeypatch.setattr(_norm_rows, "workers", lambda: 3)


@pytest.fixture
def tiny_tiles(monkeypatch, three_threads):
    """Make the tests' small shapes take the paths big inputs take: long rows through
    ufuncs, factors tiled, rows walked in chunks, blocks on threads."""
    from engine.ops import _norm_group_rows, _norm_rows

    for module in (_norm_rows, _norm_group_rows):
        monkeypatch.setattr(module, "TILE", 16)
        monkeypatch.setattr(module, "ROW_LONG", 16)
    monkeypatch.setattr(_norm_rows, "CHUNK", 24)
    monkeypatch.setattr(_norm_group_rows, "BIAS_TILE", 64)


@pytest.mark.parametrize("shape, bna, bpa", LAYER_NORM)
def test_layer_norm_on_the_big_input_paths_matches_torch(tiny_tiles, shape, bna, bpa):
    test_layer_norm_matches_torch(shape, bna, bpa)


@pytest.mark.parametrize("shape, groups", GROUP_NORM)
def test_group_norm_on_the_big_input_paths_matches_torch(tiny_tiles, shape, groups):
    test_group_norm_matches_torch(shape, groups)


def test_the_big_input_paths_pass_gradcheck(tiny_tiles):
    test_layer_norm_gradcheck(*LAYER_NORM[1])
    test_group_norm_gradcheck(*GROUP_NORM[0])


@pytest.mark.parametrize("shape, bna, bpa", [((7, 3, 5), -1, -1), ((5, 3, 4), 2, 1),
                                             ((4, 3, 5), 1, 2)])
def test_layer_norm_in_blocks_on_threads_matches_torch(three_threads, shape, bna, bpa):
    pshape = shape[bpa % len(shape):]
    cell = _random_affine(nn.LayerNorm(pshape, bna, bpa), pshape)
    x = RS.standard_normal(shape).astype(np.float32)
    _check_against_torch(cell, x, _torch_layer_norm(bna, 1e-7), ["gamma", "beta"])


@pytest.mark.parametrize("shape, groups", [((5, 6, 2, 3), 3), ((4, 4, 3), 4)])
def test_group_norm_in_blocks_on_threads_matches_torch(three_threads, shape, groups):
    cell = _random_affine(nn.GroupNorm(groups, shape[1]), (shape[1],))
    x = RS.standard_normal(shape).astype(np.float32)
    _check_against_torch(cell, x, lambda tx, w, b: F.group_norm(tx, groups, w, b, 1e-5),
                         ["gamma", "beta"])


# ----------------------------------------------------------------------------- LRN

# channels, depth_radius, bias, alpha, beta
LRN_CASES = [(7, 2, 1.5, 0.3, 0.75), (4, 5, 1.0, 1.0, 0.5), (5, 0, 2.0, 0.5, 1.0),
             (3, 1, 0.5, 2.0, 0.5)]


@pytest.mark.parametrize("c, radius, bias, alpha, beta", LRN_CASES)
def test_lrn_matches_torch_local_response_norm(c, radius, bias, alpha, beta):
    """torch divides alpha by its window size 2r + 1; MindSpore does not."""
    cell = nn.LRN(radius, bias, alpha, beta)
    size = 2 * radius + 1
    x = RS.standard_normal((2, c, 3, 4)).astype(np.float32)
    _check_against_torch(
        cell, x, lambda tx: F.local_response_norm(tx, size, alpha * size, beta, bias), [])


@pytest.mark.parametrize("c, radius, bias, alpha, beta", LRN_CASES[:3])
def test_lrn_gradcheck(c, radius, bias, alpha, beta):
    cell = nn.LRN(radius, bias, alpha, beta)
    gradcheck(cell, [Tensor(RS.standard_normal((2, c, 2, 3)))])


def test_lrn_follows_the_api_page():
    x = Tensor(np.array([[[[0.1], [0.2]], [[0.3], [0.4]]]]), engine.float32)
    expected = [[[[0.09534626], [0.1825742]], [[0.2860388], [0.3651484]]]]
    np.testing.assert_allclose(nn.LRN()(x).asnumpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(ops.lrn(x).asnumpy(), expected, rtol=1e-6)
    cell = nn.LRN()
    assert (cell.depth_radius, cell.bias, cell.alpha, cell.beta, cell.norm_region) == \
        (5, 1.0, 1.0, 0.5, "ACROSS_CHANNELS")
    assert list(cell.get_parameters()) == []
    with pytest.raises(ValueError, match="ACROSS_CHANNELS"):
        nn.LRN(norm_region="WITHIN_CHANNEL")
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        cell(Tensor(np.zeros((2, 3, 4), np.float32)))
    with pytest.raises(ValueError, match="depth_radius"):
        nn.LRN(-1)


@pytest.mark.parametrize("layer", [nn.LayerNorm((3,)), nn.GroupNorm(2, 4), nn.InstanceNorm2d(4),
                                   nn.LRN(1)])
def test_dtypes_float_inputs_keep_theirs_integers_give_float32(layer):
    x = np.arange(96).reshape(2, 4, 4, 3) % 7
    for dtype, expected in ((np.float64, engine.float64), (np.float16, engine.float16),
                            (np.int64, engine.float32)):
        out = layer(Tensor(x.astype(dtype)))
        assert out.dtype == expected
        np.testing.assert_allclose(out.asnumpy().astype(np.float64),
                                   layer(Tensor(x.astype(np.float64))).asnumpy(), atol=2e-2)
