"""The losses the Output node gained, as the exported scripts write them: the engine script
and the PyTorch script compute the engine's loss (and its gradient) on a small batch."""


import numpy as np
import pytest
import torch

import engine
from app.compiler import compile_project
from app.document import Project
from app.export.python_script import export_python
from app.export.torch_script import export_torch
from app.session.targets import Targets
from tests.app.export.export_samples import load_script
from tests.app.session.session_samples import chain

CASES = {
    "NLLLoss": ("LogSoftmax", {}),
    "NLLLoss-ignore-sum": ("LogSoftmax", {"ignore_index": 1, "reduction": "sum"}),
    "KLDivLoss": ("LogSoftmax", {}),
    "KLDivLoss-sum": ("LogSoftmax", {"reduction": "sum"}),
    "KLDivLoss-batchmean": ("LogSoftmax", {"reduction": "batchmean"}),
    "BCELoss": ("Sigmoid", {}),
    "BCELoss-none": ("Sigmoid", {"reduction": "none"}),
    "SmoothL1Loss": (None, {}),
    "SmoothL1Loss-beta-none": (None, {"beta": 0.3, "reduction": "none"}),
    "HuberLoss": (None, {}),
    "HuberLoss-delta-sum": (None, {"delta": 0.4, "reduction": "sum"}),
}
WRITTEN = {  # what each script's make_loss returns, as text
    "NLLLoss": ("nn.NLLLoss()", "nn.NLLLoss()"),
    "NLLLoss-ignore-sum": ("nn.NLLLoss(ignore_index=1, reduction='sum')",
                           "nn.NLLLoss(ignore_index=1, reduction='sum')"),
    "KLDivLoss-sum": ("nn.KLDivLoss(reduction='sum')", "nn.KLDivLoss(reduction='sum')"),
    "KLDivLoss-batchmean": ("nn.KLDivLoss(reduction='batchmean')",
                            "nn.KLDivLoss(reduction='batchmean')"),
    "SmoothL1Loss": ("nn.SmoothL1Loss(reduction='mean')", "nn.SmoothL1Loss()"),
    "SmoothL1Loss-beta-none": ("nn.SmoothL1Loss(beta=0.3)",
                               "nn.SmoothL1Loss(reduction='none', beta=0.3)"),
    "HuberLoss-delta-sum": ("nn.HuberLoss(reduction='sum', delta=0.4)",
                            "nn.HuberLoss(reduction='sum', delta=0.4)"),
    "BCELoss-none": ("nn.BCELoss(reduction='none')", "nn.BCELoss(reduction='none')"),
}


def project(key: str) -> Project:
    """Dense 2→3 [→ activation] → Output(loss), the engine seeded: the export's compile and
    the test's draw the same weights."""
    engine.set_seed(3)
    loss = key.split("-")[0]
    last, values = CASES[key]
    layers = [("Input", {"shape": (2,)}), ("Dense", {"in_channels": 2, "out_channels": 3})]
    if last is not None:
        layers.append((last, {}))
    layers.append(("Output", {"loss": loss, **values}))
    return Project(graph=chain(*layers), name="loss", training={})



def batch(compiled):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 2)).astype(np.float32)
    y = np.array([0, 1, 2, 1, 1, 0])
    compiled.network.set_train(False)
    out = compiled.network(engine.Tensor(x))
    return x, out, Targets(type(compiled.loss_fn).__name__, "classification").for_loss(
        y, out.shape)


def engine_loss(compiled, out, labels):
    cot = np.random.default_rng(9).standard_normal(compiled.loss_fn(out, labels).shape)
    value = compiled.loss_fn(out, labels).asnumpy()
    grad = engine.grad(lambda o: (compiled.loss_fn(o, labels) * engine.Tensor(
        cot.astype(np.float32))).sum())(out)
    return value, grad.asnumpy(), cot


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides:UserWarning")  # torch's kl_div
@pytest.mark.parametrize("key", CASES)
def test_the_torch_script_computes_the_engine_loss(tmp_path, key):
    proj = project(key)
    script = export_torch(proj, tmp_path / "net.py").written[0]
    module = load_script(script)
    engine.set_seed(3)
    compiled = compile_project(proj)
    x, out, labels = batch(compiled)
    value, grad, cot = engine_loss(compiled, out, labels)
    net = module.load_network()
    with torch.no_grad():
        np.testing.assert_allclose(net(torch.from_numpy(x)).numpy(), out.asnumpy(),
                                   rtol=1e-5, atol=1e-6)  # fmt: skip
    t_out = torch.tensor(out.asnumpy(), requires_grad=True)
    loss = module.make_loss()(t_out, torch.from_numpy(labels.asnumpy()))
    (loss * torch.from_numpy(cot.astype(np.float32))).sum().backward()
    np.testing.assert_allclose(loss.detach().numpy(), value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t_out.grad.numpy(), grad, rtol=1e-5, atol=1e-6)
    if key in WRITTEN:
        assert f"return {WRITTEN[key][1]}" in script.read_text()


@pytest.mark.parametrize("key", CASES)
def test_the_engine_script_builds_the_same_loss(tmp_path, key):
    proj = project(key)
    script = export_python(proj, tmp_path / "net.py").script
    module = load_script(script)
    compiled = compile_project(proj)
    _, out, labels = batch(compiled)
    loss = module.make_loss()
    assert type(loss) is type(compiled.loss_fn) and repr(loss) == repr(compiled.loss_fn)
    np.testing.assert_array_equal(loss(out, labels).asnumpy(),
                                  compiled.loss_fn(out, labels).asnumpy())  # fmt: skip
    if key in WRITTEN:
        assert f"return {WRITTEN[key][0]}" in script.read_text()
