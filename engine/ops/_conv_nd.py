"""N-d convolution and transposed convolution kernels with their vjps."""

__all__: list[str] = []
