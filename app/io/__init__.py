"""Project files (*.cwproj): atomic save, validating load, migrations (headless)."""
