"""Graph -> engine.nn.Cell compiler and shape inference (headless)."""
