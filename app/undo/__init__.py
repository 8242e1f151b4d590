"""Undo commands: every edit to the project document as a QUndoCommand (Qt, below the views)."""
