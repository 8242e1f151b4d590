"""Preferences: how often unsaved work is autosaved (more settings join it later)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QSpinBox, QWidget

MAX_INTERVAL = 3600


class PreferencesDialog(QDialog):
    """`autosave_seconds()` after `exec()`; 0 turns autosave off."""

    def __init__(self, autosave_seconds: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("preferences_dialog")
        self.setWindowTitle("Preferences")
        self.autosave = QSpinBox()
        self.autosave.setObjectName("autosave_seconds")
        self.autosave.setRange(0, MAX_INTERVAL)
        self.autosave.setSuffix(" s")
        self.autosave.setSpecialValueText("off")
        self.autosave.setValue(max(0, min(int(autosave_seconds), MAX_INTERVAL)))
        self.autosave.setToolTip("Unsaved work is copied beside the settings this often (and "
                                 "before training starts); after a crash Cellwright offers "
                                 "to restore it. Your own file is only written when you save.")
        note = QLabel("A recovery copy never replaces your file.")
        note.setStyleSheet("color: palette(placeholder-text);")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)  # fmt: skip
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow("Autosave every", self.autosave)
        form.addRow(note)
        form.addRow(buttons)

    def autosave_seconds(self) -> int:
        return self.autosave.value()
