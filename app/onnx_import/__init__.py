"""Import an ONNX model as a Cellwright project (headless); layout and grouping come first."""
