"""1-D and 3-D pooling and adaptive pooling (MindSpore 2.x)."""

__all__: list[str] = []
