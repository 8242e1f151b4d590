"""Built-in and imported data sets (headless)."""
