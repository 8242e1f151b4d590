"""MultiheadAttention against PyTorch (forward and gradients of inputs and Parameters,
float32), finite differences (float64), masks, weights, dropout, the probe and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import engine
from engine import Parameter, Tensor, nn, ops
from engine.gradcheck import gradcheck
from tests.engine.attention_oracle import compare, randomise

E, H, N, L, S = 8, 2, 3, 4, 5


def _pair(rs, batch_first=True, **kw):
    cell = nn.MultiheadAttention(E, H, batch_first=batch_first, **kw)
    randomise(cell, rs)
    module = torch.nn.MultiheadAttention(E, H, batch_first=batch_first, bias=kw.get(
        "has_bias", True), kdim=kw.get("kdim"), vdim=kw.get("vdim"))
    return cell, module


def _seq(rs, length, width=E, batch_first=True):
    shape = (N, length, width) if batch_first else (length, N, width)
    return rs.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("average", [True, False])
def test_self_attention_matches_torch(batch_first, average):
    rs = np.random.default_rng(1)
    cell, module = _pair(rs, batch_first)
    x = _seq(rs, L, batch_first=batch_first)
    compare(lambda a: cell(a, a, a, average_attn_weights=average),
            lambda a: module(a, a, a, average_attn_weights=average),
            [x], cell, module, rs)


@pytest.mark.parametrize("batch_first", [True, False])
def test_cross_attention_matches_torch(batch_first):
    rs = np.random.default_rng(2)
    cell, module = _pair(rs, batch_first)
    q, k, v = (_seq(rs, L, batch_first=batch_first), _seq(rs, S, batch_first=batch_first),
               _seq(rs, S, batch_first=batch_first))
    compare(lambda a, b, c: cell(a, b, c, average_attn_weights=False),
            lambda a, b, c: module(a, b, c, average_attn_weights=False),
            [q, k, v], cell, module, rs, grad_inputs=(0, 1, 2))


def test_key_is_value_cross_attention_matches_torch():
    rs = np.random.default_rng(3)
    cell, module = _pair(rs)
    q, mem = _seq(rs, L), _seq(rs, S)
    compare(lambda a, m: cell(a, m, m), lambda a, m: module(a, m, m), [q, mem], cell, module,
            rs, grad_inputs=(0, 1))


def test_kdim_vdim_use_separate_projections_and_match_torch():
    rs = np.random.default_rng(4)
    cell, module = _pair(rs, kdim=6, vdim=3)
    names = [n for n, _ in cell.parameters_and_names()]
    assert names == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                     "out_proj.weight", "out_proj.bias"]
    assert cell.in_proj_weight is None and cell.k_proj_weight.shape == (E, 6)
    q, k, v = _seq(rs, L), _seq(rs, S, 6), _seq(rs, S, 3)
    compare(lambda a, b, c: cell(a, b, c, average_attn_weights=False),
            lambda a, b, c: module(a, b, c, average_attn_weights=False),
            [q, k, v], cell, module, rs, grad_inputs=(0, 1, 2))


def test_without_bias_matches_torch():
    rs = np.random.default_rng(5)
    cell, module = _pair(rs, has_bias=False)
    assert [n for n, _ in cell.parameters_and_names()] == ["in_proj_weight", "out_proj.weight"]
    x = _seq(rs, L)
    compare(lambda a: cell(a, a, a), lambda a: module(a, a, a), [x], cell, module, rs)


MASKS = {
    "key_padding_bool": lambda rs: {"key_padding_mask": np.array(
        [[False] * (S - 1) + [True], [False] * S, [True, True] + [False] * (S - 2)])},
    "key_padding_float": lambda rs: {"key_padding_mask": rs.standard_normal((N, S)).astype(
        np.float32)},
    "attn_bool_2d": lambda rs: {"attn_mask": np.triu(np.ones((L, S), bool), k=1)},
    "attn_float_2d": lambda rs: {"attn_mask": rs.standard_normal((L, S)).astype(np.float32)},
    "attn_bool_3d": lambda rs: {"attn_mask": (rs.random((N * H, L, S)) < 0.3)
                                & ~np.eye(L, S, dtype=bool)[None]},
    "both_bool": lambda rs: {"attn_mask": np.triu(np.ones((L, S), bool), k=2),
                             "key_padding_mask": np.eye(N, S, dtype=bool)},
}


@pytest.mark.parametrize("kind", sorted(MASKS))
def test_masks_match_torch(kind):
    rs = np.random.default_rng(6)
    cell, module = _pair(rs)
    masks = MASKS[kind](rs)
    q, kv = _seq(rs, L), _seq(rs, S)

    def engine_fn(a, m):
        return cell(a, m, m, average_attn_weights=False,
                    **{k: Tensor(v) for k, v in masks.items()})

    def torch_fn(a, m):
        return module(a, m, m, average_attn_weights=False,
                      **{k: torch.tensor(v) for k, v in masks.items()})

    compare(engine_fn, torch_fn, [q, kv], cell, module, rs, grad_inputs=(0, 1))


def test_masked_keys_get_zero_weight():
    rs = np.random.default_rng(7)
    cell, _ = _pair(rs)
    x = Tensor(_seq(rs, L))
    _, w = cell(x, x, x, attn_mask=ops.causal_mask(L), average_attn_weights=False)
    w = w.asnumpy()
    assert w.shape == (N, H, L, L)
    assert np.all(w[..., np.triu_indices(L, 1)[0], np.triu_indices(L, 1)[1]] == 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)


def test_unbatched_input_matches_torch():
    rs = np.random.default_rng(8)
    cell, module = _pair(rs, batch_first=False)
    x = rs.standard_normal((L, E)).astype(np.float32)
    out, w = cell(Tensor(x), Tensor(x), Tensor(x))
    assert out.shape == (L, E) and w.shape == (L, L)
    compare(lambda a: cell(a, a, a), lambda a: module(a, a, a), [x], cell, module, rs)


def test_need_weights_false_returns_the_output_alone():
    rs = np.random.default_rng(9)
    cell, _ = _pair(rs)
    x = Tensor(_seq(rs, L))
    result = cell(x, x, x, need_weights=False)
    assert isinstance(result, tuple) and len(result) == 1
    np.testing.assert_array_equal(result[0].asnumpy(), cell(x, x, x)[0].asnumpy())


def test_defaults_and_parameter_layout_follow_mindspore():
    cell = nn.MultiheadAttention(16, 4)
    assert (cell.dropout, cell.has_bias, cell.batch_first, cell.kdim, cell.vdim) == \
        (0.0, True, False, 16, 16)
    shapes = {n: p.shape for n, p in cell.parameters_and_names()}
    assert shapes == {"in_proj_weight": (48, 16), "in_proj_bias": (48,),
                      "out_proj.weight": (16, 16), "out_proj.bias": (16,)}
    assert not cell.in_proj_bias.asnumpy().any()  # zeros, as MindSpore
    assert cell.probe is None


def test_float64_parameters_with_dtype():
    cell = nn.MultiheadAttention(4, 2, dtype=engine.float64)
    assert all(p.asnumpy().dtype == np.float64 for p in cell.trainable_params())


@pytest.mark.parametrize("arg", ["add_bias_kv", "add_zero_attn"])
def test_unsupported_arguments_raise_naming_them(arg):
    with pytest.raises(NotImplementedError, match=arg):
        nn.MultiheadAttention(8, 2, **{arg: True})


def test_bad_sizes_are_refused_with_both_numbers():
    with pytest.raises(ValueError, match=r"embed_dim \(10\).*num_heads \(4\)"):
        nn.MultiheadAttention(10, 4)
    cell = nn.MultiheadAttention(8, 2, batch_first=True)
    x = Tensor(np.zeros((2, 3, 6), np.float32))
    with pytest.raises(ValueError, match=r"8 features.*\(2, 3, 6\)"):
        cell(x, x, x)
    y = Tensor(np.zeros((2, 3, 8), np.float32))
    with pytest.raises(ValueError, match="key_padding_mask must have shape"):
        cell(y, y, y, key_padding_mask=Tensor(np.zeros((2, 4), bool)))
    with pytest.raises(ValueError, match="attn_mask must have shape"):
        cell(y, y, y, attn_mask=Tensor(np.zeros((3, 4), bool)))
    with pytest.raises(ValueError, match="bool or floating-point"):
        cell(y, y, y, attn_mask=Tensor(np.zeros((3, 3), np.int64)))


def _float64(cell):
    for sub in [c for _, c in cell.cells_and_names()]:
        for name, p in list(sub._params.items()):
            if p is not None:
                setattr(sub, name, Parameter(p._data.astype(np.float64)))
    return cell


def test_gradcheck_float64_self_and_cross_attention():
    rs = np.random.default_rng(10)
    cell = _float64(nn.MultiheadAttention(4, 2, batch_first=True))
    randomise(cell, rs)
    x = Tensor(rs.standard_normal((2, 3, 4)))
    m = Tensor(rs.standard_normal((2, 4, 4)))
    mask = ops.causal_mask(3)
    gradcheck(lambda a: cell(a, a, a, attn_mask=mask, average_attn_weights=False), [x],
              cell.trainable_params())
    gradcheck(lambda a, b: cell(a, b, b), [x, m], cell.trainable_params())


def test_attention_core_is_one_tape_node():
    rs = np.random.default_rng(11)
    cell, _ = _pair(rs)
    x = Tensor(_seq(rs, L))
    kept = []

    def loss(a):
        _, w = cell(a, a, a, average_attn_weights=False)
        kept.append(w)
        return w.sum()

    engine.grad(loss)(x)
    node = kept[0]._node
    assert node.name == "attention" and node.n_out == 2
    assert node.parents[0][0].name == "dense"  # one in-projection matmul for q, k, v


def test_probe_sees_per_head_weights_and_changes_nothing():
    rs = np.random.default_rng(12)
    cell, _ = _pair(rs, dropout=0.5)
    x = Tensor(_seq(rs, L))
    seen = []
    cell.probe = lambda name, array: seen.append((name, array.copy()))
    out, w = cell(x, x, x, average_attn_weights=False)  # predict mode: no dropout
    assert [name for name, _ in seen] == ["weights"]
    np.testing.assert_array_equal(seen[0][1], w.asnumpy())
    cell.probe = None
    out2, _ = cell(x, x, x)
    np.testing.assert_array_equal(out.asnumpy(), out2.asnumpy())


def test_probe_sees_weights_before_dropout():
    rs = np.random.default_rng(13)
    cell, _ = _pair(rs, dropout=0.5)
    cell.set_train(True)
    x = Tensor(_seq(rs, L))
    seen = []
    cell.probe = lambda name, array: seen.append(array.copy())
    _, w = cell(x, x, x, average_attn_weights=False)
    np.testing.assert_allclose(seen[0].sum(-1), 1.0, rtol=1e-5)
    kept = w.asnumpy() != 0
    np.testing.assert_allclose(w.asnumpy()[kept], 2 * seen[0][kept], rtol=1e-6)


def test_dropout_only_in_train_mode_and_seeded():
    rs = np.random.default_rng(14)
    cell, _ = _pair(rs, dropout=0.5)
    x = Tensor(_seq(rs, L))
    still = cell(x, x, x)[0].asnumpy()
    np.testing.assert_array_equal(still, cell(x, x, x)[0].asnumpy())
    cell.set_train(True)
    engine.set_seed(3)
    a = cell(x, x, x, average_attn_weights=False)
    engine.set_seed(3)
    b = cell(x, x, x, average_attn_weights=False)
    np.testing.assert_array_equal(a[0].asnumpy(), b[0].asnumpy())
    assert not np.allclose(a[0].asnumpy(), still)
    dropped = a[1].asnumpy() == 0
    assert 0.2 < dropped.mean() < 0.8
    cell.set_train(False)
    np.testing.assert_array_equal(cell(x, x, x)[0].asnumpy(), still)


@pytest.mark.parametrize("dtype", [None, engine.bool_, engine.float32])
def test_causal_mask(dtype):
    mask = ops.causal_mask(3, dtype) if dtype is not None else ops.causal_mask(3)
    if dtype is engine.float32:
        assert mask.dtype == engine.float32
        np.testing.assert_array_equal(mask.asnumpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf],
                                                       [0, 0, 0]])
    else:
        assert mask.dtype == engine.bool_
        np.testing.assert_array_equal(mask.asnumpy(), np.triu(np.ones((3, 3), bool), 1))
    with pytest.raises(ValueError, match="positive int"):
        ops.causal_mask(0)
