"""Checkpoints to .npz (filled in by the engine library work)."""

__all__: list[str] = []
