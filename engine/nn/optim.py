"""Optimizers over trainable_params (filled in by the engine library work)."""

__all__: list[str] = []
