"""Cellwright: build, train and look inside neural networks (the application package).

The version has one source, `version` in pyproject.toml: an installed Cellwright (wheel,
editable install, or the PyInstaller bundle, which carries the dist metadata) reads it
from its metadata; a source checkout that was never installed reads pyproject.toml.
"""


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("cellwright")
    except metadata.PackageNotFoundError:
        pass
    from pathlib import Path

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        import tomllib

        with pyproject.open("rb") as file:
            project = tomllib.load(file)["project"]
        if project.get("name") == "cellwright":
            return str(project["version"])
    except (OSError, KeyError, TypeError, ValueError):
        pass
    return "0+unknown"


__version__ = _version()
