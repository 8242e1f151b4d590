"""`cellwright runs PROJECT [--json]`: the project's recorded runs — when, who trained, how it
ended, steps, duration, steps/s, the final and best metrics, whether the weights are kept,
what changed against the run before and the settings (see app.cli.run_parsers)."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

from app.cli import EXIT_OK, fail, say
from app.cli.opening import open_project
from app.document import Project
from app.document.run_diff import change_text, show
from app.document.runs import METRICS, RunRecord
from app.io.project_file import ProjectFileError

_SHOWN = (("loss", "loss"), ("accuracy", "accuracy"), ("val_loss", "val loss"),
          ("val_accuracy", "val accuracy"))  # fmt: skip


def run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    try:
        project = open_project(path, args)
    except ProjectFileError as exc:
        return fail(str(exc))
    if args.json:
        say(json.dumps(as_json(project, path.name), indent=1, allow_nan=False,
                       ensure_ascii=False))  # fmt: skip
    else:
        say("\n".join(text_lines(project, path.name)))
    return EXIT_OK


def as_json(project: Project, file_name: str) -> dict[str, Any]:
    runs = project.runs
    best = runs.best()
    return {
        "file": file_name,
        "project": project.name,
        "cap_mb": runs.cap_mb,
        "best": None if best is None else best.id,
        "sweep": runs.sweep,
        "runs": [_record_json(r) for r in runs],
    }


def _record_json(r: RunRecord) -> dict[str, Any]:
    return {
        "id": r.id, "name": r.name, "colour": r.colour, "started": r.started,
        "origin": r.origin, "status": r.status, "message": r.message,
        "first_step": r.first_step, "steps": r.steps, "duration": r.duration,
        "steps_per_second": r.steps_per_second,
        "metrics": {name: r.metric(name) for name in METRICS},
        "kept_weights": r.kept, "named": r.named,
        "changes": [change_text(c) for c in r.diff], "diff": r.diff,
        "settings": r.settings, "sweep": r.sweep,
    }  # fmt: skip


def text_lines(project: Project, file_name: str) -> list[str]:
    runs = project.runs
    if not len(runs):
        return [f"{file_name}: no runs recorded yet (train it to record one)."]
    best = runs.best()
    kept = sum(r.kept for r in runs)
    lines = [f"{file_name}: {len(runs)} run{'s' * (len(runs) != 1)} (history capped at "
             f"{runs.cap_mb:g} MB; weights kept of {kept}); * marks the best run"]  # fmt: skip
    previous = None
    for r in runs:
        lines += ["", *_record_lines(r, r is best, previous)]
        previous = r
    return lines


def _record_lines(r: RunRecord, best: bool, previous: RunRecord | None) -> list[str]:
    rate = r.steps_per_second
    speed = f", {rate:.4g} steps/s" if rate is not None else ""
    head = (f"{'*' if best else ' '} {r.name} · {_when(r.started)} · {r.origin} · {r.status} · "
            f"{r.steps} steps (from step {r.first_step}) in {r.duration:.3g} s{speed}")  # fmt: skip
    lines = [head]
    for which in ("final", "best"):
        parts = [f"{shown} {_number(r.metric(f'{which}_{key}'), key)}" for key, shown in _SHOWN
                 if r.metric(f"{which}_{key}") is not None]  # fmt: skip
        lines.append(f"    {which + ':':7}{', '.join(parts) if parts else 'none'}")
    lines.append(f"    weights: {'kept' if r.kept else 'not kept'}")
    if r.sweep:
        values = ", ".join(f"{k}={show(v)}" for k, v in (r.sweep.get("values") or {}).items())
        lines.append(f"    sweep:   trial {r.sweep.get('index', '?')}: {values}")
    if previous is None:
        lines.append("    changes: (the first run)")
    elif not r.diff:
        lines.append(f"    changes: none since {previous.name}")
    else:
        lines.append(f"    changes since {previous.name}:")
        lines += [f"      {change_text(c)}" for c in r.diff]
    settings = ", ".join(f"{k} {show(v)}" for k, v in r.settings.items())
    lines += textwrap.wrap(f"settings: {settings}", 96, initial_indent="    ",
                           subsequent_indent="      ", break_on_hyphens=False)  # fmt: skip
    if r.status != "finished" and r.message:
        lines.append(f"    {r.message}")
    return lines


def _when(started: str) -> str:
    """'2026-11-26 06:44 UTC' from an ISO time; the text as it is if it is not one."""
    if len(started) >= 16 and started[10] == "T" and started.endswith("+00:00"):
        return f"{started[:10]} {started[11:16]} UTC"
    return started


def _number(value: float | None, key: str) -> str:
    if value is None:
        return "none"
    return f"{value:.1%}" if "accuracy" in key else f"{value:.4g}"
