"""RNN, LSTM and GRU against PyTorch (float32: forward and the gradients of the input, the
initial states and every Parameter) and finite differences (float64); MindSpore's
signatures, defaults, Parameter names, layouts and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import engine
from engine import Parameter, Tensor, nn
from engine.gradcheck import gradcheck
from engine.ops import _rnn_kernels, _threads

RS = np.random.default_rng(3)
RTOL, ATOL = 1e-4, 1e-5
TORCH = {"RNN": torch.nn.RNN, "LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU}


def _pair(kind, input_size=5, hidden=6, **kw):
    """An engine layer and the torch layer with the same weights (the same names: MindSpore
    and PyTorch stack the gates in the same order)."""
    cell = getattr(nn, kind)(input_size, hidden, **kw)
    tkw = dict(kw)
    tkw["bias"] = tkw.pop("has_bias", True)
    twin = TORCH[kind](input_size, hidden, **tkw)
    state = {name: torch.tensor(p.asnumpy()) for name, p in cell.parameters_and_names()}
    twin.load_state_dict(state)
    return cell, twin


def _flat(out):
    """(output, h_n[, c_n]) from (output, h_n) or (output, (h_n, c_n))."""
    y, states = out
    return (y, *states) if isinstance(states, tuple) else (y, states)


def _check(kind, shape=(7, 3, 5), hx=False, hidden=6, **kw):
    """Forward and the gradients of sum(out_k · cot_k) over every output, against torch."""
    cell, twin = _pair(kind, shape[-1], hidden, **kw)
    x = RS.standard_normal(shape).astype(np.float32)
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    batch = shape[0] if kw.get("batch_first") else shape[1]
    states = [RS.standard_normal((layers, batch, hidden)).astype(np.float32) * 0.5
              for _ in range(2 if kind == "LSTM" else 1)] if hx else []
    tx = torch.tensor(x, requires_grad=True)
    ts = [torch.tensor(s, requires_grad=True) for s in states]
    targ = None if not hx else (tuple(ts) if kind == "LSTM" else ts[0])
    touts = _flat(twin(tx, targ))
    cots = [RS.standard_normal(tuple(o.shape)).astype(np.float32) for o in touts]
    sum(torch.sum(o * torch.tensor(c)) for o, c in zip(touts, cots, strict=True)).backward()

    def arg(s):
        return None if not hx else (tuple(s) if kind == "LSTM" else s[0])

    outs = _flat(cell(Tensor(x), arg([Tensor(s) for s in states])))
    assert len(outs) == len(touts)
    for o, t in zip(outs, touts, strict=True):
        assert o.dtype == engine.float32 and tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.asnumpy(), t.detach().numpy(), rtol=RTOL, atol=ATOL)

    params = cell.trainable_params()

    def loss(a, *s):
        got = _flat(cell(a, arg(list(s))))
        return sum(((o * Tensor(c)).sum() for o, c in zip(got, cots, strict=True)), Tensor(0.0))

    positions = tuple(range(1 + len(states)))
    in_grads, p_grads = engine.grad(loss, positions, params)(Tensor(x),
                                                             *[Tensor(s) for s in states])
    for g, t in zip(in_grads, [tx, *ts], strict=True):
        np.testing.assert_allclose(g.asnumpy(), t.grad.numpy(), rtol=RTOL, atol=ATOL)
    named = dict(twin.named_parameters())
    assert sorted(p.name for p in params) == sorted(named)
    for g, p in zip(p_grads, params, strict=True):
        assert g.dtype == engine.float32
        np.testing.assert_allclose(g.asnumpy(), named[p.name].grad.numpy(), rtol=RTOL,
                                   atol=ATOL, err_msg=p.name)


CASES = [
    ({}, False),
    ({"num_layers": 2}, False),
    ({"bidirectional": True}, False),
    ({"num_layers": 2, "bidirectional": True}, True),
    ({"batch_first": True}, False),
    ({"batch_first": True, "num_layers": 2, "bidirectional": True}, True),
    ({"has_bias": False}, False),
    ({"has_bias": False, "num_layers": 2}, True),
    ({}, True),
]


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("kw, hx", CASES)
def test_matches_torch(kind, kw, hx):
    shape = (3, 7, 5) if kw.get("batch_first") else (7, 3, 5)
    _check(kind, shape, hx, **kw)


@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "bidirectional": True, "batch_first": True}])
def test_rnn_relu_matches_torch(kw):
    shape = (3, 7, 5) if kw.get("batch_first") else (7, 3, 5)
    _check("RNN", shape, True, nonlinearity="relu", **kw)


def _float64(cell):
    for name, p in list(cell._params.items()):
        setattr(cell, name, Parameter(p._data.astype(np.float64), name=name))
    return cell


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_gradcheck_float64(kind):
    cell = _float64(getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True, batch_first=True))
    x = Tensor(RS.standard_normal((2, 5, 3)))
    h = Tensor(RS.standard_normal((4, 2, 4)) * 0.5)
    if kind == "LSTM":
        c = Tensor(RS.standard_normal((4, 2, 4)) * 0.5)
        gradcheck(lambda a, b, d: _flat(cell(a, (b, d))), [x, h, c], cell.trainable_params())
    else:
        gradcheck(lambda a, b: _flat(cell(a, b)), [x, h], cell.trainable_params())


def test_gradcheck_relu_without_bias():
    cell = _float64(nn.RNN(3, 4, nonlinearity="relu", has_bias=False))
    gradcheck(lambda a: _flat(cell(a)), [Tensor(RS.standard_normal((5, 2, 3)))],
              cell.trainable_params())


def test_parameters_follow_mindspore():
    cell = nn.LSTM(10, 16, num_layers=2, bidirectional=True)
    names = [p.name for p in cell.trainable_params()]
    rows = [f"{k}_l{i}{s}" for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            for i in range(2) for s in ("", "_reverse")]
    assert names == rows
    assert cell.weight_ih_l0.shape == (64, 10) and cell.weight_ih_l1.shape == (64, 32)
    assert cell.weight_hh_l1_reverse.shape == (64, 16) and cell.bias_hh_l0.shape == (64,)
    assert [p.name for p in cell.w_ih_list] == rows[:4] and len(cell.b_hh_list) == 4
    bound = 1 / math.sqrt(16)
    values = np.concatenate([p.asnumpy().ravel() for p in cell.trainable_params()])
    assert values.dtype == np.float32 and np.abs(values).max() <= bound
    assert np.abs(values).max() > 0.9 * bound and abs(values.mean()) < 0.01
    gru = nn.GRU(4, 8, has_bias=False)
    assert [p.name for p in gru.trainable_params()] == ["weight_ih_l0", "weight_hh_l0"]
    assert gru.weight_ih_l0.shape == (24, 4) and nn.RNN(4, 8).weight_hh_l0.shape == (8, 8)
    rnn = nn.RNN(4, 8)
    assert (rnn.num_layers, rnn.has_bias, rnn.batch_first, rnn.dropout, rnn.bidirectional,
            rnn.nonlinearity) == (1, True, False, 0.0, False, "tanh")
    assert rnn.probe is None


def test_outputs_shapes_as_mindspore_example():
    # MindSpore's API example: nn.RNN(10, 16, 2, has_bias=True, batch_first=True, ...)
    net = nn.RNN(10, 16, 2, has_bias=True, batch_first=True, bidirectional=False)
    output, hn = net(Tensor(np.ones([3, 5, 10], np.float32)),
                     Tensor(np.ones([1 * 2, 3, 16], np.float32)))
    assert output.shape == (3, 5, 16) and hn.shape == (2, 3, 16)
    net = nn.LSTM(10, 16, 2, has_bias=True, batch_first=True, bidirectional=True)
    output, (hn, cn) = net(Tensor(np.ones([3, 5, 10], np.float32)))
    assert output.shape == (3, 5, 32) and hn.shape == cn.shape == (4, 3, 16)


def test_dropout_between_layers_only_when_training():
    engine.set_seed(1)
    cell = nn.GRU(4, 32, num_layers=2, dropout=0.5)
    plain = nn.GRU(4, 32, num_layers=2)
    for name, p in cell.parameters_and_names():
        getattr(plain, name).set_data(p)
    x = Tensor(RS.standard_normal((6, 3, 4)).astype(np.float32))
    expected = plain(x)[0].asnumpy()
    np.testing.assert_array_equal(cell(x)[0].asnumpy(), expected)  # a new Cell predicts
    cell.set_train(True)
    first, second = cell(x)[0].asnumpy(), cell(x)[0].asnumpy()
    assert not np.allclose(first, expected) and not np.allclose(first, second)
    # The dropout acts on the first layer's output: the last layer's input. Replaying its
    # mask on the first layer's output through the second layer gives the same result.
    engine.set_seed(5)
    got = cell(x)[0].asnumpy()
    engine.set_seed(5)
    mask = engine.ops.dropout(Tensor(np.ones((6, 3, 32), np.float32)), 0.5).asnumpy()
    one = nn.GRU(4, 32)
    two = nn.GRU(32, 32)
    for src, dst in (("l0", one), ("l1", two)):
        for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(dst, f"{kind}_l0").set_data(getattr(cell, f"{kind}_{src}"))
    hidden = one(x)[0].asnumpy() * mask
    np.testing.assert_allclose(got, two(Tensor(hidden))[0].asnumpy(), rtol=1e-5, atol=1e-6)
    cell.set_train(False)
    np.testing.assert_array_equal(cell(x)[0].asnumpy(), expected)


def test_errors_name_the_argument():
    with pytest.raises(NotImplementedError, match="seq_length"):
        nn.LSTM(3, 4)(Tensor(np.ones((2, 1, 3), np.float32)),
                      seq_length=Tensor(np.array([2], np.int32)))
    with pytest.raises(ValueError, match=r"input_size 3, got shape \(2, 5\)"):
        nn.GRU(3, 4)(Tensor(np.ones((2, 5), np.float32)))
    with pytest.raises(ValueError, match=r"\(N, T, input_size\).*got shape \(2, 1, 5\)"):
        nn.GRU(3, 4, batch_first=True)(Tensor(np.ones((2, 1, 5), np.float32)))
    with pytest.raises(ValueError, match=r"hx must have shape .* \(2, 1, 4\), got \(1, 1, 4\)"):
        nn.RNN(3, 4, num_layers=2)(Tensor(np.ones((2, 1, 3), np.float32)),
                                   Tensor(np.ones((1, 1, 4), np.float32)))
    with pytest.raises(TypeError, match=r"hx must be a tuple \(h_0, c_0\)"):
        nn.LSTM(3, 4)(Tensor(np.ones((2, 1, 3), np.float32)),
                      Tensor(np.ones((1, 1, 4), np.float32)))
    with pytest.raises(TypeError, match="float"):
        nn.RNN(3, 4)(Tensor(np.ones((2, 1, 3), np.int64)))
    with pytest.raises(ValueError, match="dropout"):
        nn.LSTM(3, 4, dropout=1.0)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size"):
        nn.GRU(3, 0)
    with pytest.raises(TypeError, match="batch_first"):
        nn.GRU(3, 4, batch_first=1)


def test_float64_input_runs_in_float64_and_float16_comes_back_float16():
    cell = nn.LSTM(3, 4)
    x = RS.standard_normal((5, 2, 3))
    out64 = _flat(cell(Tensor(x)))
    out32 = _flat(cell(Tensor(x.astype(np.float32))))
    assert all(o.dtype == engine.float64 for o in out64)
    for a, b in zip(out64, out32, strict=True):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    half = _flat(cell(Tensor(x.astype(np.float16))))
    assert all(o.dtype == engine.float16 for o in half)


# ----------------------------------------------------------------------------- probes


def _torch_steps(kind, cell, x, cot):
    """A torch loop over time of layer 0 (both directions) with the engine's weights: the
    gates (N, T, G, H) and hidden states (N, T, H) per direction, and the norms of dL/dh_t
    (T,) from retain_grad, for L = sum(output · cot); batch-first x."""
    found = {}
    outs = []
    for d, suffix in enumerate(["", "_reverse"][:2 if cell.bidirectional else 1]):
        w = {k: torch.tensor(getattr(cell, f"{k}_l0{suffix}").asnumpy())
             for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
        xs = torch.tensor(x, requires_grad=True)
        n, t_len = xs.shape[:2]
        h = torch.zeros(n, cell.hidden_size)
        c = torch.zeros(n, cell.hidden_size)
        gates, hs = [None] * t_len, [None] * t_len
        for t in (range(t_len - 1, -1, -1) if d else range(t_len)):
            gi = xs[:, t] @ w["weight_ih"].T + w["bias_ih"]
            gh = h @ w["weight_hh"].T + w["bias_hh"]
            if kind == "LSTM":
                i, f, g, o = (gi + gh).chunk(4, 1)
                i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
                c = f * c + i * g
                h = o * c.tanh()
                gates[t] = torch.stack([i, f, g, o], 1)
            else:
                (ir, iz, i_n), (hr, hz, hn) = gi.chunk(3, 1), gh.chunk(3, 1)
                r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
                new = (i_n + r * hn).tanh()
                h = (1 - z) * new + z * h
                gates[t] = torch.stack([r, z, new], 1)
            h.retain_grad()
            hs[t] = h
        tag = f"l0{suffix}"
        found[f"{tag}.gates"] = torch.stack(gates, 1).detach().numpy()
        found[f"{tag}.hidden"] = torch.stack(hs, 1).detach().numpy()
        outs.append((tag, hs))
    y = torch.cat([torch.stack(hs, 1) for _, hs in outs], -1)
    (y * torch.tensor(cot)).sum().backward()
    for tag, hs in outs:
        found[f"{tag}.grad_norms"] = np.array([float(h.grad.double().norm()) for h in hs])
    return found


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_probe_sees_gates_hidden_states_and_gradient_norms(kind):
    cell = getattr(nn, kind)(3, 4, bidirectional=True, batch_first=True)
    x = RS.standard_normal((2, 5, 3)).astype(np.float32)
    cot = RS.standard_normal((2, 5, 8)).astype(np.float32)
    seen = {}
    expected = _torch_steps(kind, cell, x, cot)
    plain = engine.grad(lambda a: (cell(a)[0] * Tensor(cot)).sum(), 0)(Tensor(x)).asnumpy()
    cell.probe = lambda name, array: seen.__setitem__(name, np.array(array))
    probed = engine.grad(lambda a: (cell(a)[0] * Tensor(cot)).sum(), 0)(Tensor(x)).asnumpy()
    np.testing.assert_array_equal(probed, plain)  # looking changes nothing
    assert sorted(seen) == sorted(expected)
    for name, value in expected.items():
        assert seen[name].shape == value.shape, name
        assert seen[name].dtype == (np.float64 if name.endswith("grad_norms") else np.float32)
        np.testing.assert_allclose(seen[name], value, rtol=1e-4, atol=1e-5, err_msg=name)


def test_probe_of_an_rnn_has_no_gates_and_runs_when_predicting():
    cell = nn.RNN(3, 4, num_layers=2)
    seen = {}
    cell.probe = lambda name, array: seen.__setitem__(name, array.shape)
    cell(Tensor(RS.standard_normal((5, 2, 3)).astype(np.float32)))
    assert seen == {"l0.hidden": (2, 5, 4), "l1.hidden": (2, 5, 4)}


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_long_batches_whose_gate_factors_are_shared_by_threads_match_torch(kind):
    # T·G·H·N ≥ 2¹⁹: the backward pass works out its gate factors in blocks of steps.
    gates = 4 if kind == "LSTM" else 3
    assert len(_rnn_kernels._parts(64, 64 * gates * 88 * 32)) == min(2, _threads.workers())
    _check(kind, (64, 32, 2), hx=True, hidden=88)


class _CountingNumPy:
    """NumPy as _rnn_kernels sees it, counting the matrix products it runs."""

    def __init__(self):
        self.matmuls = 0

    def matmul(self, *args, **kwargs):
        self.matmuls += 1
        return np.matmul(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(np, name)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_each_time_step_is_one_matmul_for_all_gates_forward_and_backward(kind, monkeypatch):
    """The time loop runs whole-batch products, one per step for all gates (and one per step
    going back through time), plus a fixed few per layer: never a Python op per element.
    Going from T = 4 to T = 12 adds exactly one product per extra step each way."""

    def products(t_len: int) -> tuple[int, int]:
        counting = _CountingNumPy()
        monkeypatch.setattr(_rnn_kernels, "np", counting)
        cell = getattr(nn, kind)(3, 5, batch_first=True)
        x = Tensor(RS.standard_normal((2, t_len, 3)).astype(np.float32))
        out, _ = cell(x)  # forward only
        forward = counting.matmuls
        engine.grad(lambda a: cell(a)[0].sum())(x)  # forward again, then backward
        return forward, counting.matmuls - 2 * forward

    (f4, b4), (f12, b12) = products(4), products(12)
    assert f12 - f4 == 8 and b12 - b4 == 8
    monkeypatch.undo()
