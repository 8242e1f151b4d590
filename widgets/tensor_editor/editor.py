"""TensorEditor: see and change the values of one Parameter — a table of one 2-D slice,
a heatmap, selection operations (fill, scale, add noise), import and export of .npy.

The editor reads the Parameter's live array and never writes it: each change becomes
one call of `apply_edit(regions, undo_text)`, which the owner performs (as one undo
step) or refuses with a reason. The owner then calls `refresh()`.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.session.param_values import (
    check_finite,
    load_npy,
    parse_value,
    save_npy,
    shape_text,
    statistics,
)
from widgets.form_fields import IntBox, format_number, tool_button
from widgets.tensor_editor.heatmap import TensorHeatmap, kernel_grid
from widgets.tensor_editor.model import (
    TensorCellDelegate,
    TensorTable,
    TensorTableModel,
    index_text,
    value_text,
)

Regions = list[tuple[tuple, np.ndarray]]
ApplyEdit = Callable[[Regions, str], "str | None"]

NPY_FILTER = "NumPy array (*.npy)"
STATS_DELAY_MS = 150  # the stats line reads the whole tensor: once per burst of refreshes
REFUSED_STYLE = "color: #b00020;"
REASON_STYLE = "background: #fff4d6; color: #5c4400; padding: 2px 4px;"
KERNEL_AXES = ("out channel", "in channel")  # the leading axes of a Conv2d weight
NOTHING = "Select a Parameter to see its values."
EDIT_TRIGGERS = (QAbstractItemView.EditTrigger.DoubleClicked
                 | QAbstractItemView.EditTrigger.EditKeyPressed
                 | QAbstractItemView.EditTrigger.AnyKeyPressed)  # fmt: skip


class TensorEditor(QWidget):
    """The values of one Parameter as a table and a heatmap, edited through `apply_edit`."""

    message = Signal(str)  # refusals and reports, for the status bar (also shown here)
    VIEWS = ("table", "heatmap")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tensor_editor")
        self.array: np.ndarray | None = None
        self.title = ""
        self.kernels = False  # a Conv2d weight: the heatmap shows all its kernels
        self._apply_edit: ApplyEdit | None = None
        self._editable = True
        self._reason = ""
        self.default_folder: Path | None = None  # where importing values starts looking
        self._heatmap_stale = True  # values changed since the heatmap was drawn
        self._heatmap_new = True  # a new tensor: axes labelled and framed afresh

        self._stats_timer = QTimer(self)
        self._stats_timer.setSingleShot(True)
        self._stats_timer.setInterval(STATS_DELAY_MS)
        self._stats_timer.timeout.connect(self._on_stats_timer_timeout)

        self.title_label = QLabel(NOTHING)
        self.title_label.setObjectName("title_label")
        self.title_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.stats_label = QLabel()
        self.stats_label.setObjectName("stats_label")
        self.stats_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.stats_label.setStyleSheet("color: palette(placeholder-text);")
        self.stats_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reason_label = QLabel()
        self.reason_label.setObjectName("reason_label")
        self.reason_label.setWordWrap(True)
        self.reason_label.setStyleSheet(REASON_STYLE)
        self.reason_label.hide()
        self.message_label = QLabel()
        self.message_label.setObjectName("message_label")
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self._build_bar()
        self._selectors = QHBoxLayout()
        self._selectors.setContentsMargins(0, 0, 0, 0)
        self.axis_spins: list[IntBox] = []
        self.axis_labels: list[QLabel] = []
        self._build_pages()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addWidget(self.title_label)
        layout.addWidget(self.stats_label)
        layout.addWidget(self.reason_label)
        layout.addLayout(self._bar)
        layout.addLayout(self._selectors)
        layout.addWidget(self._pages, 1)
        layout.addWidget(self.message_label)
        self.set_tensor(None, "")

    # ---- building ----------------------------------------------------------------------------

    def _build_bar(self) -> None:
        self.table_button = tool_button("table_button", "Table", "The values as a table of numbers "
                                    "(one 2-D slice)", checkable=True)  # fmt: skip
        self.heatmap_button = tool_button("heatmap_button", "Heatmap", "The values as colours",
                                      checkable=True)  # fmt: skip
        self.table_button.setChecked(True)
        self._view_group = QButtonGroup(self)
        self._view_group.setExclusive(True)
        self._view_group.addButton(self.table_button)
        self._view_group.addButton(self.heatmap_button)
        self.table_button.toggled.connect(self._on_table_button_toggled)
        self.fill_button = tool_button("fill_button", "Fill…",
                                       "Set every selected value to one number")
        self.scale_button = tool_button("scale_button", "Scale…",
                                    "Multiply the selected values by a factor")  # fmt: skip
        self.noise_button = tool_button("noise_button", "Add noise…", "Add Gaussian noise to the "
                                    "selected values, drawn with the seed beside it")  # fmt: skip
        self.seed_spin = IntBox(0, 999_999)  # the wheel changes it only once clicked into
        self.seed_spin.setObjectName("seed_spin")
        self.seed_spin.setPrefix("seed ")
        self.seed_spin.setToolTip("The noise's seed: the same seed adds the same noise. It "
                                  "moves on by one after each use.")  # fmt: skip
        self.import_button = tool_button("import_button", "Import…",
                                     "Replace all values with those of a .npy file")  # fmt: skip
        self.export_button = tool_button("export_button", "Export…",
                                         "Save the values to a .npy file")
        self.fill_button.clicked.connect(self._on_fill_button_clicked)
        self.scale_button.clicked.connect(self._on_scale_button_clicked)
        self.noise_button.clicked.connect(self._on_noise_button_clicked)
        self.import_button.clicked.connect(self._on_import_button_clicked)
        self.export_button.clicked.connect(self._on_export_button_clicked)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.setSpacing(2)
        for widget in (self.table_button, self.heatmap_button):
            bar.addWidget(widget)
        bar.addSpacing(12)
        for widget in (self.fill_button, self.scale_button, self.noise_button, self.seed_spin):
            bar.addWidget(widget)
        bar.addStretch(1)
        bar.addWidget(self.import_button)
        bar.addWidget(self.export_button)
        self._bar = bar
        self.edit_controls: tuple[QWidget, ...] = (self.fill_button, self.scale_button,
                                                   self.noise_button, self.seed_spin,
                                                   self.import_button)  # fmt: skip

    def _build_pages(self) -> None:
        self.model = TensorTableModel(self)
        self.model.commit = self._commit_cell
        self.model.refused.connect(self._on_model_refused)
        self.table = TensorTable()
        self.table.setObjectName("tensor_table")
        self.table.setModel(self.model)
        self.table.setItemDelegate(TensorCellDelegate(self.model, self.table))
        self.table.setEditTriggers(EDIT_TRIGGERS)
        self.table.setWordWrap(False)
        self.table.setCornerButtonEnabled(True)  # the corner selects everything
        # Uniform sizes: the view never measures a cell, whatever the tensor's size.
        metrics = self.table.fontMetrics()
        rows = self.table.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(metrics.height() + 6)
        rows.setMinimumSectionSize(metrics.height() + 2)
        columns = self.table.horizontalHeader()
        columns.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        columns.setDefaultSectionSize(metrics.horizontalAdvance("-0.000123457") + 14)
        self.heatmap = TensorHeatmap()
        self.heatmap.describe = self._describe_pixel
        self.heatmap.picked.connect(self._on_heatmap_picked)
        self.placeholder = QLabel(NOTHING)
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet("color: palette(placeholder-text);")
        self._pages = QStackedWidget()
        for page in (self.table, self.heatmap, self.placeholder):
            self._pages.addWidget(page)

    def _build_selectors(self) -> None:
        """One spin box per leading axis (rank ≥ 3): which 2-D slice the table shows."""
        for widget in (*self.axis_labels, *self.axis_spins):
            self._selectors.removeWidget(widget)
            widget.hide()  # gone now, not when the event loop gets to the deletion
            widget.deleteLater()
        while self._selectors.count():
            self._selectors.takeAt(0)
        self.axis_spins, self.axis_labels = [], []
        array = self.array
        if array is None or array.ndim < 3:
            return
        for axis, size in enumerate(array.shape[:-2]):
            text = KERNEL_AXES[axis] if self.kernels else f"axis {axis}"
            label = QLabel(text)
            spin = IntBox(0, max(size - 1, 0))  # one slice per number typed, not per digit
            spin.setObjectName(f"axis{axis}_spin")
            spin.setEnabled(size > 0)
            spin.setToolTip(f"Which index of axis {axis} (size {size}) the table shows")
            spin.valueChanged.connect(self._on_axis_spin_value_changed)
            label.setBuddy(spin)
            self._selectors.addWidget(label)
            self._selectors.addWidget(spin)
            self.axis_labels.append(label)
            self.axis_spins.append(spin)
        shown = QLabel("table: the kernel's rows × columns" if self.kernels else
                       f"table: axis {array.ndim - 2} (rows) × axis {array.ndim - 1} (columns)")
        shown.setStyleSheet("color: palette(placeholder-text);")
        self.axis_labels.append(shown)
        self._selectors.addWidget(shown)
        self._selectors.addStretch(1)

    # ---- the owner's interface ---------------------------------------------------------------

    @property
    def apply_edit(self) -> ApplyEdit | None:
        """Performs a list of (index, values) regions as one undo step: None if done, else
        the refusal. Set by the owner; None leaves the editor read-only."""
        return self._apply_edit

    @apply_edit.setter
    def apply_edit(self, apply: ApplyEdit | None) -> None:
        self._apply_edit = apply
        self._update_controls()

    def set_tensor(self, array: np.ndarray | None, title: str, *, kernels: bool = False) -> None:
        """Show `array`, a Parameter's live array (never copied); `kernels`: a Conv2d weight
        (out, in, kh, kw) whose heatmap shows all kernels at once. None shows nothing."""
        self.array = array
        self.title = title
        self.kernels = bool(kernels) and array is not None and array.ndim == 4
        self.model.set_array(array, title)
        self._heatmap_stale = self._heatmap_new = True
        self._build_selectors()
        self._say("")
        if array is None:
            self.title_label.setText(NOTHING)
            self.stats_label.setText("")
            self.heatmap.clear()
            self._pages.setCurrentWidget(self.placeholder)
        else:
            self.title_label.setText(f"<b>{html.escape(title)}</b> &nbsp; "
                                     f"{shape_text(array.shape)} {array.dtype.name}")  # fmt: skip
            self.stats_label.setText("")
            self._stats_timer.start()
            self._show_page()  # draws the heatmap if it is the view shown
        self._update_controls()

    def set_editable(self, editable: bool, reason: str = "") -> None:
        """Allow edits or not; `reason` (shown while not) says why, e.g. training runs."""
        self._editable = bool(editable)
        self._reason = "" if editable else reason
        self.reason_label.setText(self._reason)
        self.reason_label.setVisible(bool(self._reason))
        self._update_controls()

    @property
    def editable(self) -> bool:
        """True if the user can change values now."""
        return (self._editable and self._apply_edit is not None and self.array is not None
                and self.array.dtype.kind in "iuf")  # fmt: skip

    def refresh(self) -> None:
        """The array's values changed in place: repaint the cells, the heatmap, the stats."""
        if self.array is None:
            return
        self.model.refresh()
        self._heatmap_stale = True
        self._draw_heatmap()
        if not self._stats_timer.isActive():
            self._stats_timer.start()

    @property
    def view(self) -> str:
        return "heatmap" if self.heatmap_button.isChecked() else "table"

    def set_view(self, view: str) -> None:
        """Show the "table" or the "heatmap"."""
        if view not in self.VIEWS:
            raise ValueError(f"The tensor editor shows one of {', '.join(self.VIEWS)}.")
        (self.heatmap_button if view == "heatmap" else self.table_button).setChecked(True)

    # ---- dialogs (tests replace these) -------------------------------------------------------

    def _ask_number(self, title: str, label: str, default: str) -> str | None:
        text, ok = QInputDialog.getText(self, title, label, text=default)
        return text if ok else None

    def _ask_save_path(self) -> str | None:
        name = "".join(c if c.isalnum() or c in "._-" else "_" for c in self.title) or "values"
        path, _ = QFileDialog.getSaveFileName(self, f"Export {self.title}", f"{name}.npy",
                                              NPY_FILTER)  # fmt: skip
        return path or None

    def _ask_open_path(self) -> str | None:
        start = str(self.default_folder) if self.default_folder is not None else ""
        path, _ = QFileDialog.getOpenFileName(self, f"Import values into {self.title}", start,
                                              NPY_FILTER)  # fmt: skip
        return path or None

    # ---- applying edits ----------------------------------------------------------------------

    def _apply(self, regions: Regions, text: str) -> bool:
        """Hand `regions` to the owner as one edit; True if it was applied."""
        if not self.editable:
            self._say(self._reason or f"{self.title} can't be edited now.", refused=True)
            return False
        refusal = self._apply_edit(regions, text)
        if refusal:
            self._say(refusal, refused=True)
            return False
        self._say(text)
        return True

    def _commit_cell(self, index: tuple, value: np.ndarray) -> bool:
        where = index_text(index)
        return self._apply([(index, value)], f"Set {self.title}{where} to {value_text(value[()])}")

    def _selection(self) -> list[tuple[tuple, int]]:
        """(region index, value count) of each selected rectangle of the slice shown."""
        selection = self.table.selectionModel().selection() if self.array is not None else []
        regions = []
        for part in selection:
            top, bottom, left, right = part.top(), part.bottom(), part.left(), part.right()
            count = (bottom - top + 1) * (right - left + 1)
            regions.append((self.model.region(top, bottom, left, right), count))
        return regions

    def _operate(self, verb: str, ask: tuple[str, str, str],
                 change: Callable[[np.ndarray, float, np.random.Generator | None], np.ndarray],
                 text: Callable[[str, int], str], *, noise: bool = False) -> None:  # fmt: skip
        """Ask for a number, change each selected rectangle with it, apply as one edit."""
        if not self.editable:
            self._say(self._reason or f"{self.title} can't be edited now.", refused=True)
            return
        selected = self._selection()
        if not selected:
            self._say(f"Select the values to {verb} in the table first.", refused=True)
            return
        typed = self._ask_number(*ask)
        if typed is None:
            return
        dtype = self.array.dtype
        try:
            number = parse_value(typed, dtype if verb == "fill" else np.float64)
            if noise and number < 0:
                raise ValueError("The noise's standard deviation can't be negative.")
            rng = np.random.default_rng(self.seed_spin.value()) if noise else None
            regions = []
            for index, _count in selected:
                old = np.asarray(self.array[index], dtype=np.float64)
                regions.append((index, _in_dtype(change(old, number, rng), dtype)))
        except ValueError as exc:
            self._say(str(exc), refused=True)
            return
        count = sum(count for _index, count in selected)
        if self._apply(regions, text(format_number(number), count)) and noise:
            self.seed_spin.setValue((self.seed_spin.value() + 1) % (self.seed_spin.maximum() + 1))

    def _values_text(self, count: int) -> str:
        return f"{count} value{'s' if count != 1 else ''} of {self.title}"

    # ---- drawing -----------------------------------------------------------------------------

    def _show_page(self) -> None:
        if self.array is None:
            return
        page = self.heatmap if self.view == "heatmap" else self.table
        self._pages.setCurrentWidget(page)
        self._draw_heatmap()

    def _draw_heatmap(self) -> None:
        """Draw the heatmap if it is the view shown and its values changed since."""
        if self.array is None or self.view != "heatmap" or not self._heatmap_stale:
            return
        reframe = self._heatmap_new
        self._heatmap_stale = self._heatmap_new = False
        array = self.array
        if self.kernels:
            # In channels down, out channels across (see kernel_grid).
            self.heatmap.set_image(kernel_grid(array), axes=KERNEL_AXES[::-1],
                                   tiles=array.shape[2:], square=True, reframe=reframe)  # fmt: skip
            self._outline_kernel()
        elif array.ndim <= 1:
            line = array[np.newaxis, :] if array.ndim else array[np.newaxis, np.newaxis]
            self.heatmap.set_image(line, axes=("", "index"), reframe=reframe)
        else:
            axes = (("row", "column") if array.ndim == 2
                    else (f"axis {array.ndim - 2}", f"axis {array.ndim - 1}"))  # fmt: skip
            self.heatmap.set_image(self.model.view, axes=axes, square=array.ndim >= 3,
                                   reframe=reframe)  # fmt: skip

    def _outline_kernel(self) -> None:
        out, inp = self.model.lead
        self.heatmap.outline_tile(inp, out)

    def _kernel_at(self, row: int, column: int) -> tuple[int, int, int, int] | None:
        """The index (o, i, r, c) of a kernel grid's pixel; None in a gap."""
        kh, kw = self.array.shape[2:]
        if row % (kh + 1) == kh or column % (kw + 1) == kw:
            return None
        return (column // (kw + 1), row // (kh + 1), row % (kh + 1), column % (kw + 1))

    def _describe_pixel(self, row: int, column: int) -> str:
        """The hover text of a heatmap pixel: the full index and the value there."""
        array = self.array
        if array is None:
            return ""
        if self.kernels:
            index = self._kernel_at(row, column)
            if index is None:
                return ""  # a gap between kernels
        elif array.ndim <= 1:
            index = (column,) if array.ndim else ()
        else:
            index = self.model.full_index(row, column)
        return f"{self.title}{index_text(index)} = {value_text(array[index])}"

    def _update_controls(self) -> None:
        editable = self.editable
        self.model.set_editable(editable)
        self.table.setEditTriggers(EDIT_TRIGGERS if editable else
                                   QAbstractItemView.EditTrigger.NoEditTriggers)  # fmt: skip
        for control in self.edit_controls:
            control.setEnabled(editable)
        shown = self.array is not None
        self.export_button.setEnabled(shown)
        self.table_button.setEnabled(shown)
        self.heatmap_button.setEnabled(shown)

    def _say(self, text: str, *, refused: bool = False) -> None:
        """Show `text` below the values and send it to the status bar ("" clears it)."""
        self.message_label.setText(text)
        self.message_label.setStyleSheet(REFUSED_STYLE if refused else "")
        if text:
            self.message.emit(text)

    # ---- slots -------------------------------------------------------------------------------

    def _on_table_button_toggled(self, _checked: bool) -> None:
        self._show_page()

    def _on_axis_spin_value_changed(self, _value: int) -> None:
        self.model.set_lead(tuple(spin.value() for spin in self.axis_spins))
        if self.kernels:
            self._outline_kernel()  # the grid itself stays as it is
        else:
            self._heatmap_stale = True
            self._draw_heatmap()

    def _on_heatmap_picked(self, row: int, column: int) -> None:
        """A click on a kernel shows it in the table; elsewhere selects the cell clicked."""
        if self.array is None:
            return
        if self.kernels:
            index = self._kernel_at(row, column)
            if index is not None:
                self.axis_spins[0].setValue(index[0])
                self.axis_spins[1].setValue(index[1])
            return
        if self.array.ndim <= 1:
            row, column = column, 0
        index = self.model.index(row, column)
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)

    def _on_model_refused(self, reason: str) -> None:
        self._say(reason, refused=True)

    def _on_stats_timer_timeout(self) -> None:
        if self.array is None:
            return
        stats = statistics(self.array)
        self.stats_label.setText(" · ".join(f"{name} {value:.4g}" for name, value in stats.items()))

    def _on_fill_button_clicked(self) -> None:
        self._operate("fill", ("Fill", "Set the selected values to:", "0"),
                      lambda old, number, _rng: np.full(old.shape, number),
                      lambda shown, n: f"Fill {self._values_text(n)} with {shown}")  # fmt: skip

    def _on_scale_button_clicked(self) -> None:
        self._operate("scale", ("Scale", "Multiply the selected values by:", "1"),
                      lambda old, number, _rng: old * number,
                      lambda shown, n: f"Scale {self._values_text(n)} by {shown}")  # fmt: skip

    def _on_noise_button_clicked(self) -> None:
        seed = self.seed_spin.value()
        self._operate("add noise to",
                      ("Add noise", f"Standard deviation σ of the Gaussian noise (seed {seed}):",
                       "0.01"),
                      lambda old, sigma, rng: old + rng.normal(0.0, sigma, old.shape),
                      lambda shown, count: f"Add noise (σ {shown}, seed {seed}) to "
                      f"{self._values_text(count)}", noise=True)  # fmt: skip

    def _on_import_button_clicked(self) -> None:
        if not self.editable:
            self._say(self._reason or f"{self.title} can't be edited now.", refused=True)
            return
        path = self._ask_open_path()
        if not path:
            return
        try:
            values = load_npy(path, self.array.shape, self.array.dtype, self.title)
        except ValueError as exc:
            self._say(str(exc), refused=True)
            return
        self._apply([((Ellipsis,), values)], f"Load {self.title} from {Path(path).name}")

    def _on_export_button_clicked(self) -> None:
        if self.array is None:
            return
        path = self._ask_save_path()
        if not path:
            return
        try:
            written = save_npy(path, self.array)
        except OSError as exc:
            self._say(f"Couldn't save {self.title} to {path}: {exc.strerror or exc}",
                      refused=True)  # fmt: skip
            return
        self._say(f"Saved {self.title} {shape_text(self.array.shape)} to {written}")


def _in_dtype(values: np.ndarray, dtype: np.dtype, what: str = "The new values") -> np.ndarray:
    """`values` (float64) as `dtype`; ValueError if any would not be a finite number there."""
    if dtype.kind in "iu":
        check_finite(values, what)
        info = np.iinfo(dtype)
        rounded = np.rint(values)
        if rounded.size and (rounded.min() < info.min or rounded.max() > info.max):
            raise ValueError(f"{what} go outside {dtype.name}'s range ({info.min} to {info.max}).")
        return rounded.astype(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        converted = values.astype(dtype)
    check_finite(converted, f"{what} (as {dtype.name})")
    return converted
