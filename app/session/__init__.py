"""Training session: runs a compiled network off the GUI thread (headless)."""

from app.session.events import (
    COMPLETED,
    PREDICT_MODE,
    STEP_LIMIT,
    STOPPED,
    TRAIN_MODE,
    EpochEnded,
    EpochMetrics,
    Progress,
    TrainingEvent,
    TrainingFailed,
    TrainingFinished,
    TrainingPaused,
    TrainingResumed,
    TrainingStarted,
)
from app.session.history import HISTORY_STEPS, History
from app.session.hook_captures import (
    HISTOGRAM_BINS,
    STAT_COLUMNS,
    CapturePace,
    HookCapture,
    HookCaptures,
    LatestArray,
)
from app.session.metrics import EPOCH_COLUMNS, STEP_COLUMNS, Metrics
from app.session.progress import OPTIMIZER_PREFIX, TrainingState, is_optimizer_entry
from app.session.run_record import RunEnd, RunRecorder, RunStart, make_record, record_run
from app.session.session import PAUSED, READY, RUNNING, STOPPING, TrainingSession
from app.session.settings import (
    DEFAULTS,
    LOSSES,
    OPTIMIZERS,
    TrainingError,
    TrainingSettings,
    load_dataset,
)
from app.session.snapshot import ParameterSnapshot

__all__ = [
    "COMPLETED",
    "DEFAULTS",
    "EPOCH_COLUMNS",
    "HISTOGRAM_BINS",
    "LOSSES",
    "OPTIMIZERS",
    "OPTIMIZER_PREFIX",
    "PREDICT_MODE",
    "PAUSED",
    "READY",
    "RUNNING",
    "STAT_COLUMNS",
    "STEP_COLUMNS",
    "STEP_LIMIT",
    "STOPPED",
    "STOPPING",
    "TRAIN_MODE",
    "CapturePace",
    "EpochEnded",
    "EpochMetrics",
    "HISTORY_STEPS",
    "History",
    "HookCapture",
    "HookCaptures",
    "LatestArray",
    "Metrics",
    "ParameterSnapshot",
    "RunEnd",
    "RunRecorder",
    "RunStart",
    "Progress",
    "TrainingError",
    "TrainingEvent",
    "TrainingFailed",
    "TrainingFinished",
    "TrainingPaused",
    "TrainingResumed",
    "TrainingSession",
    "TrainingSettings",
    "TrainingStarted",
    "TrainingState",
    "is_optimizer_entry",
    "load_dataset",
    "make_record",
    "record_run",
]
