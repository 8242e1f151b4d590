"""Reusable Qt views: node editor, palette, inspector, parameter editor, plot panes.

Widgets import engine and app models, never the reverse.
"""
