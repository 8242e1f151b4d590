"""What hooks cost training: steps/s of the shipped examples with 0 and with 5 hooks.

    python benchmarks/hook_overhead.py [--seconds 4] [--pairs 3] [--example spiral_mlp]

Each example (resources/examples/*.cwproj) trains headless in a TrainingSession on a
long run, once without hooks and once with 5 (forward hooks on 3 layer nodes, backward
hooks on 2), while the main thread summarises the captures at ~30 Hz as visible hook
panes would. Every variant runs in a fresh subprocess, interleaved (0, 5, 0, 5, …) so
this shared machine's drift hits both alike, and the medians are compared (target: at
most 5 % slower with 5 hooks). For reference, PyTorch trains an equivalent MLP
(2-32-32-32-2 tanh, batch 32, Adam) with 0 and 5 forward hooks computing each step's
mean and std. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this command's
environment (the script re-executes itself without them), as on a user's machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.engine_vs_torch import BLAS_VARS, blas_info, machine  # noqa: E402

EXAMPLES = ("spiral_mlp", "digits_cnn")
LONG_RUN = 1_000_000  # epochs: the run outlasts the measurement
READER_HZ = 30
LAYERS = ("Dense", "Conv2d")


def example_rate(name: str, hooks: int, seconds: float, warmup: float) -> dict:
    """Steps/s of an example trained with `hooks` hooks (0 or 5) and a 30 Hz reader."""
    from app.document import Hook
    from app.io.project_file import load_project
    from app.session import TrainingSession

    path = ROOT / "resources" / "examples" / f"{name}.cwproj"
    project = load_project(path)
    project.training["epochs"] = LONG_RUN
    if hooks:
        layers = [node.id for _, node in project.graph.walk() if node.type in LAYERS]
        project.hooks = ([Hook("forward", target) for target in layers[:3]]
                         + [Hook("backward", target) for target in layers[-2:]])  # fmt: skip
    session = TrainingSession(project, folder=path.parent)
    captures = session.captures
    session.start()
    reading = 0.0
    rows = 0
    start_step = start = None
    began = time.perf_counter()
    while True:
        time.sleep(1 / READER_HZ)
        now = time.perf_counter()
        if start is None and now - began >= warmup:
            start_step, start, reading, rows = session.state.step, now, 0.0, 0
        if start is not None and now - start >= seconds:
            break
        tick = time.perf_counter()
        rows += captures.summarise()
        reading += time.perf_counter() - tick
    steps, elapsed = session.state.step - start_step, time.perf_counter() - start
    session.stop()
    session.wait()
    return {"rate": steps / elapsed, "stride": captures.stride, "rows_per_s": rows / elapsed,
            "reader_share": reading / elapsed, "hooks": len(captures.captures)}


def torch_rate(hooks: int, seconds: float, warmup: float) -> dict:
    """Steps/s of a 2-32-32-32-2 tanh MLP in PyTorch with `hooks` forward hooks (mean, std)."""
    import torch

    torch.manual_seed(0)
    layers = [torch.nn.Linear(2, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32), torch.nn.Tanh(),
              torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 2)]
    net = torch.nn.Sequential(*layers)
    seen = []
    for layer in layers[:hooks]:
        layer.register_forward_hook(
            lambda _m, _i, out: seen.append((out.mean().item(), out.std().item()))
        )
    optimizer = torch.optim.Adam(net.parameters(), lr=0.02)
    x, y = torch.randn(32, 2), torch.randint(0, 2, (32,))

    def step():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()
        seen.clear()

    end = time.perf_counter() + warmup
    while time.perf_counter() < end:
        step()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        steps += 1
    return {"rate": steps / (time.perf_counter() - start), "stride": 1, "hooks": hooks}


def child(args) -> None:
    if args.child == "torch":
        result = torch_rate(args.hooks, args.seconds, args.warmup)
    else:
        result = example_rate(args.child, args.hooks, args.seconds, args.warmup)
    print(json.dumps(result))


def measure(variant: str, hooks: int, seconds: float, warmup: float) -> dict:
    command = [sys.executable, __file__, "--child", variant, "--hooks", str(hooks),
               "--seconds", str(seconds), "--warmup", str(warmup)]
    out = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy(),
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="measured per run")
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--pairs", type=int, default=3, help="0-hook/5-hook pairs per variant")
    parser.add_argument("--example", choices=EXAMPLES, action="append")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--hooks", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if any(v in os.environ for v in BLAS_VARS):
        env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    if args.child:
        child(args)
        return 0

    print(f"machine: {machine()}\nBLAS: {blas_info()}")
    variants = list(args.example or EXAMPLES) + ([] if args.no_torch else ["torch"])
    table = []
    for variant in variants:
        runs: dict[int, list[dict]] = {0: [], 5: []}
        for _ in range(args.pairs):
            for hooks in (0, 5):
                runs[hooks].append(measure(variant, hooks, args.seconds, args.warmup))
                print(f"  {variant} {hooks} hooks: {runs[hooks][-1]}", flush=True)
        bare = statistics.median(r["rate"] for r in runs[0])
        hooked = statistics.median(r["rate"] for r in runs[5])
        strides = sorted({r["stride"] for r in runs[5]})
        reader = statistics.median(r.get("reader_share", 0.0) for r in runs[5])
        table.append((variant, bare, hooked, strides, reader))
    print("\n| variant | steps/s, 0 hooks | steps/s, 5 hooks | slowdown | capture stride "
          "| reader (share of a core) |")
    print("|---|---|---|---|---|---|")
    for variant, bare, hooked, strides, reader in table:
        name = "PyTorch MLP 2-32-32-32-2" if variant == "torch" else variant
        print(f"| {name} | {bare:.0f} | {hooked:.0f} | {100 * (1 - hooked / bare):+.1f} % "
              f"| {', '.join(map(str, strides))} | {100 * reader:.1f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
