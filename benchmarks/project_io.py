"""Project save and load of a 10-million-parameter network: time and file size (SPEC §6).

    python benchmarks/project_io.py [--repeats 5] [--folder DIR]

The network is an MLP 1000-4000-1500-10 (Dense, ReLU; 10,020,510 float32 Parameters,
40 MB of weights), its weights as a session leaves them (compiled, then stored into the
project). In a fresh process each, so one measurement's memory does not favour the next:

- save: `save_project` (JSON, the zip with `params.npz` stored, fsync, rename);
- load: `load_project` (the zip read and checked, every array copied out of it);
- open to train: `load_project`, then `compile_project` with the loaded weights, as the
  window and `cellwright train` do;

each `--repeats` times (median and best), with the file size and each process's peak
resident memory beside that of a process that only imported the same modules. The file
goes to `--folder` (default: a temporary folder); the page cache is not dropped, so loads
read from memory, as reopening a project just saved does.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed from this command's environment (the
script re-executes itself without them), as on a user's machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.engine_vs_torch import BLAS_VARS, blas_info, machine  # noqa: E402

WIDTHS = (1000, 4000, 1500, 10)
ACTIONS = ("save", "load", "open")
IDLE = "idle"  # imports only: the floor under the peaks


def big_project():
    """Input 1000 → Dense 4000 → ReLU → Dense 1500 → ReLU → Dense 10 → Output, with weights."""
    from app.catalogue import CATALOGUE
    from app.compiler import compile_project
    from app.document import Graph, Project

    graph = Graph()
    layers = [("Input", {"shape": (WIDTHS[0],)})]
    for i, (fan_in, fan_out) in enumerate(zip(WIDTHS, WIDTHS[1:], strict=False)):
        if i:
            layers.append(("ReLU", {}))
        layers.append(("Dense", {"in_channels": fan_in, "out_channels": fan_out}))
    layers.append(("Output", {"loss": "CrossEntropyLoss"}))
    previous = None
    for i, (type_name, params) in enumerate(layers):
        node = graph.add_node(CATALOGUE.new_node(type_name, position=(i * 150, 0), params=params))
        if previous is not None:
            graph.connect(previous.id, "out", node.id, "in")
        previous = node
    project = Project(graph=graph, name="big", training={
        "dataset": {"builtin": "spirals"}, "learning_rate": 0.01, "batch_size": 32,
    })  # fmt: skip
    compile_project(project).store_values(project)
    return project


def parameter_count(project) -> int:
    return sum(a.size for values in project.param_values.values() for a in values.values())


def child(action: str, path: Path) -> dict:
    from app.compiler import compile_project
    from app.io.project_file import load_project, save_project

    if action == IDLE:
        return {"seconds": 0.0, "peak_mb": _peak_mb(), "parameters": 0}
    if action == "save":
        project = big_project()
        start = time.perf_counter()
        save_project(project, path)
        seconds = time.perf_counter() - start
    else:
        start = time.perf_counter()
        project = load_project(path)
        if action == "open":
            compiled = compile_project(project)
            assert compiled.load_values(project), "the weights did not fit the network"
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "peak_mb": _peak_mb(), "parameters": parameter_count(project)}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def measure(action: str, path: Path) -> dict:
    command = [sys.executable, __file__, "--child", action, "--path", str(path)]
    out = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    if out.returncode:
        raise SystemExit(f"{action} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--folder", help="where the project file is written")
    parser.add_argument("--child", choices=(*ACTIONS, IDLE), help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if any(v in os.environ for v in BLAS_VARS):
        env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    if args.child:
        print(json.dumps(child(args.child, Path(args.path))))
        return 0

    print(f"machine: {machine()}\nBLAS: {blas_info()}")
    floor = measure(IDLE, Path(os.devnull))["peak_mb"]
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        path = Path(folder) / "big.cwproj"
        runs: dict[str, list[dict]] = {action: [] for action in ACTIONS}
        for _ in range(args.repeats):
            for action in ACTIONS:  # interleaved: this shared machine drifts
                runs[action].append(measure(action, path))
                print(f"  {action}: {runs[action][-1]}", flush=True)
        size = path.stat().st_size
    count = runs["save"][0]["parameters"]
    weights = count * 4
    print(f"\nMLP {'-'.join(map(str, WIDTHS))}: {count:,} Parameters (float32, "
          f"{weights / 1e6:.1f} MB); file {size / 1e6:.1f} MB ({size / weights:.3f}× the "
          f"weights)\n")
    print("| action | median s | best s | MB/s (median) | peak RSS, MB "
          f"(a process that only imported: {floor:.0f}) |")
    print("|---|---|---|---|---|")
    for action, label in (("save", "save_project"), ("load", "load_project"),
                          ("open", "load_project + compile_project")):  # fmt: skip
        seconds = [r["seconds"] for r in runs[action]]
        median = statistics.median(seconds)
        peak = statistics.median(r["peak_mb"] for r in runs[action])
        print(f"| {label} | {median:.3f} | {min(seconds):.3f} | {size / 1e6 / median:.0f} "
              f"| {peak:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
