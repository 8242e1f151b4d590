"""The compiled step's rules for convolutions, pools, BatchNorm, Dropout, N-D Dense and
activations (engine.plan_rules_conv, engine.plan_rules_more) train exactly as eager."""

from __future__ import annotations

import glob

import numpy as np
import pytest

import engine
from app.compiler import cells as op_cells
from app.compiler import compile_project
from app.io.project_file import load_project
from engine import _random, nn
from engine.plan import compile_step
from engine.plan_rules import RULES, register_rule
from engine.plan_rules_more import OP_CELL_RULES

EXAMPLES = sorted(glob.glob("resources/examples/*.cwproj"))


@pytest.fixture(autouse=True)
def app_op_rules():
    """The editor's op Cells compiled, as the app registers them; taken away afterwards."""
    added = [getattr(op_cells, name) for name in OP_CELL_RULES
             if getattr(op_cells, name) not in RULES]
    for cell_type in added:
        register_rule(cell_type, OP_CELL_RULES[cell_type.__name__])
    yield
    for cell_type in added:
        RULES.pop(cell_type)


def _small_cnn():
    """SPEC §6: Conv 1->8 3x3, ReLU, MaxPool, Conv 8->16 3x3, ReLU, MaxPool, Dense->10."""
    return nn.SequentialCell(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
                             nn.Conv2d(8, 16, 3), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(),
                             nn.Dense(16 * 7 * 7, 10))


