"""The Run dock's Augmentation section: the `augmentation` training setting as a form, and a
preview of one batch before and after (app.datasets.augment).

Each operation has its amount (0: off), then the seed and an Enabled box. Like the other
settings the group never writes the project: a committed edit emits `changed(value)` once
(None when nothing is set, so the project holds no entry), and the Run dock makes it an
undoable training-setting command. An edit the data set shown can't take (a rotation of
tabular rows, a shift as wide as the image) is refused in place: the field turns red, the
reason shows under the group and nothing is emitted. A project that already holds such a
setting shows the reason the same way. "Preview…" shows `augment.preview` of the data set
shown: thumbnails for images, the numbers for other samples.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.datasets import Dataset
from app.datasets.augment import (
    AUGMENT_OPS,
    DEFAULTS,
    MAX_SHIFT,
    AugmentationRefused,
    AugmentPreview,
    check_augmentation,
    data_refusal,
    is_active,
    preview,
)
from widgets.form_fields import (
    IntBox,
    NumberBox,
    clear_refusal,
    format_number,
    set_tip,
    show_refusal,
)
from widgets.images import ThumbnailGrid, as_image

PREVIEW_COUNT = 16
THUMB = 48
SHOWN_FEATURES = 6
# key -> (label, box maker, tip)
LOOKS: dict[str, tuple[str, Callable[[], QWidget], str]] = {
    "flip": ("Horizontal flip", lambda: NumberBox(0.0, 1.0, 0.1),
             "The chance (0 to 1) that an image is mirrored left to right."),
    "shift": ("Shift (pixels)", lambda: IntBox(0, MAX_SHIFT),
              "Move each image up to this many pixels each way; the edge fills with zeros."),
    "rotate": ("Rotation (°)", lambda: NumberBox(0.0, 180.0, 5.0),
               "Turn each image by an angle drawn from -this to +this degrees."),
    "brightness": ("Brightness", lambda: NumberBox(0.0, 0.99, 0.05),
                   "Scale every value by a factor from 1 - this to 1 + this."),
    "contrast": ("Contrast", lambda: NumberBox(0.0, 0.99, 0.05),
                 "Scale each value's distance from the image's mean by 1 ± up to this."),
    "noise": ("Gaussian noise (σ)", lambda: NumberBox(0.0, 1e6, 0.01),
              "Add noise of this standard deviation to every value (any numeric data)."),
    "seed": ("Seed", lambda: IntBox(0, 2**31 - 1),
             "The same seed gives the same augmented batches again."),
}  # fmt: skip


class AugmentPanel(QGroupBox):
    changed = Signal(object)  # the new `augmentation` setting, None for none
    message = Signal(str)  # why an edit was refused, for the status bar

    def __init__(self, dataset: Callable[[], Dataset | None],
                 parent: QWidget | None = None) -> None:  # fmt: skip
        super().__init__("Augmentation", parent)
        self.setObjectName("augment_panel")
        self._dataset = dataset  # the data set the Run dock shows
        self._value: dict[str, Any] | None = None  # the setting shown, as the project has it
        self._filling = False
        self.preview_dialog: AugmentPreviewDialog | None = None
        self.fields: dict[str, QWidget] = {}
        self._build()

    def _build(self) -> None:
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        enabled = QCheckBox("Augment the training batches")
        set_tip(enabled, "Off: the settings are kept, but batches are used as they are. "
                         "Validation data is never augmented.")
        enabled.clicked.connect(lambda on: self._edit("enabled", bool(on)))
        self._add("enabled", enabled)
        form.addRow(enabled)
        for key, (label, make, tip) in LOOKS.items():
            box = make()
            box.setProperty("label", label)
            set_tip(box, tip)
            box.valueChanged.connect(lambda value, k=key: self._edit(k, value))
            box.on_refused = lambda text, b=box: self._on_box_refused(b, text)
            form.addRow(label, self._add(key, box))
        self.error = QLabel()
        self.error.setObjectName("augment_error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020;")
        self.error.hide()
        form.addRow(self.error)
        self.preview_button = QPushButton("Preview…")
        self.preview_button.setObjectName("augment_preview")
        self.preview_button.setToolTip("One batch of the data set before and after.")
        self.preview_button.clicked.connect(self._on_preview_clicked)
        form.addRow(self.preview_button)

    def _add(self, key: str, widget: QWidget) -> QWidget:
        widget.setObjectName(f"field_augmentation_{key}")
        self.fields[f"augmentation.{key}"] = widget
        return widget

    # ---- showing (never emits) ---------------------------------------------------------------

    def show_setting(self, value: Any) -> None:
        """Show the project's `augmentation` setting; a bad one (or one the data set can't
        take) shows its reason under the group."""
        self._value = copy.deepcopy(dict(value)) if isinstance(value, Mapping) else None
        try:
            spec, problem = check_augmentation(value) or dict(DEFAULTS), None
        except AugmentationRefused as exc:
            spec, problem = dict(DEFAULTS), str(exc)
        self._filling = True
        try:
            self.fields["augmentation.enabled"].setChecked(spec["enabled"])
            for key in LOOKS:
                box = self.fields[f"augmentation.{key}"]
                box.show_value(spec[key], DEFAULTS[key])
                clear_refusal(box)
        finally:
            self._filling = False
        self._show_problem(problem or self._refusal(spec))

    def _refusal(self, spec: Mapping[str, Any]) -> str | None:
        dataset = self._dataset()
        if dataset is None or not is_active(spec):
            return None
        return data_refusal(spec, dataset)

    def _show_problem(self, problem: str | None) -> None:
        self.error.setText(problem or "")
        self.error.setVisible(bool(problem))

    # ---- user edits --------------------------------------------------------------------------

    def _edit(self, key: str, value: Any) -> None:
        if self._filling:
            return
        field = self.fields[f"augmentation.{key}"]
        value = int(value) if key in ("shift", "seed") else value
        value = float(value) if key in LOOKS and key not in ("shift", "seed") else value
        new = compact({**(self._value or {}), key: value})
        if new == self._value:
            return
        try:
            spec = check_augmentation(new) or dict(DEFAULTS)
            problem = self._refusal(spec)
        except AugmentationRefused as exc:
            problem = str(exc)
        if problem:
            show_refusal(field, problem)
            self._show_problem(problem)
            self.message.emit(problem)
            return
        clear_refusal(field)
        self._show_problem(None)
        self._value = new
        self.changed.emit(copy.deepcopy(new))

    def _on_box_refused(self, box: QWidget, text: str) -> None:
        low, high = format_number(box.minimum()), format_number(box.maximum())
        self.message.emit(f"{box.property('label')}: use a number from {low} to {high}, "
                          f"not {text!r}.")  # fmt: skip

    def _on_preview_clicked(self) -> None:
        dataset = self._dataset()
        if dataset is None:
            self._show_problem("Choose a data set that loads to preview the augmentation.")
            return
        dialog = AugmentPreviewDialog(dataset, self._value, self)
        if dialog.problem:
            self._show_problem(dialog.problem)
            dialog.deleteLater()
            return
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.preview_dialog = dialog
        dialog.open()


def compact(value: Mapping[str, Any]) -> dict[str, Any] | None:
    """The setting as the project keeps it: amounts above 0, a seed other than 0, enabled
    only when off; None when that leaves nothing."""
    out = {op: value[op] for op in AUGMENT_OPS if value.get(op)}
    if value.get("seed"):
        out["seed"] = value["seed"]
    if value.get("enabled") is False:
        out["enabled"] = False
    return out or None


class AugmentPreviewDialog(QDialog):
    """One batch before and after the augmentation; "Another batch" draws the next."""

    def __init__(self, dataset: Dataset, setting: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("augment_preview_dialog")
        self.setWindowTitle("Augmentation preview")
        self.dataset, self.setting, self.batch = dataset, setting, 0
        self.problem: str | None = None
        self.shown: AugmentPreview | None = None
        self.text = QLabel()
        self.text.setObjectName("augment_preview_text")
        self.text.setWordWrap(True)
        self.before, self.after = ThumbnailGrid(THUMB, 8), ThumbnailGrid(THUMB, 8)
        self.table = QTableWidget()
        self.table.setObjectName("augment_numbers")
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        again = QPushButton("Another batch")
        again.setObjectName("augment_another")
        again.clicked.connect(self._on_another_clicked)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        column = QVBoxLayout(self)
        column.addWidget(self.text)
        self.before_label, self.after_label = QLabel("<b>Before</b>"), QLabel("<b>After</b>")
        for widget in (self.before_label, self.before, self.after_label, self.after,
                       self.table, again, buttons):  # fmt: skip
            column.addWidget(widget)
        self._show()

    def _show(self) -> None:
        try:
            shown = preview(self.dataset, self.setting, PREVIEW_COUNT, batch=self.batch)
        except AugmentationRefused as exc:
            self.problem = str(exc)
            self.text.setText(self.problem)
            return
        self.shown = shown
        self.text.setText(f"Samples {', '.join(str(int(i)) for i in shown.indices[:8])}"
                          f"{', …' if len(shown.indices) > 8 else ''} · applied: {shown.text}")
        images = all(as_image(sample) is not None and sample.ndim > 1 for sample in shown.before)
        for widget in (self.before_label, self.before, self.after_label, self.after):
            widget.setVisible(images)
        self.table.setVisible(not images)
        if images:
            low = float(np.nanmin(shown.before)) if shown.before.size else 0.0
            high = float(np.nanmax(shown.before)) if shown.before.size else 1.0
            for grid, samples in ((self.before, shown.before), (self.after, shown.after)):
                grid.span = (low, high)  # one scale: brightness changes show
                grid.show_rows([("", list(samples))])
        else:
            self._fill_table(shown)

    def _fill_table(self, shown: AugmentPreview) -> None:
        before = shown.before.reshape(len(shown.before), -1)
        after = shown.after.reshape(len(shown.after), -1)
        columns = min(SHOWN_FEATURES, before.shape[1])
        self.table.setColumnCount(columns)
        self.table.setRowCount(len(before))
        names = list(getattr(self.dataset, "feature_names", ()) or ())
        self.table.setHorizontalHeaderLabels(
            [names[c] if c < len(names) else f"value {c + 1}" for c in range(columns)])
        self.table.setVerticalHeaderLabels([str(int(i)) for i in shown.indices])
        for r in range(len(before)):
            for c in range(columns):
                item = QTableWidgetItem(f"{before[r, c]:.4g} → {after[r, c]:.4g}")
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()

    def _on_another_clicked(self) -> None:
        self.batch += 1
        self._show()
