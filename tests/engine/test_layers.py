"""Layers of engine.nn: forward and gradients against PyTorch and finite differences, modes,
containers, hyper-parameter schemas and errors."""

from __future__ import annotations

import inspect
import math
import typing
from collections import OrderedDict

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Parameter, Tensor, nn
from engine.gradcheck import gradcheck

RS = np.random.default_rng(0)


def _float64(cell):
    """Replace every Parameter of `cell` (and below) with a float64 copy, for gradcheck."""
    for _, sub in cell.cells_and_names():
        for name, p in list(sub._params.items()):
            if p is not None:
                setattr(sub, name, Parameter(p._data.astype(np.float64),
                                             requires_grad=p.requires_grad))
    return cell


def _grads(cell, x, cot):
    """Gradients of sum(cell(x) * cot) w.r.t. x and the trainable parameters."""
    params = cell.trainable_params()
    fn = engine.grad(lambda a: (cell(a) * Tensor(cot)).sum(), 0, params)
    gx, gp = fn(Tensor(x))
    return gx.asnumpy(), [g.asnumpy() for g in gp]


def _torch_grads(out, tensors, cot):
    out.backward(torch.tensor(cot))
    return [t.grad.numpy() for t in tensors]


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------- Dense


def test_dense_matches_torch_linear():
    layer = _float64(nn.Dense(5, 3))
    x = RS.standard_normal((4, 5))
    tw = torch.tensor(layer.weight.asnumpy(), requires_grad=True)
    tb = torch.tensor(layer.bias.asnumpy(), requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    tout = F.linear(tx, tw, tb)
    out = layer(Tensor(x)).asnumpy()
    _close(out, tout.detach().numpy())
    cot = RS.standard_normal(out.shape)
    gx, (gw, gb) = _grads(layer, x, cot)
    for g, e in zip([gx, gw, gb], _torch_grads(tout, [tx, tw, tb], cot), strict=True):
        _close(g, e)


def test_dense_defaults_follow_mindspore():
    layer = nn.Dense(300, 20)
    w, b = layer.weight.asnumpy(), layer.bias.asnumpy()
    assert layer.weight.shape == (20, 300) and layer.bias.shape == (20,)
    assert layer.weight.dtype == engine.float32
    bound = 1 / math.sqrt(300)  # HeUniform(sqrt(5)) and the bias rule give the same bound
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert np.abs(b).max() <= bound
    assert [p.name for p in layer.trainable_params()] == ["weight", "bias"]
    no_bias = nn.Dense(3, 2, has_bias=False, weight_init="ones")
    assert no_bias.bias is None and len(no_bias.trainable_params()) == 1
    np.testing.assert_array_equal(no_bias(Tensor(np.ones((1, 3), np.float32))).asnumpy(), [[3, 3]])


def test_dense_activation_and_nd_input():
    layer = _float64(nn.Dense(4, 3, activation="relu"))
    x = RS.standard_normal((2, 5, 4))
    out = layer(Tensor(x)).asnumpy()
    expected = np.maximum(x @ layer.weight.asnumpy().T + layer.bias.asnumpy(), 0)
    _close(out, expected)
    gradcheck(layer, [Tensor(x)], layer.trainable_params())
    assert isinstance(nn.Dense(2, 2, activation=nn.Tanh()).activation, nn.Tanh)


# ----------------------------------------------------------------------------- Conv2d

CONV = [
    # in, out, kernel, stride, pad_mode, padding, dilation, group, has_bias, input HW
    (3, 4, 3, 1, "same", 0, 1, 1, True, (7, 6)),
    (2, 3, 2, 1, "same", 0, 1, 1, False, (5, 5)),  # odd padding goes bottom/right
    (4, 6, (3, 2), (2, 1), "pad", (1, 2, 0, 1), (2, 1), 2, True, (9, 8)),
    (4, 4, 3, 2, "valid", 0, 1, 4, True, (9, 9)),
    (2, 4, 3, 3, "same", 0, 2, 2, False, (10, 7)),
]


def _torch_conv_pads(layer, hw):
    if layer.pad_mode == "pad":
        p = layer.padding
        return p if isinstance(p, tuple) else (p,) * 4
    if layer.pad_mode == "valid":
        return (0, 0, 0, 0)
    pads = []
    for size, k, s, d in zip(hw, layer.kernel_size, layer.stride, layer.dilation, strict=True):
        out = -(-size // s)
        total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
        pads += [total // 2, total - total // 2]
    return tuple(pads)


@pytest.mark.parametrize("cin, cout, k, s, mode, pad, dil, group, bias, hw", CONV)
def test_conv2d_matches_torch(cin, cout, k, s, mode, pad, dil, group, bias, hw):
    layer = _float64(nn.Conv2d(cin, cout, k, s, mode, pad, dil, group, bias))
    x = RS.standard_normal((2, cin, *hw))
    out = layer(Tensor(x)).asnumpy()
    t, b, l, r = _torch_conv_pads(layer, hw)
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(layer.weight.asnumpy(), requires_grad=True)
    tb = torch.tensor(layer.bias.asnumpy(), requires_grad=True) if bias else None
    tout = F.conv2d(F.pad(tx, (l, r, t, b)), tw, tb, stride=layer.stride,
                    dilation=layer.dilation, groups=group)
    _close(out, tout.detach().numpy())
    cot = RS.standard_normal(out.shape)
    gx, gp = _grads(layer, x, cot)
    expected = _torch_grads(tout, [tx, tw] + ([tb] if bias else []), cot)
    for g, e in zip([gx, *gp], expected, strict=True):
        _close(g, e)
    if mode == "same":
        assert out.shape[2:] == tuple(-(-n // st) for n, st in zip(hw, layer.stride, strict=True))


@pytest.mark.parametrize("cin, cout, k, s, mode, pad, dil, group, bias, hw", CONV[1:4])
def test_conv2d_gradcheck(cin, cout, k, s, mode, pad, dil, group, bias, hw):
    layer = _float64(nn.Conv2d(cin, cout, k, s, mode, pad, dil, group, bias))
    gradcheck(layer, [Tensor(RS.standard_normal((1, cin, *hw)))], layer.trainable_params())


def test_conv2d_defaults_follow_mindspore():
    layer = nn.Conv2d(8, 16, 3)
    assert layer.pad_mode == "same" and layer.bias is None and layer.group == 1
    assert layer.weight.shape == (16, 8, 3, 3) and layer.weight.dtype == engine.float32
    bound = 1 / math.sqrt(8 * 9)
    w = layer.weight.asnumpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    grouped = nn.Conv2d(4, 6, (3, 1), group=2, has_bias=True)
    assert grouped.weight.shape == (6, 2, 3, 1) and grouped.bias.shape == (6,)
    assert np.abs(grouped.bias.asnumpy()).max() <= 1 / math.sqrt(6)
    assert nn.Conv2d(1, 1, 3, weight_init="ones").weight.asnumpy().sum() == 9


# ----------------------------------------------------------------------------- BatchNorm


def _bn_pair(cls, tcls, c):
    layer = cls(c)
    gamma, beta = RS.standard_normal(c), RS.standard_normal(c)
    layer.gamma.set_data(Tensor(gamma.astype(np.float32)))
    layer.beta.set_data(Tensor(beta.astype(np.float32)))
    layer = _float64(layer)
    # MindSpore's momentum 0.9 is PyTorch's 0.1.
    tlayer = tcls(c, eps=1e-5, momentum=1 - layer.momentum).double()
    with torch.no_grad():
        tlayer.weight.copy_(torch.tensor(layer.gamma.asnumpy()))
        tlayer.bias.copy_(torch.tensor(layer.beta.asnumpy()))
    return layer, tlayer


@pytest.mark.parametrize(
    "cls, tcls, shape",
    [(nn.BatchNorm2d, torch.nn.BatchNorm2d, (4, 3, 5, 6)),
     (nn.BatchNorm1d, torch.nn.BatchNorm1d, (8, 3)),
     (nn.BatchNorm1d, torch.nn.BatchNorm1d, (4, 3, 7))],
)
def test_batchnorm_train_then_predict_matches_torch(cls, tcls, shape):
    x = RS.standard_normal(shape) * 3 + 2
    layer, tlayer = _bn_pair(cls, tcls, shape[1])
    assert layer.phase == "predict"  # a new Cell predicts until set_train()
    layer.set_train()
    tlayer.train()
    tx = torch.tensor(x, requires_grad=True)
    tout = tlayer(tx)
    out = layer(Tensor(x)).asnumpy()
    _close(out, tout.detach().numpy(), 1e-9)
    cot = RS.standard_normal(shape)
    gx, (gg, gb) = _grads(layer, x, cot)  # a second train call: stats move twice
    for g, e in zip([gx, gg, gb], _torch_grads(tout, [tx, tlayer.weight, tlayer.bias], cot),
                    strict=True):
        _close(g, e, 1e-9)

    # Moving statistics: mean as PyTorch; variance from the biased batch variance.
    axes = (0,) + tuple(range(2, len(shape)))
    m = x.size // shape[1]
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    exp_mean = 0.1 * mean * (1 + 0.9)  # two updates from 0 with the same batch
    exp_var = 0.81 + 0.1 * var * (1 + 0.9)
    _close(layer.moving_mean.asnumpy(), exp_mean)
    _close(layer.moving_variance.asnumpy(), exp_var)
    _close(tlayer.running_mean.numpy(), 0.1 * mean)
    _close(tlayer.running_var.numpy(), 0.9 + 0.1 * var * m / (m - 1))

    layer.set_train(False)
    tlayer.eval()
    with torch.no_grad():
        tlayer.running_mean.copy_(torch.tensor(layer.moving_mean.asnumpy()))
        tlayer.running_var.copy_(torch.tensor(layer.moving_variance.asnumpy()))
    x2 = RS.standard_normal(shape)
    before = layer.moving_mean.asnumpy().copy()
    tx2 = torch.tensor(x2, requires_grad=True)
    tlayer.zero_grad()
    tout2 = tlayer(tx2)
    _close(layer(Tensor(x2)).asnumpy(), tout2.detach().numpy(), 1e-9)
    np.testing.assert_array_equal(layer.moving_mean.asnumpy(), before)  # predict: no update
    cot = RS.standard_normal(shape)
    gx, (gg, gb) = _grads(layer, x2, cot)
    for g, e in zip([gx, gg, gb], _torch_grads(tout2, [tx2, tlayer.weight, tlayer.bias], cot),
                    strict=True):
        _close(g, e, 1e-9)


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm_gradcheck(train):
    layer = _float64(nn.BatchNorm2d(3, moving_mean_init=0.5, moving_var_init=2.0))
    layer.set_train(train)
    x = Tensor(RS.standard_normal((3, 3, 2, 4)))
    gradcheck(layer, [x], layer.trainable_params())


def test_batchnorm_parameters_and_statistics_modes():
    bn = nn.BatchNorm2d(4)
    assert [p.name for p in bn.trainable_params()] == ["gamma", "beta"]
    assert [p.name for p in bn.untrainable_params()] == ["moving_mean", "moving_variance"]
    assert bn.moving_mean.asnumpy().tolist() == [0] * 4
    assert bn.moving_variance.asnumpy().tolist() == [1] * 4
    assert not nn.BatchNorm1d(2, affine=False).trainable_params()
    x = Tensor(RS.standard_normal((5, 4, 3, 3)).astype(np.float32) + 4)
    # use_batch_statistics=False: moving statistics even in train mode, and no update.
    fixed = nn.BatchNorm2d(4, use_batch_statistics=False).set_train()
    np.testing.assert_allclose(fixed(x).asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-5), rtol=1e-6)
    assert fixed.moving_mean.asnumpy().tolist() == [0] * 4
    # use_batch_statistics=True in predict mode: batch statistics, moving ones untouched.
    batch = nn.BatchNorm2d(4, use_batch_statistics=True)
    out = batch(x).asnumpy()
    assert abs(out.mean()) < 1e-5 and batch.moving_mean.asnumpy().tolist() == [0] * 4


# ----------------------------------------------------------------------------- activations

ACTIVATIONS = [
    (nn.ReLU(), torch.relu),
    (nn.LeakyReLU(), lambda t: F.leaky_relu(t, 0.2)),
    (nn.LeakyReLU(0.05), lambda t: F.leaky_relu(t, 0.05)),
    (nn.Sigmoid(), torch.sigmoid),
    (nn.Tanh(), torch.tanh),
    (nn.GELU(), lambda t: F.gelu(t, approximate="tanh")),
    (nn.GELU(approximate=False), F.gelu),
    (nn.Softmax(), lambda t: F.softmax(t, -1)),
    (nn.Softmax(axis=1), lambda t: F.softmax(t, 1)),
    (nn.LogSoftmax(), lambda t: F.log_softmax(t, -1)),
    (nn.LogSoftmax(0), lambda t: F.log_softmax(t, 0)),
]


@pytest.mark.parametrize("layer, tfn", ACTIVATIONS, ids=lambda v: repr(v)[:20])
def test_activations_match_torch(layer, tfn):
    x = RS.standard_normal((3, 4, 5)) * 2
    x[np.abs(x) < 0.05] = 0.3  # keep away from the kinks
    tx = torch.tensor(x, requires_grad=True)
    tout = tfn(tx)
    out = layer(Tensor(x)).asnumpy()
    _close(out, tout.detach().numpy(), 1e-9)
    cot = RS.standard_normal(out.shape)
    gx, _ = _grads(layer, x, cot)
    _close(gx, _torch_grads(tout, [tx], cot)[0], 1e-9)
    gradcheck(layer, [Tensor(x)])


# ----------------------------------------------------------------------------- Dropout etc.


def test_dropout_is_active_only_in_train_mode():
    layer = nn.Dropout(p=0.3)
    x = Tensor(np.ones((300, 100), dtype=np.float32))
    assert layer(x) is x  # a new Cell predicts
    layer.set_train()
    engine.set_seed(1)
    a = layer(x).asnumpy()
    engine.set_seed(1)
    np.testing.assert_array_equal(a, layer(x).asnumpy())
    assert abs((a == 0).mean() - 0.3) < 0.01
    t = torch.nn.Dropout(0.3).train()(torch.ones(300, 100)).numpy()
    np.testing.assert_allclose(sorted(set(a.ravel())), sorted(set(t.ravel())), rtol=1e-6)
    torch_eval = torch.nn.Dropout(0.3).eval()(torch.ones(2, 2)).numpy()
    layer.set_train(False)
    np.testing.assert_array_equal(layer(Tensor(np.ones((2, 2), np.float32))).asnumpy(), torch_eval)


def test_dropout_arguments():
    assert nn.Dropout().p == 0.5
    assert nn.Dropout(keep_prob=0.8).p == pytest.approx(0.2)
    assert nn.Dropout(p=0.1).keep_prob == pytest.approx(0.9)
    # MindSpore 2.x: when p is given it wins over the deprecated keep_prob.
    assert nn.Dropout(keep_prob=0.5, p=0.25).p == pytest.approx(0.25)
    assert nn.Dropout(0.9, None, engine.float16).p == pytest.approx(0.1)
    with pytest.raises(ValueError, match="keep_prob"):
        nn.Dropout(keep_prob=0.0)
    with pytest.raises(ValueError, match="p must be"):
        nn.Dropout(p=1.0)


def test_flatten_identity_and_pool_layers():
    x = RS.standard_normal((2, 3, 4, 5))
    assert nn.Flatten()(Tensor(x)).shape == tuple(torch.nn.Flatten()(torch.tensor(x)).shape)
    assert nn.Flatten(0, 1)(Tensor(x)).shape == (6, 4, 5)
    assert nn.Flatten(start_dim=2)(Tensor(x)).shape == (2, 3, 20)
    t = Tensor(x)
    assert nn.Identity()(t) is t
    _close(nn.MaxPool2d(2, 2)(t).asnumpy(), F.max_pool2d(torch.tensor(x), 2, 2).numpy())
    _close(nn.AvgPool2d(3, 1)(t).asnumpy(), F.avg_pool2d(torch.tensor(x), 3, 1).numpy())
    assert nn.MaxPool2d(3, 2, "same")(t).shape == (2, 3, 2, 3)
    assert nn.AvgPool2d()(t).shape == x.shape  # kernel 1, stride 1
    gradcheck(nn.MaxPool2d(2, 1), [t])
    gradcheck(nn.AvgPool2d(2, 2, "same"), [t])


def test_small_cnn_matches_torch_end_to_end():
    net = _float64(nn.SequentialCell(
        nn.Conv2d(1, 4, 3, has_bias=True), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(4, 6, 3, pad_mode="valid"), nn.BatchNorm2d(6), nn.ReLU(), nn.Flatten(),
        nn.Dense(6 * 2 * 2, 3),
    ))
    net.set_train()
    tnet = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(4, 6, 3, bias=False), torch.nn.BatchNorm2d(6, momentum=0.1),
        torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(24, 3),
    ).double().train()
    ours = net.trainable_params()
    theirs = [p for p in tnet.parameters()]
    with torch.no_grad():
        for p, tp in zip(ours, theirs, strict=True):
            tp.copy_(torch.tensor(p.asnumpy()))
    x = RS.standard_normal((5, 1, 8, 8))
    tout = tnet(torch.tensor(x))
    out = net(Tensor(x))
    _close(out.asnumpy(), tout.detach().numpy(), 1e-9)
    cot = RS.standard_normal(out.shape)
    grads = engine.grad(lambda a: (net(a) * Tensor(cot)).sum(), None, ours)(Tensor(x))
    tout.backward(torch.tensor(cot))
    for g, tp in zip(grads, theirs, strict=True):
        _close(g.asnumpy(), tp.grad.numpy(), 1e-9)


# ----------------------------------------------------------------------------- containers


def test_sequential_cell_names_indexing_and_editing():
    seq = nn.SequentialCell(nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2))
    assert list(seq.parameters_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [p.name for p in seq.trainable_params()][0] == "0.weight"
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU) and seq[-1] is seq[2]
    x = Tensor(RS.standard_normal((5, 3)).astype(np.float32))
    np.testing.assert_allclose(seq(x).asnumpy(), seq[2](seq[1](seq[0](x))).asnumpy())
    head = seq[:2]
    assert len(head) == 2 and list(head.parameters_dict()) == ["0.weight", "0.bias"]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and list(seq.name_cells()) == ["0", "1", "2", "3"]
    seq.insert(1, nn.Dense(4, 4))
    assert list(seq.parameters_dict()) == [
        "0.weight", "0.bias", "1.weight", "1.bias", "3.weight", "3.bias"]
    assert [p.name for p in seq.trainable_params()] == list(seq.parameters_dict())
    del seq[1]
    assert list(seq.parameters_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh) and [type(c) for c in seq][1] is nn.Tanh
    with pytest.raises(IndexError):
        seq[7]
    with pytest.raises(TypeError, match="Cells"):
        nn.SequentialCell(nn.ReLU(), lambda a: a)


def test_sequential_cell_from_list_and_ordered_dict():
    seq = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])
    assert list(seq.parameters_dict()) == ["0.weight", "0.bias"]
    named = nn.SequentialCell(OrderedDict([("fc", nn.Dense(2, 3)), ("act", nn.ReLU())]))
    assert list(named.parameters_dict()) == ["fc.weight", "fc.bias"]
    assert named.fc is named[0]

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.features = nn.SequentialCell(nn.Conv2d(1, 2, 3), nn.ReLU())

    net = Net()
    assert list(net.parameters_dict()) == ["features.0.weight"]
    assert net.trainable_params()[0].name == "features.0.weight"
    net.features.insert(0, nn.Identity())  # moved children keep the outer prefix
    assert [p.name for p in net.trainable_params()] == ["features.1.weight"]
    with pytest.raises(TypeError, match="keeps its keys"):
        named.insert(0, nn.ReLU())


