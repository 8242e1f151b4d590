"""Training-step speed and memory of the engine against PyTorch CPU (SPEC §6).

Each workload is built twice from the same initial weights and data: once on
`engine`, once on PyTorch.  Both run the same step (forward, cross-entropy,
backward, SGD with momentum) in this process after a warm-up; the losses of
the first steps are compared, so the two really compute the same thing.
Peak memory of each side is measured in a child process of its own.

    python benchmarks/engine_vs_torch.py            # full run, writes RESULTS.md
    python benchmarks/engine_vs_torch.py --quick    # smoke run, writes nothing
    python benchmarks/engine_vs_torch.py --profile mlp   # where the engine's time goes

OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this command's
environment (the script re-executes itself without them) because they select
a slower OpenBLAS kernel on this machine; a user's machine has neither.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.sgd_steps import engine_step, torch_step  # noqa: E402

BLAS_VARS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

WORKLOADS = {
    "mlp": {"title": "MLP 784-256-128-10", "batch": 128, "steps": 300},
    "tiny": {"title": "tiny MLP 2-16-16-2", "batch": 32, "steps": 3000},
    "cnn": {"title": "CNN conv8-pool-conv16-pool-dense", "batch": 64, "steps": 60},
}
TARGETS = {"mlp": 1.0, "tiny": 0.8, "cnn": 0.4}
# Workloads of the layer families (issue 27), each module's WORKLOADS as
# {name: {"title", "target", "steps", "engine": () -> step, "torch": () -> step}}:
# both steps start from the same weights and data and return the loss as a float.
PLUGINS = ("benchmarks.workloads_conv", "benchmarks.workloads_norm",
           "benchmarks.workloads_example", "benchmarks.workloads_rnn")


def _plugins() -> dict:
    import importlib

    found = {}
    for module in PLUGINS:
        try:
            found.update(importlib.import_module(module).WORKLOADS)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    return found


PLUGGED = _plugins()
for _name, _spec in PLUGGED.items():
    WORKLOADS[_name] = _spec
    TARGETS[_name] = _spec["target"]


# ----------------------------------------------------------------------------- models


def make_data(name: str, batch: int):
    rs = np.random.RandomState(1)
    if name == "cnn":
        x = rs.standard_normal((batch, 1, 28, 28)).astype(np.float32)
        classes = 10
    elif name == "mlp":
        x = rs.standard_normal((batch, 784)).astype(np.float32)
        classes = 10
    else:
        x = rs.standard_normal((batch, 2)).astype(np.float32)
        classes = 2
    y = rs.randint(0, classes, batch).astype(np.int64)
    return x, y


def engine_model(name: str):
    import engine
    from engine import nn

    engine.set_seed(0)
    if name == "mlp":
        net = nn.SequentialCell(
            nn.Dense(784, 256), nn.ReLU(), nn.Dense(256, 128), nn.ReLU(), nn.Dense(128, 10)
        )
    elif name == "tiny":
        net = nn.SequentialCell(
            nn.Dense(2, 16), nn.ReLU(), nn.Dense(16, 16), nn.ReLU(), nn.Dense(16, 2)
        )
    else:
        net = nn.SequentialCell(
            nn.Conv2d(1, 8, 3, pad_mode="same", has_bias=True), nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 16, 3, pad_mode="same", has_bias=True), nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(), nn.Dense(16 * 7 * 7, 10),
        )
    return net


def torch_model(name: str, engine_net):
    """The same architecture in PyTorch, with the engine net's initial weights copied in."""
    import torch

    tnn = torch.nn
    if name == "mlp":
        net = tnn.Sequential(tnn.Linear(784, 256), tnn.ReLU(), tnn.Linear(256, 128), tnn.ReLU(),
                             tnn.Linear(128, 10))
    elif name == "tiny":
        net = tnn.Sequential(tnn.Linear(2, 16), tnn.ReLU(), tnn.Linear(16, 16), tnn.ReLU(),
                             tnn.Linear(16, 2))
    else:
        net = tnn.Sequential(
            tnn.Conv2d(1, 8, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2, 2),
            tnn.Conv2d(8, 16, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2, 2),
            tnn.Flatten(), tnn.Linear(16 * 7 * 7, 10),
        )
    source = [p.asnumpy() for p in engine_net.trainable_params()]
    with torch.no_grad():
        for target, value in zip(net.parameters(), source, strict=True):
            target.copy_(torch.from_numpy(value.copy()))
    return net


def engine_step_fn(name: str):
    net = engine_model(name)
    return net, engine_step(net, *make_data(name, WORKLOADS[name]["batch"]))


def torch_step_fn(name: str, engine_net):
    return torch_step(torch_model(name, engine_net), *make_data(name, WORKLOADS[name]["batch"]))


# ----------------------------------------------------------------------------- measuring


