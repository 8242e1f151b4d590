"""Losses: forward and gradients against PyTorch, float64 gradcheck, one tape node each, errors."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

import engine
from engine import Tensor, nn
from engine.autograd import enable_grad, leaf_node
from engine.gradcheck import gradcheck
from engine.tensor import wrap

REDUCTIONS = ["mean", "sum", "none"]


@dataclass
class LossCase:
    """One loss configuration: the engine Cell, the same loss in PyTorch, and how to make inputs."""

    id: str
    ours: object  # reduction -> engine loss Cell
    theirs: object  # reduction -> torch loss module
    logits: tuple
    labels: object  # RandomState -> label array
    label_grad: bool = False  # the labels are differentiable (probabilities, regression targets)
    kw: dict = field(default_factory=dict)


def _indices(shape, classes, dtype=np.int64):
    return lambda rs: rs.randint(0, classes, shape).astype(dtype)


def _probs(shape, axis=1):
    def make(rs):
        p = rs.rand(*shape) + 0.1
        return p / p.sum(axis=axis, keepdims=True)

    return make


W4 = np.array([0.2, 1.0, 2.5, 0.7])


def _ce(**kw):
    tkw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    return (lambda r: nn.CrossEntropyLoss(reduction=r, **kw),
            lambda r: torch.nn.CrossEntropyLoss(reduction=r, **tkw))


CASES = [
    LossCase("ce-index", *_ce(), (6, 4), _indices(6, 4)),
    LossCase("ce-index-int32", *_ce(), (6, 4), _indices(6, 4, np.int32)),
    LossCase("ce-smoothing", *_ce(label_smoothing=0.2), (6, 4), _indices(6, 4)),
    LossCase("ce-weight", *_ce(weight=W4), (6, 4), _indices(6, 4)),
    LossCase("ce-weight-smoothing-ignore", *_ce(weight=W4, label_smoothing=0.3, ignore_index=2),
             (8, 4), _indices(8, 4)),
    LossCase("ce-ignore-default", *_ce(), (6, 4),
             lambda rs: np.array([0, -100, 3, 1, -100, 2])),
    LossCase("ce-spatial", *_ce(label_smoothing=0.1), (2, 4, 3, 2), _indices((2, 3, 2), 4)),
    LossCase("ce-unbatched", *_ce(), (4,), lambda rs: np.array(2)),
    LossCase("ce-probs", *_ce(), (6, 4), _probs((6, 4)), label_grad=True),
    LossCase("ce-probs-weight-smoothing", *_ce(weight=W4, label_smoothing=0.25), (6, 4),
             _probs((6, 4)), label_grad=True),
    LossCase("ce-probs-spatial", *_ce(), (2, 4, 3), _probs((2, 4, 3)), label_grad=True),
    LossCase("softmax-ce-dense",
             lambda r: nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction=r),
             lambda r: torch.nn.CrossEntropyLoss(reduction=r), (5, 3), _probs((5, 3)),
             label_grad=True),
    LossCase("softmax-ce-sparse",
             lambda r: nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction=r),
             lambda r: torch.nn.CrossEntropyLoss(reduction=r), (5, 3), _indices(5, 3, np.int32)),
    LossCase("bce", lambda r: nn.BCEWithLogitsLoss(reduction=r),
             lambda r: torch.nn.BCEWithLogitsLoss(reduction=r), (5, 3),
             lambda rs: rs.rand(5, 3), label_grad=True),
    LossCase("bce-weights",
             lambda r: nn.BCEWithLogitsLoss(r, weight=Tensor(np.array([0.5, 1.0, 2.0])),
                                            pos_weight=Tensor(np.array([3.0, 0.5, 1.5]))),
             lambda r: torch.nn.BCEWithLogitsLoss(
                 reduction=r, weight=torch.tensor([0.5, 1.0, 2.0]),
                 pos_weight=torch.tensor([3.0, 0.5, 1.5])),
             (5, 3), lambda rs: (rs.rand(5, 3) > 0.5).astype(np.float64), label_grad=True),
    LossCase("mse", lambda r: nn.MSELoss(r), lambda r: torch.nn.MSELoss(reduction=r), (4, 3),
             lambda rs: rs.randn(4, 3), label_grad=True),
    LossCase("l1", lambda r: nn.L1Loss(r), lambda r: torch.nn.L1Loss(reduction=r), (4, 3),
             lambda rs: rs.randn(4, 3), label_grad=True),
]


def _inputs(case, seed=0):
    rs = np.random.RandomState(seed)
    return rs.randn(*case.logits) * 2, np.asarray(case.labels(rs))


def _torch(case, reduction, x, y):
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.tensor(y, requires_grad=case.label_grad)
    if case.id == "ce-ignore-default" or ty.dtype == torch.int32:
        ty = ty.long()
    out = case.theirs(reduction)(tx, ty)
    cot = torch.tensor(np.random.RandomState(7).randn(*out.shape))
    (out * cot).sum().backward()
    gy = ty.grad.numpy() if case.label_grad else None
    return out.detach().numpy(), cot.numpy(), tx.grad.numpy(), gy


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_forward_and_gradients_match_pytorch(case, reduction):
    x, y = _inputs(case)
    expected, cot, gx_t, gy_t = _torch(case, reduction, x, y)
    loss = case.ours(reduction)
    out = loss(Tensor(x), Tensor(y))
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-10, atol=1e-12)
    positions = (0, 1) if case.label_grad else 0
    grads = engine.grad(lambda a, b: (loss(a, b) * Tensor(cot)).sum(), positions)(
        Tensor(x), Tensor(y))
    gx = grads[0] if case.label_grad else grads
    np.testing.assert_allclose(gx.asnumpy(), gx_t, rtol=1e-9, atol=1e-12)
    if case.label_grad:
        np.testing.assert_allclose(grads[1].asnumpy(), gy_t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradcheck_float64(case, reduction):
    x, y = _inputs(case, seed=3)
    loss = case.ours(reduction)
    gradcheck(loss, [Tensor(x), Tensor(y)], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_float32_in_float32_out(case):
    x, y = _inputs(case)
    y = y.astype(np.float32) if y.dtype.kind == "f" else y
    xt = Tensor(x.astype(np.float32))
    loss = case.ours("mean")
    value, g = engine.value_and_grad(loss)(xt, Tensor(y))
    assert value.dtype == engine.float32 and g.dtype == engine.float32
    assert np.isfinite(value.asnumpy())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_each_loss_is_one_tape_node(case):
    # The training step records every op: a loss must cost exactly one node.
    x, y = _inputs(case)
    xt = wrap(x, leaf_node("logits"))
    with enable_grad():
        out = case.ours("mean")(xt, Tensor(y))
    assert out._node.parents[0] == (xt._node, 0)


def test_int32_and_int64_labels_give_the_same_loss():
    x, y = _inputs(CASES[0])
    a = nn.CrossEntropyLoss()(Tensor(x), Tensor(y.astype(np.int32)))
    b = nn.CrossEntropyLoss()(Tensor(x), Tensor(y.astype(np.int64)))
    assert a.asnumpy() == b.asnumpy()


def test_every_label_ignored_gives_nan_as_pytorch():
    x = np.zeros((2, 3))
    y = np.array([-100, -100])
    ours = nn.CrossEntropyLoss()(Tensor(x), Tensor(y)).asnumpy()
    theirs = torch.nn.CrossEntropyLoss()(torch.tensor(x), torch.tensor(y)).item()
    assert np.isnan(ours) and np.isnan(theirs)
    g = engine.grad(lambda a: nn.CrossEntropyLoss()(a, Tensor(y)))(Tensor(x))
    assert np.all(g.asnumpy() == 0)


@pytest.mark.parametrize("scale", [1e3, 1e4, 1e30])
def test_huge_logits_stay_finite(scale):
    x = np.array([[1.0, -1.0, 0.5], [-2.0, 3.0, 0.0]], dtype=np.float32) * np.float32(scale)
    y = np.array([1, 1])
    value, g = engine.value_and_grad(nn.CrossEntropyLoss())(Tensor(x), Tensor(y))
    assert np.isfinite(value.asnumpy()) and np.all(np.isfinite(g.asnumpy()))
    ref = torch.nn.CrossEntropyLoss()(torch.tensor(x), torch.tensor(y)).item()
    assert value.asnumpy() == pytest.approx(ref, rel=1e-6)
    labels = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], dtype=np.float32)
    bce, gb = engine.value_and_grad(nn.BCEWithLogitsLoss())(Tensor(x), Tensor(labels))
    assert np.isfinite(bce.asnumpy()) and np.all(np.isfinite(gb.asnumpy()))


def test_bce_matches_pytorch_in_both_tails():
    x = np.array([-800.0, -40.0, -1.0, 0.0, 1.0, 40.0, 800.0])
    y = np.array([1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0])
    ours = nn.BCEWithLogitsLoss(reduction="none")(Tensor(x), Tensor(y))
    g = engine.grad(nn.BCEWithLogitsLoss())(Tensor(x), Tensor(y))
    tx = torch.tensor(x, requires_grad=True)
    theirs = torch.nn.BCEWithLogitsLoss(reduction="none")(tx, torch.tensor(y))
    theirs.mean().backward()
    np.testing.assert_allclose(ours.asnumpy(), theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(g.asnumpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)
    # In the tails the gradient keeps its tiny exact value (PyTorch's sigmoid(x) - y rounds one).
    assert g.asnumpy()[1] == pytest.approx(np.exp(-40.0) / (1 + np.exp(-40.0)) / 7, rel=1e-12)
    assert g.asnumpy()[5] == pytest.approx(-np.exp(-40.0) / (1 + np.exp(-40.0)) / 7, rel=1e-12)


def test_mse_and_l1_broadcast_labels():
    x = np.random.RandomState(0).randn(4, 3)
    y = np.array([0.5, -1.0, 2.0])
    for ours, theirs in ((nn.MSELoss(), torch.nn.MSELoss()), (nn.L1Loss(), torch.nn.L1Loss())):
        v = ours(Tensor(x), Tensor(y)).asnumpy()
        ref = theirs(torch.tensor(x), torch.tensor(np.broadcast_to(y, x.shape).copy())).item()
        assert v == pytest.approx(ref, rel=1e-12)
    gradcheck(nn.MSELoss(), [Tensor(x), Tensor(y)])
    gradcheck(nn.L1Loss("sum"), [Tensor(x), Tensor(y)])


def test_get_loss_weights_and_reduces():
    loss = nn.L1Loss()
    x = Tensor(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert loss.get_loss(x).asnumpy() == 2.5
    assert loss.get_loss(x, Tensor(np.array([1.0, 0.0]))).asnumpy() == 1.0
    float32 = Tensor(np.ones((2, 2), np.float32))
    weighted = nn.L1Loss(reduction="none").get_loss(float32, Tensor(np.full((2, 2), 0.5)))
    assert weighted.dtype == float32.dtype  # float64 weights don't widen a float32 loss


# ----------------------------------------------------------------------------- clear errors


def test_label_shape_mismatch_is_reported():
    x = Tensor(np.zeros((32, 10), np.float32))
    with pytest.raises(ValueError, match=r"\(32, 10\).*\(32,\).*got labels of shape \(31,\)"):
        nn.CrossEntropyLoss()(x, Tensor(np.zeros(31, np.int64)))
    with pytest.raises(ValueError, match="sparse=True"):
        nn.SoftmaxCrossEntropyWithLogits()(x, Tensor(np.zeros(32, np.int64)))
    with pytest.raises(ValueError, match=r"shape \(32,\)"):
        nn.SoftmaxCrossEntropyWithLogits(sparse=True)(x, Tensor(np.zeros((32, 10), np.float32)))
    with pytest.raises(ValueError, match="logits' shape"):
        nn.BCEWithLogitsLoss()(x, Tensor(np.zeros((32, 1), np.float32)))
    with pytest.raises(ValueError, match="do not broadcast"):
        nn.MSELoss()(x, Tensor(np.zeros((32, 3), np.float32)))
    with pytest.raises(ValueError, match=r"weight must have shape \(10,\)"):
        nn.CrossEntropyLoss(weight=Tensor(np.ones(3)))(x, Tensor(np.zeros(32, np.int64)))


@pytest.mark.parametrize("bad", [10, -1, 17])
def test_out_of_range_class_labels_are_reported(bad):
    x = Tensor(np.zeros((4, 10), np.float32))
    y = np.array([0, 3, bad, 9], dtype=np.int32)
    with pytest.raises(ValueError, match=rf"class label {bad} is out of range for 10 classes"):
        nn.CrossEntropyLoss()(x, Tensor(y))
    with pytest.raises(ValueError, match=rf"class label {bad} is out of range"):
        nn.SoftmaxCrossEntropyWithLogits(sparse=True)(x, Tensor(y))


def test_float_class_indices_and_bad_arguments_are_refused():
    x = Tensor(np.zeros((4, 3), np.float32))
    with pytest.raises(TypeError, match="int32 or int64"):
        nn.CrossEntropyLoss()(x, Tensor(np.zeros(4, np.float32)))
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss("average")
    with pytest.raises(ValueError, match="label_smoothing"):
        nn.CrossEntropyLoss(label_smoothing=1.5)
    with pytest.raises(TypeError, match="floating-point"):
        nn.CrossEntropyLoss()(Tensor(np.zeros((4, 3), np.int64)), Tensor(np.zeros(4, np.int64)))
