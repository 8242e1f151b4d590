"""What the GUI remembers between runs: where QSettings live, the recent-files list and the
default data folder."""

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


DATA_FOLDER_KEY = "data/folder"


def data_folder_setting(settings: QSettings) -> Path | None:
    """The default data folder the Preferences chose, if it is set and still a folder."""
    value = data_folder_text(settings)
    path = Path(value).expanduser() if value else None
    return path if path is not None and path.is_dir() else None


def data_folder_text(settings: QSettings) -> str:
    """The default data folder as stored ('' when none is set)."""
    return str(settings.value(DATA_FOLDER_KEY, "") or "")


class RecentFiles:
    """The File → Open Recent list: absolute paths, newest first, without duplicates.

    Its length is a Preference (`LIMIT_KEY`; 0 keeps no list); a shorter limit trims the
    stored list at once (`trim`).
    """

    KEY = "recent_files"
    LIMIT_KEY = "recent_files_limit"
    LIMIT = 10  # the default length
    MAX_LIMIT = 30

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings

    @property
    def limit(self) -> int:
        try:
            value = int(self._settings.value(self.LIMIT_KEY, self.LIMIT))
        except (TypeError, ValueError):
            return self.LIMIT
        return max(0, min(value, self.MAX_LIMIT))

    def set_limit(self, limit: int) -> None:
        """Keep at most `limit` paths from now on; older ones beyond it go now."""
        self._settings.setValue(self.LIMIT_KEY, max(0, min(int(limit), self.MAX_LIMIT)))
        self.trim()

    def trim(self) -> None:
        paths = self._stored()
        if len(paths) > self.limit:
            self._store(paths[: self.limit])

    def paths(self) -> list[str]:
        return self._stored()[: self.limit]

    def _stored(self) -> list[str]:
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
        self._store([entry, *paths][: self.limit])

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
