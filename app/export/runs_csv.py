"""Every run's curve points as one CSV in long format: `run,step,metric,value`.

    points = write_runs_csv(project, "runs.csv")    # ExportError if it can't be written

One row per point: `run` is the run's name, `step` the step it was measured at, `metric`
one of METRICS_WRITTEN — the step curve's loss, accuracy and learning_rate (each step's
batch, train mode), and the epoch curve's values at the step each epoch ended
(epoch_loss, epoch_accuracy: the epoch's train-mode means; val_loss, val_accuracy: the
validation set in predict mode). Missing points (NaN: accuracy of a regression,
validation without a split) are left out. Runs come oldest first, each metric's points
in step order. The file is written beside its target under a temporary name and renamed
over it, so a failed export never leaves half a file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import os
import secrets
from pathlib import Path

from app.document import Project
from app.document.runs import EPOCH_COLUMNS, STEP_COLUMNS
from app.export.report import ExportError

HEADER = ("run", "step", "metric", "value")
# metric written -> (curve, its column)
_SOURCES = {
    "loss": ("steps", "loss"),
    "accuracy": ("steps", "accuracy"),
    "learning_rate": ("steps", "learning_rate"),
    "epoch_loss": ("epochs", "loss"),
    "epoch_accuracy": ("epochs", "accuracy"),
    "val_loss": ("epochs", "val_loss"),
    "val_accuracy": ("epochs", "val_accuracy"),
}
METRICS_WRITTEN = tuple(_SOURCES)


def runs_csv_text(project: Project) -> tuple[str, int]:
    """The CSV's text and how many points it holds."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    points = 0
    for record in project.runs:
        curves = {"steps": (record.steps_curve, STEP_COLUMNS),
                  "epochs": (record.epochs_curve, EPOCH_COLUMNS)}  # fmt: skip
        for metric, (curve, column) in _SOURCES.items():
            rows, columns = curves[curve]
            if not len(rows):
                continue
            steps = rows[:, columns.index("step")]
            values = rows[:, columns.index(column)]
            for step, value in sorted(zip(steps.tolist(), values.tolist(), strict=True)):
                if math.isfinite(value) and math.isfinite(step):
                    writer.writerow((record.name, int(step), metric, f"{value:.9g}"))
                    points += 1
    return out.getvalue(), points


def write_runs_csv(project: Project, path: str | os.PathLike[str]) -> int:
    """Write every run's curve points to `path` (atomically); the number of points."""
    target = Path(path)
    text, points = runs_csv_text(project)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.exporting")
    try:
        with open(tmp, "x", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise ExportError(f"Could not write {target}: {exc.strerror or exc}.") from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return points
