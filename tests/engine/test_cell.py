"""Cell registration, traversal, naming and train/predict mode."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from engine import Parameter, Tensor, nn, ops


class Leaf(nn.Cell):
    def __init__(self, n=2):
        super().__init__()
        self.weight = Parameter(np.ones((n, n), np.float32))
        self.bias = Parameter(np.zeros(n, np.float32))

    def construct(self, x):
        return ops.matmul(x, self.weight) + self.bias


class Tree(nn.Cell):
    def __init__(self):
        super().__init__()
        self.layer1 = Leaf()
        self.layer2 = Leaf()
        self.shared = self.layer1  # the same Cell twice: traversed once
        self.scale = Parameter(np.array(2.0, np.float32))

    def construct(self, x):
        return self.layer2(self.layer1(x)) * self.scale


def test_dotted_parameter_names_and_order():
    net = Tree()
    names = [n for n, _ in net.parameters_and_names()]
    assert names == ["scale", "layer1.weight", "layer1.bias", "layer2.weight", "layer2.bias"]
    assert [p.name for p in net.trainable_params()] == names
    assert list(net.parameters_dict()) == names
    assert net.layer1.weight.name == "layer1.weight"


def test_cells_and_names_and_name_cells():
    net = Tree()
    assert [n for n, _ in net.cells_and_names()] == ["", "layer1", "layer2"]
    assert list(net.name_cells()) == ["layer1", "layer2", "shared"]


def test_get_parameters_is_a_generator_and_shared_params_once():
    net = Tree()
    net.layer2.weight = net.layer1.weight
    gen = net.get_parameters()
    assert type(gen).__name__ == "generator"
    params = list(gen)
    assert len(params) == 4
    assert len({id(p) for p in params}) == 4


def test_set_train_propagates_and_new_cell_predicts():
    net = Tree()
    assert net.phase == "predict" and not net.layer1.training
    assert net.set_train() is net
    assert net.phase == "train" and net.layer2.training
    net.set_train(False)
    assert net.layer1.phase == "predict"


def test_forgetting_super_init_is_explained():
    class Bad(nn.Cell):
        def __init__(self):
            self.w = Parameter(np.ones(2, np.float32))

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Bad()


def test_call_runs_construct_and_grad_through_tree():
    net = Tree()
    x = Tensor(np.ones((1, 2), np.float32))
    out = net(x)
    np.testing.assert_allclose(out.asnumpy(), [[8.0, 8.0]])
    grads = engine.grad(net, None, net.trainable_params())(x)
    assert len(grads) == 5
    assert grads[0].asnumpy() == 8.0  # d/dscale = sum of the inner output [[4, 4]]


def test_repr_lists_children():
    text = repr(Tree())
    assert "(layer1): Leaf<>" in text and text.startswith("Tree<")


def test_parameters_dict_is_keyed_by_name_even_without_auto_prefix():
    net = nn.SequentialCell(nn.Dense(2, 3))
    wrapped = nn.WithLossCell(net, nn.MSELoss())
    assert list(wrapped.parameters_dict()) == ["0.weight", "0.bias"]
    assert [p.name for p in wrapped.get_parameters()] == ["0.weight", "0.bias"]
