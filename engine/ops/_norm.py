"""layer_norm, group_norm, instance_norm, lrn with their vjps."""

__all__: list[str] = []
