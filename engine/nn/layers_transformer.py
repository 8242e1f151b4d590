"""(stub) The transformer layers (issue 28); each Cell is listed in __all__."""

__all__: list[str] = []
