"""Data set → Import Image Folder…: a folder with a subfolder per class (or a path,label
CSV) made into the project's `dataset` setting (app.datasets.images).

The user picks the source, the target size, resize or centre-crop, RGB or grey, and
optionally a separate validation folder (the validation fraction stays the Run dock's
setting). Every choice reads the images again through the dialog's own DatasetLoader: on
a worker thread behind a progress dialog with Cancel (`show_reading`, the data form's),
decoded once and cached. The preview shows a row of thumbnails per class with its count,
the detected sample shape, and how many files were skipped, with "Details…" listing them
and why. A source that gives no data set shows the reason and OK stays disabled.

On OK, `spec` is the setting to commit (with the file list's digest) and `loader` holds
the data set read for it, so the form and the training session read nothing again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.datasets.images import DEFAULT_SIZE, ImageDataset, image_setting
from app.datasets.loading import DatasetLoader, DatasetRefused, Reading, ReadingCancelled
from widgets.form_fields import Combo, IntBox, set_tip
from widgets.images import ThumbnailGrid

PER_CLASS = 8  # thumbnails shown for each class
THUMB = 40
MAX_SIDE = 1024


class ImageFolderDialog(QDialog):
    """Choose an image folder and its options; see the module's text."""

    def __init__(self, folder: Path | None, start: str,
                 show_reading: Callable[[QWidget, Reading], None],
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__(parent)
        self.setObjectName("image_folder_dialog")
        self.setWindowTitle("Import Image Folder")
        self.folder, self.start = folder, start
        self.loader = DatasetLoader(wait=lambda reading: show_reading(self, reading))
        self.dataset: ImageDataset | None = None
        self.spec: dict[str, Any] | None = None  # the setting of the data set shown
        self._read_timer = QTimer(self)  # reads after the event that asked (no nested loop
        self._read_timer.setSingleShot(True)  # inside a key press), once for a burst
        self._read_timer.setInterval(0)
        self._read_timer.timeout.connect(self.read)
        self._build()
        self.resize(640, 560)

    # ---- building ----------------------------------------------------------------------------

    def _build(self) -> None:
        self.source = QLineEdit()
        self.source.setObjectName("image_source")
        self.source.setPlaceholderText("A folder with a subfolder per class, or a path,label CSV")
        self.source.editingFinished.connect(self._on_source_editing_finished)
        choose_folder = _button("choose_image_folder", "Folder…", self._on_choose_folder_clicked)
        choose_csv = _button("choose_image_csv", "CSV…", self._on_choose_csv_clicked)
        self.height_box, self.width_box = IntBox(1, MAX_SIDE), IntBox(1, MAX_SIDE)
        for name, box in (("image_height", self.height_box), ("image_width", self.width_box)):
            box.setObjectName(name)
            box.setValue(DEFAULT_SIZE[0])
            box.valueChanged.connect(self._on_option_changed)
        self.fit = Combo()
        self.fit.setObjectName("image_fit")
        self.fit.addItem("Resize to the size", "resize")
        self.fit.addItem("Resize, then crop the centre", "crop")
        set_tip(self.fit, "Resize stretches every image to the size; crop keeps its proportions "
                          "and cuts the centre.")
        self.color = Combo()
        self.color.setObjectName("image_color")
        self.color.addItem("RGB (3 channels)", "rgb")
        self.color.addItem("Grayscale (1 channel)", "gray")
        for combo in (self.fit, self.color):
            combo.activated.connect(self._on_option_changed)
        self.validation = QLineEdit()
        self.validation.setObjectName("image_validation")
        self.validation.setPlaceholderText("None: the validation fraction of the Run dock")
        self.validation.editingFinished.connect(self._on_validation_editing_finished)
        choose_val = _button("choose_validation_folder", "Folder…",
                             self._on_choose_validation_clicked)  # fmt: skip
        self.error = _label("image_error", "color: #b00020;")
        self.summary = _label("image_summary", "")
        self.skipped = _label("image_skipped", "color: #8a5a00;")
        self.details = _button("skipped_details", "Details…", self._on_details_clicked)
        self.grid = ThumbnailGrid(THUMB, PER_CLASS)
        self.grid.setObjectName("image_grid")
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.grid)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)  # fmt: skip
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setEnabled(False)

        form = QFormLayout()
        form.addRow("Images", _row(self.source, choose_folder, choose_csv))
        form.addRow("Size (height × width)", _row(self.height_box, QLabel("×"), self.width_box))
        form.addRow("Fit", self.fit)
        form.addRow("Colour", self.color)
        form.addRow("Validation folder", _row(self.validation, choose_val))
        column = QVBoxLayout(self)
        column.addLayout(form)
        for widget in (self.error, self.summary, _row(self.skipped, self.details, stretch=True)):
            column.addWidget(widget)
        column.addWidget(scroll, 1)
        column.addWidget(self.buttons)
        for button in self.findChildren(QPushButton):
            button.setAutoDefault(False)  # Enter on a button does not close the dialog
        self._show(None)

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            event.accept()  # Enter in a field reads it; only a click on OK takes the choice
            return
        super().keyPressEvent(event)

    # ---- reading -----------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        return {"size": [self.height_box.value(), self.width_box.value()],
                "fit": self.fit.currentData(), "color": self.color.currentData()}  # fmt: skip

    def read(self) -> None:
        """Read the source with the options shown and show the result (or why not)."""
        source = self.source.text().strip()
        if not source:
            self._show(None)
            return
        validation = self.validation.text().strip() or None
        spec = image_setting(source, folder=self.folder, validation=validation, **self.options())
        try:
            dataset = self.loader.load(spec, self.folder, retry=True)
        except ReadingCancelled as exc:
            self._show(None, f"{exc} Choose again to read it.")
            return
        except DatasetRefused as exc:
            self._show(None, str(exc))
            return
        self.spec = image_setting(source, dataset, folder=self.folder, validation=validation,
                                  **self.options())  # fmt: skip
        self.loader.keep_as(self.spec, self.folder)  # the same reading, with its digest
        self._show(dataset)

    def _show(self, dataset: ImageDataset | None, error: str = "") -> None:
        self.dataset = dataset if isinstance(dataset, ImageDataset) else None
        if self.dataset is None:
            self.spec = None
        self.error.setText(error)
        self.error.setVisible(bool(error))
        self.ok.setEnabled(self.dataset is not None)
        if self.dataset is None:
            self.summary.setText("" if error else "Choose a folder or a CSV of path,label.")
            self.skipped.hide()
            self.details.hide()
            self.grid.show_rows([])
            return
        data = self.dataset
        shape = "×".join(str(s) for s in data.sample_shape)
        counts = data.class_counts()
        held = "" if data.held_out is None else (
            f" · {int(data.held_out.sum()):,} of them from the validation folder")
        self.summary.setText(f"{len(data):,} images of {shape} (channels × height × width) in "
                             f"{data.num_classes} classes{held}.")  # fmt: skip
        skipped = len(data.skipped)
        self.skipped.setText(f"{skipped:,} file{'s' if skipped != 1 else ''} skipped "
                             "(could not be used).")  # fmt: skip
        self.skipped.setVisible(bool(skipped))
        self.details.setVisible(bool(skipped))
        rows = []
        for k, name in enumerate(data.class_names):
            first = np.flatnonzero(data.y == k)[:PER_CLASS]
            rows.append((f"{name} ({int(counts[k]):,})", [data.x[i] for i in first]))
        self.grid.show_rows(rows)

    # ---- user actions ------------------------------------------------------------------------

    def _start(self) -> str:
        text = self.source.text().strip()
        if text:
            path = Path(text).expanduser()
            path = self.folder / path if not path.is_absolute() and self.folder else path
            return str(path.parent)
        return self.start

    def _on_choose_folder_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "An image folder (a subfolder per class)",
                                                self._start())  # fmt: skip
        if path:
            self.source.setText(path)
            self.read()

    def _on_choose_csv_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A CSV of path,label", self._start(),
                                              "CSV files (*.csv);;All files (*)")  # fmt: skip
        if path:
            self.source.setText(path)
            self.read()

    def _on_choose_validation_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "A separate validation folder",
                                                self._start())  # fmt: skip
        if path:
            self.validation.setText(path)
            self.read()

    def _on_source_editing_finished(self) -> None:
        if self.source.isModified():
            self.source.setModified(False)
            self._read_timer.start()

    def _on_validation_editing_finished(self) -> None:
        if self.validation.isModified():
            self.validation.setModified(False)
            self._on_option_changed()

    def _on_option_changed(self, *_: Any) -> None:
        if self.source.text().strip():
            self._read_timer.start()

    def _on_details_clicked(self) -> None:
        if self.dataset is None:
            return
        box = QDialog(self)
        box.setObjectName("skipped_files_dialog")
        box.setWindowTitle("Skipped files")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        text = QPlainTextEdit("\n".join(f"{name}: {why}" for name, why in self.dataset.skipped))
        text.setObjectName("skipped_files")
        text.setReadOnly(True)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(box.reject)
        column = QVBoxLayout(box)
        column.addWidget(QLabel(f"{len(self.dataset.skipped):,} files were left out:"))
        column.addWidget(text)
        column.addWidget(close)
        box.resize(520, 300)
        box.open()
        self.details_dialog = box


def _button(name: str, text: str, slot: Callable[[], None]) -> QPushButton:
    button = QPushButton(text)
    button.setObjectName(name)
    button.clicked.connect(slot)
    return button


def _label(name: str, style: str) -> QLabel:
    label = QLabel()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setStyleSheet(style)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _row(*widgets: QWidget, stretch: bool = False) -> QWidget:
    """The widgets side by side: a line edit (or the first, with `stretch`) takes the room
    left, else the row ends in empty room."""
    row = QWidget()
    line = QHBoxLayout(row)
    line.setContentsMargins(0, 0, 0, 0)
    for i, widget in enumerate(widgets):
        line.addWidget(widget, 1 if isinstance(widget, QLineEdit) or (stretch and i == 0) else 0)
    if not stretch and not any(isinstance(w, QLineEdit) for w in widgets):
        line.addStretch(1)
    return row
