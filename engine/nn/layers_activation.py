"""Activation Cells beyond the basic ones (MindSpore 2.x spelling)."""

__all__: list[str] = []
