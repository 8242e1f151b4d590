"""N-d and adaptive pooling kernels with their vjps."""

__all__: list[str] = []
