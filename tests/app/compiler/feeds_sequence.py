"""Feeds (sample shapes) for the sequence family's node types in the generic compiler tests."""

FEEDS: dict[str, tuple] = {}
