"""Feeds (sample shapes) for the recurrent family's node types in the generic compiler tests."""

FEEDS: dict[str, tuple] = {}
