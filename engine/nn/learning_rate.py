"""Learning-rate lists and schedules (MindSpore 2.x nn.*_lr and LearningRateSchedule)."""

__all__: list[str] = []
