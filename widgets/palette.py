"""The palette dock: every node type by category, user Cells, a search box; drag or add.

Type to filter; Enter adds the highlighted entry at the canvas centre, as does a
double-click; dragging an entry onto the canvas drops it where it lands. The palette
only asks for additions (`add_requested`); the canvas decides how to make them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QBrush, QDrag, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.catalogue import CATALOGUE, Catalogue
from widgets.node_editor import NODE_MIME
from widgets.node_editor.style import category_colour

USER_CATEGORY = "User Cells"
PAYLOAD = Qt.ItemDataRole.UserRole


class PaletteTree(QTreeWidget):
    """The tree of entries; drags carry the entry's payload ('type:Dense', 'user:Block')."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setIndentation(12)
        self.setUniformRowHeights(True)

    def mimeData(self, items) -> QMimeData:  # noqa: N802 (Qt override)
        mime = QMimeData()
        payload = items[0].data(0, PAYLOAD) if items else None
        if payload:
            mime.setData(NODE_MIME, payload.encode("utf-8"))
            mime.setText(items[0].text(0))
        return mime

    def mimeTypes(self) -> list[str]:  # noqa: N802
        return [NODE_MIME]

    def startDrag(self, actions) -> None:  # noqa: N802
        item = self.currentItem()
        if item is None or not item.data(0, PAYLOAD):
            return
        drag = QDrag(self)
        drag.setMimeData(self.mimeData([item]))
        drag.exec(Qt.DropAction.CopyAction)


class Palette(QWidget):
    """Search box over the tree of node types and user Cells."""

    add_requested = Signal(str)  # payload, to add at the canvas centre

    def __init__(self, catalogue: Catalogue | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("palette")
        self.catalogue = catalogue if catalogue is not None else CATALOGUE
        self.user_cell_names: Callable[[], list[str]] = list
        self.search = QLineEdit(self)
        self.search.setObjectName("palette_search")
        self.search.setPlaceholderText("Search nodes…  (Enter adds)")
        self.search.setClearButtonEnabled(True)
        self.tree = PaletteTree(self)
        self.tree.setObjectName("palette_tree")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search)
        layout.addWidget(self.tree, 1)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.search.installEventFilter(self)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the tree (after the user Cells changed), keeping the filter."""
        self._on_search_text_changed(self.search.text())

    def entries(self) -> list[QTreeWidgetItem]:
        """The visible leaf entries, top to bottom."""
        found = []
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            found += [group.child(j) for j in range(group.childCount())]
        return found

    def item_for(self, payload: str) -> QTreeWidgetItem | None:
        return next((i for i in self.entries() if i.data(0, PAYLOAD) == payload), None)

    def _on_search_text_changed(self, text: str) -> None:
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}

        def group(name: str) -> QTreeWidgetItem:
            if name not in groups:
                item = QTreeWidgetItem(self.tree, [name])
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                font = item.font(0)
                font.setBold(True)
                item.setFont(0, font)
                item.setForeground(0, QBrush(category_colour(name).lighter(110)))
                groups[name] = item
            return groups[name]

        for category in self.catalogue.categories():  # keep palette order when filtering
            group(category)
        for node_type in self.catalogue.search(text):
            entry = QTreeWidgetItem(group(node_type.category), [node_type.name])
            entry.setToolTip(0, node_type.description)
            entry.setData(0, PAYLOAD, f"type:{node_type.name}")
        needle = text.strip().lower()
        for name in self.user_cell_names():
            if needle in name.lower():
                entry = QTreeWidgetItem(group(USER_CATEGORY), [name])
                entry.setToolTip(0, f"User Cell {name}: a saved composite")
                entry.setData(0, PAYLOAD, f"user:{name}")
        for name, item in list(groups.items()):
            if item.childCount() == 0:
                self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(item))
                del groups[name]
        self.tree.expandAll()
        entries = self.entries()
        if entries:
            self.tree.setCurrentItem(entries[0])

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        payload = item.data(0, PAYLOAD)
        if payload:
            self.add_requested.emit(payload)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802
        is_key = isinstance(event, QKeyEvent) and event.type() == QKeyEvent.Type.KeyPress
        if watched is self.search and is_key:
            return self._search_key(event.key())
        return super().eventFilter(watched, event)

    def _search_key(self, key: int) -> bool:
        entries = self.entries()
        current = self.tree.currentItem()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            payload = current.data(0, PAYLOAD) if current is not None else None
            if payload:
                self.add_requested.emit(payload)
            return True
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Up) and entries:
            row = entries.index(current) if current in entries else -1
            row += 1 if key == Qt.Key.Key_Down else -1
            self.tree.setCurrentItem(entries[max(0, min(len(entries) - 1, row))])
            return True
        return False
