"""Recurrent workloads for engine_vs_torch.py: a 2-layer LSTM and a 2-layer GRU.

Hidden size 128 over T = 50 steps of 32 features, batch 32 (SPEC §6); a Dense head reads
the last time step. Each side is built from the same initial weights (the engine's, copied
into torch by Parameter name: the layouts and gate orders are the same) and the same data;
a step is forward, cross-entropy, backward and SGD with momentum, and returns the loss.
"""

from __future__ import annotations

import numpy as np

from benchmarks.sgd_steps import engine_step, torch_step

BATCH, STEPS, FEATURES, HIDDEN, LAYERS, CLASSES = 32, 50, 32, 128, 2, 10


def _data():
    rs = np.random.RandomState(1)
    x = rs.standard_normal((BATCH, STEPS, FEATURES)).astype(np.float32)
    return x, rs.randint(0, CLASSES, BATCH).astype(np.int64)


def _engine_net(kind: str):
    import engine
    from engine import nn

    engine.set_seed(0)
    layer = getattr(nn, kind)(FEATURES, HIDDEN, num_layers=LAYERS, batch_first=True)

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.rnn = layer
            self.head = nn.Dense(HIDDEN, CLASSES)

        def construct(self, x):
            return self.head(self.rnn(x)[0][:, -1])

    return Net()


def _torch_net(kind: str, engine_net):
    import torch

    tnn = torch.nn

    class Net(tnn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = getattr(tnn, kind)(FEATURES, HIDDEN, num_layers=LAYERS, batch_first=True)
            self.head = tnn.Linear(HIDDEN, CLASSES)

        def forward(self, x):
            return self.head(self.rnn(x)[0][:, -1])

    net = Net()
    state = {name: torch.from_numpy(p.asnumpy().copy())
             for name, p in engine_net.parameters_and_names()}
    net.load_state_dict(state)
    return net


def _sides(kind: str):
    def engine_side():
        return engine_step(_engine_net(kind), *_data())

    def torch_side():
        return torch_step(_torch_net(kind, _engine_net(kind)), *_data())

    return engine_side, torch_side


_LE, _LT = _sides("LSTM")
_GE, _GT = _sides("GRU")

WORKLOADS = {
    "lstm": {"title": f"LSTM {LAYERS}×{HIDDEN} T={STEPS}, dense (batch {BATCH})",
             "target": 0.7, "steps": 40, "batch": BATCH, "engine": _LE, "torch": _LT},
    "gru": {"title": f"GRU {LAYERS}×{HIDDEN} T={STEPS}, dense (batch {BATCH})",
            "target": 0.7, "steps": 40, "batch": BATCH, "engine": _GE, "torch": _GT},
}
