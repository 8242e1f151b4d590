"""Training steps/s of the engine eager, compiled (engine.plan), PyTorch CPU and hand NumPy.

The SPEC §6 workloads of `engine_vs_torch` (tiny MLP 2-16-16-2 batch 32, MLP
784-256-128-10 batch 128, the small CNN batch 64) and the residual CNN example (batch 64
of its digits, as `workloads_example`), same weights and data for every side, the same
step (cross-entropy, SGD with momentum 0.9). "plan0" is the compiled step with the base
rules only (Dense, activations, losses: convolutions, pools and BatchNorm run eagerly as
Segments), to show what the rules of `plan_rules_conv` / `plan_rules_more` add. The
sides run interleaved in rounds in this process; each round gives every side's steps/s,
and the report is
the median and the spread (min-max) over rounds of steps/s and of the ratios to
PyTorch. "numpy" is the hand-written limit of the MLPs: forward, backward and the
momentum update over preallocated buffers, no Cells, no tape. Writes nothing.

    python benchmarks/plan_speed.py [--rounds 7] [--only tiny] [--profile tiny]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.engine_vs_torch import (  # noqa: E402
    BLAS_VARS,
    blas_info,
    engine_model,
    engine_step_fn,
    make_data,
    torch_step_fn,
)
from benchmarks.sgd_steps import LR, MOMENTUM  # noqa: E402

SPECS = {"tiny": (32, 2000), "mlp": (128, 150), "cnn": (64, 30), "residual": (64, 30)}
TARGETS = {"tiny": 3.5, "mlp": 1.5, "cnn": 1.0, "residual": 1.0}
EXAMPLE = "residual_cnn"  # the example behind "residual"


def _register_app_rules() -> None:
    """The editor's Add/Mul/Concat compiled, as the app registers them (if it does not yet)."""
    from app.compiler import cells
    from engine.plan_rules import RULES, register_rule
    from engine.plan_rules_more import OP_CELL_RULES

    for name, kernel in OP_CELL_RULES.items():
        if getattr(cells, name) not in RULES:
            register_rule(getattr(cells, name), kernel)


def _net_and_data(name: str):
    if name == "residual":
        from app.compiler import compile_project
        from benchmarks import workloads_example as example

        return compile_project(example._project(EXAMPLE)).network, *example._data(EXAMPLE)
    return engine_model(name), *make_data(name, SPECS[name][0])


def eager_step_fn(name: str):
    from benchmarks.sgd_steps import engine_step

    if name == "residual":
        return engine_step(*_net_and_data(name))
    return engine_step_fn(name)[1]


def plan_step_fn(name: str, base_rules_only: bool = False):
    from engine import nn, plan_rules
    from engine.plan import compile_step

    _register_app_rules()
    net, x, y = _net_and_data(name)
    net.set_train()
    opt = nn.SGD(net.trainable_params(), learning_rate=LR, momentum=MOMENTUM)
    rules = dict(plan_rules.RULES)
    if base_rules_only:
        for cell_type, kernel in rules.items():
            if kernel.__module__ != plan_rules.__name__:
                del plan_rules.RULES[cell_type]
    try:
        plan = compile_step(net, nn.CrossEntropyLoss(), opt, x, y)
    finally:
        plan_rules.RULES.update(rules)
    if not base_rules_only:
        print(f"{name}: {plan.compiled} Cells compiled; {plan.describe() or 'none eager'}")
    return lambda: plan.step(x, y)


def torch_fn(name: str):
    if name == "residual":
        from benchmarks import workloads_example as example

        return example._torch_side(EXAMPLE)
    return torch_step_fn(name, engine_model(name))


