"""Transformer layers against PyTorch (forward and gradients of inputs and Parameters,
float32), finite differences (float64), MindSpore's names and defaults, dropout and copies."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Parameter, Tensor, nn, ops
from engine.gradcheck import gradcheck
from engine.nn.layers_transformer import TransformerDecoder
from tests.engine.attention_oracle import compare, randomise

D, H, FF, N, T, S = 8, 2, 16, 3, 4, 5


def _seq(rs, length, batch_first):
    shape = (N, length, D) if batch_first else (length, N, D)
    return rs.standard_normal(shape).astype(np.float32)


def _torch_kw(activation, batch_first, norm_first):
    return dict(dim_feedforward=FF, dropout=0.0, activation=activation, batch_first=batch_first,
                norm_first=norm_first)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [True, False])
def test_encoder_layer_matches_torch(activation, norm_first, batch_first):
    rs = np.random.default_rng(1)
    kw = _torch_kw(activation, batch_first, norm_first)
    cell = nn.TransformerEncoderLayer(D, H, **kw)
    randomise(cell, rs)
    module = torch.nn.TransformerEncoderLayer(D, H, **kw)
    compare(cell, module, [_seq(rs, T, batch_first)], cell, module, rs)


def test_encoder_layer_with_masks_matches_torch():
    rs = np.random.default_rng(2)
    kw = _torch_kw("relu", True, False)
    cell = nn.TransformerEncoderLayer(D, H, **kw)
    randomise(cell, rs)
    module = torch.nn.TransformerEncoderLayer(D, H, **kw)
    causal = np.triu(np.ones((T, T), bool), 1)
    padding = np.zeros((N, T), bool)
    padding[0, -1] = True
    compare(lambda x: cell(x, Tensor(causal), Tensor(padding)),
            lambda x: module(x, torch.tensor(causal), src_key_padding_mask=torch.tensor(padding)),
            [_seq(rs, T, True)], cell, module, rs)


def test_gelu_cell_is_the_tanh_form():
    rs = np.random.default_rng(3)
    cell = nn.TransformerEncoderLayer(D, H, FF, 0.0, nn.GELU(), batch_first=True)
    randomise(cell, rs)
    module = torch.nn.TransformerEncoderLayer(
        D, H, FF, 0.0, lambda x: F.gelu(x, approximate="tanh"), batch_first=True)
    assert cell.activation_name == "gelu_tanh"
    compare(cell, module, [_seq(rs, T, True)], cell, module, rs)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_of_two_layers_matches_torch(norm_first):
    rs = np.random.default_rng(4)
    kw = _torch_kw("gelu", True, norm_first)
    cell = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, **kw), 2,
                                 norm=nn.LayerNorm((D,), epsilon=1e-5))
    randomise(cell, rs)  # after the copies: each layer gets values of its own
    module = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(D, H, **kw), 2,
                                         norm=torch.nn.LayerNorm(D),
                                         enable_nested_tensor=False)
    names = [n for n, _ in cell.parameters_and_names()]
    assert names[0] == "layers.0.self_attn.in_proj_weight" and names[-1] == "norm.beta"
    causal = ops.causal_mask(T)
    compare(lambda x: cell(x, causal),
            lambda x: module(x, torch.tensor(causal.asnumpy()), is_causal=True),
            [_seq(rs, T, True)], cell, module, rs)


def test_encoder_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(D, H, FF)
    encoder = nn.TransformerEncoder(layer, 3)
    first, second = encoder.layers[0], encoder.layers[1]
    assert first is not layer and first is not second
    assert first.self_attn.in_proj_weight is not second.self_attn.in_proj_weight
    np.testing.assert_array_equal(first.dense1.weight.asnumpy(), layer.dense1.weight.asnumpy())
    assert len(encoder.trainable_params()) == 3 * len(layer.trainable_params())
    assert len({p.name for p in encoder.trainable_params()}) == 3 * 12


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [True, False])
def test_decoder_layer_with_causal_mask_matches_torch(norm_first, batch_first):
    rs = np.random.default_rng(5)
    kw = _torch_kw("relu", batch_first, norm_first)
    cell = nn.TransformerDecoderLayer(D, H, **kw)
    randomise(cell, rs)
    module = torch.nn.TransformerDecoderLayer(D, H, **kw)
    causal = np.triu(np.ones((T, T), bool), 1)
    compare(lambda t, m: cell(t, m, tgt_mask=Tensor(causal)),
            lambda t, m: module(t, m, tgt_mask=torch.tensor(causal)),
            [_seq(rs, T, batch_first), _seq(rs, S, batch_first)], cell, module, rs,
            grad_inputs=(0, 1))


def test_decoder_of_two_layers_matches_torch():
    rs = np.random.default_rng(6)
    kw = _torch_kw("relu", True, False)
    cell = TransformerDecoder(nn.TransformerDecoderLayer(D, H, **kw), 2)
    randomise(cell, rs)
    module = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, H, **kw), 2)
    compare(cell, module, [_seq(rs, T, True), _seq(rs, S, True)], cell, module, rs,
            grad_inputs=(0, 1))


def test_names_and_defaults_follow_mindspore():
    layer = nn.TransformerEncoderLayer(16, 4)
    assert (layer.dim_feedforward, layer.dropout_num, layer.layernorm_eps, layer.batch_first,
            layer.norm_first, layer.activation_name) == (2048, 0.1, 1e-5, False, False, "relu")
    assert [n for n, _ in layer.parameters_and_names()] == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
        "self_attn.out_proj.bias", "dense1.weight", "dense1.bias", "dense2.weight",
        "dense2.bias", "norm1.gamma", "norm1.beta", "norm2.gamma", "norm2.beta"]
    decoder = nn.TransformerDecoderLayer(16, 4, 32)
    names = [n for n, _ in decoder.parameters_and_names()]
    assert names[4:8] == ["multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                          "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias"]
    assert names[-2:] == ["norm3.gamma", "norm3.beta"]
    attns = [c for _, c in layer.cells_and_names() if isinstance(c, nn.MultiheadAttention)]
    assert attns == [layer.self_attn]  # where the attention pane finds them


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match=r"d_model \(10\).*nhead \(4\)"):
        nn.TransformerEncoderLayer(10, 4)
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(8, 2, activation=nn.Tanh())
    with pytest.raises(TypeError, match="TransformerEncoderLayer"):
        nn.TransformerEncoder(nn.Dense(2, 2), 2)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
    x = Tensor(np.zeros((2, 3, 8), np.float32))
    with pytest.raises(AssertionError, match="key_padding_mask"):
        layer(x, src_key_padding_mask=Tensor(np.zeros((2, 3), np.int32)))
    for fn in (ops.relu, ops.gelu, nn.ReLU()):
        assert nn.TransformerEncoderLayer(8, 2, 16, activation=fn)(x.swapaxes(0, 1)).shape == \
            (3, 2, 8)


def _float64(cell):
    for _, sub in cell.cells_and_names():
        for name, p in list(sub._params.items()):
            if p is not None:
                setattr(sub, name, Parameter(p._data.astype(np.float64)))
    return cell


@pytest.mark.parametrize("norm_first", [False, True])
def test_gradcheck_float64_encoder_and_decoder_layers(norm_first):
    rs = np.random.default_rng(7)
    enc = _float64(nn.TransformerEncoderLayer(4, 2, 6, 0.0, "gelu", batch_first=True,
                                              norm_first=norm_first))
    randomise(enc, rs)
    x = Tensor(rs.standard_normal((2, 3, 4)))
    gradcheck(lambda a: enc(a, ops.causal_mask(3)), [x], enc.trainable_params())
    dec = _float64(nn.TransformerDecoderLayer(4, 2, 6, 0.0, batch_first=True,
                                              norm_first=norm_first))
    randomise(dec, rs)
    m = Tensor(rs.standard_normal((2, 2, 4)))
    gradcheck(lambda a, b: dec(a, b, ops.causal_mask(3)), [x, m], dec.trainable_params())


def test_dropout_only_in_train_mode_and_seeded():
    rs = np.random.default_rng(8)
    layer = nn.TransformerEncoderLayer(D, H, FF, dropout=0.3, batch_first=True)
    x = Tensor(_seq(rs, T, True))
    still = layer(x).asnumpy()
    np.testing.assert_array_equal(layer(x).asnumpy(), still)
    layer.set_train(True)
    engine.set_seed(5)
    a = layer(x).asnumpy()
    engine.set_seed(5)
    np.testing.assert_array_equal(layer(x).asnumpy(), a)
    assert not np.allclose(a, still)
    layer.set_train(False)
    np.testing.assert_array_equal(layer(x).asnumpy(), still)
