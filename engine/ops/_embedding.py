"""(stub) The embedding kernels (issue 28); public functions are listed in __all__."""

__all__: list[str] = []
