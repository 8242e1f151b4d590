"""Upsample, PixelShuffle and the padding layers (MindSpore 2.x)."""

__all__: list[str] = []
