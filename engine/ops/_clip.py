"""clip_by_value and clip_by_global_norm."""

__all__: list[str] = []
