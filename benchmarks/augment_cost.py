"""What augmentation costs a digits-CNN training step (issue 30; target: under 10 %).

    python benchmarks/augment_cost.py [--pairs 12] [--steps 40] [--setting JSON]

The shipped digits CNN (resources/examples/digits_cnn.cwproj, batch 64) is trained
headless by two Trainers sharing one network, optimizer and data: one without
augmentation, one with every operation on (the default `--setting`: flip 0.5, shift 2,
rotate 10°, brightness and contrast 0.1, noise 0.05). They take turns in the same
process, `--steps` steps each, in `--pairs` pairs whose order alternates (plain first,
then augmented first), so this shared machine's drift hits both alike. Each pair gives
one ratio of the mean step times; the median, the middle half and the extremes of those
ratios are printed, with CPU time per step (all threads) beside wall time. The
augmentation alone (whole epochs of batches of 64, without training) is printed for
reference: in the training loop it costs more, its arrays being cold in the caches.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this command's environment (the
script re-executes itself without them), as on a user's machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.engine_vs_torch import BLAS_VARS, blas_info, machine  # noqa: E402

SETTING = {"flip": 0.5, "shift": 2, "rotate": 10, "brightness": 0.1, "contrast": 0.1,
           "noise": 0.05, "seed": 0}  # fmt: skip


def trainers(setting: dict):
    """(plain, augmented) Trainers of the digits CNN sharing network, optimizer and data."""
    from app.io.project_file import load_project
    from app.resources_path import resource_path
    from app.session import TrainingSession
    from app.session.metrics import Metrics
    from app.session.progress import TrainingState
    from app.session.trainer import Trainer

    project = load_project(resource_path("examples", "digits_cnn.cwproj"))
    session = TrainingSession(project, restart=True)
    empty = session.val_set.take([])  # no validation pass at epoch ends: steps only
    made = []
    for augmentation in (None, setting):
        made.append(Trainer(
            session.network, session.loss_fn, session.optimizer, session.train_set, empty,
            batch_size=session.settings.batch_size, seed=session.settings.seed,
            state=TrainingState(), metrics=Metrics(1000), emit=lambda event: None,
            input_dtype=session.compiled.input_dtypes[0], augmentation=augmentation))
    return session, made


def timed_block(trainer, steps: int) -> tuple[float, float]:
    """(wall, CPU) seconds per step of `steps` training steps."""
    from app.session.run_control import RunControl

    start, cpu = time.perf_counter(), time.process_time()
    trainer.run(10**6, RunControl(), max_steps=steps)
    return ((time.perf_counter() - start) / steps, (time.process_time() - cpu) / steps)


def augmentation_alone(session, setting: dict, epochs: int = 30) -> float:
    """Seconds to augment one training batch on its own (a few batches together, as the
    trainer does), over whole epochs of the training set."""
    from app.datasets.augment import augmenter_for

    data, size = session.train_set, session.settings.batch_size
    augmenter = augmenter_for(setting, data, size)
    batches = list(data.batches(size, True, 0, 0))
    start = time.perf_counter()
    for epoch in range(epochs):
        for _ in augmenter.batches(iter(batches), epoch):
            pass
    return (time.perf_counter() - start) / (epochs * len(batches))


def quartiles(values: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--steps", type=int, default=40, help="steps per block")
    parser.add_argument("--setting", type=json.loads, default=SETTING,
                        help="the augmentation setting as JSON (default: every operation on)")
    args = parser.parse_args()
    if any(v in os.environ for v in BLAS_VARS):
        env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    from app.datasets.augment import augmenter_for

    print(f"machine: {machine()}\nBLAS: {blas_info()}")
    session, (plain, augmented) = trainers(args.setting)
    timed_block(plain, 10)  # warm up both paths
    timed_block(augmented, 10)
    walls, cpus, plain_ms = [], [], []
    for pair in range(args.pairs):
        order = (plain, augmented) if pair % 2 == 0 else (augmented, plain)
        got = {id(t): timed_block(t, args.steps) for t in order}
        (p_wall, p_cpu), (a_wall, a_cpu) = got[id(plain)], got[id(augmented)]
        walls.append(a_wall / p_wall - 1)
        cpus.append(a_cpu / p_cpu - 1)
        plain_ms.append(p_wall * 1e3)
        print(f"pair {pair + 1:2d}: plain {p_wall * 1e3:6.2f} ms/step, augmented "
              f"{a_wall * 1e3:6.2f} ms/step: {walls[-1]:+6.1%} (CPU {cpus[-1]:+6.1%})")
    alone = augmentation_alone(session, args.setting)
    step = statistics.median(plain_ms) / 1e3
    low, high = quartiles(walls)
    print(f"\nsetting: {json.dumps(args.setting)}")
    per_chunk = augmenter_for(args.setting, session.train_set,
                              session.settings.batch_size).per_chunk
    print(f"plain step (median): {step * 1e3:.2f} ms; augmenting a batch of "
          f"{session.settings.batch_size} alone ({per_chunk} batches together): "
          f"{alone * 1e6:.0f} µs = {alone / step:.1%}")
    print(f"augmented vs plain, wall: median {statistics.median(walls):+.1%}, middle half "
          f"{low:+.1%} … {high:+.1%}, extremes {min(walls):+.1%} … {max(walls):+.1%}")
    low, high = quartiles(cpus)
    print(f"augmented vs plain, CPU:  median {statistics.median(cpus):+.1%}, middle half "
          f"{low:+.1%} … {high:+.1%} (target: under +10 %)")


if __name__ == "__main__":
    main()
