"""Activations beyond the basic ones: Cells and ops against PyTorch (float32, forward and
gradients), gradcheck in float64, stable tails, PReLU's Parameter, MindSpore 2.x signatures."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Parameter, Tensor, nn, ops
from engine.gradcheck import gradcheck

RTOL, ATOL = 1e-4, 1e-5
RS = np.random.default_rng(0)


def _input(shape=(3, 4, 5), scale=3.0, dtype=np.float32):
    x = RS.standard_normal(shape) * scale
    for kink in (-3.0, 0.0, 3.0):  # away from the kinks of the piecewise ones
        near = np.abs(x - kink) < 0.05
        x[near] = kink + 0.3
    return x.astype(dtype)


def _float64(cell):
    for _, sub in cell.cells_and_names():
        for name, p in list(sub._params.items()):
            setattr(sub, name, Parameter(p._data.astype(np.float64), requires_grad=True))
    return cell


def _engine_grads(cell, x, cot):
    params = cell.trainable_params()
    fn = engine.grad(lambda a: (cell(a) * Tensor(cot)).sum(), 0, params or None)
    out = fn(Tensor(x))
    if params:
        gx, gp = out
        return gx.asnumpy(), [g.asnumpy() for g in gp]
    return out.asnumpy(), []


def _check_against_torch(cell, tmodule, x):
    """Forward and gradients (input and Parameters) of `cell` and `tmodule` on float32 `x`."""
    tx = torch.tensor(x, requires_grad=True)
    tout = tmodule(tx)
    out = cell(Tensor(x)).asnumpy()
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, tout.detach().numpy(), rtol=RTOL, atol=ATOL)
    cot = RS.standard_normal(out.shape).astype(np.float32)
    gx, gp = _engine_grads(cell, x, cot)
    tout.backward(torch.tensor(cot))
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    tparams = [p for p in tmodule.parameters()] if isinstance(tmodule, torch.nn.Module) else []
    assert len(gp) == len(tparams)
    for g, tp in zip(gp, tparams, strict=True):
        np.testing.assert_allclose(g, tp.grad.numpy(), rtol=RTOL, atol=ATOL)


CASES = [
    (lambda: nn.ELU(), lambda: torch.nn.ELU()),
    (lambda: nn.ELU(0.5), lambda: torch.nn.ELU(0.5)),
    (lambda: nn.SeLU(), lambda: torch.nn.SELU()),
    (lambda: nn.CELU(), lambda: torch.nn.CELU()),
    (lambda: nn.CELU(2.0), lambda: torch.nn.CELU(2.0)),
    (lambda: nn.Softsign(), lambda: torch.nn.Softsign()),
    (lambda: nn.SiLU(), lambda: torch.nn.SiLU()),
    (lambda: nn.Mish(), lambda: torch.nn.Mish()),
    (lambda: nn.HSwish(), lambda: torch.nn.Hardswish()),
    (lambda: nn.HSigmoid(), lambda: torch.nn.Hardsigmoid()),
    (lambda: nn.ReLU6(), lambda: torch.nn.ReLU6()),
    (lambda: nn.Hardtanh(), lambda: torch.nn.Hardtanh()),
    (lambda: nn.Hardtanh(-2.0, 0.5), lambda: torch.nn.Hardtanh(-2.0, 0.5)),
    (lambda: nn.LogSigmoid(), lambda: torch.nn.LogSigmoid()),
    (lambda: nn.Softmin(), lambda: torch.nn.Softmin(dim=-1)),
    (lambda: nn.Softmin(1), lambda: torch.nn.Softmin(dim=1)),
    (lambda: nn.GLU(), lambda: torch.nn.GLU(dim=-1)),
    (lambda: nn.GLU(1), lambda: torch.nn.GLU(dim=1)),
]


@pytest.mark.parametrize("make, make_torch", CASES, ids=lambda f: repr(f())[:24])
def test_cells_match_torch_forward_and_gradients(make, make_torch):
    shape = (3, 4, 6)  # GLU halves axis 1 or -1: both even
    _check_against_torch(make(), make_torch(), _input(shape))


@pytest.mark.parametrize("make, make_torch", CASES, ids=lambda f: repr(f())[:24])
def test_cells_pass_gradcheck_in_float64(make, make_torch):
    gradcheck(make(), [Tensor(_input((2, 4, 6), dtype=np.float64))])


def test_prelu_shared_and_per_channel_match_torch_with_weight_gradients():
    shared = nn.PReLU()
    _check_against_torch(shared, torch.nn.PReLU(), _input((3, 4, 5)))
    slopes = np.array([0.1, -0.3, 0.5, 2.0], np.float32)
    per_channel = nn.PReLU(4, slopes.tolist())
    tprelu = torch.nn.PReLU(4)
    with torch.no_grad():
        tprelu.weight.copy_(torch.tensor(slopes))
    _check_against_torch(per_channel, tprelu, _input((3, 4, 5, 2)))
    # (N, C) input: the channels are axis 1 too
    flat = nn.PReLU(4, Tensor(slopes))
    tflat = torch.nn.PReLU(4)
    with torch.no_grad():
        tflat.weight.copy_(torch.tensor(slopes))
    _check_against_torch(flat, tflat, _input((5, 4)))


def test_prelu_gradcheck_of_input_and_slopes():
    for cell, shape in ((nn.PReLU(), (2, 3, 4)), (nn.PReLU(3, [0.1, 0.2, 0.3]), (2, 3, 4)),
                        (nn.PReLU(3), (5, 3))):
        cell = _float64(cell)
        gradcheck(cell, [Tensor(_input(shape, dtype=np.float64))], cell.trainable_params())


def test_prelu_parameter_follows_mindspore():
    cell = nn.PReLU()
    assert cell.w.shape == (1,) and cell.w.name == "a" and cell.w.dtype == engine.float32
    np.testing.assert_array_equal(cell.w.asnumpy(), [0.25])
    assert [p for p in cell.trainable_params()] == [cell.w]
    four = nn.PReLU(channel=4, w=0.1)
    np.testing.assert_allclose(four.w.asnumpy(), [0.1] * 4)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.prelu1 = nn.PReLU(2)

        def construct(self, x):
            return self.prelu1(x)

    assert list(Net().parameters_dict()) == ["prelu1.w"]
    assert inspect.signature(nn.PReLU).parameters["channel"].default == 1
    assert inspect.signature(nn.PReLU).parameters["w"].default == 0.25


@pytest.mark.parametrize("make, match", [
    (lambda: nn.PReLU(0), "channel"),
    (lambda: nn.PReLU(2, [0.1]), "2 numbers"),
    (lambda: nn.PReLU(2, Tensor(np.zeros(3, np.float32))), r"shape \(2,\)"),
    (lambda: nn.CELU(0.0), "alpha must not be 0"),
    (lambda: nn.Hardtanh(1.0, -1.0), "max_val"),
    (lambda: nn.ELU("a"), "alpha"),
    (lambda: nn.GLU(1.5), "axis"),
    (lambda: nn.Softmin("x"), "axis"),
])
def test_bad_hyper_parameters_raise_naming_them(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_prelu_w_of_a_wrong_type_raises_type_error():
    with pytest.raises(TypeError, match="w must be"):
        nn.PReLU(1, "0.25")


def test_wrong_inputs_name_the_shape():
    with pytest.raises(ValueError, match=r"3 slopes need an input with 3 channels on axis 1, "
                                         r"got shape \(2, 4, 5\)"):
        nn.PReLU(3)(Tensor(np.zeros((2, 4, 5), np.float32)))
    with pytest.raises(ValueError, match=r"even.*shape \(2, 5\)"):
        nn.GLU()(Tensor(np.zeros((2, 5), np.float32)))


# ----------------------------------------------------------------------------- functional ops

OPS = [
    (lambda t: ops.elu(t, 0.7), lambda t: F.elu(t, 0.7)),
    (ops.selu, F.selu),
    (lambda t: ops.celu(t, 1.5), lambda t: F.celu(t, 1.5)),
    (ops.softsign, F.softsign),
    (ops.silu, F.silu),
    (ops.mish, F.mish),
    (ops.hardswish, F.hardswish),
    (ops.hardsigmoid, F.hardsigmoid),
    (ops.relu6, F.relu6),
    (lambda t: ops.hardtanh(t, -0.5, 2.0), lambda t: F.hardtanh(t, -0.5, 2.0)),
    (ops.logsigmoid, F.logsigmoid),
    (lambda t: ops.softmin(t, 0), lambda t: F.softmin(t, 0)),
    (lambda t: ops.glu(t, 0), lambda t: F.glu(t, 0)),
]


@pytest.mark.parametrize("op, top", OPS, ids=lambda f: getattr(f, "__name__", "op"))
def test_ops_match_torch_and_gradcheck(op, top):
    x = _input((4, 6))
    tx = torch.tensor(x, requires_grad=True)
    tout = top(tx)
    out = op(Tensor(x))
    np.testing.assert_allclose(out.asnumpy(), tout.detach().numpy(), rtol=RTOL, atol=ATOL)
    cot = RS.standard_normal(out.shape).astype(np.float32)
    g = engine.grad(lambda a: (op(a) * Tensor(cot)).sum())(Tensor(x))
    tout.backward(torch.tensor(cot))
    np.testing.assert_allclose(g.asnumpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    gradcheck(op, [Tensor(x.astype(np.float64))])


def test_prelu_op_gradcheck_of_both_inputs():
    x = Tensor(_input((3, 2, 4), dtype=np.float64))
    w = Tensor(np.array([0.2, -0.4]))
    gradcheck(ops.prelu, [x, w])


def test_softmin_over_a_tuple_of_axes_and_dtype():
    x = _input((2, 3, 4))
    out = ops.softmin(Tensor(x), (1, 2)).asnumpy()
    e = np.exp(-x.astype(np.float64))
    np.testing.assert_allclose(out, e / e.sum(axis=(1, 2), keepdims=True), rtol=RTOL)
    gradcheck(lambda t: ops.softmin(t, (1, 2)), [Tensor(x.astype(np.float64))])
    assert ops.softmin(Tensor(x), dtype=engine.float64).dtype == engine.float64
    assert nn.Softmin((0, 1))(Tensor(x)).shape == x.shape


def test_tails_are_stable():
    big = np.array([-1000.0, -100.0, -30.0, 30.0, 100.0, 1000.0], np.float32)
    t = torch.tensor(big, requires_grad=True)
    for op, top in ((ops.logsigmoid, F.logsigmoid), (ops.mish, F.mish), (ops.silu, F.silu),
                    (ops.softplus, F.softplus), (ops.selu, F.selu), (ops.elu, F.elu)):
        with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow is fine
            out = op(Tensor(big))
            g = engine.grad(lambda a, op=op: op(a).sum())(Tensor(big))
        tout = top(t)
        np.testing.assert_allclose(out.asnumpy(), tout.detach().numpy(), rtol=RTOL, atol=ATOL)
        (tg,) = torch.autograd.grad(tout.sum(), t)
        np.testing.assert_allclose(g.asnumpy(), tg.numpy(), rtol=RTOL, atol=ATOL)
        assert np.all(np.isfinite(out.asnumpy())) and np.all(np.isfinite(g.asnumpy()))


def test_ops_take_both_mindspore_spellings():
    x = Tensor(_input((2, 4)))
    np.testing.assert_array_equal(ops.silu(x=x).asnumpy(), ops.silu(input=x).asnumpy())
    np.testing.assert_array_equal(ops.glu(input=x, dim=0).asnumpy(), ops.glu(x, axis=0).asnumpy())
    np.testing.assert_array_equal(ops.elu(input=x).asnumpy(), ops.elu(input_x=x).asnumpy())
    np.testing.assert_array_equal(ops.hardtanh(x=x, min_val=0.0).asnumpy(),
                                  ops.hardtanh(x, 0.0).asnumpy())
    with pytest.raises(TypeError, match="no_such_keyword"):
        ops.mish(x, no_such_keyword=1)
    with pytest.raises(ValueError, match="2 slopes need an input with 2 channels"):
        ops.prelu(x, Tensor(np.ones(2, np.float32)))


def test_mindspore_defaults_and_annotations():
    def defaults(cls):
        return {k: v.default for k, v in inspect.signature(cls).parameters.items()}

    assert defaults(nn.ELU) == {"alpha": 1.0}
    assert defaults(nn.CELU) == {"alpha": 1.0}
    assert defaults(nn.Hardtanh) == {"min_val": -1.0, "max_val": 1.0}
    assert defaults(nn.Softmin) == {"axis": -1} and defaults(nn.GLU) == {"axis": -1}
    for cls in (nn.SeLU, nn.Softsign, nn.SiLU, nn.Mish, nn.HSwish, nn.HSigmoid, nn.ReLU6,
                nn.LogSigmoid):
        assert defaults(cls) == {}
    for cls in (nn.ELU, nn.CELU, nn.PReLU, nn.Hardtanh, nn.Softmin, nn.GLU):
        for name, param in inspect.signature(cls).parameters.items():
            assert param.annotation is not inspect.Parameter.empty, f"{cls.__name__}.{name}"
    assert "alpha=0.5" in repr(nn.ELU(0.5)) and "channel=3" in repr(nn.PReLU(3))
    assert "min_val=-2.0, max_val=2.0" in repr(nn.Hardtanh(-2, 2))
    assert nn.SeLU.alpha == pytest.approx(1.6732632) and nn.SeLU.scale == pytest.approx(1.0507010)
