"""Conv1d, Conv3d, Conv2dTranspose, Conv1dTranspose (MindSpore 2.x)."""

__all__: list[str] = []
