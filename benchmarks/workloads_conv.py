"""Convolution workloads for engine_vs_torch.py: a Conv1d stack and a Conv2dTranspose.

Each side is built from the same initial weights (the engine's, copied into torch in
torch's layout) and the same data; a step is forward, cross-entropy, backward and SGD
with momentum, and returns the loss, so the first losses of both sides agree.
"""

from __future__ import annotations

import numpy as np

from benchmarks.sgd_steps import engine_step, torch_step


def _data(shape: tuple, classes: int = 10):
    rs = np.random.RandomState(1)
    x = rs.standard_normal(shape).astype(np.float32)
    return x, rs.randint(0, classes, shape[0]).astype(np.int64)


def _copy_into(torch_net, arrays) -> None:
    import torch

    with torch.no_grad():
        for target, value in zip(torch_net.parameters(), arrays, strict=True):
            target.copy_(torch.from_numpy(np.ascontiguousarray(value).reshape(target.shape)))


# ----------------------------------------------------------------------------- models


def _engine_net(kind: str):
    import engine
    from engine import nn, ops

    engine.set_seed(0)
    if kind == "conv1d":
        features = nn.SequentialCell(
            nn.Conv1d(8, 16, 5, has_bias=True), nn.ReLU(),
            nn.Conv1d(16, 16, 5, has_bias=True), nn.ReLU())
        width = 16
    else:
        features = nn.Conv2dTranspose(16, 8, 4, stride=2, has_bias=True)
        width = 8

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.features = features
            self.head = nn.Dense(width, 10)

        def construct(self, x):
            h = self.features(x)
            return self.head(ops.mean(h, tuple(range(2, h.ndim))))

    return Net()


def _torch_net(kind: str, engine_net):
    import torch

    tnn = torch.nn
    if kind == "conv1d":
        features = tnn.Sequential(tnn.Conv1d(8, 16, 5, padding=2), tnn.ReLU(),
                                  tnn.Conv1d(16, 16, 5, padding=2), tnn.ReLU())
    else:  # MindSpore 'same' with kernel 4, stride 2: crop 1 at the top/left
        features = tnn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            self.features = features
            self.head = tnn.Linear(8 if kind != "conv1d" else 16, 10)

        def forward(self, x):
            h = self.features(x)
            return self.head(h.mean(dim=tuple(range(2, h.dim()))))

    net = Net()
    _copy_into(net, [p.asnumpy() for p in engine_net.trainable_params()])
    return net


_SHAPES = {"conv1d": (64, 8, 256), "conv2d_transpose": (32, 16, 16, 16)}


def _sides(kind: str):
    def engine_side():
        return engine_step(_engine_net(kind), *_data(_SHAPES[kind]))

    def torch_side():
        return torch_step(_torch_net(kind, _engine_net(kind)), *_data(_SHAPES[kind]))

    return engine_side, torch_side


_C1, _T1 = _sides("conv1d")
_C2, _T2 = _sides("conv2d_transpose")

WORKLOADS = {
    "conv1d": {"title": "Conv1d 8-16-16 k5, mean, dense (64×8×256)", "target": 0.8,
               "steps": 200, "batch": 64, "engine": _C1, "torch": _T1},
    "conv2d_transpose": {"title": "Conv2dTranspose 16→8 k4 s2 (32×16×16²)", "target": 0.8,
                         "steps": 200, "batch": 32, "engine": _C2, "torch": _T2},
}
