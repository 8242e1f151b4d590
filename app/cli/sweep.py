"""`cellwright sweep` (see app.cli.run_parsers for its command line).

Trains a fresh copy of the network for each trial of a grid (--grid) or random search
(--range, --trials), records each as a run of the project with the values it used, and
saves the project (in place or --out) with the sweep's queue state; then prints a table
of the sweep's runs (or JSON) with the best run marked. A line per run goes to stderr
unless --quiet. Ctrl+C saves the runs done, marks the sweep stopped and exits 130;
--resume goes on with the trials not done. A value that can't be used is refused with
one `cellwright: error:` line naming the setting and the value (exit 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from app.cli import EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBLEM, fail, say, warn
from app.cli.opening import open_project
from app.cli.train import save_somewhere
from app.document import Project, RunRecord
from app.document.runs import METRICS
from app.io.project_file import ProjectFileError, check_can_save
from app.runs.sweep import Sweep, SweepError, trial_text
from app.runs.sweep_spec import SweepSpec, SweepSpecError
from app.runs.sweep_values import SHORT, show


def run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    out = Path(args.out) if args.out else path
    try:
        project = open_project(path, args)
    except ProjectFileError as exc:
        return fail(str(exc))
    try:
        sweep = _sweep(project, path, args)
        check_can_save(project, out)  # before training, so no run is lost to the save
    except (SweepSpecError, SweepError) as exc:
        return fail(str(exc))
    except ProjectFileError as exc:
        return fail(f"{exc} Nothing was trained.")
    stream = None if args.quiet else sys.stderr
    if not sweep.pending():
        say(f"cellwright: the sweep has no runs left to train: all {sweep.total} were "
            "trained.", sys.stderr)  # fmt: skip
        _print(sweep, path, args)
        return EXIT_OK
    problem, interrupted = _train(sweep, path.name, stream)
    saved, save_problem = save_somewhere(project, out)
    _print(sweep, saved, args)
    if save_problem is not None:
        return fail(save_problem)
    if problem is not None:
        fail(f"{problem} The {len(sweep.records())} runs done were saved to {saved}.")
        return EXIT_PROBLEM
    if interrupted:
        say(f"cellwright: interrupted after {sweep.total - len(sweep.pending())} of "
            f"{sweep.total} runs; `cellwright sweep {path} --resume` goes on.",
            sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    return EXIT_OK


def _sweep(project: Project, path: Path, args: argparse.Namespace) -> Sweep:
    """The sweep asked for: the saved one (--resume) or a new one from the command line."""
    if args.resume:
        extra = [flag for flag, given in (("--grid", args.grid), ("--range", args.range),
                                          ("--trials", args.trials), ("--epochs", args.epochs),
                                          ("--metric", args.metric)) if given]  # fmt: skip
        if extra:
            raise SweepError(f"--resume goes on with the saved sweep as it was set; leave "
                             f"out {', '.join(extra)}.")  # fmt: skip
        return Sweep.resume(project, folder=path.parent)
    if not args.grid and not args.range:
        raise SweepError("Say what to sweep: --grid NAME=V1,V2,… (every combination) or "
                         "--range NAME=LOW..HIGH[:log] (random draws), e.g. --grid "
                         "lr=0.001,0.01,0.1.")  # fmt: skip
    random = bool(args.range or args.trials)
    spec = SweepSpec.parse([*args.grid, *args.range], mode="random" if random else "grid",
                           trials=args.trials or 0, seed=args.seed, metric=args.metric or "",
                           epochs=args.epochs)  # fmt: skip
    old = project.runs.sweep
    if old and old.get("status") != "finished":
        left = len(old.get("trials", ())) - len(old.get("done_trials", ()))
        warn(f"the project's interrupted sweep ({left} runs left) is replaced by this one; "
             "--resume would have gone on with it.")  # fmt: skip
    return Sweep.start(project, spec, folder=path.parent)


def _train(sweep: Sweep, label: str, stream: TextIO | None) -> tuple[str | None, bool]:
    """Train the pending trials here; (why it stopped with an error or None, interrupted)."""
    total = sweep.total
    if stream is not None:
        spec = sweep.spec
        epochs = spec.epochs or sweep.project.training.get("epochs", 10)
        each = "" if any(a.name == "epochs" for a in spec.axes) else \
            f", {epochs} epoch{'s' * (epochs != 1)} each"
        kind = "random search" if spec.mode == "random" else "grid"
        left = len(sweep.pending())
        runs = f"{left} of {total} runs" if left != total else f"{total} runs"
        say(f"Sweeping {label}: {runs} ({kind} over "
            f"{', '.join(SHORT.get(a.name, a.name) for a in spec.axes)}){each}; each trains a "
            "fresh copy of the network", stream)  # fmt: skip
    sweep.mark("running")
    try:
        for index, values in sweep.pending():
            line = Line(stream, f"[{index + 1}/{total}] {trial_text(values)}")
            started = time.monotonic()
            record = sweep.train(index, values, progress=line.progress)
            if record is None:
                break
            sweep.record(record)
            line.end(f"{_summary(sweep, record)} ({time.monotonic() - started:.1f} s)")
        return None, False
    except KeyboardInterrupt:
        return None, True
    except SweepError as exc:
        return str(exc), False
    finally:
        if sweep.pending():
            sweep.mark("stopped")


def _summary(sweep: Sweep, record: RunRecord) -> str:
    metric = sweep.metric
    value = record.metric(metric)
    shown = "—" if value is None else _format(metric, value)
    failed = f" ({record.status})" if record.status != "finished" else ""
    return f"{METRICS[metric][0]} {shown}, {record.steps} steps{failed}"


class Line:
    """A run's progress on a terminal (redrawn), and its result line on any stream."""

    def __init__(self, stream: TextIO | None, label: str) -> None:
        self.stream, self.label = stream, label
        isatty = getattr(stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._shown = 0.0

    def progress(self, step: int, steps: int) -> None:
        now = time.monotonic()
        if self.stream is None or not self.tty or now - self._shown < 0.1:
            return
        self._shown = now
        self.stream.write(f"\r{self.label}: step {step}/{steps}")
        self.stream.flush()

    def end(self, text: str) -> None:
        if self.stream is not None:
            start = "\r\033[K" if self.tty else ""
            say(f"{start}{self.label}: {text}", self.stream)


# ---- the results -----------------------------------------------------------------------

HEADERS = {"final_loss": "loss", "best_loss": "best loss", "final_accuracy": "acc",
           "best_accuracy": "best acc", "final_val_loss": "val loss",
           "best_val_loss": "best val loss", "final_val_accuracy": "val acc",
           "best_val_accuracy": "best val acc"}  # the table's short column names

def _format(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1%}" if "accuracy" in metric else f"{value:.4g}"


def _columns(sweep: Sweep, records: list[RunRecord]) -> list[str]:
    """The ranking metric first, then every other metric some run has."""
    metric = sweep.metric
    others = [m for m in METRICS if m != metric
              and any(r.metric(m) is not None for r in records)]  # fmt: skip
    return [metric, *others]


def _print(sweep: Sweep, saved: Path, args: argparse.Namespace) -> None:
    records = sweep.records()
    best = sweep.best()
    if args.json:
        say(json.dumps(as_json(sweep, records, best, saved), indent=1, allow_nan=False))
        return
    if not records:
        say(f"No run of the sweep finished; the project was saved to {saved}.")
        return
    say(table(sweep, records, best))
    if best is not None:
        value = _format(sweep.metric, best.metric(sweep.metric))
        say(f"Best: {best.name} ({METRICS[sweep.metric][0]} {value}) — {len(records)} of "
            f"{sweep.total} runs recorded in {saved}")  # fmt: skip


def table(sweep: Sweep, records: list[RunRecord], best: RunRecord | None) -> str:
    """One row per run: its values, the metrics, steps and seconds; the best marked *."""
    axes = [a.name for a in sweep.spec.axes]
    metrics = _columns(sweep, records)
    status = any(r.status != "finished" for r in records)
    header = ["", "#", *(SHORT.get(a, a) for a in axes), *(HEADERS[m] for m in metrics),
              *(["status"] if status else []), "steps", "seconds"]  # fmt: skip
    rows = [header]
    for record in records:
        values = record.sweep.get("values", {})
        rows.append(["*" if record is best else "", str(record.sweep.get("index", 0) + 1),
                     *(show(values.get(a, "")) for a in axes),
                     *(_format(m, record.metric(m)) for m in metrics),
                     *([record.status] if status else []), str(record.steps),
                     _seconds(record.duration)])  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    numeric = set(range(1, len(header))) - set(range(2, 2 + len(axes)))
    lines = []
    for row in rows:
        cells = [cell.rjust(w) if i in numeric and row is not header else cell.ljust(w)
                 for i, (cell, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _seconds(duration: float) -> str:
    return f"{duration:.2f}" if duration < 10 else f"{duration:.0f}"


def as_json(sweep: Sweep, records: list[RunRecord], best: RunRecord | None,
            saved: Path) -> dict[str, Any]:  # fmt: skip
    return {
        "project": str(saved), "sweep": sweep.id, "status": sweep.status,
        "metric": sweep.metric, "trials": sweep.total, "done": len(records),
        "best": None if best is None else best.id,
        "runs": [{"trial": r.sweep.get("index", 0) + 1, "id": r.id, "name": r.name,
                  "values": r.sweep.get("values", {}), "status": r.status,
                  "metrics": {m: r.metric(m) for m in METRICS}, "steps": r.steps,
                  "seconds": round(r.duration, 3), "best": r is best} for r in records],
    }  # fmt: skip
