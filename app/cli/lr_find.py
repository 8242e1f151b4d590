"""`cellwright lr-find PROJECT`: train a copy with a growing learning rate, print what it found
(steps taken, why it stopped, the steepest fall, a tenth of the minimum, the suggestion) as
text or JSON; with --apply, set the suggestion as the project's learning rate and save it.
The project file is written only with --apply (see app.cli.run_parsers for the line)."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from app.cli import EXIT_OK, fail, say
from app.cli.opening import open_project
from app.io.project_file import ProjectFileError, check_can_save, save_project
from app.runs.lr_finder import (
    DEFAULT_END,
    DEFAULT_START,
    DEFAULT_STEPS,
    LRFinderError,
    LRFinding,
    find_learning_rate,
)


def run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    start = DEFAULT_START if args.start is None else args.start
    end = DEFAULT_END if args.end is None else args.end
    steps = DEFAULT_STEPS if args.steps is None else args.steps
    try:
        project = open_project(path, args)
    except ProjectFileError as exc:
        return fail(str(exc))
    current = project.training.get("learning_rate")
    try:
        if args.apply:  # before the search, so a save bound to fail is told at once
            check_can_save(project, path)
        finding = find_learning_rate(project, folder=path.parent, start=start, end=end,
                                     steps=steps)  # fmt: skip
    except ProjectFileError as exc:
        return fail(f"{exc} Nothing was searched.")
    except LRFinderError as exc:
        return fail(f"{path.name}: {exc}")
    applied = False
    if args.apply and finding.suggestion is not None:
        project.training["learning_rate"] = finding.suggestion
        try:
            save_project(project, path)
        except ProjectFileError as exc:
            return fail(f"{exc} The learning rate was not changed.")
        applied = True
    if args.json:
        say(json.dumps(as_json(finding, path.name, start, end, current, applied), indent=1,
                       allow_nan=False))  # fmt: skip
    else:
        say("\n".join(text_lines(finding, path.name, start, end, current, applied)))
    if finding.suggestion is None:
        unchanged = " The project was not changed." if args.apply else ""
        return fail(f"{path.name}: no learning rate could be suggested from "
                    f"{finding.steps} steps; {_advice(finding)}{unchanged}")  # fmt: skip
    return EXIT_OK


def _advice(finding: LRFinding) -> str:
    if finding.steps < 10:
        return "the loss blew up at once: try a lower --start."
    return "the loss never fell: try a higher --end or more --steps."


def _rate(value: float | None) -> str:
    return "none" if value is None else f"{value:.3g}"


def text_lines(finding: LRFinding, name: str, start: float, end: float, current: Any,
               applied: bool) -> list[str]:  # fmt: skip
    """What the search found, a line each, for a person."""
    stopped = finding.stopped_early or "it reached the end rate"
    lines = [
        f"{name}: {finding.steps} steps, rate {start:.3g} → {end:.3g}, "
        f"{finding.seconds:.2f} s",
        f"  stopped:          {stopped}",
        f"  steepest descent: {_rate(finding.steepest)}",
        f"  minimum / 10:     {_rate(finding.min_tenth)}",
        f"  suggestion:       {_rate(finding.suggestion)}",
    ]
    if isinstance(current, int | float) and not isinstance(current, bool):
        lines.append(f"  learning rate:    {current:.3g} in the project")
    if applied:
        lines.append(f"learning_rate set to {_rate(finding.suggestion)}; {name} saved.")
    elif finding.suggestion is not None:
        lines.append("The project was not changed (--apply sets the suggestion).")
    return lines


def _number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def as_json(finding: LRFinding, name: str, start: float, end: float, current: Any,
            applied: bool) -> dict[str, Any]:  # fmt: skip
    """Everything the text shows, and every point of the curve, as plain JSON values."""
    return {
        "project": name, "start": start, "end": end, "steps": finding.steps,
        "stopped_early": finding.stopped_early or None, "seconds": round(finding.seconds, 3),
        "steepest": finding.steepest, "min_tenth": finding.min_tenth,
        "suggestion": finding.suggestion, "learning_rate": current, "applied": applied,
        "points": [
            {"rate": float(rate), "loss": _number(loss), "smoothed": _number(smoothed)}
            for rate, loss, smoothed in zip(finding.rates, finding.losses, finding.smoothed,
                                            strict=True)
        ],
    }  # fmt: skip