def _bn_dropout_mlp():
    return nn.SequentialCell(nn.Dense(6, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(p=0.3),
                             nn.Dense(32, 16), nn.BatchNorm1d(16, momentum=0.8), nn.ReLU(),
                             nn.Dropout(p=0.5), nn.Dense(16, 3))


def _momentum(ps):
    return nn.Momentum(ps, 0.05, 0.9, weight_decay=1e-4)


def _train(make_net, loss, xs, ys, compiled, train=True, make_opt=_momentum):
    """Every Parameter (moving statistics too) after the steps, the last loss, the next
    draw of the engine's generator and the plan (None for eager), from the same start."""
    _random.set_seed(0)
    net = make_net()
    net.set_train(train)
    opt = make_opt(net.trainable_params())
    _random.set_seed(1)
    plan = None
    if compiled:
        plan = compile_step(net, loss, opt, xs[0], ys[0])
        for x, y in zip(xs, ys, strict=True):
            value = plan.step(x, y)
    else:
        fn = engine.value_and_grad(lambda a, b: loss(net(a), b), None, opt.parameters)
        for x, y in zip(xs, ys, strict=True):
            out, grads = fn(engine.Tensor(x), engine.Tensor(y))
            opt(grads)
            value = float(out.asnumpy())
    weights = {n: p.asnumpy().copy() for n, p in net.parameters_and_names()}
    return weights, value, _random.rng().random(), plan


def _assert_same(eager, compiled):
    assert eager[0].keys() == compiled[0].keys()
    for name, value in eager[0].items():
        np.testing.assert_allclose(compiled[0][name], value, rtol=1e-6, atol=1e-7,
                                   err_msg=name)
    assert compiled[1] == pytest.approx(eager[1], rel=1e-6)
    assert compiled[2] == eager[2]  # the same random draws, as many


def _compare(make_net, loss, xs, ys, **kw):
    eager = _train(make_net, loss, xs, ys, compiled=False, **kw)
    compiled = _train(make_net, loss, xs, ys, compiled=True, **kw)
    _assert_same(eager, compiled)
    return compiled[3]


def _labels(rs, steps, n, classes):
    return rs.randint(0, classes, (steps, n))


def test_small_cnn_compiles_whole_and_equals_eager():
    rs = np.random.RandomState(0)
    xs = rs.randn(100, 64, 1, 28, 28).astype(np.float32)  # SPEC §6: batch 64
    plan = _compare(_small_cnn, nn.CrossEntropyLoss(), xs, _labels(rs, 100, 64, 10))
    assert plan.fallbacks == [] and plan.compiled == 8


def test_batchnorm_dropout_mlp_equals_eager_with_moving_statistics_and_draws():
    rs = np.random.RandomState(2)
    xs = rs.randn(100, 16, 6).astype(np.float32)
    plan = _compare(_bn_dropout_mlp, nn.CrossEntropyLoss(), xs, _labels(rs, 100, 16, 3))
    assert plan.fallbacks == [] and plan.compiled == 9


def test_batchnorm_and_dropout_in_predict_mode_equal_eager():
    rs = np.random.RandomState(3)
    xs = rs.randn(30, 16, 6).astype(np.float32)
    plan = _compare(_bn_dropout_mlp, nn.CrossEntropyLoss(), xs, _labels(rs, 30, 16, 3),
                    train=False)
    assert plan.fallbacks == []


def test_batchnorm2d_and_conv_variants_equal_eager():
    def make():
        return nn.SequentialCell(
            nn.Conv2d(2, 6, 3, stride=2, pad_mode="pad", padding=1, has_bias=True),
            nn.BatchNorm2d(6), nn.Dropout2d(p=0.2), nn.ReLU6(), nn.Conv2d(6, 6, 3, group=3),
            nn.AvgPool2d(2, 2),
            nn.Conv2dTranspose(6, 4, 2, stride=2), nn.HSwish(), nn.AdaptiveMaxPool2d(2),
            nn.Flatten(), nn.Dense(16, 5))

    rs = np.random.RandomState(4)
    xs = rs.randn(100, 4, 2, 10, 10).astype(np.float32)
    plan = _compare(make, nn.CrossEntropyLoss(), xs, _labels(rs, 100, 4, 5),
                    make_opt=lambda ps: nn.Adam(ps, 0.01))
    assert plan.fallbacks == []


def test_n_d_dense_fused_activation_and_activations_equal_eager():
    def make():
        return nn.SequentialCell(
            nn.Dense(5, 12, activation="tanh"), nn.GELU(), nn.Dense(12, 12), nn.LeakyReLU(0.1),
            nn.ELU(), nn.SiLU(), nn.LayerNorm((12,)), nn.Conv1d(4, 4, 3), nn.GroupNorm(2, 4),
            nn.Softmax(), nn.Flatten(), nn.Dense(4 * 12, 3, activation="relu"))

    rs = np.random.RandomState(5)
    xs = rs.randn(100, 8, 4, 5).astype(np.float32)  # Dense over (N, 4, 5)
    plan = _compare(make, nn.CrossEntropyLoss(), xs, _labels(rs, 100, 8, 3))
    assert plan.fallbacks == [] and plan.compiled == 12


class _OpCells(nn.Cell):
    """Two branches joined by the editor's Mul, Add and Concat Cells."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Dense(4, 6), nn.Dense(4, 6)
        self.mul, self.add, self.cat = op_cells.Mul(), op_cells.Add(), op_cells.Concat(1)
        self.out = nn.Dense(12, 3)

    def construct(self, x):
        a, b = self.a(x), self.b(x)
        return self.out(self.cat(self.mul(a, b), self.add(a, b)))


def test_the_editors_mul_add_and_concat_equal_eager():
    rs = np.random.RandomState(8)
    xs = rs.randn(100, 8, 4).astype(np.float32)
    plan = _compare(_OpCells, nn.CrossEntropyLoss(), xs, _labels(rs, 100, 8, 3))
    assert plan.fallbacks == [] and plan.compiled == 6


def test_a_frozen_convolution_weight_gets_no_update_as_eager():
    def make():
        net = _small_cnn()
        net._cells["3"].weight.requires_grad = False
        return net

    rs = np.random.RandomState(6)
    xs = rs.randn(20, 4, 1, 28, 28).astype(np.float32)
    plan = _compare(make, nn.CrossEntropyLoss(), xs, _labels(rs, 20, 4, 10))
    assert plan.fallbacks == []


def _example_data(compiled, n, steps, rs):
    shape = [n if d == "N" else d for d in compiled.input_shapes[0]]
    dtype = compiled.input_dtypes[0]
    if dtype.startswith("int"):
        xs = rs.randint(0, 20, (steps, *shape)).astype(dtype)
    else:
        xs = rs.randn(steps, *shape).astype(np.float32)
    out = [n if d == "N" else d for d in compiled.output_shape]
    if isinstance(compiled.loss_fn, nn.CrossEntropyLoss):
        return xs, rs.randint(0, out[-1], (steps, n))
    return xs, rs.randn(steps, *out).astype(np.float32)


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.split("/")[-1])
def test_every_example_compiles_where_rules_exist_and_equals_eager(path):
    compiled = compile_project(load_project(path))
    xs, ys = _example_data(compiled, 4, 100, np.random.RandomState(7))
    make = lambda: compile_project(load_project(path)).network  # noqa: E731
    net = make()
    net.set_train(True)
    plan = compile_step(net, compiled.loss_fn, _momentum(net.trainable_params()), xs[0], ys[0])
    if plan is None:  # nothing of it compiles (its containers compute between Cells)
        assert engine.plan.last_reason
        return
    cells = dict(net.cells_and_names())
    for name, why in plan.fallbacks:  # only Cells no rule covers run eagerly
        assert type(cells[name]) not in RULES, f"{name}: {why}"
    _compare(make, compiled.loss_fn, xs, ys)
