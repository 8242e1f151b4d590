"""Activation functions beyond _functional's, with their vjps."""

__all__: list[str] = []
