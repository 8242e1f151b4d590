"""Bundled resources: icons, stylesheets, example projects and small data sets."""
