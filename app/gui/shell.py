"""What a controller needs of the main window: docks, menus by name, the status line, the mode
label, dialogs' parent and error reports. Nothing about the project or training.

`Shell` works on any `QMainWindow`, so a controller can be made (and tested) without the
Cellwright main window; the main window makes one and hands it to its controllers.
"""

from __future__ import annotations

import sys
import traceback

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QPalette
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QToolBar,
    QWidget,
)


class Shell(QObject):
    """The parts of a main window controllers plug into."""

    closing = Signal()  # the window is about to close (the user agreed to lose nothing)

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.window = window  # the parent of docks and dialogs
        self.training = False  # the mode the label shows
        self._mode_label = QLabel("Predict")
        self._mode_label.setObjectName("mode_label")
        self._mode_label.setToolTip("Network mode: Predict (inference) or Train")
        self._mode_label.setStyleSheet("QLabel { font-weight: bold; padding: 0 8px; }")
        bar = window.statusBar()
        bar.addPermanentWidget(self._mode_label)
        bar.messageChanged.connect(self._on_message_changed)

    # ---- docks, menus, tool bars ---------------------------------------------------------

    def add_dock(self, title: str, name: str, area: Qt.DockWidgetArea,
                 widget: QWidget | None = None, *, tab_with: str | None = None,
                 view_menu: bool = False) -> QDockWidget:  # fmt: skip
        """A dock named `name` (layouts are saved by name) holding `widget` (a placeholder
        if None), in `area` or as a tab beside the dock `tab_with`; listed in View if asked."""
        dock = QDockWidget(title, self.window)
        dock.setObjectName(name)  # saveState/restoreState key docks by objectName
        dock.setWidget(widget if widget is not None else placeholder(
            f"{name}_placeholder", f"{title} — coming soon."))
        self.window.addDockWidget(area, dock)
        beside = self.dock(tab_with) if tab_with else None
        if beside is not None:
            self.window.tabifyDockWidget(beside, dock)
            beside.raise_()  # the dock that was there stays in front
        if view_menu:
            menu = self.menu("view_menu")
            if menu is not None:
                menu.addAction(dock.toggleViewAction())
        return dock

    def add_dock_when_shown(self, title: str, name: str, widget: QWidget, *, beside: str = "",
                            tab_with: str = "") -> QDockWidget:  # fmt: skip
        """A dock listed in View, kept out of the layout until it is first shown: a hidden
        dock in a dock area still counts toward its minimum size (two of them squeezed the
        side docks at 1280 × 800). Shown, it goes right of the dock `beside` or becomes a
        tab of `tab_with`, in that dock's area."""
        dock = QDockWidget(title, self.window)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFloating(True)
        dock.hide()
        placed = False

        def place(visible: bool) -> None:
            nonlocal placed
            if not visible or placed:  # (hidden as the window closes: nothing to do)
                return
            anchor = self.dock(beside or tab_with)
            if anchor is None:
                return
            placed = True
            self.window.addDockWidget(self.window.dockWidgetArea(anchor), dock)
            dock.setFloating(False)
            if tab_with and anchor.isVisible():
                self.window.tabifyDockWidget(anchor, dock)
            else:
                self.window.splitDockWidget(anchor, dock, Qt.Orientation.Horizontal)
            dock.show()

        dock.visibilityChanged.connect(place)
        menu = self.menu("view_menu")
        if menu is not None:
            menu.addAction(dock.toggleViewAction())
        return dock

    def set_dock_widget(self, name: str, widget: QWidget) -> QDockWidget:
        """Put `widget` into the dock `name` (its placeholder is deleted)."""
        dock = self.dock(name)
        if dock is None:
            raise KeyError(f"There is no dock named {name!r}.")
        old = dock.widget()
        dock.setWidget(widget)
        if old is not None and old is not widget:
            old.deleteLater()
        return dock

    def dock(self, name: str) -> QDockWidget | None:
        return self.window.findChild(QDockWidget, name)

    def menu(self, name: str) -> QMenu | None:
        return self.window.findChild(QMenu, name)

    def action(self, name: str) -> QAction | None:
        return self.window.findChild(QAction, name)

    def add_toolbar(self, toolbar: QToolBar) -> None:
        self.window.addToolBar(toolbar)

    def set_canvas(self, widget: QWidget) -> None:
        """Replace the central area (the old widget is deleted by Qt)."""
        self.window.setCentralWidget(widget)

    def canvas(self) -> QWidget | None:
        return self.window.centralWidget()

    # ---- telling the user ----------------------------------------------------------------

    def show_message(self, text: str, timeout_ms: int = 0) -> None:
        """Put `text` on the status bar's message line (its tooltip holds the message whole,
        for a line longer than the window is wide)."""
        self.window.statusBar().showMessage(text, timeout_ms)

    def _on_message_changed(self, text: str) -> None:
        self.window.statusBar().setToolTip(text)  # a message cut by the width reads whole

    def clear_message(self, text: str) -> None:
        """Take `text` off the message line, unless another message replaced it."""
        bar = self.window.statusBar()
        if bar.currentMessage() == text:
            bar.clearMessage()

    def set_mode(self, training: bool, note: str = "") -> None:
        """Show the network mode (Train or Predict), with an optional note."""
        self.training = bool(training)
        text = "Train" if training else "Predict"
        self._mode_label.setText(f"{text} · {note}" if note else text)

    def show_error(self, title: str, text: str) -> None:
        QMessageBox.critical(self.window, title, text)

    def report_error(self, title: str, exc: BaseException) -> None:
        """Tell the user about an unexpected error; the details go to stderr."""
        traceback.print_exception(exc, file=sys.stderr)
        text = f"{type(exc).__name__}: {exc}"
        self.show_message(f"{title}: {text}")
        self.show_error(title, text)


def placeholder(name: str, text: str) -> QLabel:
    """Greyed text marking where a real view will go."""
    label = QLabel(text)
    label.setObjectName(name)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label
