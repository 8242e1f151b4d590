"""NLLLoss, SmoothL1Loss, HuberLoss, KLDivLoss, BCELoss: PyTorch oracle, gradcheck, errors."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import engine
from engine import Tensor, nn, ops
from engine.autograd import enable_grad, leaf_node
from engine.gradcheck import gradcheck
from engine.tensor import wrap

RTOL, ATOL = 1e-4, 1e-5
W4 = np.array([0.2, 1.0, 2.5, 0.7])


@dataclass
class Case:
    """One loss configuration: the engine Cell and the same loss written with torch."""

    id: str
    ours: object  # reduction -> engine loss Cell
    theirs: object  # (reduction, x, y) -> torch loss (x, y torch tensors)
    inputs: object  # RandomState -> (x, y) arrays
    label_grad: bool = False  # the labels are floating and differentiable
    reductions: tuple = ("mean", "sum", "none")


def _log_probs(shape):
    def make(rs):
        x = rs.randn(*shape)
        return x - np.log(np.exp(x).sum(axis=1 if len(shape) > 1 else 0, keepdims=True))

    return make


def _nll_case(id_, shape, labels, **kw):
    weight = kw.get("weight")
    smoothing = kw.pop("label_smoothing", 0.0)
    ignore = kw.get("ignore_index", -100)

    def theirs(r, x, y):
        tw = None if weight is None else torch.tensor(weight, dtype=x.dtype)
        loss = F.nll_loss(x, y.long(), weight=tw, ignore_index=ignore, reduction=r)
        if not smoothing:
            return loss
        # MindSpore's smoothing: eps/C times the unweighted -sum of the log-probabilities,
        # zero for ignored labels, averaged over every label for 'mean'.
        classes = x.shape[0] if x.dim() == 1 else x.shape[1]
        smooth = -(x.sum(dim=0 if x.dim() == 1 else 1)) * (y != ignore)
        smooth = {"none": smooth, "sum": smooth.sum(), "mean": smooth.mean()}[r]
        return (1 - smoothing) * loss + smoothing / classes * smooth

    def ours(r):
        if smoothing:
            return lambda x, y: ops.nll_loss(x, y, None if weight is None else Tensor(weight),
                                             ignore, r, smoothing)
        return nn.NLLLoss(**{k: Tensor(v) if k == "weight" else v for k, v in kw.items()},
                          reduction=r)

    return Case(id_, ours, theirs, lambda rs: (_log_probs(shape)(rs), labels(rs)))


def _indices(shape, classes, dtype=np.int64):
    return lambda rs: rs.randint(0, classes, shape).astype(dtype)


def _pair(shape, label_shape=None):
    return lambda rs: (rs.randn(*shape) * 2, rs.randn(*(label_shape or shape)) * 2)


def _probs(shape, floor=0.05):
    def make(rs):
        p = rs.rand(*shape) + floor
        return p / p.sum(axis=-1, keepdims=True)

    return make


CASES = [
    _nll_case("nll", (6, 4), _indices(6, 4)),
    _nll_case("nll-int32", (6, 4), _indices(6, 4, np.int32)),
    _nll_case("nll-weight", (6, 4), _indices(6, 4), weight=W4),
    _nll_case("nll-weight-ignore", (8, 4), _indices(8, 4), weight=W4, ignore_index=2),
    _nll_case("nll-ignore-default", (6, 4), lambda rs: np.array([0, -100, 3, 1, -100, 2])),
    _nll_case("nll-spatial", (2, 4, 3, 2), _indices((2, 3, 2), 4), weight=W4),
    _nll_case("nll-unbatched", (4,), lambda rs: np.array(2)),
    _nll_case("nll-smoothing", (6, 4), _indices(6, 4), label_smoothing=0.2),
    _nll_case("nll-smoothing-weight-ignore", (8, 4), _indices(8, 4), weight=W4,
              ignore_index=1, label_smoothing=0.3),
    _nll_case("nll-smoothing-spatial", (2, 4, 3), _indices((2, 3), 4), label_smoothing=0.1),
    Case("smooth-l1", lambda r: nn.SmoothL1Loss(reduction=r),
         lambda r, x, y: F.smooth_l1_loss(x, y, reduction=r), _pair((5, 3)), True),
    Case("smooth-l1-beta", lambda r: nn.SmoothL1Loss(beta=0.4, reduction=r),
         lambda r, x, y: F.smooth_l1_loss(x, y, reduction=r, beta=0.4), _pair((5, 3)), True),
    Case("smooth-l1-beta-wide", lambda r: nn.SmoothL1Loss(2.5, r),
         lambda r, x, y: F.smooth_l1_loss(x, y, reduction=r, beta=2.5), _pair((2, 3, 2)), True),
    Case("huber", lambda r: nn.HuberLoss(r),
         lambda r, x, y: F.huber_loss(x, y, reduction=r), _pair((5, 3)), True),
    Case("huber-delta", lambda r: nn.HuberLoss(r, delta=0.6),
         lambda r, x, y: F.huber_loss(x, y, reduction=r, delta=0.6), _pair((5, 3)), True),
    Case("huber-broadcast", lambda r: nn.HuberLoss(reduction=r, delta=1.7),
         lambda r, x, y: F.huber_loss(x, y.expand(x.shape), reduction=r, delta=1.7),
         _pair((4, 3), (3,)), True),
    Case("kl-div", lambda r: nn.KLDivLoss(r),
         lambda r, x, y: F.kl_div(x, y, reduction=r),
         lambda rs: (_log_probs((4, 5))(rs), _probs((4, 5))(rs)), True,
         ("mean", "batchmean", "sum", "none")),
    Case("kl-div-3d", lambda r: nn.KLDivLoss(r),
         lambda r, x, y: F.kl_div(x, y, reduction=r),
         lambda rs: (rs.randn(2, 3, 4), _probs((2, 3, 4))(rs)), True,
         ("mean", "batchmean", "sum", "none")),
    Case("bce", lambda r: nn.BCELoss(reduction=r),
         lambda r, x, y: F.binary_cross_entropy(x, y, reduction=r),
         lambda rs: (rs.uniform(0.05, 0.95, (5, 3)), rs.rand(5, 3)), True),
    Case("bce-weight", lambda r: nn.BCELoss(Tensor(np.array([0.5, 1.0, 2.0])), r),
         lambda r, x, y: F.binary_cross_entropy(
             x, y, weight=torch.tensor([0.5, 1.0, 2.0], dtype=x.dtype), reduction=r),
         lambda rs: (rs.uniform(0.05, 0.95, (5, 3)), (rs.rand(5, 3) > 0.5) * 1.0), True),
]
CASE_REDUCTIONS = [(c, r) for c in CASES for r in c.reductions]


def _inputs(case, seed=0, dtype=np.float64):
    x, y = case.inputs(np.random.RandomState(seed))
    y = np.asarray(y)
    return x.astype(dtype), (y.astype(dtype) if y.dtype.kind == "f" else y)


def _torch(case, reduction, x, y):
    tx = torch.tensor(x, requires_grad=True)
    ty = torch.tensor(y, requires_grad=case.label_grad)
    out = case.theirs(reduction, tx, ty)
    cot = torch.tensor(np.asarray(np.random.RandomState(7).randn(*out.shape), x.dtype))
    (out * cot).sum().backward()
    return out.detach().numpy(), cot.numpy(), tx.grad.numpy(), \
        ty.grad.numpy() if case.label_grad else None  # fmt: skip


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides:UserWarning")  # torch's kl_div
@pytest.mark.parametrize("case, reduction", CASE_REDUCTIONS,
                         ids=[f"{c.id}-{r}" for c, r in CASE_REDUCTIONS])
def test_forward_and_gradients_match_pytorch_in_float32(case, reduction):
    x, y = _inputs(case, dtype=np.float32)
    expected, cot, gx_t, gy_t = _torch(case, reduction, x, y)
    loss = case.ours(reduction)
    out = loss(Tensor(x), Tensor(y))
    assert out.shape == expected.shape and out.dtype == engine.float32
    np.testing.assert_allclose(out.asnumpy(), expected, rtol=RTOL, atol=ATOL)
    positions = (0, 1) if case.label_grad else 0
    grads = engine.grad(lambda a, b: (loss(a, b) * Tensor(cot)).sum(), positions)(
        Tensor(x), Tensor(y))
    gx = grads[0] if case.label_grad else grads
    assert gx.dtype == engine.float32
    np.testing.assert_allclose(gx.asnumpy(), gx_t, rtol=RTOL, atol=ATOL)
    if case.label_grad:
        np.testing.assert_allclose(grads[1].asnumpy(), gy_t, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("case, reduction", CASE_REDUCTIONS,
                         ids=[f"{c.id}-{r}" for c, r in CASE_REDUCTIONS])
def test_gradcheck_float64(case, reduction):
    x, y = _inputs(case, seed=3)
    gradcheck(case.ours(reduction), [Tensor(x), Tensor(y)], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", [c for c in CASES if not c.id.startswith("nll-smoothing")],
                         ids=lambda c: c.id)
def test_each_loss_is_one_tape_node(case):
    x, y = _inputs(case)
    xt = wrap(x, leaf_node("logits"))
    with enable_grad():
        out = case.ours("mean")(xt, Tensor(y))
    assert out._node.parents[0] == (xt._node, 0)


def test_mindspore_defaults_and_documented_values():
    assert inspect.signature(nn.NLLLoss).parameters["ignore_index"].default == -100
    assert [(n, p.default) for n, p in inspect.signature(nn.SmoothL1Loss).parameters.items()] \
        == [("beta", 1.0), ("reduction", "none")]  # fmt: skip
    assert [(n, p.default) for n, p in inspect.signature(nn.HuberLoss).parameters.items()] \
        == [("reduction", "mean"), ("delta", 1.0)]  # fmt: skip
    assert nn.KLDivLoss().reduction == "mean" and nn.BCELoss().reduction == "mean"
    f32 = np.float32
    # The values MindSpore's API pages print for these calls.
    a, b = Tensor(np.array([1, 2, 3], f32)), Tensor(np.array([1, 2, 2], f32))
    np.testing.assert_allclose(nn.SmoothL1Loss()(a, b).asnumpy(), [0, 0, 0.5])
    assert nn.HuberLoss()(a, b).asnumpy() == pytest.approx(0.16666667)
    kl = nn.KLDivLoss("mean")(Tensor(np.array([0.2, 0.7, 0.1], f32)),
                              Tensor(np.array([0.0, 1.0, 0.0], f32)))
    assert kl.asnumpy() == pytest.approx(-0.23333333)
    weight = Tensor(np.array([[1.0, 2.0, 3.0], [4.0, 3.3, 2.2]], f32))
    bce = nn.BCELoss(weight=weight, reduction="mean")(
        Tensor(np.array([[0.1, 0.2, 0.3], [0.5, 0.7, 0.9]], f32)),
        Tensor(np.array([[0, 1, 0], [0, 0, 1]], f32)))
    assert bce.asnumpy() == pytest.approx(1.8952923)


def test_the_functional_ops_match_the_cells():
    rs = np.random.RandomState(5)
    x, y = Tensor(rs.randn(4, 3)), Tensor(rs.randn(4, 3))
    p, q = Tensor(rs.uniform(0.1, 0.9, (4, 3))), Tensor(rs.rand(4, 3))
    logp = Tensor(_log_probs((4, 3))(rs))
    labels = Tensor(np.array([0, 2, 1, 2]))
    pairs = [
        (ops.nll_loss(logp, labels, reduction="sum"), nn.NLLLoss(reduction="sum")(logp, labels)),
        (ops.smooth_l1_loss(x, y, 0.5), nn.SmoothL1Loss(0.5)(x, y)),
        (ops.smooth_l1_loss(logits=x, labels=y, reduction="sum"),
         nn.SmoothL1Loss(reduction="sum")(x, y)),
        (ops.huber_loss(x, y, "sum", 2.0), nn.HuberLoss("sum", 2.0)(x, y)),
        (ops.kl_div(logp, q, "batchmean"), nn.KLDivLoss("batchmean")(logp, q)),
        (ops.binary_cross_entropy(p, q, None, "none"), nn.BCELoss(None, "none")(p, q)),
    ]
    for functional, cell in pairs:
        np.testing.assert_array_equal(functional.asnumpy(), cell.asnumpy())


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides:UserWarning")
def test_zero_labels_add_nothing_to_the_kl_divergence():
    x = _log_probs((3, 4))(np.random.RandomState(1))
    y = np.array([[0.0, 1.0, 0.0, 0.0], [0.5, 0.0, 0.5, 0.0], [0.1, 0.2, 0.3, 0.4]])
    for reduction in ("mean", "batchmean", "sum", "none"):
        tx = torch.tensor(x, requires_grad=True)
        theirs = F.kl_div(tx, torch.tensor(y), reduction=reduction)
        theirs.sum().backward()
        ours, g = engine.value_and_grad(lambda a, r=reduction: nn.KLDivLoss(r)(a, Tensor(y))
                                        .sum())(Tensor(x))
        np.testing.assert_allclose(ours.asnumpy(), theirs.sum().item(), rtol=1e-12)
        np.testing.assert_allclose(g.asnumpy(), tx.grad.numpy(), rtol=1e-12)


def test_bce_of_certain_predictions_is_capped_as_pytorch():
    x = np.array([0.0, 1.0, 0.0, 1.0, 0.3])
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0])
    tx = torch.tensor(x, requires_grad=True)
    theirs = F.binary_cross_entropy(tx, torch.tensor(y), reduction="none")
    theirs.sum().backward()
    ours = nn.BCELoss(reduction="none")(Tensor(x), Tensor(y))
    g = engine.grad(lambda a: nn.BCELoss(reduction="sum")(a, Tensor(y)))(Tensor(x))
    np.testing.assert_allclose(ours.asnumpy(), theirs.detach().numpy(), rtol=1e-12)
    assert ours.asnumpy()[0] == 100.0
    # Both divide by at least 1e-12 there (torch's constant is 1e-12 rounded to float32).
    np.testing.assert_allclose(g.asnumpy(), tx.grad.numpy(), rtol=1e-8)


def test_bce_passes_nan_through_for_the_trainer_to_report():
    out = nn.BCELoss()(Tensor(np.array([0.5, np.nan])), Tensor(np.array([1.0, 0.0])))
    assert np.isnan(out.asnumpy())


def test_every_label_ignored_gives_nan_as_pytorch():
    x, y = np.zeros((2, 3)), np.array([-100, -100])
    assert np.isnan(nn.NLLLoss()(Tensor(x), Tensor(y)).asnumpy())
    assert np.isnan(F.nll_loss(torch.tensor(x), torch.tensor(y)).item())
    g = engine.grad(lambda a: nn.NLLLoss()(a, Tensor(y)))(Tensor(x))
    assert np.all(g.asnumpy() == 0)


class WeightedMSE(nn.LossBase):
    """MindSpore's way to weight each output: LossBase.get_loss(x, weights)."""

    def __init__(self, weights, reduction="mean"):
        super().__init__(reduction)
        self.weights = weights

    def construct(self, logits, labels):
        return self.get_loss(ops.square(logits - labels), self.weights)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_per_output_weights_through_get_loss(reduction):
    rs = np.random.RandomState(4)
    x, y = rs.randn(5, 3).astype(np.float32), rs.randn(5, 3).astype(np.float32)
    w = np.array([0.5, 2.0, 1.0], np.float32)
    loss = WeightedMSE(Tensor(w), reduction)
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    theirs = (tx - ty) ** 2 * torch.tensor(w)
    theirs = {"mean": theirs.mean(), "sum": theirs.sum(), "none": theirs}[reduction]
    theirs.sum().backward()
    value, (gx, gy) = engine.value_and_grad(lambda a, b: loss(a, b).sum(), (0, 1))(
        Tensor(x), Tensor(y))
    assert value.dtype == engine.float32
    np.testing.assert_allclose(value.asnumpy(), theirs.sum().item(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(gx.asnumpy(), tx.grad.numpy(), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(gy.asnumpy(), ty.grad.numpy(), rtol=RTOL, atol=ATOL)
    gradcheck(WeightedMSE(Tensor(w.astype(np.float64)), reduction),
              [Tensor(x.astype(np.float64)), Tensor(y.astype(np.float64))])
    assert "weights" not in inspect.signature(nn.MSELoss).parameters  # as MindSpore 2.x


# ----------------------------------------------------------------------------- clear errors


def test_bad_arguments_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="beta must be greater than 0, got 0"):
        nn.SmoothL1Loss(beta=0)
    with pytest.raises(ValueError, match="delta must be greater than 0, got -1"):
        nn.HuberLoss(delta=-1)
    with pytest.raises(TypeError, match="delta must be a number"):
        nn.HuberLoss(delta="1")
    with pytest.raises(ValueError, match="'mean', 'batchmean', 'sum' or 'none'"):
        nn.KLDivLoss("average")
    with pytest.raises(ValueError, match="reduction"):
        nn.NLLLoss(reduction="batchmean")
    with pytest.raises(TypeError, match="ignore_index must be an int"):
        nn.NLLLoss(ignore_index=1.5)
    with pytest.raises(ValueError, match="label_smoothing"):
        ops.nll_loss(Tensor(np.zeros((2, 3))), Tensor(np.zeros(2, np.int64)), label_smoothing=2)


def test_bad_inputs_are_refused_naming_both_shapes_or_values():
    x = Tensor(np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match=r"\(4, 3\).*labels of shape \(4,\).*got labels of "
                                         r"shape \(5,\)"):
        nn.NLLLoss()(x, Tensor(np.zeros(5, np.int64)))
    with pytest.raises(TypeError, match="int32 or int64"):
        nn.NLLLoss()(x, Tensor(np.zeros(4, np.float32)))
    with pytest.raises(ValueError, match="class label 3 is out of range for 3 classes"):
        nn.NLLLoss()(x, Tensor(np.array([0, 1, 3, 2])))
    with pytest.raises(ValueError, match=r"weight must have shape \(3,\)"):
        nn.NLLLoss(weight=Tensor(np.ones(4)))(x, Tensor(np.zeros(4, np.int64)))
    with pytest.raises(ValueError, match=r"shape \(4, 3\), got labels of shape \(4, 1\)"):
        nn.SmoothL1Loss()(x, Tensor(np.zeros((4, 1), np.float32)))
    with pytest.raises(ValueError, match="do not broadcast"):
        nn.HuberLoss()(x, Tensor(np.zeros((4, 2), np.float32)))
    with pytest.raises(ValueError, match=r"shape \(4, 3\), got labels of shape \(3,\)"):
        nn.KLDivLoss()(x, Tensor(np.zeros(3, np.float32)))
    with pytest.raises(ValueError, match="batchmean' needs a batch axis"):
        nn.KLDivLoss("batchmean")(Tensor(np.float32(0.5)), Tensor(np.float32(0.5)))
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\].*from -0.5 to 1.5"):
        nn.BCELoss()(Tensor(np.array([[0.5, -0.5, 1.5]])), Tensor(np.zeros((1, 3))))
    with pytest.raises(ValueError, match="does not broadcast"):
        nn.BCELoss(weight=Tensor(np.ones(2)))(Tensor(np.full((4, 3), 0.5)),
                                              Tensor(np.zeros((4, 3))))
    with pytest.raises(TypeError, match="floating-point"):
        nn.SmoothL1Loss()(Tensor(np.zeros((2, 2), np.int64)), Tensor(np.zeros((2, 2))))
