"""What the GUI remembers between runs: where QSettings live, and the recent-files list."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings

ORGANIZATION = "Cellwright"
APPLICATION = "Cellwright"


def app_settings() -> QSettings:
    """The user's Cellwright settings (an INI file under the user config folder).

    INI on every platform keeps the file readable and lets tests redirect it
    with ``QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, dir)``.
    """
    return QSettings(
        QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION
    )


class RecentFiles:
    """The File → Open Recent list: absolute paths, newest first, without duplicates."""

    KEY = "recent_files"
    LIMIT = 10

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings

    def paths(self) -> list[str]:
        value = self._settings.value(self.KEY, [])
        # An INI file gives back a single string for a one-element list, None for none.
        if value is None:
            return []
        if isinstance(value, str):
            return [value] if value else []
        return [str(p) for p in value if p]

    def add(self, path: str | os.PathLike[str]) -> None:
        entry = _normalise(path)
        paths = [p for p in self.paths() if p != entry]
        self._store([entry, *paths][: self.LIMIT])

    def remove(self, path: str | os.PathLike[str]) -> None:
        entry = _normalise(path)
        self._store([p for p in self.paths() if p != entry])

    def clear(self) -> None:
        self._store([])

    def _store(self, paths: list[str]) -> None:
        self._settings.setValue(self.KEY, paths)
        self._settings.sync()


def _normalise(path: str | os.PathLike[str]) -> str:
    return str(Path(path).expanduser().absolute())
