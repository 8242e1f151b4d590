"""The residual CNN example's training step for engine_vs_torch.py (issue 27).

The engine side is the shipped project compiled as the app compiles it; the PyTorch side
is that project exported with `cellwright export --torch` and loaded with the same
initial weights. Both train on the same batch of 64 digits with cross-entropy and SGD
with momentum (the harness's step), so the first losses agree.
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

LR, MOMENTUM = 0.05, 0.9  # as engine_vs_torch.py (not imported: it imports this module)
ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "resources" / "examples" / "residual_cnn.cwproj"
BATCH = 64


def _project():
    from app.io.project_file import load_project

    return load_project(EXAMPLE)


def _data():
    from app.datasets import make_builtin

    data = make_builtin("digits")
    return data.x[:BATCH].copy(), data.y[:BATCH].copy()


def engine_step():
    import engine
    from app.compiler import compile_project
    from engine import Tensor, nn

    net = compile_project(_project()).network
    loss_fn = nn.CrossEntropyLoss()
    opt = nn.SGD(net.trainable_params(), learning_rate=LR, momentum=MOMENTUM)
    net.set_train()
    x, y = (Tensor(a) for a in _data())
    grad_fn = engine.value_and_grad(lambda a, b: loss_fn(net(a), b), None, opt.parameters)

    def step():
        loss, grads = grad_fn(x, y)
        opt(grads)
        return float(loss.asnumpy())

    return step


def torch_step():
    import torch

    from app.export.torch_script import export_torch

    folder = Path(tempfile.mkdtemp(prefix="cellwright-bench-"))
    script = folder / "residual_cnn.py"
    export_torch(_project(), script)
    spec = importlib.util.spec_from_file_location("residual_cnn_export", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    net = module.load_network()
    x, y = (torch.from_numpy(a) for a in _data())
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    net.train()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step


WORKLOADS = {
    "residual": {"title": "residual CNN example (digits)", "batch": BATCH, "target": 0.8,
                 "steps": 100, "engine": engine_step, "torch": torch_step},
}
