"""ONNX import and predict speed (issue 29): DenseNet-121's import, ResNet-50's predict.

    python benchmarks/onnx_import.py [--repeats 5] [--div 1] [--folder DIR] [--no-cli]

The networks are the full-size ones of tests/app/onnx_import/classic_models.py (real
topology, random weights, BatchNorm statistics randomised), exported with the legacy
torch.onnx exporter at opset 17 with a dynamic batch axis (not timed). `--div 8` divides
every width, for a quick check of the script.

- **import**: `import_onnx` of DenseNet-121 (target < 5 s), everything the user's import
  does: read, fold, convert, compile, check the weights, group repeated blocks, lay out.
  In this process, `--repeats` times after one cold run; then the real command
  `cellwright import MODEL --out PROJECT` in a fresh process each time (Python start,
  module imports and the project's save included);
- **predict**: one 224×224 image through ResNet-50 (target < 3 s on 2 cores), the
  project imported once and saved. The API path: `compile_project` + one predict-mode
  forward, `--repeats` times; the real `cellwright predict PROJECT --input X.npy --output
  Y.npy` in a fresh process each time (load of the project file included). onnxruntime on
  the same file is timed for reference, and the outputs are checked against it.

The commands run after one untimed run, with Python's bytecode cached under the folder (as
an installed package has it), even where PYTHONDONTWRITEBYTECODE is set.

Figures print as min / median / max. OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE are removed
from this command's environment (the script re-executes itself without them).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.engine_vs_torch import BLAS_VARS, blas_info, machine  # noqa: E402


def spread(seconds: list[float]) -> str:
    return (f"{min(seconds):.2f} / {statistics.median(seconds):.2f} / {max(seconds):.2f} s "
            f"(min / median / max of {len(seconds)})")


def cli_command() -> list[str]:
    script = Path(sys.executable).parent / "cellwright"
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.cli"]


def cli_env(folder: Path) -> dict[str, str]:
    """The environment for the command: Python's bytecode cached (under `folder`, not the
    source tree), as an installed package has it, even where PYTHONDONTWRITEBYTECODE is set."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"PYTHONPYCACHEPREFIX": str(folder / "pycache")}


def timed_runs(command: list[str], folder: Path, repeats: int) -> list[float]:
    """Wall times of `command` in a fresh process, after one untimed run (the bytecode)."""
    return [timed_run(command, cli_env(folder)) for _ in range(repeats + 1)][1:]


def timed_run(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return seconds


def export_model(name: str, div: int, path: Path) -> int:
    """The full-size (or /div) network written to `path`; its ONNX node count."""
    import onnx
    import torch

    from tests.app.onnx_import.classic_models import sample, torch_model
    from tests.app.onnx_import.support import export

    start = time.perf_counter()
    export(torch_model(name, div=div), [torch.from_numpy(sample(224, batch=1))], path,
           opset=17)  # fmt: skip
    nodes = len(onnx.load(path).graph.node)
    print(f"{name}: exported to ONNX in {time.perf_counter() - start:.1f} s (not timed "
          f"below): {nodes} ONNX nodes, {path.stat().st_size / 1e6:.1f} MB", flush=True)
    return nodes


def bench_import(path: Path, folder: Path, repeats: int, cli: bool) -> None:
    from app.onnx_import import import_onnx

    start = time.perf_counter()
    result = import_onnx(path)
    cold = time.perf_counter() - start
    print(f"  {result.summary}")
    print(f"  Cellwright nodes: {result.nodes} (at every level), {result.blocks} repeated "
          f"blocks grouped, {result.parameters:,} parameter values")
    warm = []
    for _ in range(repeats):
        start = time.perf_counter()
        import_onnx(path)
        warm.append(time.perf_counter() - start)
    print(f"  import_onnx, first in this process: {cold:.2f} s")
    print(f"  import_onnx: {spread(warm)}   target < 5 s")
    if cli:
        out = folder / "imported.cwproj"
        command = [*cli_command(), "import", str(path), "--out", str(out), "--force"]
        runs = timed_runs(command, folder, repeats)
        print(f"  `cellwright import` (fresh process, save included): {spread(runs)}")


def bench_predict(path: Path, folder: Path, repeats: int, cli: bool) -> None:
    import numpy as np

    import engine
    from app.compiler import compile_project
    from app.io.project_file import save_project
    from app.onnx_import import import_onnx
    from tests.app.onnx_import.classic_models import sample
    from tests.app.onnx_import.support import onnxruntime_outputs

    result = import_onnx(path)
    print(f"  {result.summary}")
    project_path = folder / "resnet50.cwproj"
    save_project(result.project, project_path)
    x = sample(224, batch=1)
    compiles, forwards, totals = [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        compiled = compile_project(result.project)
        compiled.network.set_train(False)
        middle = time.perf_counter()
        got = compiled.network(engine.Tensor(x)).asnumpy()
        end = time.perf_counter()
        compiles.append(middle - start)
        forwards.append(end - middle)
        totals.append(end - start)
    start = time.perf_counter()
    want = onnxruntime_outputs(path, x)[0]
    ort = time.perf_counter() - start
    error = float(np.abs(got - want).max())
    print(f"  compile_project: {spread(compiles)}")
    print(f"  one predict-mode forward (1×3×224×224): {spread(forwards)}")
    print(f"  compile + forward: {spread(totals)}   target < 3 s")
    print(f"  onnxruntime (session made and run once, for reference): {ort:.2f} s; largest "
          f"difference from it {error:.2e}")
    if cli:
        np.save(folder / "x.npy", x)
        command = [*cli_command(), "predict", str(project_path), "--input",
                   str(folder / "x.npy"), "--output", str(folder / "y.npy")]  # fmt: skip
        runs = timed_runs(command, folder, repeats)
        saved = np.load(folder / "y.npy")
        print(f"  `cellwright predict` (fresh process: start, load, compile, forward, "
              f"save): {spread(runs)}; output matches: "
              f"{bool(np.allclose(saved, want, rtol=1e-3, atol=1e-4))}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--div", type=int, default=1, help="divide every width (1: full size)")
    parser.add_argument("--folder", help="where the models and projects go (default: temp)")
    parser.add_argument("--no-cli", action="store_true", help="skip the fresh-process runs")
    args = parser.parse_args(argv)
    if any(v in os.environ for v in BLAS_VARS):
        env = {k: v for k, v in os.environ.items() if k not in BLAS_VARS}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)

    import engine  # noqa: F401  (BLAS loaded, so that blas_info sees it)

    print(f"machine: {machine()}\nBLAS: {blas_info()}\nload average: {os.getloadavg()}")
    with contextlib.ExitStack() as stack:
        folder = Path(args.folder or stack.enter_context(tempfile.TemporaryDirectory()))
        folder.mkdir(parents=True, exist_ok=True)
        size = "full size" if args.div == 1 else f"widths / {args.div}"
        print(f"\nDenseNet-121 ({size}): import")
        densenet = folder / "densenet121.onnx"
        export_model("densenet121", args.div, densenet)
        bench_import(densenet, folder, args.repeats, not args.no_cli)
        print(f"\nResNet-50 ({size}): predict one 224×224 image")
        resnet = folder / "resnet50.onnx"
        export_model("resnet50", args.div, resnet)
        bench_predict(resnet, folder, args.repeats, not args.no_cli)
    print(f"\nload average at the end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
