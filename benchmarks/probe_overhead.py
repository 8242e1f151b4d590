"""What looking inside sequence layers costs training: step time with and without probe captures.

    python benchmarks/probe_overhead.py [--steps 30] [--rounds 5]

Trains, headless, the issue's LSTM (2 layers, hidden 128, T = 50, batch 32) and a small
character Transformer (Embedding → 2 TransformerEncoderLayers, d 64, 4 heads, T 64,
batch 32) with Adam, in rounds of `steps` steps alternating: no probe; a probe capture
copying at every step (the worst case: a pane's "Every step"); a probe capture at the
session's adaptive stride (what a pane costs by default). The probe is what the panes
and the health overlay use (`app.session.probes` through `HookCaptures`). Medians of
the rounds' mean step times are compared (target: at most 5 % slower), and the copies'
own time (`ProbeCapture.spent`) per captured step is shown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from app.document import Hook  # noqa: E402
from app.session.hook_captures import HookCaptures  # noqa: E402
from engine import Tensor, nn, ops  # noqa: E402


class LSTMNet(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(32, 128, num_layers=2, batch_first=True)
        self.out = nn.Dense(128, 10)

    def construct(self, x):
        return self.out(self.lstm(x)[0][:, -1])


class CharTransformer(nn.Cell):
    def __init__(self, vocabulary: int = 64, length: int = 64) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocabulary, 64)
        layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0,
                                           batch_first=True)  # fmt: skip
        self.enc = nn.TransformerEncoder(layer, 2)
        self.out = nn.Dense(64, vocabulary)
        self.mask = ops.causal_mask(length)

    def construct(self, x):
        return self.out(self.enc(self.emb(x), self.mask)[:, -1])


def workloads():
    rng = np.random.default_rng(0)
    lstm_x = Tensor(rng.normal(size=(32, 50, 32)).astype(np.float32))
    lstm_y = Tensor(rng.integers(0, 10, 32))
    chars_x = Tensor(rng.integers(0, 64, (32, 64)))
    chars_y = Tensor(rng.integers(0, 64, 32))
    return {"LSTM 2×128, T 50, batch 32": (LSTMNet(), "lstm", "recurrent", lstm_x, lstm_y),
            "Transformer 2×(d 64, 4 heads), T 64, batch 32": (
                CharTransformer(), "enc", "attention", chars_x, chars_y)}  # fmt: skip


def timed_steps(net, node: str, kind: str, x, y, steps: int, mode: str) -> tuple[float, float, int]:
    """Mean seconds a step, seconds spent copying, steps captured."""
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    grad = engine.value_and_grad(lambda a, b: loss_fn(net(a), b), None, optimizer.parameters)
    captures = capture = None
    if mode != "none":
        hook = Hook(kind, node)
        captures = HookCaptures([hook], {node: getattr(net, node)}.get,
                                budget=None if mode == "every" else 0.01)  # fmt: skip
        capture = captures.captures[hook.id]
    for _ in range(2):  # warm-up
        grad(x, y)
    start = time.perf_counter()
    for step in range(1, steps + 1):
        if captures is not None:
            captures.step = step
        _, grads = grad(x, y)
        optimizer(grads)
        if capture is not None and step % 5 == 0:
            capture.summarise()  # the reader, as a GUI timer would (not on the clock's thread
            # in the window; here it counts against training: an upper bound)
    elapsed = (time.perf_counter() - start) / steps
    if captures is not None:
        captures.remove()
    if capture is None:
        return elapsed, 0.0, 0
    return elapsed, capture.spent, capture.captured


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    engine.set_seed(0)
    for name, (net, node, kind, x, y) in workloads().items():
        times: dict[str, list[float]] = {"none": [], "every": [], "adaptive": []}
        copy_share = []
        modes = list(times)
        for round_ in range(args.rounds):  # each mode first in turn: drift hits all alike
            for mode in modes[round_ % 3:] + modes[: round_ % 3]:
                step, spent, _ = timed_steps(net, node, kind, x, y, args.steps, mode)
                times[mode].append(step)
                if mode == "every":
                    copy_share.append(spent / (step * args.steps))
        base = statistics.median(times["none"])
        print(f"{name}: {base * 1000:.1f} ms a step without probes")
        for mode in ("every", "adaptive"):
            median = statistics.median(times[mode])
            print(f"  probe {mode:8s}: {median * 1000:.1f} ms ({median / base - 1:+.1%})")
        print(f"  copies alone, every step: {statistics.median(copy_share):.2%} of the step time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
