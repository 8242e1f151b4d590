"""Learning-rate lists and schedules: MindSpore's documented example outputs, hand-computed values,
schedules evaluated for many steps at once, optimizers driven by them, and refused arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import engine
from engine import Parameter, Tensor, nn

STEP2 = Tensor(2, engine.int32)


# ----------------------------------------------------------------------------- MindSpore's docs


def test_list_functions_print_the_documented_examples():
    assert nn.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01]) == [
        0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01, 0.01, 0.01]  # fmt: skip
    assert nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1) == [
        0.1, 0.1, 0.09000000000000001, 0.09000000000000001, 0.08100000000000002,
        0.08100000000000002]  # fmt: skip
    assert nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True) == [
        0.1, 0.1, 0.1, 0.1, 0.016529888822158657, 0.016529888822158657]  # fmt: skip
    assert nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, True) == [
        0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333, 0.028571428571428574]
    assert nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2) == [
        0.1, 0.1, 0.05500000000000001, 0.05500000000000001, 0.01, 0.01]  # fmt: skip
    assert nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5) == [
        0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01, 0.01]  # fmt: skip
    assert nn.warmup_lr(0.1, 6, 2, 2) == [0.0, 0.0, 0.05, 0.05, 0.1, 0.1]


@pytest.mark.parametrize(("schedule", "printed"), [
    (nn.ExponentialDecayLR(0.1, 0.9, 4), "0.09486833"),
    (nn.NaturalExpDecayLR(0.1, 0.9, 4, True), "0.1"),
    (nn.InverseDecayLR(0.1, 0.9, 4, True), "0.1"),
    (nn.CosineDecayLR(0.01, 0.1, 4), "0.055"),
    (nn.PolynomialDecayLR(0.1, 0.01, 4, 0.5), "0.07363961"),
    (nn.WarmUpLR(0.1, 2), "0.1"),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Cell) else None)  # fmt: skip
def test_schedules_print_the_documented_examples(schedule, printed):
    result = schedule(STEP2)
    assert isinstance(result, Tensor) and result.dtype == engine.float32 and result.shape == ()
    assert str(result) == printed


# ----------------------------------------------------------------------------- hand-computed


def test_schedules_follow_their_formulas_step_by_step():
    steps = np.arange(12)
    s = Tensor(steps)
    np.testing.assert_allclose(nn.ExponentialDecayLR(0.2, 0.5, 4, True)(s).asnumpy(),
                               0.2 * 0.5 ** np.floor(steps / 4), rtol=1e-6)
    np.testing.assert_allclose(nn.ExponentialDecayLR(0.2, 0.5, 4)(s).asnumpy(),
                               0.2 * 0.5 ** (steps / 4), rtol=1e-6)
    # MindSpore's code decays with the step itself unless is_stair.
    np.testing.assert_allclose(nn.NaturalExpDecayLR(0.2, 0.1, 4)(s).asnumpy(),
                               0.2 * np.exp(-0.1 * steps), rtol=1e-6)
    np.testing.assert_allclose(nn.NaturalExpDecayLR(0.2, 0.1, 4, True)(s).asnumpy(),
                               0.2 * np.exp(-0.1 * 4 * np.floor(steps / 4)), rtol=1e-6)
    np.testing.assert_allclose(nn.InverseDecayLR(0.2, 0.5, 4)(s).asnumpy(),
                               0.2 / (1 + 0.5 * steps / 4), rtol=1e-6)
    # Cosine: max at 0, the middle at decay_steps / 2, held at min from decay_steps on.
    cosine = nn.CosineDecayLR(0.0, 0.4, 8)(s).asnumpy()
    np.testing.assert_allclose(cosine[[0, 4, 8, 11]], [0.4, 0.2, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(cosine[2], 0.2 * (1 + math.cos(math.pi / 4)), rtol=1e-6)
    poly = nn.PolynomialDecayLR(0.3, 0.1, 5, 2.0)(s).asnumpy()
    np.testing.assert_allclose(poly, 0.2 * (1 - np.minimum(steps, 5) / 5) ** 2 + 0.1, rtol=1e-6)
    # update_decay_steps: the span grows to the next multiple of decay_steps.
    grown = nn.PolynomialDecayLR(0.3, 0.1, 5, 1.0, True)(Tensor(np.array([7])))
    np.testing.assert_allclose(grown.asnumpy(), [0.2 * (1 - 7 / 10) + 0.1], rtol=1e-6)
    warm = nn.WarmUpLR(0.3, 4)(s).asnumpy()
    np.testing.assert_allclose(warm, 0.3 * np.minimum(steps, 4) / 4, rtol=1e-6)


def test_cosine_list_is_the_schedule_taken_epoch_by_epoch():
    listed = nn.cosine_decay_lr(0.001, 0.1, 30, 3, 7)
    epochs = np.minimum(np.arange(30) // 3, 7)
    np.testing.assert_allclose(listed, nn.CosineDecayLR(0.001, 0.1, 7)(Tensor(epochs)).asnumpy(),
                               rtol=1e-6)


def test_cosine_schedule_matches_torch_cosine_annealing():
    steps, low, high = 10, 0.01, 0.5
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=high)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps, eta_min=low)
    theirs = []
    for _ in range(steps + 1):
        theirs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    ours = nn.CosineDecayLR(low, high, steps)(Tensor(np.arange(steps + 1))).asnumpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


# ----------------------------------------------------------------------------- optimizers


def _sgd_steps(learning_rate, n=5):
    p = Parameter(np.array([1.0, -2.0]), name="w")
    opt = nn.SGD([p], learning_rate=learning_rate)
    rates = []
    for _ in range(n):
        rates.append(float(opt.get_lr().asnumpy()))
        before = p.asnumpy().copy()
        opt((Tensor(np.array([1.0, 1.0])),))
        np.testing.assert_allclose(before - p.asnumpy(), [rates[-1]] * 2, rtol=1e-6)
    return rates, opt


def test_an_optimizer_calls_its_schedule_with_the_step_count():
    rates, opt = _sgd_steps(nn.WarmUpLR(0.4, 4))
    np.testing.assert_allclose(rates, [0.0, 0.1, 0.2, 0.3, 0.4], rtol=1e-6)
    assert isinstance(opt.learning_rate, nn.WarmUpLR)
    assert "dynamic" in repr(opt)
    state = opt.state_dict()
    assert float(state["learning_rate"]) == pytest.approx(0.4)
    opt.learning_rate = 0.05  # a number replaces the schedule
    assert float(opt.get_lr().asnumpy()) == pytest.approx(0.05)


def test_an_optimizer_takes_a_list_of_rates_one_per_step():
    listed = nn.exponential_decay_lr(0.1, 0.5, 5, 1, 1)
    rates, _ = _sgd_steps(listed)
    np.testing.assert_allclose(rates, listed, rtol=1e-6)


def test_a_schedule_survives_loading_optimizer_state():
    _, opt = _sgd_steps(nn.CosineDecayLR(0.0, 0.1, 4), n=2)
    state = opt.state_dict()
    p = Parameter(np.array([0.0, 0.0]), name="w")
    other = nn.SGD([p], learning_rate=nn.CosineDecayLR(0.0, 0.1, 4))
    other.load_state_dict(state)
    assert isinstance(other.learning_rate, nn.CosineDecayLR)
    assert float(other.get_lr().asnumpy()) == pytest.approx(0.05)  # step 2 of 4


def test_a_rate_set_each_step_as_a_float_is_used():
    p = Parameter(np.array([0.0]), name="w")
    opt = nn.Adam([p], learning_rate=0.1)
    for rate in (0.5, 0.25, 0.0):
        opt.learning_rate = rate
        assert float(opt.get_lr().asnumpy()) == rate
        assert float(opt.learning_rate.asnumpy()) == rate
    with pytest.raises(ValueError, match="finite and >= 0"):
        opt.learning_rate = float("nan")
    with pytest.raises(ValueError, match="finite and >= 0"):
        opt.learning_rate = -1.0


# ----------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("make", "error", "words"), [
    (lambda: nn.ExponentialDecayLR(0.1, 0.9, 0), ValueError, "decay_steps"),
    (lambda: nn.ExponentialDecayLR(-0.1, 0.9, 2), ValueError, "learning_rate"),
    (lambda: nn.ExponentialDecayLR(0.1, 0.9, 2.5), TypeError, "decay_steps"),
    (lambda: nn.InverseDecayLR(0.1, 0.9, 2, is_stair=1), TypeError, "is_stair"),
    (lambda: nn.CosineDecayLR(0.2, 0.1, 4), ValueError, "greater than min_lr"),
    (lambda: nn.CosineDecayLR(-0.1, 0.1, 4), ValueError, "min_lr"),
    (lambda: nn.PolynomialDecayLR(0.1, 0.01, 4, 0.0), ValueError, "power"),
    (lambda: nn.WarmUpLR(0.1, 0), ValueError, "warmup_steps"),
    (lambda: nn.WarmUpLR("0.1", 2), TypeError, "learning_rate"),
    (lambda: nn.piecewise_constant_lr([2, 1], [0.1, 0.2]), ValueError, "milestone"),
    (lambda: nn.piecewise_constant_lr([2], [0.1, 0.2]), ValueError, "one rate per milestone"),
    (lambda: nn.exponential_decay_lr(0.1, 0.9, 0, 1, 1), ValueError, "total_step"),
    (lambda: nn.cosine_decay_lr(0.1, 0.1, 4, 1, 1), ValueError, "greater than min_lr"),
    (lambda: nn.warmup_lr(0.1, 4, 1, 0), ValueError, "warmup_epoch"),
    (lambda: nn.SGD([Parameter(np.zeros(1), name="w")], learning_rate="fast"), TypeError,
     "LearningRateSchedule"),
], ids=lambda v: None)  # fmt: skip
def test_bad_arguments_are_refused_naming_them(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_the_base_class_says_what_is_missing():
    with pytest.raises(NotImplementedError, match="LearningRateSchedule"):
        nn.LearningRateSchedule()(STEP2)
