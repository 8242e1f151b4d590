"""Node catalogue: every node type the editor offers, described from declared schemas (headless)."""
