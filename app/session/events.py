"""What a training session tells its listeners: started, progress, epoch ended, finished, failed.

Events are small frozen dataclasses delivered by plain callbacks on the thread that
trains (the worker thread, or the caller's for `TrainingSession.run`). A Qt bridge
re-emits `TrainingStarted`, `TrainingFinished` and `TrainingFailed` as queued signals;
per-step numbers reach plots through the ring buffers, not through events.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# What the numbers are, in the same words everywhere (window, CLI): batch losses are
# measured in train mode while the weights change; a whole set is measured in predict mode.
TRAIN_MODE = "train mode, running mean of this epoch's batches"
PREDICT_MODE = "predict mode, whole set"

# Why a run ended without an error.
COMPLETED = "completed"  # every planned epoch ran
STOPPED = "stopped"  # stop() was called
STEP_LIMIT = "step limit"  # the run's `steps` budget was used up


@dataclass(frozen=True)
class EpochMetrics:
    """One epoch's numbers; accuracies are None for regression, validation ones without a split."""

    epoch: int  # 1-based: the first epoch is epoch 1
    step: int  # optimizer steps done when the epoch ended
    loss: float
    accuracy: float | None
    val_loss: float | None
    val_accuracy: float | None

    def describe(self) -> str:
        """e.g. 'train-mode loss 0.1234, accuracy 97.5%; validation loss 0.2, accuracy 95.0%
        (predict mode, whole set)'.

        The first numbers are the epoch's mean over its batches in train mode; the
        validation numbers are over the whole validation set in predict mode.
        """
        parts = [f"train-mode loss {self.loss:.4g}"]
        if self.accuracy is not None:
            parts.append(f"accuracy {self.accuracy:.1%}")
        text = ", ".join(parts)
        if self.val_loss is None:
            return text
        validation = [f"validation loss {self.val_loss:.4g}"]
        if self.val_accuracy is not None:
            validation.append(f"accuracy {self.val_accuracy:.1%}")
        return f"{text}; {', '.join(validation)} ({PREDICT_MODE})"


@dataclass(frozen=True)
class TrainingStarted:
    step: int  # steps done before this run
    epoch: int  # epochs completed before this run
    target_epoch: int  # the run ends after this many epochs in all
    steps_planned: int  # steps this run will take if not stopped
    batches_per_epoch: int
    dataset: str  # e.g. 'Spirals: 320 samples of 2 features, 2 classes'


@dataclass(frozen=True)
class Progress:
    """After every step.

    `loss`/`accuracy` are this step's batch; `mean_loss`/`mean_accuracy` the running mean
    over this epoch's batches so far — both measured in train mode (Dropout on, BatchNorm
    on batch statistics), while the weights change. They are not the loss of a whole set
    in predict mode, which `EpochMetrics.val_loss` and `TrainingSession.evaluate` give.
    """

    step: int  # steps done in all, this one included
    run_step: int  # steps done in this run
    steps_planned: int
    epoch: int  # the epoch this step belongs to (1-based)
    batch: int  # batches done in this epoch (1-based)
    batches_per_epoch: int
    loss: float
    accuracy: float | None
    learning_rate: float
    mean_loss: float = math.nan
    mean_accuracy: float | None = None


@dataclass(frozen=True)
class EpochEnded:
    metrics: EpochMetrics


@dataclass(frozen=True)
class TrainingPaused:
    step: int


@dataclass(frozen=True)
class TrainingResumed:
    step: int


@dataclass(frozen=True)
class TrainingFinished:
    reason: str  # COMPLETED, STOPPED or STEP_LIMIT
    step: int
    epoch: int  # epochs completed in all
    metrics: EpochMetrics | None  # the last completed epoch's, if any
    message: str


@dataclass(frozen=True)
class TrainingFailed:
    """The run ended on an error; the weights are those before the failing step."""

    message: str  # one paragraph for the user
    step: int  # the step that failed (1-based), or the last one done if none was running
    epoch: int
    error: BaseException
    details: str  # the traceback, for a "details" box or a log


TrainingEvent = (
    TrainingStarted
    | Progress
    | EpochEnded
    | TrainingPaused
    | TrainingResumed
    | TrainingFinished
    | TrainingFailed
)
