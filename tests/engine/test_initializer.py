"""Initializers: distributions and fans as MindSpore defines them, names, seeding, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine import Tensor
from engine.common.initializer import (
    Constant,
    HeNormal,
    HeUniform,
    Initializer,
    Normal,
    One,
    TruncatedNormal,
    Uniform,
    XavierNormal,
    XavierUniform,
    Zero,
    initializer,
)

DENSE = (400, 300)  # (out, in): fan_in 300, fan_out 400
CONV = (64, 16, 5, 5)  # (out, in/g, kh, kw): fan_in 400, fan_out 1600


def _values(init, shape):
    engine.set_seed(0)
    return initializer(init, shape).asnumpy().astype(np.float64)


@pytest.mark.parametrize(
    "init, shape, bound",
    [
        (Uniform(0.2), DENSE, 0.2),
        (XavierUniform(), DENSE, math.sqrt(6 / 700)),
        (XavierUniform(gain=2), CONV, 2 * math.sqrt(6 / 2000)),
        (HeUniform(), DENSE, math.sqrt(2) * math.sqrt(3 / 300)),  # leaky_relu slope 0 = relu
        (HeUniform(math.sqrt(5)), DENSE, 1 / math.sqrt(300)),  # the Dense/Conv2d default
        (HeUniform(mode="fan_out", nonlinearity="relu"), CONV, math.sqrt(2 * 3 / 1600)),
    ],
)
def test_uniform_family_bounds_and_spread(init, shape, bound):
    v = _values(init, shape)
    assert v.min() >= -bound and v.max() <= bound
    assert v.max() > 0.98 * bound and v.min() < -0.98 * bound
    assert abs(v.std() - bound / math.sqrt(3)) < 0.02 * bound


@pytest.mark.parametrize(
    "init, shape, mean, std",
    [
        (Normal(), DENSE, 0.0, 0.01),
        (Normal(sigma=0.5, mean=2.0), DENSE, 2.0, 0.5),
        (XavierNormal(), CONV, 0.0, math.sqrt(2 / 2000)),
        (HeNormal(nonlinearity="relu"), CONV, 0.0, math.sqrt(2 / 400)),
        (HeNormal(negative_slope=0.1, mode="fan_out"), DENSE, 0.0,
         math.sqrt(2 / 1.01) / math.sqrt(400)),
    ],
)
def test_normal_family_statistics(init, shape, mean, std):
    v = _values(init, shape)
    assert abs(v.mean() - mean) < 0.02 * std + 1e-12
    assert abs(v.std() - std) < 0.02 * std


def test_truncated_normal_stays_within_bounds():
    v = _values(TruncatedNormal(sigma=1.0), DENSE)
    assert v.min() >= -2 and v.max() <= 2
    assert abs(v.std() - 0.88) < 0.02  # std of a standard normal truncated at +-2
    v = _values(TruncatedNormal(sigma=1.0, mean=0.5, a=0.0, b=1.0), DENSE)
    assert v.min() >= 0 and v.max() <= 1 and abs(v.mean() - 0.5) < 0.01
    v = _values(TruncatedNormal(), DENSE)  # bounds are absolute: [-2, 2] cuts nothing at 0.01
    assert abs(v.std() - 0.01) < 0.0002


def test_constants():
    assert (_values(Zero(), (3, 4)) == 0).all()
    assert (_values(One(), (3, 4)) == 1).all()
    assert (_values(Constant(2.5), (3,)) == 2.5).all()
    assert (_values(7, (2, 2)) == 7).all()
    assert (_values(0.5, 3) == 0.5).all()


@pytest.mark.parametrize(
    "name, cls",
    [("zeros", Zero), ("ones", One), ("normal", Normal), ("uniform", Uniform),
     ("xavier_uniform", XavierUniform), ("XavierUniform", XavierUniform),
     ("xavier_normal", XavierNormal), ("he_uniform", HeUniform), ("HeUniform", HeUniform),
     ("he_normal", HeNormal), ("HE_NORMAL", HeNormal), ("truncatednormal", TruncatedNormal),
     ("TruncatedNormal", TruncatedNormal), ("Zero", Zero), ("One", One)],
)
def test_names_match_their_classes(name, cls):
    assert np.array_equal(_values(name, DENSE), _values(cls(), DENSE))


def test_seed_makes_initialisation_repeatable():
    engine.set_seed(11)
    a = initializer("he_uniform", DENSE).asnumpy()
    b = initializer("normal", (10,)).asnumpy()
    engine.set_seed(11)
    np.testing.assert_array_equal(a, initializer("he_uniform", DENSE).asnumpy())
    np.testing.assert_array_equal(b, initializer("normal", (10,)).asnumpy())
    assert not np.array_equal(a, initializer("he_uniform", DENSE).asnumpy())


def test_dtype_and_shape():
    t = initializer("normal", [2, 3])
    assert isinstance(t, Tensor) and t.shape == (2, 3) and t.dtype == engine.float32
    assert initializer("ones", (2,), engine.float64).dtype == engine.float64
    assert initializer(One(), 4, engine.int32).asnumpy().tolist() == [1, 1, 1, 1]


def test_tensor_and_array_inits_are_copied_and_shape_checked():
    src = np.arange(6.0).reshape(2, 3)
    t = initializer(src, (2, 3))
    src[0, 0] = 100
    assert t.asnumpy()[0, 0] == 0 and t.dtype == engine.float32
    assert initializer(Tensor(src), None).shape == (2, 3)
    with pytest.raises(ValueError, match=r"shape \(2, 3\).*\(3, 2\)"):
        initializer(Tensor(src), (3, 2))


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="xavier_uniform") as info:
        initializer("glorot", (2, 2))
    assert "he_normal" in str(info.value) and "'glorot'" in str(info.value)


def test_bad_arguments():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        initializer("xavier_uniform", (5,))
    with pytest.raises(ValueError, match="mode"):
        HeUniform(mode="fan_avg")
    with pytest.raises(ValueError, match="nonlinearity"):
        HeNormal(nonlinearity="swish")
    with pytest.raises(ValueError, match="sigma"):
        Normal(sigma=-1)
    with pytest.raises(TypeError, match="init must be"):
        initializer(object(), (2,))
    with pytest.raises(ValueError, match="needs a shape"):
        initializer("ones")


def test_initializer_fills_an_array_in_place_and_works_with_tensor_init():
    arr = np.zeros((2, 2))
    Constant(3)(arr)
    assert (arr == 3).all()
    assert isinstance(Normal(), Initializer)
    assert Tensor(shape=(2, 3), dtype=engine.float32, init="ones").asnumpy().sum() == 6
