"""What hooks cost training in the window: steps/s of the shipped examples with 0 and 5 hooks.

    python benchmarks/hook_overhead.py [--seconds 5] [--pairs 8] [--example spiral_mlp]

Each example (resources/examples/*.cwproj) is opened in the real main window
(offscreen, 2600×1100 so that five tiled panes fit beside the curves, Run dock and
Plots area shown, live curves) and trained from
the Run menu's Start, once with no hooks and once with 5 attached as a user attaches
them (the canvas's context-menu entries: forward hooks on the first 3 layer nodes,
backward hooks on the last 2), their 5 hook panes tiled so every one is visible and
redrawing, their probes on the canvas. Every variant runs in a fresh process, the
variants interleaved (0, 5, 0, 5, …) so that this shared machine's drift hits both
alike, and the medians are compared (target: at most 5 % slower with 5 hooks), with the
middle half of the pairs to show how far this machine spreads one pair.

For reference, PyTorch trains an equivalent MLP (2-32-32-32-2 tanh, batch 32, Adam)
with 0 and 5 forward hooks computing each step's mean and std, as people write them.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this command's environment
(the script re-executes itself without them), as on a user's machine. Run it on a
quiet machine: nothing else should hold a core.
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
from benchmarks.window import training_window  # noqa: E402

EXAMPLES = ("spiral_mlp", "digits_cnn")
LAYERS = ("Dense", "Conv2d")


def window_rate(name: str, hooks: int, seconds: float, warmup: float, shot: str) -> dict:
    """Steps/s of an example trained in the window with `hooks` (0 or 5) hook panes shown."""
    from PySide6.QtCore import QEventLoop, QTimer

    from app.resources_path import resource_path

    app, window = training_window(resource_path("examples", f"{name}.cwproj"), 2600, 1100)
    run, editor, controller = window.run, window.workbench.editor, window.hooks
    if hooks:
        layers = [n.id for n in window.project.graph.nodes.values() if n.type in LAYERS]
        wanted = [("forward", t) for t in layers[:3]] + [("backward", t) for t in layers[-2:]]
        for kind, target in wanted[:hooks]:
            assert editor.add_hook(kind, target) is not None
        controller.arrange(tiled=True)
    app.processEvents()
    run.actions["start"].trigger()
    marks: dict[str, tuple[int, float, float]] = {}

    def mark(label: str) -> None:
        marks[label] = (run.session.state.step, time.perf_counter(), time.process_time())

    loop = QEventLoop()  # the real event loop, as the app runs it
    QTimer.singleShot(round(warmup * 1000), lambda: mark("start"))
    QTimer.singleShot(round((warmup + seconds) * 1000), lambda: (mark("end"), loop.quit()))
    loop.exec()
    (step0, t0, cpu0), (step1, t1, cpu1) = marks["start"], marks["end"]
    captures = run.session.captures
    panes = [dock.widget() for dock in controller.docks.values()]
    result = {
        "rate": (step1 - step0) / (t1 - t0),
        # CPU time of every thread of the process (training, GUI, BLAS) per step: the
        # work hooks add, much less touched than steps/s by what else the host runs.
        "cpu_us": 1e6 * (cpu1 - cpu0) / max(1, step1 - step0),
        "stride": captures.stride,
        "panes_visible": sum(pane.isVisible() and not pane.visibleRegion().isEmpty()
                             for pane in panes),  # a tab behind another is out of sight
        "pane_redraws": sum(pane.redraws for pane in panes),
        "summaries": controller.summaries,
        "captured": sum(c.captured for c in captures.captures.values()),
    }
    if shot:
        window.grab().save(shot)
    run._stop_and_wait()
    window.close()
    app.processEvents()
    return result


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
    return {"rate": steps / (time.perf_counter() - start), "stride": 1}


def child(args) -> None:
    if args.child == "torch":
        result = torch_rate(args.hooks, args.seconds, args.warmup)
    else:
        result = window_rate(args.child, args.hooks, args.seconds, args.warmup, args.shot)
    print(json.dumps(result))


def measure(variant: str, hooks: int, args, shot: str = "") -> dict:
    command = [sys.executable, __file__, "--child", variant, "--hooks", str(hooks),
               "--seconds", str(args.seconds), "--warmup", str(args.warmup), "--shot", shot]
    out = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    if out.returncode:
        raise SystemExit(f"{variant} with {hooks} hooks failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured per run")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--pairs", type=int, default=8, help="0-hook/5-hook pairs per variant")
    parser.add_argument("--example", choices=EXAMPLES, action="append")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--screenshots", default="", help="folder for a window PNG per variant")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--hooks", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--shot", default="", help=argparse.SUPPRESS)
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
    if args.screenshots:
        Path(args.screenshots).mkdir(parents=True, exist_ok=True)
    for variant in variants:
        runs: dict[int, list[dict]] = {0: [], 5: []}
        for pair in range(args.pairs):
            for hooks in (0, 5):
                shot = ""
                if args.screenshots and pair == 0 and variant != "torch":
                    shot = str(Path(args.screenshots) / f"hook_overhead_{variant}_{hooks}.png")
                runs[hooks].append(measure(variant, hooks, args, shot))
                print(f"  {variant} {hooks} hooks: {runs[hooks][-1]}", flush=True)
        bare = statistics.median(r["rate"] for r in runs[0])
        hooked = statistics.median(r["rate"] for r in runs[5])
        strides = sorted({r["stride"] for r in runs[5]})
        # Each pair ran back to back, so its ratio is the least touched by the drift.
        ratios = [1 - h["rate"] / b["rate"] for b, h in zip(runs[0], runs[5], strict=True)]
        pairs = statistics.median(ratios)
        # The middle half of the pairs: how far this machine's drift spreads one pair.
        quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
        spread = f"{100 * quartiles[0]:+.1f} … {100 * quartiles[2]:+.1f} %"
        cpu = ""
        if variant != "torch":
            cpu0 = statistics.median(r["cpu_us"] for r in runs[0])
            cpu5 = statistics.median(r["cpu_us"] for r in runs[5])
            cpu = f"{cpu0:.0f} → {cpu5:.0f} ({100 * (cpu5 / cpu0 - 1):+.1f} %)"
        table.append((variant, bare, hooked, strides, runs[5], pairs, spread, cpu))
    print("\n| variant | steps/s, 0 hooks | steps/s, 5 hooks | slowdown | median of pairs "
          "| middle half of pairs | CPU µs/step, 0 → 5 hooks | capture stride | panes visible "
          "| pane redraws/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for variant, bare, hooked, strides, hooked_runs, pairs, spread, cpu in table:
        if variant == "torch":
            name, visible, redraws = "PyTorch MLP 2-32-32-32-2, mean/std hooks", "—", "—"
        else:
            name = variant
            visible = str(min(r["panes_visible"] for r in hooked_runs))
            seconds = args.seconds + args.warmup
            redraws = f"{statistics.median(r['pane_redraws'] for r in hooked_runs) / seconds:.1f}"
        print(f"| {name} | {bare:.0f} | {hooked:.0f} | {100 * (1 - hooked / bare):+.1f} % "
              f"| {100 * pairs:+.1f} % | {spread} | {cpu or '—'} "
              f"| {', '.join(map(str, strides))} | {visible} | {redraws} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
