"""Cellwright engine: a NumPy autograd with MindSpore-style Tensor, Parameter and Cell.

Imports NumPy only.
"""
