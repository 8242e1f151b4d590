"""Channel dropout: Dropout1d, Dropout2d, Dropout3d (MindSpore 2.x)."""

__all__: list[str] = []
