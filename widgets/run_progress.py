"""The Run panel's progress view: a bar with epoch, step, speed and time left, and labelled numbers.

It only shows what it is given; `app.gui.run` feeds it from a GUI timer. The words
say which numbers are running means of batches in train mode and which are measured
on a whole set in predict mode, as `cellwright train` does.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QProgressBar, QSizePolicy, QVBoxLayout, QWidget

from app.session import PREDICT_MODE, TRAIN_MODE, EpochMetrics, Progress


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _percent(value: float | None) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.1%}"


FLAGS = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap
MARGIN = 2  # px above the text (and below it)


class Readout(QWidget):
    """Lines of text that change many times a second: a repaint, and a relayout only when
    the text needs more lines than it has (or a resize changes how it wraps).

    A QLabel whose text changes asks the window to lay itself out again; at 10 Hz during
    training that cost the training thread a third of its speed (every wake-up of the
    GUI thread competes with it for the interpreter and the cores). New numbers rarely
    need another line; the height follows the text only then, so nothing is cut and
    nothing overlaps the next line of the panel, however narrow the dock.
    """

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self._text = ""
        self._lines = 0  # the lines it keeps room for while it shows text
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self._fit(grow_only=False)

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:  # noqa: N802 (QLabel's name, so it reads the same)
        if text != self._text:
            self._text = text
            self._fit(grow_only=bool(text))
            self.update()

    def lines_needed(self, width: int | None = None) -> int:
        """How many lines the text takes when wrapped at `width` (default: the current one)."""
        if not self._text:
            return 0
        width = self.width() if width is None else width
        rect = self.fontMetrics().boundingRect(QRect(0, 0, max(width, 1), 1 << 20), FLAGS,
                                               self._text)  # fmt: skip
        return max(1, -(-rect.height() // self.fontMetrics().lineSpacing()))

    def _fit(self, *, grow_only: bool) -> None:
        """Height for the text's lines (none when empty): while numbers stream in it only
        grows, so a number one digit shorter does not lay the dock out again."""
        needed = self.lines_needed()
        lines = max(needed, self._lines) if grow_only and needed else needed
        self._lines = lines
        if not lines:  # nothing to say: no room taken (a hidden widget gets no spacing)
            self.setVisible(False)
            return
        height = self.fontMetrics().lineSpacing() * lines + 2 * MARGIN
        if height != self.minimumHeight() or height != self.maximumHeight():
            self.setFixedHeight(height)
        self.setVisible(True)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._fit(grow_only=False)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        painter.drawText(QRect(0, MARGIN, self.width(), self.height() - MARGIN), FLAGS,
                         self._text)  # fmt: skip


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
        self.speed = Readout("run_speed", self)
        self.status = QLabel("", self)
        self.status.setObjectName("run_status")
        self.status.setWordWrap(True)
        self.status.hide()  # shown with a state to say
        self.train_numbers = Readout("train_numbers", self)
        self.train_numbers.setToolTip(
            f"Train-mode numbers ({TRAIN_MODE}): Dropout is on and BatchNorm uses each "
            "batch's statistics while the weights change, so they differ from the "
            f"predict-mode numbers ({PREDICT_MODE})."
        )
        self.val_numbers = Readout("validation_numbers", self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 4)
        for widget in (self.bar, self.speed, self.status, self.train_numbers, self.val_numbers):
            layout.addWidget(widget)
        # As tall as its wrapped lines at its width, never less: the dock's other parts
        # (the settings scroll) give way instead, so no line is cut or drawn over another.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)

    def _height_for_width(self) -> int:
        layout = self.layout()
        if self.width() > 0 and layout.hasHeightForWidth():
            return layout.totalHeightForWidth(self.width())
        return layout.totalMinimumSize().height()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(super().sizeHint().width(), self._height_for_width())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(super().minimumSizeHint().width(), self._height_for_width())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the lines wrap anew: another height

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
        """A state ('Paused at step 120') or why training can't start, wrapped and shown
        whole however long; when idle, the bar says where training is."""
        self.status.setText(text)
        self.status.setVisible(bool(text))
        if idle_step is not None:
            self.bar.setFormat(
                "Not trained yet" if idle_step == 0
                else f"{idle_epoch} epoch{'s' if idle_epoch != 1 else ''} done · step {idle_step}"
            )

    def clear(self) -> None:
        self.bar.setValue(0)
        self.bar.setFormat("Not trained yet")
        for label in (self.speed, self.train_numbers, self.val_numbers):
            label.setText("")
        self.show_status("")
