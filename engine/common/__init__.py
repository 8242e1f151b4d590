"""MindSpore-style `engine.common` namespace (initializers)."""
