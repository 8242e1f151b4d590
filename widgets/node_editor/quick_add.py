"""Tab on the canvas: a small search popup at the cursor; Enter adds the chosen node there."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, QPointF, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFrame, QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout

Entry = tuple[str, str, str]  # label, tooltip, payload ("type:Dense" or "user:Name")


class QuickAdd(QFrame):
    """A popup with a search box over a list of node types."""

    chosen = Signal(str, QPointF)  # payload, scene position

    def __init__(self, search: Callable[[str], list[Entry]], parent=None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("quick_add")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self._search = search
        self._scene_pos = QPointF()
        self.line = QLineEdit(self)
        self.line.setPlaceholderText("Add node…")
        self.list = QListWidget(self)
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.line)
        layout.addWidget(self.list)
        self.resize(260, 300)
        self.line.textChanged.connect(self._on_line_text_changed)
        self.line.installEventFilter(self)
        self.list.itemClicked.connect(self._on_list_item_clicked)

    def open_at(self, scene_pos: QPointF, global_pos: QPoint) -> None:
        self._scene_pos = QPointF(scene_pos)
        self.line.clear()
        self._on_line_text_changed("")
        self.move(global_pos)
        self.show()
        self.line.setFocus()

    def _on_line_text_changed(self, text: str) -> None:
        self.list.clear()
        for label, tip, payload in self._search(text):
            item = QListWidgetItem(label)
            item.setToolTip(tip)
            item.setData(Qt.ItemDataRole.UserRole, payload)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)

    def _on_list_item_clicked(self, item: QListWidgetItem) -> None:
        self._choose(item)

    def _choose(self, item: QListWidgetItem | None) -> None:
        self.hide()
        if item is not None:
            self.chosen.emit(item.data(Qt.ItemDataRole.UserRole), self._scene_pos)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802
        if (
            watched is self.line
            and isinstance(event, QKeyEvent)
            and event.type() == event.Type.KeyPress
        ):
            key = event.key()
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self._choose(self.list.currentItem())
                return True
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
                step = 1 if key == Qt.Key.Key_Down else -1
                row = max(0, min(self.list.count() - 1, self.list.currentRow() + step))
                self.list.setCurrentRow(row)
                return True
            if key == Qt.Key.Key_Escape:
                self.hide()
                return True
        return super().eventFilter(watched, event)
