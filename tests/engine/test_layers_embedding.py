"""Embedding and ops.embedding: forward and the table's gradient against PyTorch (float32)
and finite differences (float64), MindSpore's signature, Parameter and errors."""

from __future__ import annotations

import inspect
import time

import numpy as np
import pytest
import torch

import engine
from engine import Parameter, Tensor, nn, ops
from engine.gradcheck import gradcheck

RS = np.random.default_rng(3)
RTOL, ATOL = 1e-4, 1e-6


def test_signature_defaults_and_parameter_follow_mindspore():
    params = inspect.signature(nn.Embedding).parameters
    assert list(params) == ["vocab_size", "embedding_size", "use_one_hot", "embedding_table",
                            "dtype", "padding_idx"]
    assert params["use_one_hot"].default is False
    assert params["embedding_table"].default == "normal"
    assert params["dtype"].default == engine.float32 and params["padding_idx"].default is None
    cell = nn.Embedding(50, 6)
    assert [name for name, _ in cell.parameters_and_names()] == ["embedding_table"]
    table = cell.embedding_table
    assert table.shape == (50, 6) and table.dtype == engine.float32 and table.requires_grad
    assert 0.005 < float(np.std(table.asnumpy())) < 0.02  # 'normal': sigma 0.01


@pytest.mark.parametrize("padding_idx", [None, 0, 3])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_forward_and_table_gradient_match_torch(padding_idx, dtype):
    cell = nn.Embedding(7, 5, padding_idx=padding_idx)
    cell.embedding_table.set_data(Tensor(RS.standard_normal((7, 5)).astype(np.float32)))
    if padding_idx is not None:  # torch zeroes the padding row at init too: compare from there
        cell.embedding_table._data[padding_idx] = 0
    ids = RS.integers(0, 7, size=(4, 6)).astype(dtype)
    ids[0, :3] = 3  # repeated ids: their gradients add up
    cot = RS.standard_normal((4, 6, 5)).astype(np.float32)
    ref = torch.nn.Embedding(7, 5, padding_idx=padding_idx)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor(cell.embedding_table.asnumpy()))
    tout = ref(torch.tensor(ids.astype(np.int64)))
    tout.backward(torch.tensor(cot))
    out = cell(Tensor(ids))
    assert out.shape == (4, 6, 5) and out.dtype == engine.float32
    np.testing.assert_allclose(out.asnumpy(), tout.detach().numpy(), rtol=RTOL, atol=ATOL)
    (grad,) = engine.grad(lambda x: (cell(x) * Tensor(cot)).sum(), None,
                          cell.trainable_params())(Tensor(ids))
    np.testing.assert_allclose(grad.asnumpy(), ref.weight.grad.numpy(), rtol=RTOL, atol=ATOL)
    if padding_idx is not None:
        assert not grad.asnumpy()[padding_idx].any()


def test_padding_row_starts_at_zero_and_stays_there_while_training():
    cell = nn.Embedding(6, 3, padding_idx=2)
    assert not cell.embedding_table.asnumpy()[2].any() and cell.embedding_table.asnumpy().any()
    optimizer = nn.SGD(cell.trainable_params(), learning_rate=0.5)
    ids = Tensor(np.array([[2, 1, 2], [0, 2, 5]]))
    for _ in range(3):
        _, grads = engine.value_and_grad(lambda x: (cell(x) ** 2).sum() + cell(x).sum(), None,
                                         optimizer.parameters)(ids)
        optimizer(grads)
    table = cell.embedding_table.asnumpy()
    assert not table[2].any() and table[1].any()


def test_gradcheck_float64_on_the_table():
    cell = nn.Embedding(5, 3)  # (the padding row's gradient is zero on purpose: not checked)
    cell.embedding_table = Parameter(RS.standard_normal((5, 3)))
    ids = Tensor(np.array([[0, 1, 4, 4], [3, 3, 1, 2]]))
    gradcheck(lambda x: cell(x) * cell(x), [ids], cell.trainable_params())
    table = Parameter(RS.standard_normal((4, 2)))
    gradcheck(lambda x: ops.embedding(x, table), [Tensor(np.array([3, 0, 3]))], [table])


def test_use_one_hot_gives_the_same_result():
    ids = Tensor(np.array([[1, 0, 3]], np.int32))
    a, b = nn.Embedding(4, 2), nn.Embedding(4, 2, use_one_hot=True)
    b.embedding_table.set_data(a.embedding_table)
    np.testing.assert_array_equal(a(ids).asnumpy(), b(ids).asnumpy())


def test_float_ids_and_ids_outside_the_vocabulary_are_refused_by_name():
    cell = nn.Embedding(10, 4)
    with pytest.raises(TypeError, match="integer token ids.*float32"):
        cell(Tensor(np.ones((2, 3), np.float32)))
    with pytest.raises(ValueError, match=r"token id 10 .*\[0, 10\).*vocab_size 10"):
        cell(Tensor(np.array([[1, 10]])))
    with pytest.raises(ValueError, match="token id -1 "):
        cell(Tensor(np.array([[-1, 3]])))


@pytest.mark.parametrize("args, error, text", [
    ((0, 4), ValueError, "vocab_size must be a positive int"),
    ((4.0, 4), TypeError, "vocab_size must be an int"),
    ((4, 4, "yes"), TypeError, "use_one_hot must be True or False"),
    ((4, 4, False, "normal", engine.float32, 4), ValueError, r"padding_idx must be in \[0, 4\)"),
    ((4, 4, False, "normal", "text"), TypeError, "dtype must be a number type"),
])
def test_bad_arguments_are_refused(args, error, text):
    with pytest.raises(error, match=text):
        nn.Embedding(*args)


def test_gradient_is_one_scatter_not_a_loop_per_id():
    table = Parameter(np.zeros((5000, 64), np.float32))
    ids = Tensor(RS.integers(0, 5000, size=(64, 128)))
    fn = engine.grad(lambda x: ops.embedding(x, table).sum(), None, [table])
    fn(ids)
    start = time.perf_counter()
    (grad,) = fn(ids)
    assert time.perf_counter() - start < 0.5
    np.testing.assert_array_equal(grad.asnumpy().sum(axis=1),
                                  64 * np.bincount(ids.asnumpy().ravel(), minlength=5000))
