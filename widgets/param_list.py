"""The Inspector's Parameters section: a node's Parameters with live statistics, and the
buttons that edit, freeze and re-initialize them.

The view knows nothing of sessions or undo: it shows `ParamInfo` rows and statistics it
is given, and asks for changes through signals. For a composite, the rows are grouped
by the inner node that owns them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.session.param_access import ParamInfo
from app.session.param_values import STAT_NAMES, shape_text

COLUMNS = ("Parameter", "Shape", "Trainable", *STAT_NAMES)
STATUS_COLUMN = COLUMNS.index("Trainable")
NAME_ROLE = Qt.ItemDataRole.UserRole


class ParameterList(QWidget):
    """A node's Parameters: name, shape and dtype, trainable / frozen, mean std min max norm."""

    edit_requested = Signal(str)  # network name of the Parameter to open in the editor
    freeze_requested = Signal(list, bool)  # names, frozen
    reinit_requested = Signal(list)  # names

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("parameter_list")
        self.infos: dict[str, ParamInfo] = {}
        self.items: dict[str, QTreeWidgetItem] = {}
        self._filling = False
        self.heading = QLabel("<b>Parameters</b>")
        self.note = QLabel("")
        self.note.setObjectName("parameter_note")
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: palette(placeholder-text);")
        self.tree = QTreeWidget()
        self.tree.setObjectName("parameter_tree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(False)
        self.tree.setMinimumHeight(84)  # four rows; more scroll
        # It asks for no more (the Inspector gives it what the form leaves), so the buttons
        # under it stay in view in a short dock.
        self.tree.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        self.tree.itemSelectionChanged.connect(self._on_tree_item_selection_changed)
        self.buttons: dict[str, QPushButton] = {}
        row = QGridLayout()  # two by two: the Inspector is narrow
        row.setContentsMargins(0, 0, 0, 0)
        for key, text, tip in (
            ("edit", "Edit…", "Open the selected Parameter as a table and heatmap"),
            ("reinit", "Re-initialize…", "Fill the selected Parameters (or all of the node's) "
                                         "from an initializer"),
            ("freeze", "Freeze", "Training leaves the selected Parameters (or, with none "
                                 "selected, all of the node's) unchanged"),
            ("unfreeze", "Unfreeze", "Train the selected Parameters (or all of the node's) "
                                     "again"),
        ):  # fmt: skip
            button = QPushButton(text)
            button.setObjectName(f"param_{key}_button")
            button.setToolTip(tip)
            button.setProperty("tip", tip)
            # A narrow Inspector clips the text rather than widening the window.
            button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
            button.clicked.connect(lambda _=False, k=key: self._on_button_clicked(k))
            row.addWidget(button, len(self.buttons) // 2, len(self.buttons) % 2)
            self.buttons[key] = button
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.tree, 1)
        layout.addLayout(row)
        layout.addWidget(self.note)
        self._editable, self._reason, self._message = True, "", ""
        self.set_params([])

    # ---- what it shows -------------------------------------------------------------------

    def set_params(self, infos: Sequence[ParamInfo], grouped: bool = False) -> None:
        """Show these Parameters; `grouped`: under one heading per owning node (composites)."""
        self._filling = True
        try:
            self.tree.clear()
            self.infos = {info.name: info for info in infos}
            self.items = {}
            self.tree.setRootIsDecorated(grouped)
            groups: dict[str, QTreeWidgetItem] = {}
            for info in infos:
                parent = None
                if grouped:
                    parent = groups.get(info.node_path)
                    if parent is None:
                        parent = QTreeWidgetItem([info.node_path])
                        parent.setFirstColumnSpanned(False)
                        font = parent.font(0)
                        font.setBold(True)
                        parent.setFont(0, font)
                        self.tree.addTopLevelItem(parent)
                        parent.setExpanded(True)
                        groups[info.node_path] = parent
                item = QTreeWidgetItem([info.local if grouped else info.name,
                                        f"{shape_text(info.shape)} {info.dtype}"])  # fmt: skip
                item.setData(0, NAME_ROLE, info.name)
                item.setToolTip(0, f"{info.name}: {shape_text(info.shape)} {info.dtype}, "
                                   f"{info.status}")  # fmt: skip
                self._show_status(item, info)
                if parent is None:
                    self.tree.addTopLevelItem(item)
                else:
                    parent.addChild(item)
                self.items[info.name] = item
        finally:
            self._filling = False
        self.heading.setText(f"<b>Parameters</b> ({len(infos)})" if infos else
                             "<b>Parameters</b>")  # fmt: skip
        self.tree.setVisible(bool(infos))
        for button in self.buttons.values():
            button.setVisible(bool(infos))
        self._update_buttons()

    def _show_status(self, item: QTreeWidgetItem, info: ParamInfo) -> None:
        if info.trainable:
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(STATUS_COLUMN, Qt.CheckState.Unchecked if info.frozen
                               else Qt.CheckState.Checked)  # fmt: skip
            item.setText(STATUS_COLUMN, "frozen ❄" if info.frozen else "yes")
            item.setToolTip(STATUS_COLUMN, "Untick to freeze: training leaves it unchanged")
        else:
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsUserCheckable)
            item.setText(STATUS_COLUMN, "no")
            item.setToolTip(STATUS_COLUMN, "Not trained by the optimizer (e.g. BatchNorm's "
                                           "moving statistics)")  # fmt: skip

    def set_stats(self, stats: Mapping[str, Mapping[str, float]], step: int | None = None) -> None:
        """Statistics by Parameter name (mean, std, min, max, norm); `step` they are from."""
        self._filling = True
        try:
            for name, values in stats.items():
                item = self.items.get(name)
                if item is None:
                    continue
                for column, key in enumerate(STAT_NAMES, start=STATUS_COLUMN + 1):
                    value = values.get(key, math.nan)
                    item.setText(column, _number(value))
                    item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)  # fmt: skip
        finally:
            self._filling = False
        if step is not None:
            self.tree.headerItem().setToolTip(STATUS_COLUMN + 1,
                                              f"Statistics of the weights after step {step}")

    def set_editable(self, editable: bool, reason: str = "") -> None:
        """While training runs nothing can change: the controls say why."""
        self._editable, self._reason = bool(editable), reason
        self._update_buttons()
        self.note.setText(self._message if editable else reason)

    def set_message(self, text: str) -> None:
        """A line under the list (why there are no Parameters, an error)."""
        self._message = text
        self.note.setText(text if self._editable else self._reason)

    def selected_names(self) -> list[str]:
        """Names of the selected Parameters (a selected group heading stands for its rows)."""
        names: list[str] = []
        for item in self.tree.selectedItems():
            name = item.data(0, NAME_ROLE)
            if name:
                names.append(name)
            else:
                names += [item.child(i).data(0, NAME_ROLE) for i in range(item.childCount())]
        return list(dict.fromkeys(names))

    def _targets(self) -> list[str]:
        return self.selected_names() or list(self.infos)

    def _update_buttons(self) -> None:
        some = bool(self.infos)
        selected = self.selected_names()
        trainable = [n for n in (selected or self.infos) if self.infos[n].trainable]
        state = {
            "edit": len(selected) == 1 or len(self.infos) == 1,
            "freeze": bool(trainable) and self._editable,
            "unfreeze": bool(trainable) and self._editable,
            "reinit": some and self._editable,
        }
        for key, button in self.buttons.items():
            button.setEnabled(some and state[key])
            tip = button.property("tip") or ""
            button.setToolTip(tip if self._editable or key == "edit" else self._reason)
        if self.infos:
            flag = Qt.ItemFlag.ItemIsUserCheckable
            self._filling = True
            try:
                for name, item in self.items.items():
                    if self.infos[name].trainable:
                        flags = item.flags() | flag if self._editable else item.flags() & ~flag
                        item.setFlags(flags)
            finally:
                self._filling = False

    # ---- slots ---------------------------------------------------------------------------

    def _on_button_clicked(self, key: str) -> None:
        if key == "edit":
            names = self.selected_names() or list(self.infos)
            if names:
                self.edit_requested.emit(names[0])
        elif key in ("freeze", "unfreeze"):
            names = [n for n in self._targets() if self.infos[n].trainable]
            if names:
                self.freeze_requested.emit(names, key == "freeze")
        elif key == "reinit":
            self.reinit_requested.emit(self._targets())

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        name = item.data(0, NAME_ROLE)
        if name and column != STATUS_COLUMN:
            self.edit_requested.emit(name)

    def _on_tree_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or column != STATUS_COLUMN:
            return
        name = item.data(0, NAME_ROLE)
        info = self.infos.get(name)
        if info is None or not info.trainable:
            return
        frozen = item.checkState(STATUS_COLUMN) != Qt.CheckState.Checked
        if frozen != info.frozen:
            self.freeze_requested.emit([name], frozen)

    def _on_tree_item_selection_changed(self) -> None:
        self._update_buttons()


def _number(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"
