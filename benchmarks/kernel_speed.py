"""How long the engine's heavy kernels take, forward and backward, through the tape (issue 32).

Each kernel runs as a training step uses it (`value_and_grad` of a sum over its output):

- **conv2d** at the SPEC §6 small CNN's two convolutions (1→8 and 8→16, 3×3 'same', batch
  64) and the residual CNN example's 3×3 16→16 on 8×8, each timed twice in interleaved
  rounds: as the engine runs it (the batch cut into one block of samples per worker of
  the pool when its columns are big enough, `engine.ops._conv._batch_parts`) and in one
  block on the calling thread (what it did before issue 32), so the gain of the split is
  measured in one run on the same machine state;
- **cross-entropy** of (32, 2) and (128, 10) logits, **batch_norm** of the residual CNN's
  (64, 16, 8, 8), **dense** 784→256 of batch 128;
- **optimizer updates** (Momentum, Adam) of the MLP 784-256-128-10's parameters.

Medians and interquartile ranges of `--rounds` rounds, and the load average before and
after: this machine is shared, and a busy one shows in both.

    python benchmarks/kernel_speed.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _through_tape(fn, *arrays, params=()):
    """fn(*tensors) forward and backward: the gradient of its sum for each input."""
    import engine
    from engine import Parameter

    leaves = [Parameter(a, name=f"p{i}") for i, a in enumerate(arrays)]
    step = engine.value_and_grad(lambda *a: fn(*a).sum(), None, leaves)
    return lambda: step(*leaves)


def conv_cases():
    from engine import ops

    rs = np.random.RandomState(0)
    cases = {}
    for title, (n, c, h, o) in {"conv 1→8 on 28² (small CNN)": (64, 1, 28, 8),
                                "conv 8→16 on 14² (small CNN)": (64, 8, 14, 16),
                                "conv 16→16 on 8² (residual CNN)": (64, 16, 8, 16)}.items():
        x = rs.standard_normal((n, c, h, h)).astype(np.float32)
        w = (rs.standard_normal((o, c, 3, 3)) * 0.1).astype(np.float32)
        b = np.zeros(o, np.float32)
        cases[title] = _through_tape(
            lambda a, k, d: ops.conv2d(a, k, d, pad_mode="same"), x, w, b)
    return cases


def other_cases():
    from engine import Tensor, nn, ops

    rs = np.random.RandomState(1)
    cases = {}
    for n, c in ((32, 2), (128, 10)):
        labels = Tensor(rs.randint(0, c, n).astype(np.int64))
        loss = nn.CrossEntropyLoss()
        cases[f"cross-entropy ({n}, {c})"] = _through_tape(
            lambda a, y=labels, f=loss: f(a, y), rs.standard_normal((n, c)).astype(np.float32))
    bn = nn.BatchNorm2d(16)
    bn.set_train()
    cases["batch_norm (64, 16, 8, 8), train"] = _through_tape(
        bn, rs.standard_normal((64, 16, 8, 8)).astype(np.float32))
    cases["dense 784→256, batch 128"] = _through_tape(
        ops.dense, rs.standard_normal((128, 784)).astype(np.float32),
        (rs.standard_normal((256, 784)) * 0.05).astype(np.float32),
        np.zeros(256, np.float32))
    for name in ("Momentum", "Adam"):
        net = nn.SequentialCell(nn.Dense(784, 256), nn.ReLU(), nn.Dense(256, 128), nn.ReLU(),
                                nn.Dense(128, 10))
        params = net.trainable_params()
        opt = (nn.Momentum(params, 0.01, 0.9) if name == "Momentum"
               else nn.Adam(params, 1e-3))
        grads = tuple(Tensor(rs.standard_normal(p.shape).astype(np.float32) * 1e-3)
                      for p in params)
        cases[f"{name} update, MLP 784-256-128-10"] = lambda o=opt, g=grads: o(g)
    return cases


def _time(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls * 1e3


def _calls(fn) -> int:
    """Calls per round: about 20 ms of them."""
    for _ in range(3):
        fn()
    once = _time(fn, 3)
    return max(3, int(20 / max(once, 1e-3)))


def _cells(times) -> str:
    q1, med, q3 = np.percentile(times, [25, 50, 75])
    return f" {med:.3f} | {q1:.3f}–{q3:.3f} |"


def _row(title, times) -> str:
    return f"| {title} |" + _cells(times)


def main() -> None:
    if any(os.environ.get(name) for name in BLAS_VARS):
        env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    from benchmarks.engine_vs_torch import blas_info
    from engine.ops import _conv
    from engine.ops._threads import workers

    print(f"NumPy {np.__version__}; BLAS: {blas_info()}; pool workers {workers()}; "
          f"load average {os.getloadavg()[0]:.2f}")
    split = _conv.PARALLEL_FROM

    def one_block():
        _conv.PARALLEL_FROM = 1 << 62

    def blocks():
        _conv.PARALLEL_FROM = split

    print("\n| conv2d forward + backward | as run, ms | IQR | one block, ms | IQR |")
    print("|---|---:|---:|---:|---:|")
    for title, fn in conv_cases().items():
        calls = _calls(fn)
        split_t, single_t = [], []
        for _ in range(args.rounds):
            blocks()
            split_t.append(_time(fn, calls))
            one_block()
            single_t.append(_time(fn, calls))
        blocks()
        print(_row(title, split_t) + _cells(single_t))

    print("\n| kernel, forward + backward | ms | IQR |")
    print("|---|---:|---:|")
    for title, fn in other_cases().items():
        calls = _calls(fn)
        print(_row(title, [_time(fn, calls) for _ in range(args.rounds)]))
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
