"""The main window and its wiring: the only part of app that imports Qt."""
