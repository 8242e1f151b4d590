"""Feeds (sample shapes) for the attention family's node types in the generic compiler tests."""

FEEDS: dict[str, tuple] = {}
