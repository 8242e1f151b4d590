"""Runs you can compare, headless: a learning-rate finder and sweeps over settings, each
training copies of the project's network so the project itself is never touched."""
