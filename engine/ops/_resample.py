"""interpolate, pixel_shuffle and pad with their vjps."""

__all__: list[str] = []