def steps_per_second(step, steps: int, repeats: int = 3) -> float:
    for _ in range(max(steps // 10, 5)):
        step()  # warm-up: caches, allocator, BLAS threads
    best = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        best = max(best, steps / (time.perf_counter() - start))
    return best


def _rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def side_step(name: str, side: str):
    """The training step of one side ('engine' or 'torch') of a workload; the torch side
    starts from the engine side's initial weights."""
    spec = WORKLOADS[name]
    if "engine" in spec:
        return spec[side]()
    net, step = engine_step_fn(name)
    return step if side == "engine" else torch_step_fn(name, net)


def step_fns(name: str):
    """(engine step, PyTorch step) of a workload, from the same weights and data."""
    return side_step(name, "engine"), side_step(name, "torch")


def measure_peak(side: str, name: str, steps: int) -> float:
    """Peak RSS growth (MiB) while training, above the RSS once the model is built."""
    step = side_step(name, side)
    before = _rss_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
    for _ in range(steps):
        step()
    return (_rss_kib("VmHWM") - before) / 1024


def peak_memory_mb(side: str, name: str, steps: int) -> float:
    """Peak RSS growth of training, measured in a child process that loads only that side."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r});"
        "import benchmarks.engine_vs_torch as b;"
        f"print(b.measure_peak({side!r}, {name!r}, {steps}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=os.environ.copy(), check=True)
    return float(out.stdout.strip().splitlines()[-1])


def blas_info() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    parts = []
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            parts.append(f"{info.get('internal_api')} {info.get('version')} "
                         f"kernel={info.get('architecture')} threads={info.get('num_threads')}")
    return "; ".join(parts) or "no BLAS found"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def run(names, quick: bool) -> list[dict]:
    import torch

    rows = []
    for name in names:
        spec = WORKLOADS[name]
        steps = max(spec["steps"] // 20, 3) if quick else spec["steps"]
        e_step, t_step = step_fns(name)
        # Same weights, same data: the first losses must agree.
        e_losses = [e_step() for _ in range(3)]
        t_losses = [t_step() for _ in range(3)]
        if not np.allclose(e_losses, t_losses, rtol=1e-3, atol=1e-4):
            raise SystemExit(f"{name}: engine and PyTorch disagree: {e_losses} vs {t_losses}")
        e_rate = steps_per_second(e_step, steps, 1 if quick else 3)
        t_rate = steps_per_second(t_step, steps, 1 if quick else 3)
        row = {
            "workload": name, "title": spec["title"], "batch": spec.get("batch", "–"),
            "engine_steps_s": e_rate, "torch_steps_s": t_rate, "ratio": e_rate / t_rate,
            "target": TARGETS[name], "torch_threads": torch.get_num_threads(),
        }
        if not quick:
            mem_steps = max(steps // 10, 5)
            row["engine_peak_mb"] = peak_memory_mb("engine", name, mem_steps)
            row["torch_peak_mb"] = peak_memory_mb("torch", name, mem_steps)
        rows.append(row)
        batch = spec.get("batch", "–")
        print(f"{spec['title']:<36} batch {batch:>4}: engine {e_rate:8.1f} steps/s, "
              f"PyTorch {t_rate:8.1f} steps/s, ratio {e_rate / t_rate:5.2f} "
              f"(target {TARGETS[name]})", flush=True)
    return rows


def write_results(rows: list[dict], path: Path) -> None:
    import torch

    today = _dt.date.today().isoformat()
    lines = [
        "# Engine vs PyTorch CPU: training-step benchmark",
        "",
        f"Measured {today} by `python benchmarks/engine_vs_torch.py` on {machine()}.",
        f"NumPy {np.__version__}, BLAS: {blas_info()}; PyTorch {torch.__version__} "
        f"({rows[0]['torch_threads']} threads). {', '.join(BLAS_VARS)} unset for the run.",
        "",
        "Step = forward, cross-entropy loss, backward, SGD with momentum 0.9; same initial "
        "weights and data on both sides (first losses checked equal). Steps/s is the best of "
        "3 timed runs after warm-up; peak memory is how far RSS rises above its level after "
        "set-up while training, in a child process that loads only that framework's side. "
        "The LayerNorm and GroupNorm rows time the layer alone (forward, a fixed weighted sum "
        "of its output as the loss, backward); the residual CNN row is the shipped example "
        "against its own PyTorch export.",
        "",
        "| workload | batch | engine steps/s | PyTorch steps/s | ratio | target | "
        "engine peak MiB | PyTorch peak MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['title']} | {r['batch']} | {r['engine_steps_s']:.1f} | "
            f"{r['torch_steps_s']:.1f} | {r['ratio']:.2f} | ≥ {r['target']} | "
            f"{r.get('engine_peak_mb', float('nan')):.1f} | "
            f"{r.get('torch_peak_mb', float('nan')):.1f} |"
        )
    lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")


def profile(name: str) -> None:
    import cProfile
    import pstats

    step = side_step(name, "engine")  # the engine alone: no torch to load
    for _ in range(20):
        step()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(WORKLOADS[name]["steps"] // 3):
        step()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few steps, no memory, no file")
    parser.add_argument("--only", choices=sorted(WORKLOADS), action="append")
    parser.add_argument("--profile", choices=sorted(WORKLOADS), help="cProfile one workload")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = parser.parse_args(argv)

    if any(v in os.environ for v in BLAS_VARS):
        env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)

    print(f"BLAS: {blas_info()}")
    if args.profile:
        profile(args.profile)
        return 0
    rows = run(args.only or list(WORKLOADS), args.quick)
    if args.json:
        print(json.dumps(rows, indent=2))
    if not args.quick:
        write_results(rows, ROOT / "benchmarks" / "RESULTS.md")
        print("wrote benchmarks/RESULTS.md")
    print(f"peak RSS of this process: "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
