"""The Run panel's progress view: a bar with epoch, step, speed and time left, and labelled numbers.

It only shows what it is given; `app.gui.run` feeds it from a GUI timer. The words
say which numbers are running means of batches in train mode and which are measured
on a whole set in predict mode, as `cellwright train` does.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QProgressBar, QSizePolicy, QVBoxLayout, QWidget

from app.session import PREDICT_MODE, TRAIN_MODE, EpochMetrics, Progress


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _percent(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.1%}"


class Readout(QWidget):
    """Lines of text that change many times a second: a repaint, never a relayout.

    A QLabel whose text changes asks the window to lay itself out again; at 10 Hz during
    training that cost the training thread a third of its speed (every wake-up of the
    GUI thread competes with it for the interpreter and the cores).
    """

    def __init__(self, lines: int, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self._text = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(self.fontMetrics().lineSpacing() * lines + 4)

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:  # noqa: N802 (QLabel's name, so it reads the same)
        if text != self._text:
            self._text = text
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
        painter.drawText(QRect(0, 2, self.width(), self.height() - 2), flags, self._text)


class RunProgress(QWidget):
    """Progress of the current (or last) run and the latest numbers, each saying what it is."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("run_progress")
        self.bar = QProgressBar(self)
        self.bar.setObjectName("run_progress_bar")
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.bar.setFormat("Not trained yet")
        self.bar.setValue(0)
        self.speed = Readout(1, "run_speed", self)
        self.status = QLabel("", self)
        self.status.setObjectName("run_status")
        self.status.setWordWrap(True)
        self.train_numbers = Readout(3, "train_numbers", self)
        self.train_numbers.setToolTip(
            f"Train-mode numbers ({TRAIN_MODE}): Dropout is on and BatchNorm uses each "
            "batch's statistics while the weights change, so they differ from the "
            f"predict-mode numbers ({PREDICT_MODE})."
        )
        self.val_numbers = Readout(3, "validation_numbers", self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 4)
        for widget in (self.bar, self.speed, self.status, self.train_numbers, self.val_numbers):
            layout.addWidget(widget)

    def show_progress(self, progress: Progress | None, target_epoch: int | None,
                      rate: float | None, live: bool = True) -> None:  # fmt: skip
        """The latest step of a run: bar, counters, steps/s and time left (`live`: the run
        goes on; else only the numbers, the bar keeping what `show_status` put there)."""
        if progress is None:
            return
        if live:
            self._show_bar(progress, target_epoch, rate)
        else:
            planned = progress.steps_planned
            self.speed.setText(f"{progress.run_step}/{planned} steps in the last run")
        accuracy = ("" if progress.mean_accuracy is None
                    else f" · accuracy {_percent(progress.mean_accuracy)}")  # fmt: skip
        self.train_numbers.setText(
            f"Train-mode loss {progress.mean_loss:.4g}{accuracy}\n({TRAIN_MODE})"
        )

    def _show_bar(self, progress: Progress, target_epoch: int | None,
                  rate: float | None) -> None:  # fmt: skip
        planned = max(progress.steps_planned, 1)
        self.bar.setValue(round(1000 * min(progress.run_step / planned, 1.0)))
        epochs = f"epoch {progress.epoch}/{target_epoch}" if target_epoch else (
            f"epoch {progress.epoch}")
        self.bar.setFormat(f"{epochs} · step {progress.step}")
        parts = [f"{progress.run_step}/{planned} steps this run"]
        if rate:
            parts.append(f"{rate:.0f} steps/s" if rate >= 10 else f"{rate:.1f} steps/s")
            parts.append(f"{_duration((planned - progress.run_step) / rate)} left")
        self.speed.setText(" · ".join(parts))

    def show_epoch(self, metrics: EpochMetrics | None) -> None:
        """The last finished epoch's validation numbers (whole set, predict mode)."""
        if metrics is None:
            self.val_numbers.setText("")
            return
        if metrics.val_loss is None:
            self.val_numbers.setText(f"Epoch {metrics.epoch}: no validation split")
            return
        accuracy = ("" if metrics.val_accuracy is None
                    else f" · accuracy {_percent(metrics.val_accuracy)}")  # fmt: skip
        self.val_numbers.setText(
            f"Validation after epoch {metrics.epoch}: loss {metrics.val_loss:.4g}{accuracy}\n"
            f"({PREDICT_MODE})"
        )

    def show_status(self, text: str, *, idle_step: int | None = None,
                    idle_epoch: int | None = None) -> None:  # fmt: skip
        """A one-line state ('Paused at step 120'); when idle, the bar says where training is."""
        self.status.setText(text)
        if idle_step is not None:
            self.bar.setFormat(
                "Not trained yet" if idle_step == 0
                else f"{idle_epoch} epoch{'s' if idle_epoch != 1 else ''} done · step {idle_step}"
            )

    def clear(self) -> None:
        self.bar.setValue(0)
        self.bar.setFormat("Not trained yet")
        for label in (self.speed, self.status, self.train_numbers, self.val_numbers):
            label.setText("")
