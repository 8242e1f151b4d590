"""The breadcrumb above the canvas: which composite is open, and the way back out."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget


class Breadcrumb(QWidget):
    """'Network › block1 › inner'; clicking a level goes back up to it."""

    level_chosen = Signal(int)  # depth: 0 is the whole network

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("breadcrumb")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(6, 2, 6, 2)
        self._layout.setSpacing(2)
        self.buttons: list[QToolButton] = []
        self.set_levels(["Network"])

    def set_levels(self, names: list[str]) -> None:
        while self._layout.count():
            widget = self._layout.takeAt(0).widget()
            if widget is not None:
                widget.hide()  # deleted later; hidden now so it is never drawn under the new
                widget.deleteLater()
        self.buttons = []
        for depth, name in enumerate(names):
            if depth:
                self._layout.addWidget(QLabel("›"))
            button = QToolButton(self)
            button.setObjectName(f"breadcrumb_{depth}")
            button.setText(name)
            button.setAutoRaise(True)
            last = depth == len(names) - 1
            button.setEnabled(not last)
            if last:
                font = button.font()
                font.setBold(True)
                button.setFont(font)
            button.setToolTip("You are here" if last else f"Back to {name}")
            button.clicked.connect(lambda _=False, d=depth: self.level_chosen.emit(d))
            self.buttons.append(button)
            self._layout.addWidget(button)
        self._layout.addStretch(1)
        self._layout.setAlignment(Qt.AlignmentFlag.AlignLeft)
