"""Package discovery pyproject.toml can't express on its own: the `resources/` folder ships
as the `cellwright_resources` package (a folder named unlike its package), so a plain
`pip install .` (or pipx, or the PyInstaller build) carries the examples, the digits data
and the icons. Everything else about the project is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["engine", "engine.*", "app", "app.*", "widgets", "widgets.*"]),
        "cellwright_resources",
    ],
)
