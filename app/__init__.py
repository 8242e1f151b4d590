"""Cellwright: build, train and look inside neural networks (the application package)."""

__version__ = "0.1.0"