def test_cell_list():
    cells = nn.CellList([nn.Dense(2, 2), nn.ReLU()])
    cells.append(nn.Dense(2, 1))
    cells.extend([nn.Tanh()])
    cells.insert(0, nn.Identity())
    assert len(cells) == 5 and isinstance(cells[0], nn.Identity)
    assert [type(c).__name__ for c in cells] == ["Identity", "Dense", "ReLU", "Dense", "Tanh"]
    assert list(cells.parameters_dict()) == ["1.weight", "1.bias", "3.weight", "3.bias"]
    cells[4] = nn.Sigmoid()
    assert isinstance(cells[-1], nn.Sigmoid)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.blocks = nn.CellList([nn.Dense(2, 2) for _ in range(2)])

        def construct(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    net = Net()
    assert len(net.trainable_params()) == 4
    assert net(Tensor(np.ones((1, 2), np.float32))).shape == (1, 2)


# ----------------------------------------------------------------------------- schemas, errors

LAYERS = [nn.Dense, nn.Conv2d, nn.BatchNorm1d, nn.BatchNorm2d, nn.ReLU, nn.LeakyReLU,
          nn.Sigmoid, nn.Tanh, nn.GELU, nn.Softmax, nn.LogSoftmax, nn.Dropout, nn.Flatten,
          nn.MaxPool2d, nn.AvgPool2d, nn.Identity]


@pytest.mark.parametrize("cls", LAYERS, ids=lambda c: c.__name__)
def test_hyper_parameters_are_annotated(cls):
    sig = inspect.signature(cls.__init__)
    hints = typing.get_type_hints(cls.__init__)
    for name, param in list(sig.parameters.items())[1:]:
        assert param.annotation is not inspect.Parameter.empty, f"{cls.__name__}.{name}"
        assert not isinstance(param.annotation, str), f"{cls.__name__}.{name} is a string"
        assert name in hints


def test_mindspore_defaults_in_signatures():
    def defaults(cls):
        return {k: v.default for k, v in inspect.signature(cls).parameters.items()}

    assert defaults(nn.Conv2d)["pad_mode"] == "same" and defaults(nn.Conv2d)["has_bias"] is False
    assert typing.get_args(inspect.signature(nn.Conv2d).parameters["pad_mode"].annotation) == (
        "same", "valid", "pad")
    assert defaults(nn.Dense)["has_bias"] is True
    assert defaults(nn.BatchNorm2d)["momentum"] == 0.9 and defaults(nn.BatchNorm2d)["eps"] == 1e-5
    assert defaults(nn.LeakyReLU)["alpha"] == 0.2
    assert defaults(nn.GELU)["approximate"] is True
    assert defaults(nn.MaxPool2d) == {
        "kernel_size": 1, "stride": 1, "pad_mode": "valid", "padding": 0, "dilation": 1,
        "return_indices": False, "ceil_mode": False, "data_format": "NCHW"}
    assert defaults(nn.AvgPool2d) == {
        "kernel_size": 1, "stride": 1, "pad_mode": "valid", "padding": 0, "ceil_mode": False,
        "count_include_pad": True, "divisor_override": None, "data_format": "NCHW"}
    # keep_prob's MindSpore default is 0.5; None here means "not given" (still p = 0.5).
    assert defaults(nn.Dropout) == {"keep_prob": None, "p": None, "dtype": engine.float32}
    assert defaults(nn.Flatten) == {"start_dim": 1, "end_dim": -1}


def test_reprs_show_hyper_parameters():
    assert "kernel_size=(3, 3)" in repr(nn.Conv2d(1, 2, 3)) and "pad_mode=same" in repr(
        nn.Conv2d(1, 2, 3))
    assert "input_channels=3, output_channels=4" in repr(nn.Dense(3, 4))
    assert "momentum=0.9" in repr(nn.BatchNorm2d(2))
    assert "p=0.25" in repr(nn.Dropout(p=0.25))
    assert "alpha=0.1" in repr(nn.LeakyReLU(0.1))


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: nn.Dense(0, 3), "in_channels"),
        (lambda: nn.Dense(3, -1), "out_channels"),
        (lambda: nn.Dense(3, 2, activation="swish"), "activation"),
        (lambda: nn.Dense(3, 2, weight_init="glorot"), "valid names"),
        (lambda: nn.Dense(3, 2, weight_init=np.zeros((3, 2))), r"shape \(3, 2\)"),
        (lambda: nn.Conv2d(3, 4, 3, pad_mode="full"), "pad_mode"),
        (lambda: nn.Conv2d(3, 4, 3, padding=1), "padding must be 0"),
        (lambda: nn.Conv2d(3, 4, 3, pad_mode="pad", padding=-1), "non-negative"),
        (lambda: nn.Conv2d(3, 4, 3, group=2), "divisible by group"),
        (lambda: nn.Conv2d(3, 4, 0), "kernel_size"),
        (lambda: nn.Conv2d(3, 4, 3, stride=(1, 2, 3)), "stride"),
        (lambda: nn.BatchNorm2d(0), "num_features"),
        (lambda: nn.BatchNorm2d(3, momentum=1.5), "momentum"),
        (lambda: nn.BatchNorm1d(3, eps=0), "eps"),
        (lambda: nn.MaxPool2d(0), "kernel_size"),
        (lambda: nn.AvgPool2d(2, pad_mode="full"), "pad_mode"),
        (lambda: nn.MaxPool2d(2, padding=1), "padding must be 0"),
        (lambda: nn.LeakyReLU("a"), "alpha"),
        (lambda: nn.Softmax(axis=1.5), "axis"),
        (lambda: nn.GELU(approximate="tanh"), "approximate"),
    ],
)
def test_bad_hyper_parameters_raise(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize(
    "layer, shape, match",
    [
        (nn.Conv2d(3, 4, 3), (2, 2, 5, 5), r"\(N, 3, H, W\), got shape \(2, 2, 5, 5\)"),
        (nn.Conv2d(3, 4, 3), (3, 5, 5), r"got shape \(3, 5, 5\)"),
        (nn.Dense(4, 2), (2, 5), r"\(\.\.\., 4\), got shape \(2, 5\)"),
        (nn.BatchNorm2d(3), (2, 4, 2, 2), r"\(N, 3, H, W\), got shape \(2, 4, 2, 2\)"),
        (nn.BatchNorm1d(3), (2, 4), r"\(N, 3\) or \(N, 3, L\), got shape \(2, 4\)"),
        (nn.MaxPool2d(2), (2, 4), r"\(N, C, H, W\), got shape \(2, 4\)"),
    ],
)
def test_wrong_input_shapes_name_expected_and_actual(layer, shape, match):
    with pytest.raises(ValueError, match=match):
        layer(Tensor(np.zeros(shape, np.float32)))
