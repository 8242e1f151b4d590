"""Preferences: autosave interval, recent-files length, colour theme and default data folder.

The dialog only edits a `Preferences` value; the caller stores and applies what
`preferences()` gives after `exec()` is accepted. OK refuses a data folder that does not
exist: the dialog stays open and says why. The fields scroll when the dialog is short; the
wheel scrolls them, and changes a field only once it is clicked into.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from widgets.form_fields import Combo, IntBox

MAX_INTERVAL = 3600
MAX_RECENT = 30
THEMES = {"system": "System", "light": "Light", "dark": "Dark"}  # value: shown name
REFUSED_STYLE = "color: #d32f2f;"  # readable on light and dark windows


@dataclass(frozen=True)
class Preferences:
    autosave_seconds: int = 60  # 0: off
    recent_files: int = 10  # how many File → Open Recent keeps; 0: none
    theme: str = "system"
    data_folder: str = ""  # '' : none set


class PreferencesDialog(QDialog):
    """Edits `Preferences`; `preferences()` after an accepted `exec()` is what to apply."""

    def __init__(self, preferences: Preferences, parent: QWidget | None = None, *,
                 themes: Mapping[str, str] = THEMES) -> None:  # fmt: skip
        super().__init__(parent)
        self.setObjectName("preferences_dialog")
        self.setWindowTitle("Preferences")
        self._build(themes)
        self.set_preferences(preferences)

    def _build(self, themes: Mapping[str, str]) -> None:
        self.autosave = IntBox(0, MAX_INTERVAL)
        self.autosave.setObjectName("autosave_seconds")
        self.autosave.setSuffix(" s")
        self.autosave.setSpecialValueText("off")
        self.autosave.setToolTip("Unsaved work is copied beside the settings this often (and "
                                 "before training starts); after a crash Cellwright offers "
                                 "to restore it. Your own file is only written when you save.")
        self.recent = IntBox(0, MAX_RECENT)
        self.recent.setObjectName("recent_files_limit")
        self.recent.setSuffix(" files")
        self.recent.setSpecialValueText("none")
        self.recent.setToolTip("How many projects File → Open Recent lists. A smaller number "
                               "drops the oldest at once.")
        self.theme = Combo()
        self.theme.setObjectName("theme")
        for value, name in themes.items():
            self.theme.addItem(name, value)
        self.theme.setToolTip("System follows the look Cellwright started with; Light and "
                              "Dark apply at once, without a restart.")
        self.data_folder = QLineEdit()
        self.data_folder.setObjectName("data_folder")
        self.data_folder.setPlaceholderText("none: the project's folder")
        self.data_folder.setClearButtonEnabled(True)
        self.data_folder.setToolTip("Where importing a data file starts looking, unless the "
                                    "data set shown is already a file from another folder.")
        self.data_folder.textEdited.connect(self._on_data_folder_text_edited)
        self.browse = QPushButton("Browse…")
        self.browse.setObjectName("browse_data_folder")
        self.browse.clicked.connect(self._on_browse_clicked)
        folder_row = QHBoxLayout()
        folder_row.setContentsMargins(0, 0, 0, 0)
        folder_row.addWidget(self.data_folder, 1)
        folder_row.addWidget(self.browse)
        note = QLabel("A recovery copy never replaces your file.")
        note.setStyleSheet("color: palette(placeholder-text);")
        self.error = QLabel()
        self.error.setObjectName("preferences_error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet(REFUSED_STYLE)
        self.error.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)  # fmt: skip
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        fields = QWidget()
        form = QFormLayout(fields)
        form.addRow("Autosave every", self.autosave)
        form.addRow(note)
        form.addRow("Recent files", self.recent)
        form.addRow("Theme", self.theme)
        form.addRow("Data folder", folder_row)
        form.addRow(self.error)
        self.scroll = QScrollArea()
        self.scroll.setObjectName("preferences_scroll")
        self.scroll.setWidget(fields)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(460)

    # ---- values ------------------------------------------------------------------------------

    def set_preferences(self, preferences: Preferences) -> None:
        self.autosave.setValue(max(0, min(int(preferences.autosave_seconds), MAX_INTERVAL)))
        self.recent.setValue(max(0, min(int(preferences.recent_files), MAX_RECENT)))
        index = self.theme.findData(preferences.theme)
        self.theme.setCurrentIndex(max(0, index))
        self.data_folder.setText(preferences.data_folder)

    def preferences(self) -> Preferences:
        folder = self.data_folder.text().strip()
        if folder:
            folder = str(Path(folder).expanduser().absolute())
        return Preferences(self.autosave.value(), self.recent.value(),
                           str(self.theme.currentData()), folder)  # fmt: skip

    def autosave_seconds(self) -> int:
        return self.autosave.value()

    def refusal(self) -> str | None:
        """Why OK can't take the values as they are (None: it can)."""
        text = self.data_folder.text().strip()
        if text and not Path(text).expanduser().is_dir():
            return (f"The data folder “{text}” does not exist or is not a folder. Choose an "
                    "existing folder, or leave the field empty.")  # fmt: skip
        return None

    # ---- slots -------------------------------------------------------------------------------

    def accept(self) -> None:
        refusal = self.refusal()
        if refusal:
            self.error.setText(refusal)
            self.error.show()
            self._fit_fields()
            self.data_folder.setFocus()
            self.data_folder.selectAll()
            return
        super().accept()

    def _fit_fields(self) -> None:
        """Grow to show every field and the reason below them (the screen allowing)."""
        fields = self.scroll.widget()
        fields.layout().activate()
        missing = fields.sizeHint().height() - self.scroll.viewport().height()
        if missing > 0:
            self.resize(self.width(), self.height() + missing)
        self.scroll.ensureWidgetVisible(self.error)

    def _on_data_folder_text_edited(self, text: str) -> None:
        self.error.hide()

    def _on_browse_clicked(self) -> None:
        text = self.data_folder.text().strip()
        start = str(Path(text).expanduser()) if text else str(Path.home())
        folder = QFileDialog.getExistingDirectory(self, "Default data folder", start)
        if folder:
            self.data_folder.setText(folder)
            self.error.hide()
