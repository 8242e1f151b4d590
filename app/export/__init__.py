"""Exporters: runnable Python scripts, ONNX (headless)."""
