"""Every program in shared/seeds runs on engine with only its imports changed."""

from __future__ import annotations

import numpy as np
import pytest

import engine
from tests.engine.seed_runner import (
    SEEDS,
    change_imports,
    compare,
    doctest_examples,
    markdown_examples,
    run,
)

# The tutorial's first blocks print np.random.randn values: only their layout can match.
RANDOM_OUTPUT = {"cell_and_parameter.md block 1", "cell_and_parameter.md block 7",
                 "cell_and_parameter.md block 9"}


def test_seed_folder_is_present():
    assert (SEEDS / "cell_and_parameter.md").is_file(), SEEDS


def test_cell_and_parameter_tutorial_prints_documented_values():
    examples = markdown_examples(SEEDS / "cell_and_parameter.md")
    assert len(examples) >= 15
    namespace: dict = {"__name__": "__seed__"}
    checked = 0
    for ex in examples:
        printed = run(ex, namespace)
        if ex.expected is None:
            continue
        problem = compare(printed, ex.expected, random_numbers=ex.origin in RANDOM_OUTPUT)
        assert problem is None, f"{ex.origin}: {problem}"
        checked += 1
    assert checked >= 12


def test_tutorial_parameter_edits_hold():
    examples = markdown_examples(SEEDS / "cell_and_parameter.md")
    namespace: dict = {"__name__": "__seed__"}
    for ex in examples[:4]:
        run(ex, namespace)
    net = namespace["Network"]()
    net.b[0] = 1.0
    assert net.b.asnumpy()[0] == 1.0
    assert net.b.dtype == engine.float32


def test_hookbackward_api_example():
    examples = doctest_examples(SEEDS / "hookbackward_api.txt")
    namespace: dict = {"__name__": "__seed__"}
    outputs = [(ex, run(ex, namespace)) for ex in examples]
    checked = [ex for ex, _ in outputs if ex.expected]
    assert len(checked) == 2
    for ex, printed in outputs:
        if ex.expected:
            problem = compare(printed, ex.expected)
            assert problem is None, problem


def test_newer_tutorial_has_the_same_programs():
    """The newer text (hooks receive the Cell) holds the same statements as the .md."""
    newer = (SEEDS / "cell_and_parameter_newer.txt").read_text(encoding="utf-8")
    for needle in ("def forward_pre_hook_fn(cell, inputs):", "internal_params",
                   "def bprop(self, *args):"):
        assert needle in newer


def test_dropout2d_custom_bprop_gradient():
    """The tutorial's Dropout2d bprop: gradient is dout * mask / keep_prob."""
    examples = markdown_examples(SEEDS / "cell_and_parameter.md")
    namespace: dict = {"__name__": "__seed__"}
    for ex in examples:
        run(ex, namespace)
        if "dropout_2d" in namespace:
            break
    drop = namespace["dropout_2d"]
    engine.set_seed(3)
    x = engine.Tensor(np.random.RandomState(0).randn(2, 6, 3, 3).astype(np.float32))
    grads = {}

    def fn(x):
        out, mask = drop(x)
        grads["mask"] = mask
        return out

    g = engine.grad(fn)(x)
    mask = grads["mask"].asnumpy()
    np.testing.assert_allclose(g.asnumpy(), mask.astype(np.float32) / 0.8, rtol=1e-6)
    assert 0 < mask.mean() < 1


NET_WITH_PARAM = """
import numpy as np
from mindspore import nn, Tensor, Parameter

class NetWithParam(nn.Cell):
    def __init__(self):
        super(NetWithParam, self).__init__()
        self.w = Parameter(Tensor(np.array([2.0], dtype=np.float32)), name='weight')
        self.internal_params = [self.w]

    def construct(self, x):
        output = self.w * x
        return output

    def bprop(self, *args):
        return (self.w * args[-1],), {self.w: args[0] * args[-1]}
"""


def test_net_with_param_internal_params():
    """The newer tutorial's `internal_params` bprop form (only in cell_and_parameter_newer.txt)."""
    namespace: dict = {"__name__": "__seed__"}
    exec(change_imports(NET_WITH_PARAM), namespace)
    net = namespace["NetWithParam"]()
    x = engine.Tensor(np.array([3.0], dtype=np.float32))
    gx, (gw,) = engine.grad(net, 0, net.trainable_params())(x)
    assert gx.asnumpy().tolist() == [2.0]
    assert gw.asnumpy().tolist() == [3.0]
    # Without internal_params the weight would get no gradient from a bprop Cell.
    net.internal_params = []
    _, (gw,) = engine.grad(net, 0, net.trainable_params())(x)
    assert gw.asnumpy().tolist() == [0.0]


@pytest.mark.parametrize("path", ["cell_and_parameter.md"])
def test_every_python_block_runs(path):
    namespace: dict = {"__name__": "__seed__"}
    for ex in markdown_examples(SEEDS / path):
        run(ex, namespace)
