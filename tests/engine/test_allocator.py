"""Large temporaries are reused from the heap, not faulted in again every step."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CODE = textwrap.dedent("""
    import resource
    import numpy as np
    import engine
    from engine import Tensor, nn

    net = nn.SequentialCell(nn.Conv2d(1, 8, 3, has_bias=True), nn.ReLU(), nn.MaxPool2d(2, 2),
                            nn.Flatten(), nn.Dense(8 * 14 * 14, 10))
    opt = nn.SGD(net.trainable_params(), learning_rate=0.01)
    loss_fn = nn.CrossEntropyLoss()
    x = Tensor(np.random.RandomState(0).randn(64, 1, 28, 28).astype(np.float32))
    y = Tensor(np.arange(64) % 10)
    step = engine.value_and_grad(lambda x, y: loss_fn(net(x), y), None, opt.parameters)
    for _ in range(3):
        opt(step(x, y)[1])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        opt(step(x, y)[1])
    print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10)
""")


def faults_per_step(env_extra: dict) -> float:
    import os

    env = {**os.environ, **env_extra}
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env,
                         check=True)
    return float(out.stdout.strip())


def test_training_step_does_not_fault_pages_in_again():
    assert faults_per_step({}) < 50
    # Without the tuning glibc unmaps the big buffers and every step faults them back in.
    assert faults_per_step({"CELLWRIGHT_KEEP_MALLOC": "1"}) > 200
