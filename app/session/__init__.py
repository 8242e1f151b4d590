"""Training session: runs a compiled network off the GUI thread (headless)."""
