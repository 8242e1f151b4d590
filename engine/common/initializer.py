"""Initializers (filled in by the engine library work)."""
