"""Layers: Dense, Conv2d, BatchNorm, pooling, activations, containers."""

__all__: list[str] = []
