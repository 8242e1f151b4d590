"""The palette dock: node types and presets by category, user Cells, a search box; drag or add.

With nothing typed the categories are closed, so the list stays short: a click on a
category opens or closes it, and the palette remembers which are open. Typing
searches names, keywords (synonyms), descriptions and categories (see
`Catalogue.find`) and opens every category with a match, the best matches first.
Enter adds the highlighted entry at the canvas centre, as does a double-click;
dragging an entry onto the canvas drops it where it lands. Every entry's tooltip is
its docs (app.catalogue.docs). The palette only asks for additions (`add_requested`
with a payload: 'type:Dense', 'preset:Global average pooling', 'user:Block'); the
canvas decides how to make them.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QBrush, QDrag, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.catalogue import CATALOGUE, Catalogue
from app.catalogue.docs import tooltip
from app.catalogue.registry import Entry, query_words
from widgets.node_editor import NODE_MIME
from widgets.node_editor.node_types import payload_of
from widgets.node_editor.style import category_colour

USER_CATEGORY = "User Cells"
PAYLOAD = Qt.ItemDataRole.UserRole
CATEGORY = Qt.ItemDataRole.UserRole + 1  # a category row's category name


def docs_of(entry: Entry) -> str:
    """The entry's tooltip: its docs, or its description if they can't be made."""
    try:
        return tooltip(entry.node_type, entry.preset)
    except Exception:  # docs must never keep an entry out of the palette
        return entry.description


class PaletteTree(QTreeWidget):
    """The tree of entries; drags carry the entry's payload ('type:Dense', 'user:Block')."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderHidden(True)
        self.setColumnCount(2)  # the name, and a category's count of entries
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.setDragEnabled(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragOnly)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setIndentation(12)
        self.setUniformRowHeights(True)
        self.setExpandsOnDoubleClick(False)  # one click on a category opens or closes it

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
    """Search box over the tree of node types, presets and user Cells."""

    add_requested = Signal(str)  # payload, to add at the canvas centre

    def __init__(self, catalogue: Catalogue | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("palette")
        self.catalogue = catalogue if catalogue is not None else CATALOGUE
        self.user_cell_names: Callable[[], list[str]] = list
        # Tooltips by (type, entry label): made once, not at every keystroke of a search.
        self._docs: dict[tuple[object, str], str] = {}
        self.open_categories: set[str] = set()  # opened by the user, with nothing typed
        self._filling = False  # the tree is being rebuilt: its expand signals are ours
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
        self.tree.itemClicked.connect(self._on_tree_item_clicked)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.tree.itemExpanded.connect(self._on_tree_item_expanded)
        self.tree.itemCollapsed.connect(self._on_tree_item_collapsed)
        self.refresh()

    @property
    def searching(self) -> bool:
        return bool(query_words(self.search.text()))

    def refresh(self) -> None:
        """Rebuild the tree (after the user Cells changed), keeping the filter."""
        self._on_search_text_changed(self.search.text())

    def groups(self) -> list[QTreeWidgetItem]:
        """The category rows, top to bottom."""
        return [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]

    def group(self, category: str) -> QTreeWidgetItem | None:
        return next((g for g in self.groups() if g.data(0, CATEGORY) == category), None)

    def entries(self) -> list[QTreeWidgetItem]:
        """The entries listed (under open or closed categories), top to bottom."""
        return [g.child(j) for g in self.groups() for j in range(g.childCount())]

    def shown(self) -> list[QTreeWidgetItem]:
        """The rows one sees, top to bottom: every category, and the entries of open ones."""
        rows = []
        for group in self.groups():
            rows.append(group)
            if group.isExpanded():
                rows += [group.child(j) for j in range(group.childCount())]
        return rows

    def item_for(self, payload: str) -> QTreeWidgetItem | None:
        """The entry for `payload`, brought into view (its category opened), or None."""
        item = next((i for i in self.entries() if i.data(0, PAYLOAD) == payload), None)
        if item is not None:
            item.parent().setExpanded(True)
            self.tree.scrollToItem(item)
        return item

    # ---- filling the tree ------------------------------------------------------------------

    def _on_search_text_changed(self, text: str) -> None:
        self._filling = True
        try:
            self._fill(text)
        finally:
            self._filling = False

    def _fill(self, text: str) -> None:
        self.tree.clear()
        searching = self.searching
        found = self.catalogue.find(text)
        # Searching, the category of the best match comes first; else palette order.
        order = [] if searching else list(self.catalogue.categories())
        order += [e.category for e in found if e.category not in order]
        by_category: dict[str, list[tuple[str, str, str]]] = {c: [] for c in order}
        for entry in found:
            key = (entry.node_type, entry.label)
            if key not in self._docs:
                self._docs[key] = docs_of(entry)
            by_category[entry.category].append((entry.label, self._docs[key],
                                                payload_of(entry)))
        words = query_words(text)
        users = [(name, f"User Cell {name}: a saved composite", f"user:{name}")
                 for name in self.user_cell_names()
                 if all(word in name.casefold() for word in words)]
        if users:
            by_category[USER_CATEGORY] = users
        for category, rows in by_category.items():
            if rows:
                self._add_group(category, rows, searching)
        self.tree.setCurrentItem(self._first_row())

    def _add_group(self, category: str, rows: list[tuple[str, str, str]],
                   searching: bool) -> None:
        group = QTreeWidgetItem(self.tree, [category, str(len(rows))])
        group.setData(0, CATEGORY, category)
        group.setFlags(Qt.ItemFlag.ItemIsEnabled)
        group.setToolTip(0, f"{category}: click to {'close' if searching else 'open'}")
        font = group.font(0)
        font.setBold(True)
        group.setFont(0, font)
        group.setForeground(0, QBrush(category_colour(category).lighter(110)))
        group.setForeground(1, self.palette().brush(QPalette.ColorRole.PlaceholderText))
        group.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        for label, tip, payload in rows:
            entry = QTreeWidgetItem(group, [label])
            entry.setToolTip(0, tip)
            entry.setData(0, PAYLOAD, payload)
        group.setExpanded(searching or category in self.open_categories)

    def _first_row(self) -> QTreeWidgetItem | None:
        """The row Enter acts on after a change of the search: the best match, if any
        entry is in view, else the first category."""
        entries = [row for row in self.shown() if row.data(0, PAYLOAD)]
        if entries:
            return entries[0]
        return self.groups()[0] if self.groups() else None

    # ---- slots -----------------------------------------------------------------------------

    def _on_tree_item_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        if item.data(0, CATEGORY):
            item.setExpanded(not item.isExpanded())

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        payload = item.data(0, PAYLOAD)
        if payload:
            self.add_requested.emit(payload)

    def _on_tree_item_expanded(self, item: QTreeWidgetItem) -> None:
        if not self._filling and not self.searching:
            self.open_categories.add(item.data(0, CATEGORY))

    def _on_tree_item_collapsed(self, item: QTreeWidgetItem) -> None:
        if not self._filling and not self.searching:
            self.open_categories.discard(item.data(0, CATEGORY))

    def eventFilter(self, watched, event) -> bool:  # noqa: N802
        is_key = isinstance(event, QKeyEvent) and event.type() == QKeyEvent.Type.KeyPress
        if watched is self.search and is_key:
            return self._search_key(event.key())
        return super().eventFilter(watched, event)

    def _search_key(self, key: int) -> bool:
        """Enter adds the current entry (or opens/closes the current category); Up and
        Down move through the entries found, or through the rows in view when nothing is
        typed."""
        current = self.tree.currentItem()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if current is not None and current.data(0, PAYLOAD):
                self.add_requested.emit(current.data(0, PAYLOAD))
            elif current is not None and current.data(0, CATEGORY):
                current.setExpanded(not current.isExpanded())
            return True
        if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
            rows = self.shown()
            if self.searching:
                rows = [row for row in rows if row.data(0, PAYLOAD)]
            if rows:
                row = rows.index(current) if current in rows else -1
                row += 1 if key == Qt.Key.Key_Down else -1
                self.tree.setCurrentItem(rows[max(0, min(len(rows) - 1, row))])
            return True
        return False
