"""Layers: Dense, Conv2d, BatchNorm, pooling, activations, containers (filled in by the engine library work)."""

__all__: list[str] = []
