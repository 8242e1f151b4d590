"""LayerNorm, GroupNorm, InstanceNorm2d and LRN (MindSpore 2.x)."""

__all__: list[str] = []
