"""The vectorised erf (engine.ops._erf, Cody's rational approximations) against math.erf,
and the exact GELU built on it against torch: forward and gradient, float32 and float64."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from engine import Tensor, ops, value_and_grad
from engine.gradcheck import gradcheck
from engine.ops._erf import erf

_math_erf = np.vectorize(math.erf, otypes=[np.float64])


def _dense_range() -> np.ndarray:
    """Every interval of the approximation and their borders (0.46875, 4, 6), the tails,
    signed zeros and numbers too small to square."""
    borders = np.array([0.46875, 4.0, 6.0])
    near = np.concatenate([borders, np.nextafter(borders, 0), np.nextafter(borders, 10)])
    return np.concatenate([
        np.linspace(-30.0, 30.0, 120_001),
        np.linspace(-1e-3, 1e-3, 2_001),
        np.geomspace(1e-300, 1e-5, 200),
        near, -near, [0.0, -0.0, 5e-324, 1e-170, 26.0, 1e10, 1e300],
    ])


def test_float64_erf_is_math_erf_to_1e_12_relative():
    x = _dense_range()
    want = _math_erf(x)
    got = erf(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    # Odd, with the signs of zero kept.
    np.testing.assert_array_equal(erf(-x), -got)
    assert np.signbit(erf(np.array([-0.0]))[0]) and not np.signbit(erf(np.array([0.0]))[0])


def test_float64_erf_tails_are_exactly_one_and_keep_their_smallness():
    assert erf(np.array([6.0, 26.0, np.inf]))[0] == 1.0
    np.testing.assert_array_equal(erf(np.array([6.0, 26.0, np.inf, -np.inf])), [1, 1, 1, -1])
    # Between 4 and 6, 1 - erf is still resolved in float64: erfc(5) ≈ 1.5e-12.
    x = np.array([4.5, 5.0, 5.5])
    np.testing.assert_allclose(1.0 - erf(x), 1.0 - _math_erf(x), rtol=1e-3, atol=0)
    assert np.all(1.0 - erf(x) > 0)


def test_nan_stays_nan_and_no_warning_is_raised():
    with np.errstate(all="raise"):
        got = erf(np.array([np.nan, np.inf, -np.inf, 1e38, -3.0]))
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], [1.0, -1.0, 1.0, math.erf(-3.0)])


def test_float32_erf_is_within_a_few_ulps_and_stays_float32():
    x = np.linspace(-8.0, 8.0, 200_001, dtype=np.float32)
    want = _math_erf(x.astype(np.float64)).astype(np.float32)
    got = erf(x)
    assert got.dtype == np.float32
    ulps = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32))
    assert np.nanmax(ulps[want != 0]) <= 6
    assert erf(np.float32(0.0)) == 0.0


@pytest.mark.parametrize("x", [np.float64(0.3), np.array(-1.2), np.ones((2, 0)),
                               np.arange(12.0).reshape(3, 4)[:, ::2], np.array([1, 2, 3])])
def test_any_shape_and_integers(x):
    got = erf(x)
    assert got.shape == np.shape(x)
    assert got.dtype == (x.dtype if np.asarray(x).dtype.kind == "f" else np.float64)
    np.testing.assert_allclose(got, _math_erf(np.asarray(x, np.float64)), rtol=1e-12)


def _gelu_pair(x: np.ndarray):
    """(engine output, engine dL/dx, torch output, torch dL/dx) for L = Σ gelu(x)·w."""
    w = np.random.default_rng(1).standard_normal(x.shape).astype(x.dtype)
    step = value_and_grad(lambda t: ops.sum(ops.mul(ops.gelu(t), Tensor(w))), 0)
    _, grad = step(Tensor(x))
    out = ops.gelu(Tensor(x)).asnumpy()
    t = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.gelu(t)
    (want * torch.tensor(w)).sum().backward()
    return out, grad.asnumpy(), want.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_matches_torch_forward_and_gradient(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(4000) * 3, np.linspace(-12, 12, 97),
                        [0.0, -0.0, 0.46875 * 2**0.5, 4 * 2**0.5]]).astype(dtype)
    out, grad, want, want_grad = _gelu_pair(x)
    assert out.dtype == dtype and grad.dtype == dtype
    np.testing.assert_allclose(out, want, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-14)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-14)


def test_gelu_gradcheck_in_float64():
    x = np.random.default_rng(2).standard_normal((4, 6)) * 2.5
    x[0, :3] = [0.0, 0.46875 * 2**0.5, -4 * 2**0.5]  # at the approximation's borders
    gradcheck(lambda t: ops.gelu(t), [Tensor(x)])
