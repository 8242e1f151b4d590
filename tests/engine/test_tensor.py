"""Tensor construction, dtypes, reprs, indexing and operators."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import Tensor, ops


def test_python_scalar_defaults():
    assert Tensor(1.5).dtype == engine.float32
    assert Tensor(3).dtype == engine.int64
    assert Tensor(True).dtype == engine.bool_
    assert Tensor([1.0, 2.0]).dtype == engine.float32
    assert Tensor([1, 2]).dtype == engine.int64
    assert Tensor(np.zeros(2, dtype=np.float64)).dtype == engine.float64
    assert Tensor(1, engine.float32).dtype == engine.float32


def test_dtype_names_print_like_mindspore():
    assert [str(d) for d in (engine.float16, engine.float32, engine.float64, engine.int32,
                             engine.int64, engine.bool_)] == [
        "Float16", "Float32", "Float64", "Int32", "Int64", "Bool"]
    assert engine.float32 == np.float32


def test_repr_and_str():
    t = Tensor([0.1, 0.2, 0.3], engine.float32)
    assert repr(t) == ("Tensor(shape=[3], dtype=Float32, value= [ 1.00000001e-01,  "
                       "2.00000003e-01,  3.00000012e-01])")
    assert repr(Tensor(2, engine.float32)) == "Tensor(shape=[], dtype=Float32, value= 2)"
    assert repr(Tensor([1, 2])) == "Tensor(shape=[2], dtype=Int64, value= [1, 2])"
    assert str(t) == str(t.asnumpy())
    r = repr(Tensor(np.ones((1, 2, 1, 1), np.float32)))
    assert r.startswith("Tensor(shape=[1, 2, 1, 1], dtype=Float32, value=\n[[[[ 1.00000000e+00]],")
    assert "\n\n" not in r


def test_arithmetic_broadcasting_and_scalars():
    a = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    np.testing.assert_allclose((a + b).asnumpy(), a.asnumpy() + b.asnumpy())
    np.testing.assert_allclose((2 - a).asnumpy(), 2 - a.asnumpy())
    np.testing.assert_allclose((a / 2).asnumpy(), a.asnumpy() / 2)
    assert (a * 2.5).dtype == engine.float32
    assert (Tensor([1, 2]) * 2.5).dtype == engine.float32
    assert (a @ b).shape == (2,)
    assert (-a).asnumpy()[1, 1] == -4
    assert (a ** 2).asnumpy()[1, 2] == 25


def test_comparisons_return_bool_tensors():
    a = Tensor([1.0, 2.0, 3.0])
    assert (a > 1.5).asnumpy().tolist() == [False, True, True]
    assert (a == 2.0).dtype == engine.bool_
    assert ops.gt(a, 2.0).asnumpy().tolist() == [False, False, True]
    assert (a == None) is False  # noqa: E711


def test_indexing_and_setitem():
    a = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    assert a[1].shape == (4,)
    assert a[1:, ::2].asnumpy().tolist() == [[4, 6], [8, 10]]
    a[0] = 7.0
    assert a.asnumpy()[0].tolist() == [7, 7, 7, 7]
    a[a > 10] = 0.0
    assert a.asnumpy()[2, 3] == 0


def test_reductions_and_reshape():
    a = Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert a.sum().asnumpy() == 15
    assert a.mean(axis=0).asnumpy().tolist() == [1.5, 2.5, 3.5]
    assert a.max().asnumpy() == 5
    assert a.reshape(3, 2).shape == (3, 2)
    assert a.transpose().shape == (3, 2)
    assert a.T.shape == (3, 2)
    assert a.astype(engine.int32).dtype == engine.int32
    values, indices = ops.max(a, axis=1)
    assert values.asnumpy().tolist() == [2, 5] and indices.asnumpy().tolist() == [2, 2]


def test_matmul_shape_mismatch_is_clear():
    with pytest.raises(ValueError, match=r"matmul shape mismatch: \(2, 3\) @ \(4, 5\)"):
        ops.matmul(Tensor(np.ones((2, 3))), Tensor(np.ones((4, 5))))


def test_bad_data_is_refused():
    with pytest.raises(TypeError):
        Tensor(object())
    with pytest.raises(ValueError, match="cannot reshape"):
        Tensor(np.ones(6)).reshape(4, 2)


def test_seeded_randomness_is_repeatable():
    engine.set_seed(5)
    a = ops.Dropout2D(0.5)(Tensor(np.ones((2, 8, 1, 1), np.float32)))[1].asnumpy()
    engine.set_seed(5)
    b = ops.Dropout2D(0.5)(Tensor(np.ones((2, 8, 1, 1), np.float32)))[1].asnumpy()
    assert (a == b).all()
