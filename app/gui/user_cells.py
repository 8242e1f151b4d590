"""User Cells: composites the user saved to the palette, kept in the user's settings as JSON."""

from __future__ import annotations

import json
import logging

from PySide6.QtCore import QSettings

from app.document import COMPOSITE, DocumentError, Graph, Node, check_name
from app.document.data import node_from_data, node_to_data

log = logging.getLogger(__name__)

KEY = "palette/user_cells"


class UserCells:
    """Saved composite definitions by name, in save order, persisted in QSettings."""

    def __init__(self, settings: QSettings) -> None:
        self._settings = settings
        self._cells: dict[str, dict] = self._load()

    def names(self) -> list[str]:
        return list(self._cells)

    def data(self, name: str) -> dict | None:
        """The composite node's data (a fresh copy: pasting gives it new ids)."""
        cell = self._cells.get(name)
        return None if cell is None else json.loads(json.dumps(cell))

    def add(self, name: str, node: Node) -> None:
        """Save composite `node` as the user Cell `name` (replacing one of that name)."""
        check_name(name, "A user Cell's name")
        if node.type != COMPOSITE:
            raise DocumentError(f"'{node.name}' is not a composite Cell; group nodes first.")
        data = node_to_data(node.replace(definition=name))
        data["position"] = [0.0, 0.0]
        self._cells[name] = data
        self._store()

    def remove(self, name: str) -> None:
        if self._cells.pop(name, None) is not None:
            self._store()

    def _store(self) -> None:
        self._settings.setValue(KEY, json.dumps(self._cells))
        self._settings.sync()

    def _load(self) -> dict[str, dict]:
        text = self._settings.value(KEY, "")
        if not text:
            return {}
        try:
            raw = json.loads(str(text))
        except ValueError:
            log.warning("ignoring unreadable user Cells in the settings")
            return {}
        cells = {}
        for name, data in raw.items() if isinstance(raw, dict) else ():
            try:  # each must still be a valid composite: the file may be old or edited
                node = node_from_data(data)
                Graph().add_node(node)  # checks the ports match the inside
                check_name(name)
            except (DocumentError, TypeError, AttributeError, KeyError):
                log.warning("ignoring the broken user Cell %r", name)
                continue
            if node.type == COMPOSITE:
                cells[name] = data
        return cells