def numpy_step_fn(name: str):
    """The hand-written limit: Dense/ReLU layers, softmax cross-entropy, momentum SGD."""
    net = engine_model(name)
    x, y = make_data(name, SPECS[name][0])
    ws = [p.asnumpy().copy() for p in net.trainable_params()]
    layers = [(ws[i], ws[i + 1]) for i in range(0, len(ws), 2)]
    n = len(x)
    acts = [x] + [np.empty((n, w.shape[0]), np.float32) for w, _ in layers]
    grads = [np.empty((n, w.shape[0]), np.float32) for w, _ in layers]
    gws = [(np.empty_like(w), np.empty_like(b)) for w, b in layers]
    vel = [(np.zeros_like(w), np.zeros_like(b)) for w, b in layers]
    rows = np.arange(n)
    m = np.empty((n, 1), np.float32)
    s = np.empty((n, 1), np.float32)

    def step():
        for k, (w, b) in enumerate(layers):
            np.dot(acts[k], w.T, out=acts[k + 1])
            acts[k + 1] += b
            if k < len(layers) - 1:
                np.maximum(acts[k + 1], 0, out=acts[k + 1])
        z = acts[-1]
        g = grads[-1]
        np.max(z, axis=1, keepdims=True, out=m)
        np.subtract(z, m, out=g)
        np.exp(g, out=g)
        np.sum(g, axis=1, keepdims=True, out=s)
        loss = float(np.log(s[:, 0]).sum() - (z[rows, y] - m[:, 0]).sum()) / n
        g /= s
        g[rows, y] -= 1.0
        g *= 1.0 / n
        for k in range(len(layers) - 1, -1, -1):
            w, _ = layers[k]
            gw, gb = gws[k]
            np.dot(grads[k].T, acts[k], out=gw)
            np.sum(grads[k], axis=0, out=gb)
            if k:
                np.dot(grads[k], w, out=grads[k - 1])
                grads[k - 1] *= acts[k] > 0
        for (w, b), (gw, gb), (vw, vb) in zip(layers, gws, vel, strict=True):
            for p, gp, v in ((w, gw, vw), (b, gb, vb)):
                v *= MOMENTUM
                v += gp
                p -= LR * v
        return loss

    return step


def _rate(step, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps / (time.perf_counter() - start)


def measure(name: str, rounds: int) -> dict:
    batch, steps = SPECS[name]
    sides = {"eager": eager_step_fn(name), "plan": plan_step_fn(name)}
    if name in ("cnn", "residual"):
        sides["plan0"] = plan_step_fn(name, base_rules_only=True)
    with contextlib.suppress(ModuleNotFoundError):  # without PyTorch: no ratios
        sides["torch"] = torch_fn(name)
    if name in ("tiny", "mlp"):
        sides["numpy"] = numpy_step_fn(name)
    for step in sides.values():  # warm-up
        _rate(step, max(steps // 10, 3))
    rates: dict = {k: [] for k in sides}
    for _ in range(rounds):
        for side, step in sides.items():
            rates[side].append(_rate(step, steps))
    return rates


def _stats(values) -> str:
    return f"{statistics.median(values):8.1f} [{min(values):.1f}-{max(values):.1f}]"


def report(name: str, rates: dict) -> None:
    print(f"\n{name} (batch {SPECS[name][0]}): steps/s median [min-max] over rounds")
    for side, values in rates.items():
        print(f"  {side:6s} {_stats(values)}")
    if "torch" in rates:
        for side in ("eager", "plan", "plan0", "numpy"):
            if side in rates:
                ratios = [a / b for a, b in zip(rates[side], rates["torch"], strict=True)]
                print(f"  {side}/torch  {statistics.median(ratios):.2f} "
                      f"[{min(ratios):.2f}-{max(ratios):.2f}]"
                      + (f"  target {TARGETS[name]}" if side == "plan" else ""))
    for side in ("plan", "plan0"):
        if side in rates:
            ratios = [a / b for a, b in zip(rates[side], rates["eager"], strict=True)]
            print(f"  {side}/eager  {statistics.median(ratios):.2f} "
                  f"[{min(ratios):.2f}-{max(ratios):.2f}]")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=sorted(SPECS), action="append")
    parser.add_argument("--profile", choices=sorted(SPECS), help="cProfile the compiled step")
    args = parser.parse_args(argv)
    if any(v in os.environ for v in BLAS_VARS):
        env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    print(f"BLAS: {blas_info()}")
    if args.profile:
        import cProfile
        import pstats

        step = plan_step_fn(args.profile)
        _rate(step, 10)
        profiler = cProfile.Profile()
        profiler.runcall(_rate, step, SPECS[args.profile][1])
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        return 0
    for name in args.only or list(SPECS):
        report(name, measure(name, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
