"""Parameter and ParameterTuple, as the seeds show them."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import Parameter, ParameterTuple, Tensor, ops


def test_repr_and_defaults():
    p = Parameter(Tensor(np.zeros((5, 3)), engine.float32), name="w")
    assert repr(p) == "Parameter (name=w, shape=(5, 3), dtype=Float32, requires_grad=True)"
    assert Parameter(2.0, name="z").dtype == engine.float32
    assert Parameter(2.0, name="z").shape == ()


def test_set_data_keeps_dtype_and_shape():
    p = Parameter(Tensor(np.zeros(3), engine.float32), name="b")
    p.set_data(Tensor([3, 4, 5]))
    assert p.dtype == engine.float32
    assert p.asnumpy().tolist() == [3.0, 4.0, 5.0]
    with pytest.raises(ValueError, match=r"'b' has shape \(3,\); set_data got shape \(4,\)"):
        p.set_data(Tensor([1.0, 2.0, 3.0, 4.0]))
    assert p.asnumpy().tolist() == [3.0, 4.0, 5.0]


def test_in_place_index_and_assign():
    p = Parameter(Tensor(np.zeros(3), engine.float32), name="b")
    p[0] = 1.0
    assert p.asnumpy().tolist() == [1.0, 0.0, 0.0]
    ops.assign(p, Tensor([7, 8, 9]))
    assert p.asnumpy().tolist() == [7.0, 8.0, 9.0]
    with pytest.raises(ValueError, match="does not fit"):
        ops.assign(p, Tensor([1.0, 2.0]))


def test_clone_and_tuple_clone():
    x = Parameter(Tensor(np.arange(6).reshape(2, 3)), name="x")
    y = Parameter(np.ones((1, 2, 3), np.float32), name="y", requires_grad=False)
    c = x.clone()
    assert c is not x and c.name == "x" and (c.asnumpy() == x.asnumpy()).all()
    c[0, 0] = 100
    assert x.asnumpy()[0, 0] == 0
    t = ParameterTuple((x, y))
    copy = t.clone("params_copy")
    assert [p.name for p in copy] == ["params_copy.x", "params_copy.y"]
    assert copy[1].requires_grad is False
    assert str(t) == ("(Parameter (name=x, shape=(2, 3), dtype=Int64, requires_grad=True), "
                      "Parameter (name=y, shape=(1, 2, 3), dtype=Float32, requires_grad=False))")
    with pytest.raises(TypeError):
        ParameterTuple([x, 3])


def test_requires_grad_toggle_excludes_from_trainable():
    class Net(engine.nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.ones(2, np.float32))
            self.v = Parameter(np.ones(2, np.float32))

    net = Net()
    net.v.requires_grad = False
    assert [p.name for p in net.trainable_params()] == ["w"]
    assert [p.name for p in net.untrainable_params()] == ["v"]
