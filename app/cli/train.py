"""`cellwright train PROJECT`: train with a progress bar on stderr, then save the project."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from app.cli import EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBLEM, fail, say, warn
from app.cli.opening import open_project
from app.compiler import CompileError
from app.datasets.images import recorded
from app.datasets.text import pinned
from app.document import Project
from app.io.project_file import ProjectFileError, check_can_save, save_project
from app.session import (
    PREDICT_MODE,
    STOPPED,
    TRAIN_MODE,
    Progress,
    TrainingError,
    TrainingFailed,
    TrainingFinished,
    TrainingSession,
    TrainingStarted,
)


def run(args: argparse.Namespace) -> int:
    path = Path(args.project)
    out = Path(args.out) if args.out else path
    try:
        project = open_project(path, args)
    except ProjectFileError as exc:
        return fail(str(exc))
    if args.lr is not None:
        project.training["learning_rate"] = args.lr
    try:
        check_can_save(project, out)  # before the run, so a run is never lost to the save
        session = TrainingSession(project, folder=path.parent, restart=args.restart,
                                  origin="cli")  # recorded in the run history, and saved
    except ProjectFileError as exc:
        return fail(f"{exc} Nothing was trained.")
    except (TrainingError, CompileError) as exc:
        return fail(f"{path.name}: {exc}")
    vocabulary = pinned(project.training.get("dataset"), session.dataset)
    if vocabulary is not None:  # saved with the project: token ids keep their meaning
        project.training["dataset"] = vocabulary
    newer = recorded(project.training.get("dataset"), session.dataset)
    if newer is not None:  # an image folder's file-list digest, as read now
        project.training["dataset"] = newer
    if session.dataset.note:
        warn(session.dataset.note)
    if session.edits_note:  # data edits naming samples the data no longer has
        warn(session.edits_note)
    bar = None if args.quiet else ProgressBar(sys.stderr, path.name)
    if bar is not None:
        session.events.subscribe(bar.on_event)
    interrupted = False
    session.start(epochs=args.epochs)
    try:
        while session.wait(0.25) is None:
            pass
    except KeyboardInterrupt:  # stop after the current step, then save what was trained
        interrupted = True
        session.stop()
        session.wait()
    result = session.result
    saved, problem = save_somewhere(project, out)
    if problem is not None:
        return fail(problem)
    out = saved
    if result is None:  # only if the worker thread were killed under us
        return fail(f"Training ended without a result; the project was saved to {out}.")
    if isinstance(result, TrainingFailed):
        fail(f"{result.message} The project was saved to {out}.")
        return EXIT_PROBLEM
    say(final_line(session, result, out))
    if interrupted and result.reason == STOPPED:
        say(f"cellwright: interrupted at step {result.step}; train again to continue.",
            sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    return EXIT_OK


def save_somewhere(project: Project, out: Path) -> tuple[Path, str | None]:
    """Save the trained project to `out`; if that fails, beside it or in the temporary
    folder under another name, so the run is not lost. (Where it went, the error line
    or None.)"""
    try:
        save_project(project, out)
        return out, None
    except ProjectFileError as exc:
        first = str(exc)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = f"{out.stem}.unsaved-{stamp}{out.suffix or '.cwproj'}"
    for spare in (out.with_name(name), Path(tempfile.gettempdir()) / name):
        try:
            save_project(project, spare)
        except ProjectFileError:
            continue
        return spare, f"{first} The trained project was saved to {spare} instead."
    return out, f"{first} The trained project could not be saved anywhere else either."


def final_line(session: TrainingSession, result: TrainingFinished, out: Path) -> str:
    """'epoch 60, step 600 (predict mode, whole set): loss 0.02, … — saved to x.cwproj'.

    The numbers are measured in predict mode on the whole training and validation sets,
    unlike the progress bar's running means of batches in train mode: the line says so.
    """
    loss, accuracy = session.evaluate(session.train_set)
    parts = [f"loss {loss:.4g}"]
    if accuracy is not None:
        parts.append(f"accuracy {accuracy:.1%}")
    val_loss, val_accuracy = session.evaluate(session.val_set)
    if val_loss is not None:
        parts.append(f"validation loss {val_loss:.4g}")
    if val_accuracy is not None:
        parts.append(f"validation accuracy {val_accuracy:.1%}")
    where = f"epoch {result.epoch}, step {result.step} ({PREDICT_MODE})"
    return f"{where}: {', '.join(parts)} — saved to {out}"


class ProgressBar:
    """Draws training progress on `stream`: a redrawn bar on a terminal, else a line per 10%."""

    WIDTH = 24

    def __init__(self, stream: TextIO, label: str, interval: float = 0.1) -> None:
        self.stream = stream
        self.label = label
        self.interval = interval
        isatty = getattr(stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self._planned = 0
        self._target = 0
        self._shown_at = 0.0
        self._tenth = 0
        self._drawn = False
        self._started = time.monotonic()

    def on_event(self, event: object) -> None:
        if isinstance(event, TrainingStarted):
            self._planned, self._target = event.steps_planned, event.target_epoch
            self._started = time.monotonic()
            first = event.epoch + 1
            epochs = f"epoch {first}" if first >= self._target else f"epochs {first}–{self._target}"
            self._write(f"Training {self.label} on {event.dataset}: {epochs}, "
                        f"{event.steps_planned} steps; train-mode loss and accuracy are the "
                        f"{TRAIN_MODE.split(', ', 1)[1]}\n")  # fmt: skip
        elif isinstance(event, Progress):
            self._progress(event)
        elif isinstance(event, TrainingFinished | TrainingFailed) and self._drawn and self.tty:
            self._write("\n")

    def _progress(self, event: Progress) -> None:
        planned = max(self._planned, 1)
        done = min(event.run_step / planned, 1.0)
        text = self._text(event, done)
        if self.tty:
            now = time.monotonic()
            if now - self._shown_at >= self.interval or event.run_step >= planned:
                filled = round(done * self.WIDTH)
                bar = "#" * filled + "-" * (self.WIDTH - filled)
                self._write(f"\r[{bar}] {text}")
                self._shown_at = now
                self._drawn = True
        else:
            tenth = int(done * 10)
            if tenth > self._tenth:
                self._tenth = tenth
                self._write(f"  {text}\n")

    def _text(self, event: Progress, done: float) -> str:
        parts = [f"{done:4.0%} step {event.run_step}/{self._planned}",
                 f"epoch {event.epoch}/{self._target}",
                 f"train-mode loss {event.mean_loss:.4g}"]  # fmt: skip
        if event.mean_accuracy is not None:
            parts.append(f"acc {event.mean_accuracy:.1%}")
        parts.append(f"{time.monotonic() - self._started:.1f}s")
        return " · ".join(parts)

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()
